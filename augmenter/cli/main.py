"""`augmenter` console script.

    augmenter chat [--trace] [--script FILE] [--output FILE.jsonl] [hydra overrides ...]
    augmenter eval [hydra overrides ...]            e.g. experiment=table2_bm25_feedback eval.limit=200
    augmenter grid [--only PREFIX,...] [overrides]  configs/experiment/ configs in turn
    augmenter report [RUN_DIR ...] [--out DIR]      Markdown tables and PNG plots from the records
    augmenter ground DIR ... [--verifier fast]      share of sent responses with a claim the gold knowledge
                                                    does not support, "I don't know" rate (grounding-*.json)
    augmenter precompute [overrides]                fill the LLM cache with every candidate training can need
    augmenter train [overrides]                     T5 policy: behaviour cloning, then REINFORCE (resumable)
    augmenter curve RUN_DIR [--out DIR]             the learning curve (Fig. 3) of a training run's seeds
    augmenter curve --tradeoff RUN_DIR ... --out D  KF1 against LLM calls of runs with different costs

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
    ev = sub.add_parser("eval", help="run one system configuration over a data set (resumable) and score it")
    ev.add_argument("overrides", nargs="*", help="Hydra overrides, e.g. experiment=table2_bm25 eval.limit=20")
    grid = sub.add_parser("grid", help="run the named experiment configs one after another (resumable)")
    grid.add_argument("--only", default="table2,table4,fig4,fig5",
                      help="comma-separated experiment names or prefixes to run (default: table2,table4,fig4,fig5)")
    grid.add_argument("overrides", nargs="*", help="Hydra overrides applied to every experiment")
    report = sub.add_parser("report", help="render tables (Markdown) and plots (PNG) from eval records")
    report.add_argument("runs", nargs="*", help="sample directories (default: every one under runs/eval)")
    report.add_argument("--out", help="where to write report.md and the PNGs (default: each sample directory)")
    report.add_argument("--no-bertscore", action="store_true", help="skip BERTScore (loads the MiniLM encoder)")
    gr = sub.add_parser("ground", help="judge every sent response's claims against the gold knowledge")
    gr.add_argument("runs", nargs="+", help="run directories or sample directories (every run inside)")
    gr.add_argument("--verifier", default="fast", choices=("fast", "llm", "combined"), help="default: fast")
    gr.add_argument("--only", help="comma-separated run names (in sample directories)")
    gr.add_argument("overrides", nargs="*", help="Hydra overrides, e.g. llm=openai (for the llm/combined verifier)")
    pre = sub.add_parser("precompute", help="fill the LLM cache with every candidate a training episode can need")
    pre.add_argument("overrides", nargs="*", help="Hydra overrides of the train config, e.g. env.train_limit=60")
    tr = sub.add_parser("train", help="train a T5 policy in augmenter/Turn-v0 (resumable), then plot its curve")
    tr.add_argument("overrides", nargs="*", help="Hydra overrides of the train config, e.g. train.seeds=[0,1,2,3,4]")
    cu = sub.add_parser("curve", help="plot the learning curve of a training run (all its seeds)")
    cu.add_argument("runs", nargs="+", help="a training run's directory, e.g. runs/train/t5 (with --tradeoff: several)")
    cu.add_argument("--out", help="where to write fig3.png and curve.md (default: the run's directory)")
    cu.add_argument("--tradeoff", action="store_true",
                    help="KF1 against LLM calls of the final policies of runs that differ in their costs")
    return parser


def _utterances(scripted: Optional[list[str]], console):
    """The scripted lines (echoed), or lines typed at the prompt."""
    from rich.markup import escape

    if scripted is not None:
        for line in scripted:
            console.print(f"[bold green]user>[/bold green] {escape(line)}", highlight=False)
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

    from rich.markup import escape

    from augmenter.agent import Session
    from augmenter.cli.trace import show_sources, show_trace
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
            if sink:  # written before anything is shown
                sink.write(json.dumps({"session": session_id, "turn": i, "outcome": mem.outcome,
                                       "citations": mem.citation_records(),
                                       "memory": mem.model_dump(mode="json")}, ensure_ascii=False) + "\n")
                sink.flush()
            if trace:
                show_trace(mem, console)
            console.print(f"[bold blue]assistant>[/bold blue] {escape(mem.response or '')}", highlight=False)
            show_sources(mem, console)
    finally:
        if sink:
            sink.close()
    if output:
        console.print(f"[dim]{len(session.turns)} turns written to {output}[/dim]")
    return 0


def evaluate(args: argparse.Namespace) -> int:
    from augmenter.config import compose
    from augmenter.eval.runner import Evaluator

    summary = Evaluator(compose("eval", args.overrides)).run()
    _print_summary(summary)
    return 0


def _print_summary(summary: dict) -> None:
    metrics = ", ".join(f"{k} {v:.2f}" for k, v in summary.get("metrics", {}).items() if v is not None)
    cost = summary.get("cost", {})
    print(f"{summary['name']}: {summary['turns']} turns; {metrics}; "
          f"{cost.get('llm_calls', 0):.2f} LLM calls/turn -> {summary['run_dir']}")


def run_grid(args: argparse.Namespace) -> int:
    from augmenter.config import compose, group_options
    from augmenter.eval.runner import Evaluator

    names = group_options("experiment")
    wanted = [w.strip() for w in args.only.split(",") if w.strip()]
    chosen = list(dict.fromkeys(n for w in wanted for n in names if n == w or n.startswith(w)))
    if not chosen:
        raise InputError(f"no experiment matches {' '.join(wanted)}; known: {', '.join(names)}")
    for name in chosen:
        _print_summary(Evaluator(compose("eval", [f"experiment={name}", *args.overrides])).run())
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
    from augmenter.config import compose
    from augmenter.envs.precompute import run

    summary = run(compose("train", args.overrides))
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
    from augmenter.config import build_agent, compose
    from augmenter.envs.turn_env import build_env
    from augmenter.eval.curve import write_curve
    from augmenter.policies.training import Trainer, baselines

    cfg = compose("train", args.overrides)
    seeds = list(cfg.train.seeds) if cfg.train.seeds else [cfg.train.seed]
    agent = build_agent(cfg)
    train_env, heldout_env = build_env(cfg, "train", agent), build_env(cfg, "heldout", agent)
    print(f"{len(train_env.users)} training turns, {len(heldout_env.users)} held-out turns")
    for seed in seeds:
        info = Trainer(cfg, seed, train_env, heldout_env).run()
        print(f"seed {seed}: {info['episodes']} episodes"
              + (f" (resumed from {info['resumed_from']})" if info["resumed_from"] is not None else "")
              + f" -> {info['run_dir']}/policy.pt")
    name_dir = Path(cfg.train.out_dir) / cfg.train.name
    baselines(cfg, heldout_env, name_dir)
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


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = _parser().parse_args(argv)
    try:
        return {"chat": chat, "eval": evaluate, "grid": run_grid, "report": report, "ground": ground,
                "precompute": run_precompute, "train": run_train, "curve": curve}[args.command](args)
    except AugmenterError as exc:
        print(f"augmenter: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
