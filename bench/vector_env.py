"""Environment steps per second of `augmenter/Turn-v0` through gymnasium's vector environments.

    python bench/vector_env.py [--steps 3000] [--envs 1,2,4] [hydra overrides of the train config...]
    python bench/vector_env.py --delay 0.05 --steps 400    # LLM calls that take 50 ms (a local server, no cache)

For each vectorization mode (sync: one process steps the sub-environments in turn; async: one process each) and
each number of sub-environments N, `gymnasium.make_vec("augmenter/Turn-v0", num_envs=N, ...)` is stepped with
random actions (seeded) for about `--steps` sub-environment steps, after a warm-up; the plain `gymnasium.make` env
is measured the same way as the reference. Steps that only reset a finished sub-environment (gymnasium's
next-step autoreset) are not counted. The LLM is the fake one unless an override says otherwise (`llm=fake` comes
first); the train config's LLM cache is on, as in training. With `--delay`, the LLM is a local OpenAI-compatible
server (`bench/concurrency.py`'s, in its own process) that answers after that many seconds, the cache off.
Writes bench/results/vector_env.json (with `--delay`: vector_env_delay.json) with the command.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]


def _measure(make, steps: int, n: int, seed: int = 0) -> dict:
    """Build with `make()`, warm up, then step about `steps` sub-environment steps with random actions."""
    start = time.perf_counter()
    envs = make()
    build_seconds = time.perf_counter() - start
    rng = np.random.default_rng(seed)
    vector = n > 0
    try:
        envs.reset(seed=seed)
        done = np.zeros(max(n, 1), dtype=bool)
        counted, episodes, t0 = 0, 0, None
        warmup = 50
        for i in range(warmup + max(1, steps // max(n, 1))):
            if i == warmup:
                counted, episodes, t0 = 0, 0, time.perf_counter()
            if vector:
                _, _, terminated, truncated, _ = envs.step(rng.integers(envs.single_action_space.n, size=n))
                counted += int((~done).sum())  # a sub-env that was done only reset on this step
                episodes += int(((terminated | truncated) & ~done).sum())
                done = terminated | truncated
            else:
                _, _, terminated, truncated, _ = envs.step(int(rng.integers(envs.action_space.n)))
                counted += 1
                if terminated or truncated:
                    episodes += 1
                    envs.reset()
        seconds = time.perf_counter() - t0
    finally:
        envs.close()
    return {
        "env_steps": counted,
        "episodes": episodes,
        "seconds": round(seconds, 3),
        "env_steps_per_s": round(counted / seconds, 1),
        "build_seconds": round(build_seconds, 2),
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=3000, help="sub-environment steps per measurement")
    ap.add_argument("--envs", default="1,2,4", help="numbers of sub-environments")
    ap.add_argument("--limit", type=int, default=60, help="training turns each environment samples from")
    ap.add_argument("--delay", type=float, default=None, help="seconds per LLM answer of a local server")
    ap.add_argument("--out", default=None, help="default: bench/results/vector_env.json (_delay with --delay)")
    ap.add_argument("overrides", nargs="*")
    args = ap.parse_args()

    import gymnasium

    import augmenter.envs  # noqa: F401  (registers augmenter/Turn-v0)

    overrides = ["llm=fake", *args.overrides]
    if args.delay is not None:
        import multiprocessing

        sys.path.insert(0, str(ROOT / "bench"))
        from concurrency import _Handler, _serve

        _Handler.wbufsize = -1  # one write per reply: unbuffered headers meet Nagle and delayed ACKs (+40 ms)

        os.environ.setdefault("OPENAI_API_KEY", "unused-by-the-local-server")
        replies, asks = multiprocessing.Queue(), multiprocessing.Queue()
        multiprocessing.Process(target=_serve, args=(args.delay, replies, asks), daemon=True).start()
        overrides = [
            "llm=openai",
            f"llm.base_url=http://127.0.0.1:{replies.get(timeout=30)}/v1",
            "llm.model=slow-server",
            "llm_cache.enabled=false",
            *args.overrides,
        ]
    kwargs = {"overrides": overrides, "limit": args.limit}
    counts = [int(n) for n in args.envs.split(",")]
    rows = [
        {
            "mode": "single (gymnasium.make)",
            "num_envs": 1,
            **_measure(lambda: gymnasium.make("augmenter/Turn-v0", **kwargs), args.steps, 0),
        }
    ]
    for mode in ("sync", "async"):
        for n in counts:

            def make(n=n, mode=mode):
                return gymnasium.make_vec("augmenter/Turn-v0", num_envs=n, vectorization_mode=mode, **kwargs)

            rows.append({"mode": mode, "num_envs": n, **_measure(make, args.steps, n)})
            print(json.dumps(rows[-1]), file=sys.stderr)
    result = {
        "command": " ".join(["python bench/vector_env.py", *sys.argv[1:]]),
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs, python {platform.python_version()}, "
        f"gymnasium {gymnasium.__version__}",
        "overrides": overrides,
        "results": rows,
    }
    out = Path(args.out or ROOT / "bench" / "results" / f"vector_env{'_delay' if args.delay is not None else ''}.json")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
