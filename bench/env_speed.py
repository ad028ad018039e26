"""Speed of `augmenter/Turn-v0` from the LLM cache, and of policy training.

    augmenter precompute                       # first: fill the cache for the configured turns
    python bench/env_speed.py [--episodes 3000] [hydra overrides of the train config...]

Measures, on the precomputed training turns:
- environment steps per second with a random policy, the policy's own time excluded (target: over 1,000);
- the T5 policy's forward pass per decision (greedy, one observation);
- training episodes per second: REINFORCE episodes sampled from the T5 policy plus their updates.
Every LLM call must come from the cache: the number of misses (model calls) is reported and must be 0.
Writes bench/results/env_speed.json with the command.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--episodes", type=int, default=3000, help="random-policy episodes for the steps/s figure")
    ap.add_argument("--train-episodes", type=int, default=300, help="REINFORCE episodes for the episodes/s figure")
    ap.add_argument("--out", default=str(ROOT / "bench" / "results" / "env_speed.json"))
    ap.add_argument("overrides", nargs="*")
    args = ap.parse_args()

    import torch

    from augmenter.api.envs import build_env
    from augmenter.config import compose
    from augmenter.policies import RandomPolicy, run_episode
    from augmenter.policies.t5 import ActionNetwork, T5Policy, Tokenizer
    from augmenter.policies.training import reinforce_update, tokenizer_corpus

    torch.set_num_threads(1)
    cfg = compose("train", args.overrides)
    env = build_env(cfg, "train")
    cache = env.agent.executor.llm.llm.primary  # MeteredLLM -> ResilientLLM -> CachedLLM
    random_policy = RandomPolicy(0)
    policy_seconds, texts = 0.0, []

    def random_act(obs: dict) -> int:
        nonlocal policy_seconds
        start = time.perf_counter()
        if len(texts) < 2000:
            texts.append(obs["text"])
        action = random_policy.act(obs, env)
        policy_seconds += time.perf_counter() - start
        return action

    start, steps = time.perf_counter(), 0
    for episode in range(args.episodes):
        steps += run_episode(env, random_act, seed=episode).steps
    env_seconds = time.perf_counter() - start - policy_seconds  # the policy's own time excluded

    m = cfg.model
    torch.manual_seed(0)
    tokenizer = Tokenizer.train(tokenizer_corpus(env, texts), vocab_size=m.vocab_size)
    policy = T5Policy(
        ActionNetwork(len(tokenizer), m.d_model, m.d_ff, m.num_layers, m.num_heads),
        tokenizer,
        m.max_tokens,
        env.agent.max_llm_calls,
        greedy=False,
        seed=0,
    )
    optimizer = torch.optim.Adam(policy.net.parameters(), lr=cfg.train.lr)
    forward_seconds, train_steps, batch = 0.0, 0, []
    start_train = time.perf_counter()
    for episode in range(args.train_episodes):
        observations, actions = [], []

        def t5_act(obs: dict, actions: list = actions, observations: list = observations) -> int:
            nonlocal forward_seconds
            start = time.perf_counter()
            actions.append(policy.choose(obs))
            forward_seconds += time.perf_counter() - start
            observations.append(obs)
            return actions[-1]

        played = run_episode(env, t5_act, seed=10_000 + episode)
        train_steps += played.steps
        batch.append((observations, actions, played.rewards))
        if len(batch) == cfg.train.batch_episodes:
            reinforce_update(
                policy, optimizer, batch, 0.0, cfg.train.gamma, cfg.train.entropy_coef, cfg.train.grad_clip
            )
            batch = []
    train_seconds = time.perf_counter() - start_train

    result = {
        "command": "python bench/env_speed.py " + " ".join(sys.argv[1:]),
        "machine": f"{platform.machine()}, {platform.processor() or 'cpu'}, python {platform.python_version()}, "
        "torch threads 1",
        "training_turns": len(env.users),
        "random_episodes": args.episodes,
        "env_steps": steps,
        "env_steps_per_s": round(steps / env_seconds, 1),
        "env_ms_per_step": round(1000 * env_seconds / steps, 3),
        "steps_per_episode": round(steps / args.episodes, 2),
        "llm_cache_hits": cache.hits,
        "llm_cache_misses": cache.misses,
        "t5_forward_ms": round(1000 * forward_seconds / train_steps, 2),
        "t5_parameters": sum(p.numel() for p in policy.net.parameters()),
        "train_episodes": args.train_episodes,
        "train_episodes_per_s": round(args.train_episodes / train_seconds, 2),
        "train_steps_per_s": round(train_steps / train_seconds, 1),
    }
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    print(json.dumps(result, indent=1))
    if cache.misses:
        print(f"warning: {cache.misses} LLM calls missed the cache: run `augmenter precompute` first", file=sys.stderr)


if __name__ == "__main__":
    np.seterr(all="ignore")
    main()
