"""`augmenter converse` and `augmenter judge` (issue 18): the objects built from config, then the runners.

    augmenter converse [overrides]        simulated conversations of one system (resumable), e.g.
                                          experiment=table2_llm_only converse.conversations=50 converse.turns=6
    augmenter judge RUN_DIR ... [overrides]   LLM judges over several systems' runs: Bootstrap Elo, GTEval,
                                          UniEval, WikiChat's scores, judge validity (results.md/json, elo.png)
"""

from __future__ import annotations

import argparse
import re
import shlex
from pathlib import Path

from augmenter.errors import ConfigError

SEED_SOURCES = ("chat_seeds", "dstc11")


def add_commands(command) -> None:
    """Add both commands with `command(name, summary)` (the CLI's parser factory)."""
    cv = command("converse", "simulated conversations between the LLM user simulator and one system (resumable)")
    cv.add_argument("overrides", nargs="*", help="Hydra overrides, e.g. experiment=table2_llm_only converse.turns=6")
    jd = command("judge", "LLM judges (BotChat, WikiChat) over the conversations of several systems")
    jd.add_argument("runs", nargs="+", help="converse or eval run directories, or sample directories (every run)")
    jd.add_argument("overrides", nargs="*", help="Hydra overrides, e.g. llm=openai judge.judges=[arena]")


def converse_run_dir(cfg) -> Path:
    cv = cfg.converse
    return sample_dir(cv) / str(cfg.name)


def sample_dir(cv) -> Path:
    """Where the systems' runs over the same conversations go: seeds, their number, turns, min_goals, seed."""
    goals = f"-g{cv.min_goals}" if cv.get("min_goals") else ""
    return Path(cv.out_dir) / f"{cv.seeds}-n{cv.conversations}-t{cv.turns}{goals}-seed{cv.seed}"


def converse(args: argparse.Namespace) -> int:
    from augmenter.config import build_agent, build_llm, compose
    from augmenter.envs.user_sim import LLMUserSimulator
    from augmenter.eval.conversations import (ConversationRunner, chat_seeds, conversation_fingerprint, dstc11_seeds,
                                              sample_seeds)

    cfg = compose("converse", args.overrides)
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
    simulator = LLMUserSimulator(build_llm(cfg), [[u.text for u in s.opening] for s in seeds], prompt=user.prompt,
                                 max_turns=cv.turns, temperature=user.temperature, max_tokens=user.max_tokens,
                                 retries=user.retries)
    runner = ConversationRunner(lambda: build_agent(cfg, llm=llm), simulator, seeds, cv.turns, converse_run_dir(cfg),
                                str(cfg.name), conversation_fingerprint(cfg), knowledge=cfg.eval.knowledge,
                                seed=cv.seed, restart=cv.restart, max_failed=cv.max_failed, progress=cv.progress,
                                goals=user.goals)
    print_converse_summary(runner.run())
    return 0


def _percent(value) -> str:
    return "-" if value is None else f"{value:.1f} %"  # None: no reply to count (every conversation ended at once)


def print_converse_summary(s: dict) -> None:
    line = f"{s['name']}: {s['ok']} of {s['conversations']} conversations"
    if s["failed"]:
        line += f", {s['failed']} failed (most common: {next(iter(s['failure_reasons']))})"
    if s.get("cost_per_conversation"):
        c = s["cost_per_conversation"]
        line += (f"; {s['turns_per_conversation']:.1f} turns, {c.get('assistant_llm_calls', 0):.1f} assistant and "
                 f"{c.get('user_llm_calls', 0):.1f} user LLM calls, {c.get('seconds', 0):.1f} s (per conversation); "
                 f"replies repeating {_percent(s['replies_repeating_percent'])}, dodging "
                 f"{_percent(s['replies_dodging_percent'])}, echoing the user "
                 f"{_percent(s['replies_echoing_user_percent'])}")
    print(f"{line} -> {s['run_dir']}")


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("_")[:80] or "judge"


def judge(args: argparse.Namespace) -> int:
    from augmenter.config import build_llm, compose
    from augmenter.judges import LLM_JUDGES, EloSettings, make_judges
    from augmenter.judges.report import write_results
    from augmenter.judges.results import summarize
    from augmenter.judges.run import JudgeRun, first_dialogues, known_orderings, load_systems
    from augmenter.prompts import PromptTemplate
    from augmenter.storage import content_hash

    cfg = compose("judge", args.overrides)
    jc = cfg.judge
    try:
        elo = EloSettings(**{k: v for k, v in cfg.elo.items()})
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"elo: {exc}") from None
    systems = first_dialogues(load_systems(args.runs, human=jc.human, history=jc.history), jc.get("limit"))
    if sum(1 for ds in systems.values() if ds) < 1:
        raise ConfigError("no ok conversations in the runs given")
    known = known_orderings(list(jc.get("known") or []), list(systems), jc.human)
    llm = build_llm(cfg)
    judges = make_judges(llm, list(jc.judges), prompts=dict(jc.prompts or {}), history=jc.history,
                         max_tokens=jc.max_tokens, temperature=jc.temperature, max_chars=jc.max_chars)
    first = Path(args.runs[0])
    sample = first.parent if (first / "records.jsonl").is_file() else first
    out = Path(jc.out) if jc.out else sample / f"judge-{_slug(llm.identity)}"
    fingerprint = {"judge_model": llm.identity, "temperature": jc.temperature, "max_tokens": jc.max_tokens,
                   "max_chars": jc.max_chars, "history": jc.history,
                   "prompts": {name: content_hash(PromptTemplate.source((jc.prompts or {}).get(name, f"judge_{name}")))
                               for name in LLM_JUDGES}}  # every judge's, so that running more judges later resumes
    records = JudgeRun(judges, systems, out, list(jc.seeds), fingerprint, jc.restart, jc.progress).run()
    results = summarize(records, list(systems), list(jc.seeds), elo, list(jc.pass_at), known,
                        {name: [str(s.get("assistant", "")) for s in j.prompt.few_shot] for name, j in judges.items()
                         if hasattr(j, "prompt")})
    command = shlex.join(["augmenter", "judge", *args.runs, *args.overrides])
    report = write_results(results, out, command, llm.identity if set(jc.judges) & set(LLM_JUDGES) else "")
    for r in results.get("arena", {}).get("elo", []):
        print(f"{r['player']}: Bootstrap Elo {r['elo']:.1f} (95% interval {r['low']:.1f} to {r['high']:.1f}, "
              f"{r['games']} games)" if r["games"] else f"{r['player']}: no parsed Arena game, no Elo")
    print(f"{len(records)} judgments; results in {report}")
    return 0
