"""Simulated conversations and their judges, built from config and run: `converse` (one system talking with the LLM
user simulator, resumable) and `judge` (LLM judges over several systems' conversations). `augmenter converse` and
`augmenter judge` call these and print what they return.

    from augmenter.api.conversations import converse, judge

    summary = converse(["experiment=table2_llm_only", "converse.conversations=50"])
    judged = judge(["runs/converse/chat_seeds-n50-t6-seed0"], ["llm=openai"])
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from augmenter.config import build_agent, build_llm, compose
from augmenter.errors import ConfigError

__all__ = ["Judged", "converse", "converse_run_dir", "judge", "sample_dir"]

SEED_SOURCES = ("chat_seeds", "dstc11")


def converse_run_dir(cfg) -> Path:
    """Where a composed `converse` config's run goes: its sample directory, then the system's name."""
    return sample_dir(cfg.converse) / str(cfg.name)


def sample_dir(cv) -> Path:
    """Where the systems' runs over the same conversations go: seeds, their number, turns, min_goals, seed."""
    goals = f"-g{cv.min_goals}" if cv.get("min_goals") else ""
    return Path(cv.out_dir) / f"{cv.seeds}-n{cv.conversations}-t{cv.turns}{goals}-seed{cv.seed}"


def converse(overrides: Sequence[str] = ()) -> dict:
    """The conversations `configs/converse.yaml` with `overrides` describes, between its system and the LLM user
    simulator (resumed where a run stopped); their summary."""
    from augmenter.envs.user_sim import LLMUserSimulator
    from augmenter.eval.conversations import (
        ConversationRunner,
        chat_seeds,
        conversation_fingerprint,
        dstc11_seeds,
        sample_seeds,
    )

    cfg = compose("converse", overrides)
    cv = cfg.converse
    if cv.seeds not in SEED_SOURCES:
        raise ConfigError(f"converse.seeds must be one of {', '.join(SEED_SOURCES)}, got {cv.seeds!r}")
    if cv.seeds == "chat_seeds":
        pool = chat_seeds(cv.chat_seeds, cv.opening)
    else:
        pool = dstc11_seeds(Path(cfg.data_root) / "dstc11-track5" / cv.dstc11_split, cv.opening)
    seeds = sample_seeds(pool, cv.conversations, cv.seed, cv.min_goals)
    llm = build_llm(cfg)
    user = cfg.user_simulator
    # the simulator gets a model instance of its own: each side keeps its own KV cache between its calls
    simulator = LLMUserSimulator(
        build_llm(cfg),
        [[u.text for u in s.opening] for s in seeds],
        prompt=user.prompt,
        max_turns=cv.turns,
        temperature=user.temperature,
        max_tokens=user.max_tokens,
        retries=user.retries,
    )
    runner = ConversationRunner(
        lambda: build_agent(cfg, llm=llm),
        simulator,
        seeds,
        cv.turns,
        converse_run_dir(cfg),
        str(cfg.name),
        conversation_fingerprint(cfg),
        knowledge=cfg.eval.knowledge,
        seed=cv.seed,
        restart=cv.restart,
        max_failed=cv.max_failed,
        progress=cv.progress,
        goals=user.goals,
    )
    return runner.run()


@dataclass(frozen=True)
class Judged:
    """What `judge` found: the results (per judge: Elo, scores, validity), the number of judgments, and the report."""

    results: dict
    judgments: int
    report: Path


def judge(runs: Sequence[str], overrides: Sequence[str] = (), command: str | None = None) -> Judged:
    """The judges of `configs/judge.yaml` with `overrides` over the conversations of `runs` (converse or eval run
    directories, or sample directories: every run inside); resumable. Writes results.md/json (headed by `command`,
    by default the `augmenter judge` command line of these arguments) and elo.png beside the runs or in judge.out."""
    from augmenter.judges import LLM_JUDGES, make_judges
    from augmenter.judges.report import write_results
    from augmenter.judges.results import summarize
    from augmenter.judges.run import JudgeRun, first_dialogues, known_orderings, load_systems

    cfg = compose("judge", overrides)
    jc = cfg.judge
    elo = _elo_settings(cfg)
    systems = first_dialogues(
        load_systems([Path(r) for r in runs], human=jc.human, history=jc.history), jc.get("limit")
    )
    if sum(1 for ds in systems.values() if ds) < 1:
        raise ConfigError("no ok conversations in the runs given")
    known = known_orderings(list(jc.get("known") or []), list(systems), jc.human)
    llm = build_llm(cfg)
    judges = make_judges(
        llm,
        list(jc.judges),
        prompts=dict(jc.prompts or {}),
        history=jc.history,
        max_tokens=jc.max_tokens,
        temperature=jc.temperature,
        max_chars=jc.max_chars,
    )
    first = Path(runs[0])
    sample = first.parent if (first / "records.jsonl").is_file() else first
    out = Path(jc.out) if jc.out else sample / f"judge-{_slug(llm.identity)}"
    records = JudgeRun(
        judges, systems, out, list(jc.seeds), _judge_fingerprint(jc, llm.identity), jc.restart, jc.progress
    ).run()
    results = summarize(
        records,
        list(systems),
        list(jc.seeds),
        elo,
        list(jc.pass_at),
        known,
        {
            name: [str(s.get("assistant", "")) for s in j.prompt.few_shot]
            for name, j in judges.items()
            if hasattr(j, "prompt")
        },
    )
    command = command or shlex.join(["augmenter", "judge", *map(str, runs), *overrides])
    report = write_results(results, out, command, llm.identity if set(jc.judges) & set(LLM_JUDGES) else "")
    return Judged(results, len(records), report)


def _elo_settings(cfg):
    from augmenter.judges import EloSettings

    try:
        return EloSettings(**{k: v for k, v in cfg.elo.items()})
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"elo: {exc}") from None


def _judge_fingerprint(jc, identity: str) -> dict:
    """What makes judgments comparable: the model, its settings and every judge's prompt (so that running more
    judges later resumes)."""
    from augmenter.judges import LLM_JUDGES
    from augmenter.prompts import PromptTemplate
    from augmenter.storage import content_hash

    return {
        "judge_model": identity,
        "temperature": jc.temperature,
        "max_tokens": jc.max_tokens,
        "max_chars": jc.max_chars,
        "history": jc.history,
        "prompts": {
            name: content_hash(PromptTemplate.content((jc.prompts or {}).get(name, f"judge_{name}")))
            for name in LLM_JUDGES
        },
    }


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("_")[:80] or "judge"
