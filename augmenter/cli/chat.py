"""`augmenter chat`: a conversation typed at the prompt or read from a script, each turn shown (with --trace, the
whole Working Memory) and written to --output as it is taken."""

from __future__ import annotations

import argparse
import codecs
import json
import logging
import sys
import uuid
from collections.abc import Iterable
from pathlib import Path
from typing import TextIO

from augmenter.errors import AugmenterError, CircuitOpenError, InputError, LLMFatalError
from augmenter.extras import explain

DEMOS = {"travel": [], "docs": ["task=docs"]}  # `chat --demo NAME`: the overrides it starts from
QUIT = {"quit", "exit", ":q"}  # typed or scripted, these end a chat without reaching the model


def read_script(path: str | Path) -> list[str]:
    """User utterances, one per line (UTF-8, with or without a BOM; \\n, \\r\\n or \\r line ends), each stripped;
    blank lines and lines starting with '#' are skipped. Raises InputError on a file it cannot use."""
    path = Path(path)
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise InputError(f"script file not found: {path}") from None
    except IsADirectoryError:
        raise InputError(f"script file is a directory: {path}") from None
    except OSError as exc:
        raise InputError(f"cannot read the script file {path}: {exc.strerror or exc}") from None
    raw = raw.removeprefix(codecs.BOM_UTF8)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise InputError(
            f"{path}: not UTF-8 text (byte 0x{raw[exc.start]:02x} on line {line}); save the script as UTF-8"
        ) from None
    lines = (ln.strip() for ln in text.replace("\r\n", "\n").replace("\r", "\n").split("\n"))
    return [ln for ln in lines if ln and not ln.startswith("#")]


def _open_output(output: str | Path) -> TextIO:
    """The --output JSONL, opened for append now (before the model loads), so a bad path fails at once."""
    path = Path(output)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        return open(path, "a", encoding="utf-8", errors="backslashreplace")
    except IsADirectoryError:
        raise InputError(f"output file is a directory: {path}") from None
    except OSError as exc:
        raise InputError(f"cannot write the output file {path}: {exc.strerror or exc}") from None


def _utterances(scripted: list[str] | None, console) -> Iterable[str]:
    """The scripted lines (echoed), or lines typed at the prompt, up to a quit word (quit, exit, :q)."""
    from augmenter.cli.safe_text import safe

    if scripted is not None:
        for line in scripted:
            if line.strip().lower() in QUIT:
                return
            console.print(safe(("user> ", "bold green"), line))
            yield line
        return
    console.print("[dim]Type a message; quit, exit, an empty line or Ctrl-D ends the session.[/dim]")
    while True:
        try:
            line = console.input("[bold green]user>[/bold green] ")
        except (EOFError, KeyboardInterrupt):
            console.print()
            return
        if not sys.stdin.isatty():  # piped in: the line is not echoed by a terminal, so the transcript shows it
            console.print(safe(line))
        if not line.strip() or line.strip().lower() in QUIT:
            return
        yield line


def _reason(mem) -> str:
    """Why a failed turn failed: the LLM error the agent noted last."""
    return mem.warnings[-1] if mem.warnings else "the LLM failed"


def _record(session_id: str, turn: int, mem) -> dict:
    """A turn's --output record: status "ok", or "failed" with the reason (the LLM's error)."""
    record = {"session": session_id, "turn": turn, "status": "failed" if mem.outcome == "failed" else "ok"}
    if mem.outcome == "failed":
        record["reason"] = _reason(mem)
    return {
        **record,
        "outcome": mem.outcome,
        "citations": mem.citation_records(),
        "memory": mem.model_dump(mode="json"),
    }


def _write(sink: TextIO | None, record: dict) -> None:
    """Append one record (secrets masked) and flush it, before anything of its turn is shown."""
    from augmenter.redact import redact_data

    if sink is None:
        return
    try:
        sink.write(json.dumps(redact_data(record), ensure_ascii=False) + "\n")
        sink.flush()
    except OSError as exc:
        raise AugmenterError(f"cannot write the output file {sink.name}: {exc.strerror or exc}") from None


