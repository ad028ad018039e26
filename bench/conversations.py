"""Simulated conversations of several systems, then the LLM judges over them.

    python bench/conversations.py [--conversations 50] [--turns 6] [--seeds chat_seeds]
        [--systems table2_llm_only,table2_bm25_feedback,claims_bm25] [--judges arena,gteval,unieval,wikichat,checks]
        [--judge-args "llm=openai llm.base_url=http://127.0.0.1:8000/v1 llm.model=judge"] [converse overrides ...]

1. `augmenter converse experiment=<system> ...` for each system (LLM only, the paper's system, the claims system
   by default), with the same seeds, lengths and user simulator (resumable: a rerun skips what is recorded);
2. `augmenter judge <sample dir> ...` over all of them (Bootstrap Elo with intervals, GTEval, UniEval, WikiChat's
   five scores, judge validity, cost), with `--judge-args` (the judge model; the systems' model by default);
3. bench/results/conversations[-<tag>].json (+ .md, elo.png): the commands run, each system's conversation summary
   (turns, cost per conversation, replies repeating and dodging) and the judges' results.
Positional overrides go to every `converse` run (e.g. llm=..., data_root=..., converse.out_dir=...).
"""

from __future__ import annotations

import argparse
import json
import platform
import shlex
import shutil
import sys
import time
from pathlib import Path

from augmenter.api.conversations import sample_dir
from augmenter.cli.main import main as cli
from augmenter.config import compose

ROOT = Path(__file__).resolve().parents[1]
SYSTEMS = "table2_llm_only,table2_bm25_feedback,claims_bm25"  # LLM only, the paper's system, the claims system


def _run(argv: list[str], commands: list[str]) -> None:
    commands.append(shlex.join(["augmenter", *argv]))
    print(f"$ {commands[-1]}", flush=True)
    code = cli(argv)
    if code != 0:
        sys.exit(code)


def conversations_table(summaries: dict[str, dict]) -> str:
    """One row per system: conversations done, cost per conversation, replies flagged by the rule checks."""
    rows = [
        "## The conversations",
        "",
        "| system | ok | failed | pending | turns | assistant LLM calls | user LLM calls | s per conversation | "
        "replies repeating % | dodging % | echoing the user % | user messages by source |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for name, s in summaries.items():
        c = s.get("cost_per_conversation") or {}

        def num(v):
            return "-" if v is None else f"{v:.1f}"

        sources = ", ".join(f"{k} {v}" for k, v in (s.get("user_messages") or {}).items())
        if not s:
            rows.append(f"| {name} | no summary.json: run its `augmenter converse` again to write one |")
            continue
        rows.append(
            f"| {name} | {s['ok']} | {s['failed']} | {s['pending']} | {num(s.get('turns_per_conversation'))} "
            f"| {num(c.get('assistant_llm_calls'))} | {num(c.get('user_llm_calls'))} | {num(c.get('seconds'))} "
            f"| {num(s.get('replies_repeating_percent'))} | {num(s.get('replies_dodging_percent'))} "
            f"| {num(s.get('replies_echoing_user_percent'))} | {sources} |"
        )
    return "\n".join(rows) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--conversations", type=int, default=50)
    ap.add_argument("--turns", type=int, default=6)
    ap.add_argument("--seeds", default="chat_seeds", choices=("chat_seeds", "dstc11"))
    ap.add_argument("--systems", default=SYSTEMS, help="experiment names, comma-separated")
    ap.add_argument("--judges", default="arena,gteval,unieval,wikichat,checks")
    ap.add_argument("--judge-args", default="", help="overrides of `augmenter judge`, e.g. the judge model")
    ap.add_argument("--tag", default="", help="a suffix for the result files (e.g. the judge model's name)")
    ap.add_argument("--data-root", default=str(ROOT.parent / "shared" / "data"))
    ap.add_argument("--results", default=str(ROOT / "bench" / "results"), help="where the result files go")
    ap.add_argument(
        "--judge-only",
        action="store_true",
        help="judge the conversations recorded so far; run no `augmenter converse` (a partial run is "
        "judged as it stands and its summary says how many are pending)",
    )
    ap.add_argument("overrides", nargs="*", help="overrides of every `augmenter converse` run")
    args = ap.parse_args()
    systems = [s.strip() for s in args.systems.split(",") if s.strip()]
    common = [
        f"data_root={args.data_root}",
        f"converse.conversations={args.conversations}",
        f"converse.turns={args.turns}",
        f"converse.seeds={args.seeds}",
        *args.overrides,
    ]
    commands: list[str] = []
    start = time.perf_counter()
    for system in systems:
        if args.judge_only:
            commands.append(shlex.join(["augmenter", "converse", f"experiment={system}", *common]) + "  # earlier")
        else:
            _run(["converse", f"experiment={system}", *common], commands)
    cfg = compose("converse", [f"experiment={systems[0]}", *common])
    sample = sample_dir(cfg.converse)
    tag = f"-{args.tag}" if args.tag else ""
    out = sample / f"judge{tag or '-bench'}"
    runs = [str(sample / system) for system in systems]
    _run(
        [
            "judge",
            *runs,
            f"judge.judges=[{args.judges}]",
            f"judge.out={out}",
            f"data_root={args.data_root}",
            *shlex.split(args.judge_args),
        ],
        commands,
    )
    summaries = {
        system: json.loads((sample / system / "summary.json").read_text())
        if (sample / system / "summary.json").is_file()
        else {}
        for system in systems
    }
    results = json.loads((out / "results.json").read_text())
    report = {
        "command": shlex.join(["python", "bench/conversations.py", *sys.argv[1:]]),
        "commands": commands,
        "total_s": round(time.perf_counter() - start, 1),
        "machine": f"{platform.machine()}, {platform.processor() or 'cpu'}, python {platform.python_version()}",
        "conversations": summaries,
        "judges": results,
    }
    dest = Path(args.results)
    dest.mkdir(parents=True, exist_ok=True)
    (dest / f"conversations{tag}.json").write_text(json.dumps(report, indent=1))
    header = "\n".join(
        [
            "# Conversations and judges",
            "",
            f"Command: `{report['command']}`",
            "",
            "Runs:",
            "",
            *[f"    {c}" for c in commands],
            "",
        ]
    )
    (dest / f"conversations{tag}.md").write_text(
        header + conversations_table(summaries) + "\n" + (out / "results.md").read_text()
    )
    if (out / "elo.png").exists():
        shutil.copy(out / "elo.png", dest / f"conversations{tag}-elo.png")
    print(f"results: {dest / f'conversations{tag}.json'}, {dest / f'conversations{tag}.md'}")


if __name__ == "__main__":
    main()
