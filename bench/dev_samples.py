"""The DSTC11 dev samples the labelled rounds have used, as one `eval.exclude` value: a fresh round draws its turns
apart from all of them.

    python bench/dev_samples.py --eval experiment=table2_bm25 llm=local eval.out_dir=runs/<round>/1.5b
    # = augmenter eval ... eval.limit=60 eval.seed=<next> "eval.exclude=$(python bench/dev_samples.py)"

The first sample is the 200 turns of the end-to-end runs (`eval.limit=200 eval.seed=0`); each later one (60 turns) was
drawn apart from those before it: `{chain: [...]}` (the same turns as the nested form, each sample with its own
`exclude`, whose text doubles with each seed). Append a round's seed to SEEDS once its turns are answered.

Seed 24 drew the last 49 knowledge-seeking turns of the published dev split: no fresh sample remains (`augmenter
eval` says "no turns to evaluate"). A later round re-answers an earlier sample (`--upto <seed>`: the same turns).
"""

from __future__ import annotations

import argparse

FIRST = "{limit:200,seed:0}"
# seed 2: the 40 turns the answers check's thresholds were chosen on
SEEDS = [1, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24]


def exclude(seeds: list[int]) -> str:
    """`eval.exclude` for the first sample and those of `seeds` after it, each drawn apart from the samples before it:
    a chain (the nested form, each sample with its own exclude, doubles in size with each seed)."""
    return "{chain:[" + ",".join([FIRST, *(f"{{limit:60,seed:{seed}}}" for seed in seeds)]) + "]}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--next", action="store_true", help="print the seed a fresh round draws with")
    ap.add_argument("--upto", type=int, help="only the samples before this seed (the exclude an earlier round used)")
    ap.add_argument(
        "--eval",
        nargs=argparse.REMAINDER,
        help="run `augmenter eval` with these overrides on the 60 turns of the next seed (with --upto: of that seed)",
    )
    args = ap.parse_args()
    seeds = [s for s in SEEDS if args.upto is None or s < args.upto]
    fresh = max(SEEDS) + 1
    if args.eval is not None:
        from augmenter.cli.main import main as augmenter

        seed = fresh if args.upto is None else args.upto
        raise SystemExit(
            augmenter(["eval", "eval.limit=60", f"eval.seed={seed}", f"eval.exclude={exclude(seeds)}", *args.eval])
        )
    print(fresh if args.next else exclude(seeds))


if __name__ == "__main__":
    main()
