"""Are two eval runs' records the same apart from timings? (A refactor must not change behaviour.)

    augmenter eval eval.limit=5 name=before eval.out_dir=/tmp/cmp llm_cache.enabled=false   # on the old commit
    augmenter eval eval.limit=5 name=after eval.out_dir=/tmp/cmp llm_cache.enabled=false    # on the new one
    python bench/compare_records.py /tmp/cmp/dstc11-dev-n5-seed0/before /tmp/cmp/dstc11-dev-n5-seed0/after

Compares records.jsonl field by field, leaving out only measured times (every key naming seconds); prints the
fields that differ, and exits 1 if any does.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

TIMINGS = {
    "seconds",
    "policy_seconds",
    "llm_seconds",
    "wall_seconds",
    "non_llm_seconds",
    "turn_seconds",
    "overhead_seconds",
}


def without_timings(value):
    if isinstance(value, dict):
        return {k: without_timings(v) for k, v in value.items() if k not in TIMINGS}
    if isinstance(value, list):
        return [without_timings(v) for v in value]
    return value


def main() -> int:
    runs = [Path(arg) / "records.jsonl" for arg in sys.argv[1:3]]
    before, after = (
        [without_timings(json.loads(line)) for line in path.read_text(encoding="utf-8").splitlines()] for path in runs
    )
    differences = [
        (i, key)
        for i, (a, b) in enumerate(zip(before, after))
        for key in sorted(set(a) | set(b))
        if a.get(key) != b.get(key)
    ]
    for i, key in differences:
        print(f"record {i}: {key} differs")
    same = len(before) == len(after) and not differences
    print(f"{len(before)} and {len(after)} records: {'identical apart from timings' if same else 'DIFFERENT'}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
