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
import re
import sys
from collections.abc import Sequence

from augmenter.cli.chat import DEMOS
from augmenter.cli.commands import COMMANDS, Command
from augmenter.errors import AugmenterError
from augmenter.extras import explain, require


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

    def __init__(self, *args, config_name: str | None = None, settings: Sequence[str] = (), **kwargs):
        super().__init__(*args, formatter_class=argparse.RawDescriptionHelpFormatter, **kwargs)
        self.config_name, self.settings = config_name, settings

    def format_help(self) -> str:
        if self.config_name and self.epilog is None:
            from augmenter.cli.groups import groups_help, settings_help

            self.epilog = groups_help(self.config_name)
            if self.settings:
                self.epilog += "\n\n" + settings_help(self.config_name, self.settings)
        return super().format_help()


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("augmenter")
    except PackageNotFoundError:  # run from a source tree that was never installed
        return "unknown (not installed)"


def _add_verbosity(parser: argparse.ArgumentParser, default) -> None:
    group = parser.add_mutually_exclusive_group()
    group.add_argument(
        "-v",
        "--verbose",
        dest="verbosity",
        action="store_const",
        const=1,
        default=default,
        help="show augmenter's debug log lines",
    )
    group.add_argument(
        "-q", "--quiet", dest="verbosity", action="store_const", const=-1, default=default, help="show only errors"
    )


def _add_command(sub, command: Command) -> argparse.ArgumentParser:
    """A command's parser: -v/-q (after the command too; unset: the top level's), --cfg, then its own arguments."""
    parser = sub.add_parser(
        command.name, help=command.help, description=command.help, config_name=command.config, settings=command.settings
    )
    _add_verbosity(parser, argparse.SUPPRESS)
    if command.takes_cfg:
        parser.add_argument(
            "--cfg", choices=["job"], help="print the composed config (YAML) and exit, loading no model"
        )
    command.arguments(parser)
    return parser


def _parser() -> tuple[argparse.ArgumentParser, dict[str, argparse.ArgumentParser]]:
    """The top-level parser and each command's, from `COMMANDS`."""
    parser = _Parser(
        prog="augmenter",
        description=__doc__.split("\n\n")[0],
        epilog="augmenter COMMAND --help lists the command's config groups, options and settings.",
    )
    parser.add_argument("--version", action="version", version=f"augmenter {_version()}")
    _add_verbosity(parser, 0)
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_CommandParser)
    return parser, {name: _add_command(sub, command) for name, command in COMMANDS.items()}


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """Flags and overrides in any order: argparse takes the positionals before the first flag, the rest come back
    unrecognised and join the overrides in their order (`ground` tells its run directories from them by "=").
    An unknown flag, or an override to a command that takes none, is a usage error (exit code 2)."""
    parser, commands = _parser()
    argv = list(sys.argv[1:] if argv is None else argv)
    # `grid --ray key=value`: an override after --ray is not the cluster's address
    if "grid" in argv:
        argv = ["--ray=local" if a == "--ray" and "=" in (argv[i + 1 :] or [""])[0] else a for i, a in enumerate(argv)]
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


def main(argv: Sequence[str] | None = None) -> int:
    """Parse, check the command's extra, run it (or print its config with --cfg job); the exit code. Errors in
    configuration, data or input are one line on stderr (exit code 2)."""
    from augmenter.cli.log import setup_logging

    args = parse_args(argv)
    setup_logging(args.verbosity)
    command = COMMANDS[args.command]
    try:
        if getattr(args, "cfg", None):
            return show_config(command.config, [*DEMOS.get(getattr(args, "demo", None) or "", []), *args.overrides])
        if command.extra:
            require(command.extra, f"augmenter {command.name}", command.modules)
        return command.handler(args)
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
