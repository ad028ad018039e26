"""`augmenter` console script.

    augmenter chat [--trace] [--script FILE] [--output FILE.jsonl] [hydra overrides ...]

Overrides are Hydra's `key=value` / `group=option`, e.g. `policy=self_ask utility=self_critique task=dstc11`.
Errors in configuration, data or input are printed as one line (exit code 2), never as a traceback.
"""

from __future__ import annotations

import argparse
import json
import sys
import uuid
from pathlib import Path
from typing import Optional, Sequence

from augmenter.errors import AugmenterError, InputError


def read_script(path: str | Path) -> list[str]:
    """User utterances, one per line; blank lines and lines starting with '#' are skipped."""
    path = Path(path)
    if not path.exists():
        raise InputError(f"script file not found: {path}")
    raw = path.read_bytes()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise InputError(f"{path}: not UTF-8 text (byte 0x{raw[exc.start]:02x} on line {line}); "
                         "save the script as UTF-8") from None
    return [ln.strip() for ln in text.splitlines() if ln.strip() and not ln.lstrip().startswith("#")]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="augmenter", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    chat = sub.add_parser("chat", help="hold a grounded conversation (interactive, or from --script)")
    chat.add_argument("--trace", action="store_true", help="show actions, evidence, candidates, scores, feedback")
    chat.add_argument("--script", help="file of user utterances, one per line (non-interactive)")
    chat.add_argument("--output", help="write every turn's Working Memory as JSONL to this file")
    chat.add_argument("--demo", action="store_true", help="run the built-in demo conversation")
    chat.add_argument("overrides", nargs="*", help="Hydra overrides, e.g. policy=self_ask llm=openai")
    return parser


def _utterances(scripted: Optional[list[str]], console):
    """The scripted lines (echoed), or lines typed at the prompt."""
    if scripted is not None:
        for line in scripted:
            console.print(f"[bold green]user>[/bold green] {line}", highlight=False)
            yield line
        return
    console.print("[dim]Type a message; an empty line or Ctrl-D ends the session.[/dim]")
    while True:
        try:
            line = console.input("[bold green]user>[/bold green] ")
        except (EOFError, KeyboardInterrupt):
            console.print()
            return
        if not line.strip():
            return
        yield line


def chat(args: argparse.Namespace) -> int:
    from rich.console import Console

    from augmenter.agent import Session
    from augmenter.cli.trace import show_trace
    from augmenter.config import build_agent, compose

    console = Console(highlight=False)
    cfg = compose("chat", args.overrides)
    trace = args.trace or bool(cfg.trace)
    script = args.script or cfg.script
    output = args.output or cfg.output
    scripted = read_script(script) if script else None  # fails early, before loading the model
    if args.demo:
        from augmenter.knowledge.demo import DEMO_SCRIPT

        scripted = list(DEMO_SCRIPT)
    with console.status("loading knowledge and model..."):
        session = Session(build_agent(cfg))
    session_id = uuid.uuid4().hex[:8]
    sink = None
    if output:
        Path(output).parent.mkdir(parents=True, exist_ok=True)
        sink = open(output, "a", encoding="utf-8")
    try:
        for i, utterance in enumerate(_utterances(scripted, console)):
            with console.status("thinking..."):
                mem = session.say(utterance)
            if trace:
                show_trace(mem, console)
            console.print(f"[bold blue]assistant>[/bold blue] {mem.response}", highlight=False)
            if sink:
                sink.write(json.dumps({"session": session_id, "turn": i, "memory": mem.model_dump(mode="json")},
                                      ensure_ascii=False) + "\n")
                sink.flush()
    finally:
        if sink:
            sink.close()
    if output:
        console.print(f"[dim]{len(session.turns)} turns written to {output}[/dim]")
    return 0


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = _parser().parse_args(argv)
    try:
        return {"chat": chat}[args.command](args)
    except AugmenterError as exc:
        print(f"augmenter: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