def _show(mem, console, trace: bool) -> None:
    """The reply (never a silent blank line), why a failed turn failed, and the sources."""
    from augmenter.cli.safe_text import clean, one_line, safe
    from augmenter.cli.trace import show_sources, show_trace

    if trace:
        show_trace(mem, console)
    reply = clean(mem.response)
    console.print(safe(("assistant> ", "bold blue"), reply if reply.strip() else ("(empty reply)", "dim")))
    if mem.outcome == "failed":
        console.print(safe(("  LLM failure: " + one_line(_reason(mem)), "dim red")))
    show_sources(mem, console)


def _converse(session, utterances: Iterable[str], console, sink: TextIO | None, trace: bool, drafts=None) -> int:
    """Run the turns; each is written to `sink` before it is shown (`drafts`, a DraftPrinter among the agent's
    callbacks, prints the draft as it streams in). Returns the number of turns taken.
    A failed turn, an open circuit breaker or a crashed turn is recorded as failed and the session goes on; a
    fatal LLM error (a bad key) is recorded and raised."""
    from augmenter.cli.safe_text import one_line, safe
    from augmenter.memory import WorkingMemory

    session_id, turns = uuid.uuid4().hex[:8], 0
    for turn, utterance in enumerate(utterances):
        turns = turn + 1
        try:
            with console.status("thinking...") as status:
                if drafts is not None:
                    drafts.begin(status)
                try:
                    mem = session.say(utterance)
                finally:
                    if drafts is not None:
                        drafts.end()
        except Exception as exc:  # recorded whatever it is; only a rejected key or a missing extra ends the session
            missing_extra = explain(exc, "augmenter chat") if isinstance(exc, ImportError) else None
            if missing_extra is not None:
                raise missing_extra from None
            reason = str(exc) if isinstance(exc, AugmenterError) else f"crash: {type(exc).__name__}: {exc}"
            _write(sink, _record(session_id, turn, WorkingMemory(q=utterance, outcome="failed", warnings=[reason])))
            if isinstance(exc, LLMFatalError):
                raise
            if isinstance(exc, CircuitOpenError):
                console.print(safe(("the LLM backend looks down: " + one_line(exc), "bold red")))
            else:  # a bug: this turn is lost, the session is not
                logging.getLogger(__name__).debug("turn %d crashed", turn, exc_info=True)
                console.print(safe(("this turn failed: " + one_line(reason), "bold red")))
            continue
        _write(sink, _record(session_id, turn, mem))
        _show(mem, console, trace)
    return turns


def chat(args: argparse.Namespace) -> int:
    """A conversation. Script and output are checked before the model loads; a turn the LLM fails is shown,
    recorded and the session goes on; a rejected key (LLMFatalError) ends it with exit code 2."""
    from rich.console import Console

    from augmenter.api import Assistant
    from augmenter.cli.draft import DraftPrinter
    from augmenter.cli.safe_text import safe
    from augmenter.config import compose

    console = Console(highlight=False)
    cfg = compose("chat", [*DEMOS.get(args.demo or "", []), *args.overrides])
    trace = args.trace or bool(cfg.trace)
    script = args.script or cfg.script
    output = args.output or cfg.output
    scripted = read_script(script) if script else None  # fails early, before loading the model
    if args.demo == "docs":
        from augmenter.documents.handbook import DEMO_SCRIPT

        scripted = list(DEMO_SCRIPT)
    elif args.demo:
        from augmenter.knowledge.demo import DEMO_SCRIPT

        scripted = list(DEMO_SCRIPT)
    sink = _open_output(output) if output else None
    drafts = DraftPrinter(console)
    try:
        with console.status("loading knowledge and model..."):
            session = Assistant.from_config(cfg, callbacks=[drafts]).session()
        turns = _converse(session, _utterances(scripted, console), console, sink, trace, drafts)
    finally:
        if sink:
            sink.close()
    if output:
        console.print(safe((f"{turns} turns written to {output}", "dim")))
    return 0
