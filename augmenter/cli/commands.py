"""The `augmenter` commands, one `Command` each in `COMMANDS` (in the order --help lists them): its arguments, the
extra it needs, the config its overrides compose, the settings its --help lists, whether it takes `--cfg job`, and
the function that runs it. `augmenter.cli.main` derives the parser, the extra checks and the dispatch from it."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass

from augmenter.cli import chat, conversations, documents, jobs

Arguments = Callable[[argparse.ArgumentParser], None]


@dataclass(frozen=True)
class Command:
    """`help`: the summary (its --help's description too). `extra`: the pip extra it needs beyond the core, checked
    before it runs (`modules`: which of the extra's modules, None: all). `config`: the primary config its overrides
    compose; its --help lists that config's groups and the `settings` nodes with their defaults, and `takes_cfg`
    adds `--cfg job`. `arguments` adds its own arguments; `handler` runs it and returns the exit code."""

    name: str
    help: str
    handler: Callable[[argparse.Namespace], int]
    arguments: Arguments
    extra: str | None = None
    modules: tuple[str, ...] | None = None
    config: str | None = None
    settings: tuple[str, ...] = ()
    takes_cfg: bool = False


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


def _overrides(help: str) -> Arguments:
    """A command whose only arguments are Hydra overrides."""
    return lambda parser: parser.add_argument("overrides", nargs="*", help=help)


def _chat(p: argparse.ArgumentParser) -> None:
    p.add_argument("--trace", action="store_true", help="show actions, evidence, candidates, scores, feedback")
    p.add_argument("--script", help="file of user utterances, one per line (non-interactive)")
    p.add_argument("--output", help="write every turn's Working Memory as JSONL to this file")
    p.add_argument(
        "--demo",
        nargs="?",
        const="travel",
        metavar="NAME",
        help="run a built-in demo conversation: travel (the default: hotels and restaurants) or docs "
        "(a staff handbook of Markdown, HTML, PDF and Word files; task=docs)",
    )
    p.add_argument("overrides", nargs="*", help="Hydra overrides, e.g. policy=self_ask llm=openai")


def _grid(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--only",
        default="table2,table4,fig4,fig5",
        help="comma-separated experiment names or prefixes to run (default: table2,table4,fig4,fig5)",
    )
    p.add_argument(
        "--ray",
        nargs="?",
        const="local",
        metavar="ADDRESS",
        help="run on Ray, each (experiment, shard of turns) a task: no ADDRESS starts a local Ray "
        "instance; 'auto' or 'ray://host:port' connects to a running cluster",
    )
    p.add_argument("--shard-size", type=_positive, default=20, help="with --ray: turns per Ray task (default: 20)")
    p.add_argument(
        "--retries",
        type=_count,
        default=2,
        help="with --ray: times a shard whose task failed is sent again (default: 2)",
    )
    p.add_argument("overrides", nargs="*", help="Hydra overrides applied to every experiment")


def _report(p: argparse.ArgumentParser) -> None:
    p.add_argument("runs", nargs="*", help="sample directories (default: every one under runs/eval)")
    p.add_argument("--out", help="where to write report.md and the PNGs (default: each sample directory)")
    p.add_argument("--no-bertscore", action="store_true", help="skip BERTScore (loads the MiniLM encoder)")


def _ground(p: argparse.ArgumentParser) -> None:
    p.add_argument("runs", nargs="+", help="run directories or sample directories (every run inside)")
    p.add_argument("--verifier", default="fast", choices=("fast", "llm", "combined"), help="default: fast")
    p.add_argument("--only", help="comma-separated run names (in sample directories)")
    p.add_argument("overrides", nargs="*", help="Hydra overrides, e.g. llm=openai (for the llm/combined verifier)")


def _curve(p: argparse.ArgumentParser) -> None:
    p.add_argument("runs", nargs="+", help="a training run's directory, e.g. runs/train/t5 (with --tradeoff: several)")
    p.add_argument("--out", help="where to write fig3.png and curve.md (default: the run's directory)")
    p.add_argument(
        "--tradeoff",
        action="store_true",
        help="KF1 against LLM calls of the final policies of runs that differ in their costs",
    )


def _judge(p: argparse.ArgumentParser) -> None:
    p.add_argument("runs", nargs="+", help="converse or eval run directories, or sample directories (every run)")
    p.add_argument("overrides", nargs="*", help="Hydra overrides, e.g. llm=openai judge.judges=[arena]")


def _index(p: argparse.ArgumentParser) -> None:
    p.add_argument("paths", nargs="*", metavar="PATH", help="folders (read recursively), files or globs")
    p.add_argument("--status", action="store_true", help="list the index's documents, chunks and skipped files")
    p.add_argument(
        "--index-dir",
        help="where the index lives (default: <cache>/documents/<name>-<hash of PATHs>, "
        "where knowledge=docs looks for it)",
    )
    p.add_argument(
        "--include",
        action="append",
        metavar="GLOB",
        help="index only files matching it (repeatable), e.g. '*.md' or 'policies/*' (default: the index's, or all)",
    )
    p.add_argument(
        "--exclude",
        action="append",
        metavar="GLOB",
        help="leave these files out (repeatable; default: the index's, or none)",
    )
    p.add_argument("--words", type=int, help="chunk size in words (default: the index's, or 200)")
    p.add_argument("--overlap", type=int, help="words a chunk repeats from the one before (default: 40)")
    p.add_argument("--max-file-mb", type=float, default=50.0, help="skip larger files (default: 50)")
    p.add_argument("--rebuild", action="store_true", help="read every file again, ignoring the previous index")


COMMANDS: dict[str, Command] = {
    c.name: c
    for c in [
        Command(
            "chat",
            "hold a grounded conversation (interactive, or from --script)",
            chat.chat,
            _chat,
            config="chat",
            settings=("agent",),
            takes_cfg=True,
        ),
        Command(
            "eval",
            "run one system configuration over a data set (resumable) and score it",
            jobs.evaluate,
            _overrides("Hydra overrides, e.g. experiment=table2_bm25 eval.limit=20"),
            extra="eval",
            config="eval",
            settings=("name", "eval"),
            takes_cfg=True,
        ),
        Command(
            "grid",
            "run the named experiment configs one after another (resumable)",
            jobs.run_grid,
            _grid,
            extra="eval",
            config="eval",
            settings=("eval",),
        ),
        Command(
            "report", "render tables (Markdown) and plots (PNG) from eval records", jobs.report, _report, extra="eval"
        ),
        Command(
            "ground",
            "judge every sent response's claims against the gold knowledge",
            jobs.ground,
            _ground,
            extra="eval",
            config="eval",
        ),
        Command(
            "precompute",
            "fill the LLM cache with every candidate a training episode can need",
            jobs.run_precompute,
            _overrides("Hydra overrides of the train config, e.g. env.train_limit=60"),
            extra="train",
            config="train",
            settings=("precompute", "env"),
            takes_cfg=True,
        ),
        Command(
            "train",
            "train a T5 policy in augmenter/Turn-v0 (resumable), then plot its curve",
            jobs.run_train,
            _overrides("Hydra overrides of the train config, e.g. train.seeds=[0,1,2,3,4]"),
            extra="train",
            config="train",
            settings=("train", "env"),
            takes_cfg=True,
        ),
        Command(
            "curve",
            "plot the learning curve of a training run (all its seeds)",
            jobs.curve,
            _curve,
            extra="train",
            modules=("matplotlib",),
        ),
        Command(
            "serve",
            "serve the chat as an OpenAI-compatible API with a web chat page",
            jobs.serve,
            _overrides("Hydra overrides, e.g. serve.port=8080 llm=openai"),
            extra="serve",
            config="serve",
            settings=("serve",),
            takes_cfg=True,
        ),
        Command(
            "converse",
            "simulated conversations between the LLM user simulator and one system (resumable)",
            conversations.converse,
            _overrides("Hydra overrides, e.g. experiment=table2_llm_only converse.turns=6"),
            extra="eval",
            config="converse",
            settings=("converse", "user_simulator"),
            takes_cfg=True,
        ),
        Command(
            "judge",
            "LLM judges (BotChat, WikiChat) over the conversations of several systems",
            conversations.judge,
            _judge,
            extra="eval",
            config="judge",
            settings=("judge", "elo"),
            takes_cfg=True,
        ),
        Command(
            "index",
            "index a folder of documents (.md .txt .pdf .html .docx) for knowledge=docs; re-run to update "
            "it (only changed files are read)",
            documents.index,
            _index,
            extra="docs",
        ),
    ]
}
