"""Is a judge model worth listening to? Known orderings on the same DSTC11 dev turns.

    python bench/judge_validity.py [--limit 200] [--judge-limit 60] [--judges arena,unieval,wikichat,checks]
        [--systems table2_llm_only,table2_bm25_feedback] [--known table2_bm25_feedback>table2_llm_only]
        [--judge-args "llm=local_1_5b"] [--tag qwen05]

1. `augmenter eval experiment=<system> eval.limit=<limit>` for each system (resumable: a rerun skips what is
   recorded; the same seeded sample of turns for every system);
2. `augmenter judge <runs> judge.human=true judge.known=[...] judge.limit=<judge-limit>`: each turn is a short
   dialogue (its last utterances, the user's message, the reply), the human gold reply is the system "human", and
   every judge is checked against the known orderings (human above every system, and `--known`), beside its
   position bias and, with several seeds (`--judge-args "judge.seeds=[0,1,2] judge.temperature=0.7"`),
   its self-consistency;
3. bench/results/judge_validity[-<tag>].json and .md: the commands and the judge run's results.
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
import time
from pathlib import Path

from augmenter.cli.main import main as cli
from augmenter.config import compose
from augmenter.eval.runner import run_dir

ROOT = Path(__file__).resolve().parents[1]


def _run(argv: list[str], commands: list[str]) -> None:
    commands.append(shlex.join(["augmenter", *argv]))
    print(f"$ {commands[-1]}", flush=True)
    code = cli(argv)
    if code != 0:
        sys.exit(code)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--limit", type=int, default=200, help="DSTC11 dev turns each system answers")
    ap.add_argument("--judge-limit", type=int, default=60, help="of those, the first N judged")
    ap.add_argument("--judges", default="arena,unieval,wikichat,checks")
    ap.add_argument("--systems", default="table2_llm_only,table2_bm25_feedback", help="experiments, comma-separated")
    ap.add_argument(
        "--known",
        default="table2_bm25_feedback>table2_llm_only",
        help="known orderings besides human > every system, 'BETTER>WORSE' comma-separated",
    )
    ap.add_argument("--judge-args", default="", help="overrides of `augmenter judge`, e.g. the judge model")
    ap.add_argument("--tag", default="", help="a name for this judge model's results (e.g. qwen05)")
    ap.add_argument("--data-root", default=str(ROOT.parent / "shared" / "data"))
    ap.add_argument("--results", default=str(ROOT / "bench" / "results"))
    args = ap.parse_args()
    systems = [s.strip() for s in args.systems.split(",") if s.strip()]
    known = [k.strip() for k in args.known.split(",") if k.strip()]
    commands: list[str] = []
    start = time.perf_counter()
    runs = []
    for system in systems:
        argv = ["eval", f"experiment={system}", f"eval.limit={args.limit}", f"data_root={args.data_root}"]
        _run(argv, commands)
        runs.append(str(run_dir(compose("eval", argv[1:]))))
    tag = f"-{args.tag}" if args.tag else ""
    out = ROOT / "runs" / "judge" / f"validity{tag or '-bench'}"
    _run(
        [
            "judge",
            *runs,
            "judge.human=true",
            f"judge.judges=[{args.judges}]",
            f"judge.limit={args.judge_limit}",
            "judge.known=[" + ",".join(f"'{k}'" for k in known) + "]",
            f"judge.out={out}",
            f"data_root={args.data_root}",
            *shlex.split(args.judge_args),
        ],
        commands,
    )
    results = json.loads((out / "results.json").read_text())
    report = {
        "command": shlex.join(["python", "bench/judge_validity.py", *sys.argv[1:]]),
        "commands": commands,
        "total_s": round(time.perf_counter() - start, 1),
        "judges": results,
    }
    dest = Path(args.results)
    dest.mkdir(parents=True, exist_ok=True)
    (dest / f"judge_validity{tag}.json").write_text(json.dumps(report, indent=1))
    header = "\n".join(
        [
            "# Judge validity: known orderings on DSTC11 dev turns",
            "",
            f"Command: `{report['command']}`",
            "",
            "Runs:",
            "",
            *[f"    {c}" for c in commands],
            "",
        ]
    )
    (dest / f"judge_validity{tag}.md").write_text(header + (out / "results.md").read_text())
    print(f"results: {dest / f'judge_validity{tag}.json'}, {dest / f'judge_validity{tag}.md'}")


if __name__ == "__main__":
    main()
