"""`augmenter` console script.

    augmenter chat [--trace] [--script FILE] [--output FILE.jsonl] [hydra overrides ...]
    augmenter eval [hydra overrides ...]            e.g. experiment=table2_bm25_feedback eval.limit=200
    augmenter grid [--only PREFIX,...] [overrides]  configs/experiment/ configs in turn
    augmenter grid --ray [ADDRESS] [--shard-size N]  ... as Ray tasks (local, or a running cluster)
    augmenter report [RUN_DIR ...] [--out DIR]      Markdown tables and PNG plots from the records
    augmenter ground DIR ... [--verifier fast]      share of sent responses with a claim the gold knowledge
                                                    does not support, "I don't know" rate (grounding-*.json)
    augmenter precompute [overrides]                fill the LLM cache with every candidate training can need
    augmenter train [overrides]                     T5 policy: behaviour cloning, then REINFORCE (resumable)
    augmenter curve RUN_DIR [--out DIR]             the learning curve (Fig. 3) of a training run's seeds
    augmenter curve --tradeoff RUN_DIR ... --out D  KF1 against LLM calls of runs with different costs
    augmenter serve [overrides]                     OpenAI-compatible API and web chat, e.g. serve.port=8080
    augmenter converse [overrides]                  simulated conversations of one system with the LLM user
                                                    simulator (resumable), e.g. converse.conversations=50
    augmenter judge RUN_DIR ... [overrides]         LLM judges over several systems' conversations: Bootstrap
                                                    Elo, GTEval, UniEval, WikiChat's scores, judge validity
    augmenter index PATH... [--status]              index a folder of documents for knowledge=docs (re-run:
                                                    only changed files are read); --status lists it

Overrides are Hydra's `key=value` / `group=option`, e.g. `policy=self_ask utility=self_critique task=dstc11`, before,
between or after the flags; `augmenter COMMAND --help` lists every config group with its options and the command's
own settings with their defaults, and `--cfg job` prints the composed config (chat, eval, precompute, train). `-v`
shows augmenter's debug log lines, `-q` only errors. Errors in configuration, data or input (a missing extra too)
are printed as one line (exit code 2), never as a traceback; an unknown name suggests the closest valid one.
"""

from __future__ import annotations

import argparse
import codecs
import json
import logging
import os
import re
import sys
import uuid
from pathlib import Path
from typing import Iterable, Optional, Sequence, TextIO

from augmenter.errors import AugmenterError, CircuitOpenError, InputError, LLMFatalError
from augmenter.extras import explain, require

DEMOS = {"travel": [], "docs": ["task=docs"]}  # `chat --demo NAME`: the overrides it starts from
QUIT = {"quit", "exit", ":q"}  # typed or scripted, these end a chat without reaching the model
# the extra each command needs beyond the core, and its modules checked (None: all); chat checks its parts as built
EXTRAS = {"serve": ("serve", None), "eval": ("eval", None), "grid": ("eval", None), "report": ("eval", None),
          "ground": ("eval", None), "converse": ("eval", None), "judge": ("eval", None), "precompute": ("train", None),
          "train": ("train", None), "curve": ("train", ("matplotlib",)), "index": ("docs", None)}
# the nodes of settings each command's --help lists with their defaults
SETTINGS = {"chat": ("agent",), "serve": ("serve",), "eval": ("name", "eval"), "grid": ("eval",),
            "precompute": ("precompute", "env"), "train": ("train", "env"), "converse": ("converse", "user_simulator"),
            "judge": ("judge", "elo")}
CONFIGS = {"chat": "chat", "eval": "eval", "grid": "eval", "ground": "eval", "precompute": "train", "train": "train",
           "serve": "serve", "converse": "converse", "judge": "judge"}


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
        raise InputError(f"{path}: not UTF-8 text (byte 0x{raw[exc.start]:02x} on line {line}); "
                         "save the script as UTF-8") from None
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


class _Parser(argparse.ArgumentParser):
    """A parser whose "invalid choice" errors suggest the closest choice."""

    def error(self, message: str):
        from augmenter.text import did_you_mean

        found = re.search(r"invalid choice: '([^']*)' \(choose from (.*)\)", message)
        if found:
            message += did_you_mean(found.group(1), re.findall(r"'([^']*)'", found.group(2)))
        super().error(message)


class _CommandParser(_Parser):
    """A command's parser: its help ends with the config groups of its primary config (read only when shown)."""

    def __init__(self, *args, config_name: Optional[str] = None, settings: Sequence[str] = (), **kwargs):
        super().__init__(*args, formatter_class=argparse.RawDescriptionHelpFormatter, **kwargs)
        self.config_name, self.settings = config_name, settings

    def format_help(self) -> str:
        if self.config_name and self.epilog is None:
            from augmenter.cli.groups import groups_help, settings_help

            self.epilog = groups_help(self.config_name)
            if self.settings:
                self.epilog += "\n\n" + settings_help(self.config_name, self.settings)
        return super().format_help()


def _positive(text: str) -> int:
    value = _count(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 1, got {text!r}")
    return value


def _count(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 0, got {text!r}")
    return value


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("augmenter")
    except PackageNotFoundError:  # run from a source tree that was never installed
        return "unknown (not installed)"


def _add_verbosity(parser: argparse.ArgumentParser, default) -> None:
    group = parser.add_mutually_exclusive_group()
    group.add_argument("-v", "--verbose", dest="verbosity", action="store_const", const=1, default=default,
                       help="show augmenter's debug log lines")
    group.add_argument("-q", "--quiet", dest="verbosity", action="store_const", const=-1, default=default,
                       help="show only errors")


def _parser() -> tuple[argparse.ArgumentParser, dict[str, argparse.ArgumentParser]]:
    """The top-level parser and each command's."""
    parser = _Parser(prog="augmenter", description=__doc__.split("\n\n")[0],
                     epilog="augmenter COMMAND --help lists the command's config groups, options and settings.")
    parser.add_argument("--version", action="version", version=f"augmenter {_version()}")
    _add_verbosity(parser, 0)
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_CommandParser)
    commands: dict[str, argparse.ArgumentParser] = {}

    def command(name: str, summary: str) -> argparse.ArgumentParser:
        commands[name] = sub.add_parser(name, help=summary, description=summary, config_name=CONFIGS.get(name),
                                        settings=SETTINGS.get(name, ()))
        _add_verbosity(commands[name], argparse.SUPPRESS)  # after the command too; unset: the top level's
        if name in ("chat", "eval", "precompute", "train", "serve", "converse", "judge"):
            commands[name].add_argument("--cfg", choices=["job"],
                                        help="print the composed config (YAML) and exit, loading no model")
        return commands[name]

    chat = command("chat", "hold a grounded conversation (interactive, or from --script)")
    chat.add_argument("--trace", action="store_true", help="show actions, evidence, candidates, scores, feedback")
    chat.add_argument("--script", help="file of user utterances, one per line (non-interactive)")
    chat.add_argument("--output", help="write every turn's Working Memory as JSONL to this file")
    chat.add_argument("--demo", nargs="?", const="travel", metavar="NAME",
                      help="run a built-in demo conversation: travel (the default: hotels and restaurants) or docs "
                           "(a staff handbook of Markdown, HTML, PDF and Word files; task=docs)")
    chat.add_argument("overrides", nargs="*", help="Hydra overrides, e.g. policy=self_ask llm=openai")
    ev = command("eval", "run one system configuration over a data set (resumable) and score it")
    ev.add_argument("overrides", nargs="*", help="Hydra overrides, e.g. experiment=table2_bm25 eval.limit=20")
    grid = command("grid", "run the named experiment configs one after another (resumable)")
    grid.add_argument("--only", default="table2,table4,fig4,fig5",
                      help="comma-separated experiment names or prefixes to run (default: table2,table4,fig4,fig5)")
    grid.add_argument("--ray", nargs="?", const="local", metavar="ADDRESS",
                      help="run on Ray, each (experiment, shard of turns) a task: no ADDRESS starts a local Ray "
                           "instance; 'auto' or 'ray://host:port' connects to a running cluster")
    grid.add_argument("--shard-size", type=_positive, default=20, help="with --ray: turns per Ray task (default: 20)")
    grid.add_argument("--retries", type=_count, default=2,
                      help="with --ray: times a shard whose task failed is sent again (default: 2)")
    grid.add_argument("overrides", nargs="*", help="Hydra overrides applied to every experiment")
    report = command("report", "render tables (Markdown) and plots (PNG) from eval records")
    report.add_argument("runs", nargs="*", help="sample directories (default: every one under runs/eval)")
    report.add_argument("--out", help="where to write report.md and the PNGs (default: each sample directory)")
    report.add_argument("--no-bertscore", action="store_true", help="skip BERTScore (loads the MiniLM encoder)")
    gr = command("ground", "judge every sent response's claims against the gold knowledge")
    gr.add_argument("runs", nargs="+", help="run directories or sample directories (every run inside)")
    gr.add_argument("--verifier", default="fast", choices=("fast", "llm", "combined"), help="default: fast")
    gr.add_argument("--only", help="comma-separated run names (in sample directories)")
    gr.add_argument("overrides", nargs="*", help="Hydra overrides, e.g. llm=openai (for the llm/combined verifier)")
    pre = command("precompute", "fill the LLM cache with every candidate a training episode can need")
    pre.add_argument("overrides", nargs="*", help="Hydra overrides of the train config, e.g. env.train_limit=60")
    tr = command("train", "train a T5 policy in augmenter/Turn-v0 (resumable), then plot its curve")
    tr.add_argument("overrides", nargs="*", help="Hydra overrides of the train config, e.g. train.seeds=[0,1,2,3,4]")
    cu = command("curve", "plot the learning curve of a training run (all its seeds)")
    cu.add_argument("runs", nargs="+", help="a training run's directory, e.g. runs/train/t5 (with --tradeoff: several)")
    cu.add_argument("--out", help="where to write fig3.png and curve.md (default: the run's directory)")
    cu.add_argument("--tradeoff", action="store_true",
                    help="KF1 against LLM calls of the final policies of runs that differ in their costs")
    srv = command("serve", "serve the chat as an OpenAI-compatible API with a web chat page")
    srv.add_argument("overrides", nargs="*", help="Hydra overrides, e.g. serve.port=8080 llm=openai")
    from augmenter.cli.conversations import add_commands
    from augmenter.cli.documents import add_command as add_index

    add_commands(command)  # converse, judge
    add_index(command)  # index
    return parser, commands


def parse_args(argv: Optional[Sequence[str]] = None) -> argparse.Namespace:
    """Flags and overrides in any order: argparse takes the positionals before the first flag, the rest come back
    unrecognised and join the overrides in their order (`ground` tells its run directories from them by "=").
    An unknown flag, or an override to a command that takes none, is a usage error (exit code 2)."""
    parser, commands = _parser()
    argv = list(sys.argv[1:] if argv is None else argv)
    # `grid --ray key=value`: an override after --ray is not the cluster's address
    if "grid" in argv:
        argv = ["--ray=local" if a == "--ray" and "=" in (argv[i + 1:] or [""])[0] else a for i, a in enumerate(argv)]
    args, rest = parser.parse_known_args(argv)
    if getattr(args, "demo", None) and args.demo not in DEMOS:  # `--demo key=value`: an override, not a demo's name
        if "=" not in args.demo:
            commands[args.command].error(f"no demo named {args.demo!r} (demos: {', '.join(DEMOS)})")
        args.overrides.insert(0, args.demo)
        args.demo = "travel"
    if "paths" in args:  # index: paths after a flag come back unrecognised
        args.paths += [a for a in rest if not a.startswith("-")]
        rest = [a for a in rest if a.startswith("-")]
    stray = [a for a in rest if a.startswith("-") or "overrides" not in args]
    if stray:
        from augmenter.text import did_you_mean

        known = [o for action in commands[args.command]._actions for o in action.option_strings]
        hint = did_you_mean(stray[0].split("=")[0], known) if stray[0].startswith("-") else ""
        commands[args.command].error(f"unrecognized arguments: {' '.join(stray)}{hint}")
    if "runs" in args and "overrides" in args:  # ground: run directories and overrides, told apart by "="
        tokens = args.runs + args.overrides + rest
        args.runs, args.overrides = [t for t in tokens if "=" not in t], [t for t in tokens if "=" in t]
        if not args.runs:
            commands[args.command].error("no run directory given")
    elif rest:
        args.overrides += rest
    return args


def show_config(config_name: str, overrides: Sequence[str]) -> int:
    """Hydra's `--cfg job`: the composed config as YAML, interpolations resolved, secrets masked; no model loads."""
    from omegaconf import OmegaConf

    from augmenter.config import compose
    from augmenter.redact import redact

    print(redact(OmegaConf.to_yaml(compose(config_name, overrides), resolve=True)), end="")
    return 0


def _utterances(scripted: Optional[list[str]], console) -> Iterable[str]:
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
    return {**record, "outcome": mem.outcome, "citations": mem.citation_records(),
            "memory": mem.model_dump(mode="json")}


def _write(sink: Optional[TextIO], record: dict) -> None:
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


def _converse(session, utterances: Iterable[str], console, sink: Optional[TextIO], trace: bool, drafts=None) -> int:
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

    from augmenter.agent import Session
    from augmenter.cli.draft import DraftPrinter
    from augmenter.cli.safe_text import safe
    from augmenter.config import build_agent, compose

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
            session = Session(build_agent(cfg, callbacks=[drafts]))
        turns = _converse(session, _utterances(scripted, console), console, sink, trace, drafts)
    finally:
        if sink:
            sink.close()
    if output:
        console.print(safe((f"{turns} turns written to {output}", "dim")))
    return 0


def _evaluator(cfg):
    from augmenter.config import build_evaluator

    return build_evaluator(cfg)


def evaluate(args: argparse.Namespace) -> int:
    from augmenter.config import compose

    summary = _evaluator(compose("eval", args.overrides)).run()
    _print_summary(summary)
    return 0


def _print_summary(summary: dict) -> None:
    """One line per run, every figure with its unit; a run with failed or missing turns says so."""
    units = {"length": "words", "answer_recall@5": "%"}  # every other metric is a percentage
    metrics = ", ".join(f"{k} {v:.2f} ({units.get(k, '%')})" for k, v in summary.get("metrics", {}).items()
                        if v is not None)
    cost = summary.get("cost", {})
    failed, pending = summary.get("failed", 0), summary.get("pending", 0)
    counts = f"{summary.get('ok', summary['turns'])} of {summary['turns']} turns scored"
    if failed:
        counts += f", {failed} failed (most common: {next(iter(summary['failure_reasons']))})"
    if pending:
        counts += f", {pending} not run"
    figures = (f"{metrics}; LLM calls {cost.get('llm_calls', 0):.2f} (per turn), "
               f"wall time {cost.get('turn_seconds', 0):.2f} (s per turn)") if metrics else "nothing scored"
    print(f"{summary['name']}: {counts}; {figures} -> {summary['run_dir']}")


def run_grid(args: argparse.Namespace) -> int:
    """Each chosen experiment in turn. One with too many failed turns does not stop the grid (it exits 2 at the
    end, naming them); a fatal LLM error or an open circuit breaker stops it at once."""
    from augmenter.config import compose, group_options
    from augmenter.eval.runner import EvalFailed

    names = group_options("experiment")
    wanted = [w.strip() for w in args.only.split(",") if w.strip()]
    chosen = list(dict.fromkeys(n for w in wanted for n in names if n == w or n.startswith(w)))
    if not chosen:
        raise InputError(f"no experiment matches {' '.join(wanted)}; known: {', '.join(names)}")
    if args.ray is not None:
        return _grid_on_ray(args, chosen)
    failed = []
    for name in chosen:
        try:
            _print_summary(_evaluator(compose("eval", [f"experiment={name}", *args.overrides])).run())
        except EvalFailed as exc:
            if exc.summary:
                _print_summary(exc.summary)
            print(f"augmenter: {exc}", file=sys.stderr)
            failed.append(name)
    if failed:
        raise EvalFailed(f"{len(failed)} of {len(chosen)} experiments have more failed turns than eval.max_failed "
                         f"allows: {', '.join(failed)}; run the grid again to retry their failed turns")
    return 0


def worker_logging() -> None:
    """A Ray worker's logging, as the driver's (`AUGMENTER_VERBOSITY`, set by `grid --ray`)."""
    from augmenter.cli.log import setup_logging

    setup_logging(max(-1, min(1, int(os.environ.get("AUGMENTER_VERBOSITY") or 0))))


def _grid_on_ray(args: argparse.Namespace, chosen: list[str]) -> int:
    """`grid --ray`: every chosen experiment's shards as Ray tasks, written by this process alone."""
    from augmenter.api.distributed import grid_jobs, worker_evaluator
    from augmenter.eval.distributed import connect, ray_module, run_grid
    from augmenter.eval.runner import EvalFailed

    ray_module()  # a missing install is one line before anything is composed
    jobs = grid_jobs(chosen, args.overrides)
    started = connect(args.ray, {"worker_process_setup_hook": "augmenter.cli.main.worker_logging",  # log as here
                                 "env_vars": {"AUGMENTER_VERBOSITY": str(args.verbosity)}})
    try:
        outcomes = run_grid(jobs, worker_evaluator, shard_size=args.shard_size, retries=args.retries,
                            progress=all(job.evaluator.cfg.eval.progress for job in jobs))
    finally:
        if started:
            ray_module().shutdown()
    for outcome in outcomes:
        _print_summary(outcome.summary)
        if outcome.error:
            print(f"augmenter: {outcome.error}", file=sys.stderr)
    print(f"ray: {sum(o.answered for o in outcomes)} turns answered in this run", file=sys.stderr)
    failed = [o.name for o in outcomes if o.error]
    if failed:
        raise EvalFailed(f"{len(failed)} of {len(outcomes)} experiments need another run (failed or unanswered "
                         f"turns): {', '.join(failed)}; run the grid again to retry them")
    return 0


def report(args: argparse.Namespace) -> int:
    from augmenter.eval.report import write_report

    runs = [Path(r) for r in args.runs] or sorted(p for p in Path("runs/eval").glob("*") if p.is_dir())
    if not runs:
        raise InputError("no eval runs found: give sample directories (e.g. runs/eval/dstc11-dev-n200-seed0)")
    for run in runs:
        if not run.is_dir():
            raise InputError(f"not a directory of eval runs: {run}")
        out = write_report(run, Path(args.out) if args.out else run, with_bertscore=not args.no_bertscore)
        print(f"{run}: report in {out}")
    return 0


def ground(args: argparse.Namespace) -> int:
    from augmenter.config import build_llm, compose, instantiate
    from augmenter.eval.grounding import ground_run

    cfg = compose("eval", [f"verifier={args.verifier}", "experiment=table2_bm25", *args.overrides])
    llm = build_llm(cfg) if args.verifier != "fast" else None
    verifier = instantiate(cfg.verifier, "verifier", llm=llm, prompts=instantiate(cfg.prompt, "prompt"))
    try:  # gold snippets by id (with their entity's name); without DSTC11 at hand, the records' gold texts
        knowledge = instantiate(cfg.knowledge, "knowledge")
    except AugmenterError:
        knowledge = None
    only = set(args.only.split(",")) if args.only else None
    dirs = []
    for path in map(Path, args.runs):
        if (path / "records.jsonl").exists():
            dirs.append(path)
        elif path.is_dir():
            dirs += sorted(p for p in path.iterdir() if (p / "records.jsonl").exists() and (not only or p.name in only))
        else:
            raise InputError(f"not a run or sample directory: {path}")
    if not dirs:
        raise InputError("no runs with records.jsonl found")
    for d in dirs:
        result = ground_run(d, verifier, args.verifier, knowledge)
        if not result["turns"]:
            print(f"{d.name}: no records")
            continue
        print(f"{d.name}: {result['unsupported_response_rate']:.1f}% of {result['turns']} responses carry an "
              f"unsupported claim; {result['idk_rate']:.1f}% say the knowledge does not answer; "
              f"{result['claims_per_response']:.2f} claims per response")
    return 0


def run_precompute(args: argparse.Namespace) -> int:
    from augmenter.api.envs import precompute
    from augmenter.config import compose

    summary = precompute(compose("train", args.overrides))
    for part, info in summary["parts"].items():
        print(f"{part}: {info['turns']} turns ({info['walked_now']} walked now, {info['new_llm_calls']} new LLM calls, "
              f"{info['seconds']} s)")
    totals = summary.get("log_totals")
    if totals:
        print(f"all {totals['turns']} turns of the log: {totals['states_per_turn']:.0f} states and "
              f"{totals['model_calls_per_turn']:.1f} model calls per turn, {totals['hours']:.2f} h in all")
    print(f"turns done are listed in {summary['log']}")
    return 0


def run_train(args: argparse.Namespace) -> int:
    """Each seed's run on one pair of environments (one agent), then the baselines and the learning curve."""
    from augmenter.api.envs import CALL_SHAPING, build_env, make_vector_env, named_policy
    from augmenter.config import compose
    from augmenter.eval.curve import write_curve
    from augmenter.fingerprint import fingerprint
    from augmenter.policies.training import Trainer, baselines

    cfg = compose("train", args.overrides)
    seeds = list(cfg.train.seeds) if cfg.train.seeds else [cfg.train.seed]
    train_env = build_env(cfg, "train")
    heldout_env = build_env(cfg, "heldout", train_env.agent)
    print(f"{len(train_env.users)} training turns, {len(heldout_env.users)} held-out turns")
    teacher = named_policy(cfg.train.teacher, "train.teacher")
    num_envs = int(cfg.train.get("num_envs") or 1)  # > 1: REINFORCE's rollouts on async sub-environments
    train_envs = make_vector_env(args.overrides, num_envs, "async", "train", cfg.agent.max_steps) if num_envs > 1 \
        else None
    try:
        for seed in seeds:
            info = Trainer(cfg, train_env, heldout_env, teacher, seed, train_envs).run()
            print(f"seed {seed}: {info['episodes']} episodes"
                  + (f" (resumed from {info['resumed_from']})" if info["resumed_from"] is not None else "")
                  + f" -> {info['run_dir']}/policy.pt")
    finally:
        if train_envs is not None:
            train_envs.close()
    name_dir = Path(cfg.train.out_dir) / cfg.train.name
    names = list(cfg.train.baselines)
    key = fingerprint(cfg, (*CALL_SHAPING, "env")) + str(names)  # the held-out scores of these baselines
    baselines(heldout_env, {name: named_policy(name, name) for name in names}, name_dir / "baselines.json", key)
    print(f"learning curve: {write_curve(name_dir) / 'fig3.png'}")
    return 0


def curve(args: argparse.Namespace) -> int:
    from augmenter.eval.curve import write_curve, write_tradeoff

    if args.tradeoff:
        print(f"trade-off: {write_tradeoff(args.runs, args.out or args.runs[0]) / 'tradeoff.png'}")
        return 0
    for run in args.runs:
        print(f"learning curve: {write_curve(run, args.out) / 'fig3.png'}")
    return 0


def serve(args: argparse.Namespace) -> int:
    """The service (augmenter.serve): the agents are built before anything listens, so errors are one line."""
    from augmenter.config import compose

    from augmenter.serve import run

    print("loading knowledge and model...", file=sys.stderr)
    return run(compose("serve", args.overrides))


def main(argv: Optional[Sequence[str]] = None) -> int:
    from augmenter.cli.conversations import converse, judge
    from augmenter.cli.documents import index
    from augmenter.cli.log import setup_logging

    args = parse_args(argv)
    setup_logging(args.verbosity)
    try:
        if getattr(args, "cfg", None):
            return show_config(CONFIGS[args.command], [*DEMOS.get(getattr(args, "demo", None) or "", []),
                                                       *args.overrides])
        if args.command in EXTRAS:
            extra, modules = EXTRAS[args.command]
            require(extra, f"augmenter {args.command}", modules)
        return {"chat": chat, "eval": evaluate, "grid": run_grid, "report": report, "ground": ground,
                "precompute": run_precompute, "train": run_train, "curve": curve, "serve": serve,
                "converse": converse, "judge": judge, "index": index}[args.command](args)
    except AugmenterError as exc:
        from augmenter.cli.safe_text import one_line

        print(f"augmenter: error: {one_line(exc)}", file=sys.stderr)
        return 2
    except ImportError as exc:  # an optional package imported where no check expected it: still one line
        missing_extra = explain(exc, f"augmenter {args.command}")
        if missing_extra is None:
            raise
        print(f"augmenter: error: {missing_extra}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
