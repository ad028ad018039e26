"""Fill the LLM cache with every candidate an episode can need, so that training never waits for the model.

An episode's LLM calls depend only on the state the policy leads to (evidence or not, which candidates were
verified, the feedback, the attempt's seed), so the reachable tree of one turn is finite: `explore_turn` walks it
depth-first, trying every action in every distinct state, through the agent's disk-cached LLM. A turn whose tree
was walked is listed in a JSONL log (`<cache>/precomputed-<config hash>.jsonl`), so a killed run resumes
where it stopped. The agent and the turns come built (`augmenter.api.envs.precompute` builds them from config).
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from tqdm import tqdm

from augmenter.agent import Agent
from augmenter.envs.user_sim import UserTurn
from augmenter.errors import InputError
from augmenter.memory import WorkingMemory
from augmenter.memory.observation import ACTIONS
from augmenter.storage import read_jsonl


def state_key(mem: WorkingMemory) -> tuple:
    """What decides every later LLM call and reward of a turn (two memories with one key lead to the same)."""
    return (
        tuple(s.id for s in mem.e),
        tuple(mem.o),
        tuple(mem.u),
        mem.feedback,
        mem.needs_knowledge,
        mem.consolidated,
        mem.llm_calls,
        len(mem.trace),
        mem.sent,
    )


@dataclass
class TurnTree:
    turn_id: str
    states: int  # distinct non-final states
    episodes_ends: int  # distinct final states (sent responses)
    llm_calls: int  # calls made while walking (cached ones included)
    new_llm_calls: int  # calls the cache could not answer: the model ran
    seconds: float


def explore_turn(agent: Agent, turn: UserTurn, max_states: int = 2000) -> TurnTree:
    """Walk every action sequence of one turn (depth-first over distinct states)."""
    usage = agent.executor.llm.usage
    before_calls, before_cached, start = usage.calls, usage.cached_calls, time.perf_counter()
    root = agent.begin(turn.q, turn.history)
    seen, ends, stack = {state_key(root)}, set(), [root]
    while stack:
        mem = stack.pop()
        for action in ACTIONS:
            child = mem.model_copy(deep=True)
            done = agent.act(child, action)
            key = state_key(child)
            if done:
                ends.add(key)
            elif key not in seen:
                if len(seen) >= max_states:
                    raise InputError(
                        f"turn {turn.id}: more than {max_states} states; lower agent.max_llm_calls "
                        "or agent.max_steps, or raise precompute.max_states"
                    )
                seen.add(key)
                stack.append(child)
    calls, cached = usage.calls - before_calls, usage.cached_calls - before_cached
    return TurnTree(turn.id, len(seen), len(ends), calls, calls - cached, time.perf_counter() - start)


def read_log(log: Path) -> list[dict]:
    """The finished turns' records of a precompute log (a line cut by a crash is skipped)."""
    return [row for _, row in read_jsonl(log, lambda n, why: None)] if log.exists() else []


def precompute(
    agent: Agent, turns: Sequence[UserTurn], log: Path, max_states: int = 2000, progress: bool = True
) -> list[TurnTree]:
    """Walk the tree of every turn not yet listed in `log` (JSONL, one line per finished turn)."""
    log.parent.mkdir(parents=True, exist_ok=True)
    done = {row["turn_id"] for row in read_log(log) if "turn_id" in row}
    trees = []
    bar = tqdm(turns, desc="precompute", unit="turn", disable=not progress)
    for turn in bar:
        if turn.id in done:
            continue
        tree = explore_turn(agent, turn, max_states)
        trees.append(tree)
        with log.open("a", encoding="utf-8") as sink:
            sink.write(json.dumps(asdict(tree)) + "\n")
        done.add(turn.id)
        bar.set_postfix(states=tree.states, new_calls=tree.new_llm_calls)
    return trees


def precompute_parts(
    agent: Agent, parts: dict[str, Sequence[UserTurn]], log: Path, max_states: int = 2000, progress: bool = True
) -> dict:
    """`augmenter precompute`: walk every turn of each part (e.g. train, heldout) not yet in `log`; a summary per
    part and, over the whole log, per turn."""
    summary = {"log": str(log), "parts": {}}
    for part, turns in parts.items():
        start = time.perf_counter()
        trees = precompute(agent, turns, log, max_states, progress=progress)
        summary["parts"][part] = {
            "turns": len(turns),
            "walked_now": len(trees),
            "new_llm_calls": sum(t.new_llm_calls for t in trees),
            "seconds": round(time.perf_counter() - start, 1),
        }
    rows = read_log(log)
    if rows:
        summary["log_totals"] = {
            "turns": len(rows),
            "states_per_turn": sum(r["states"] for r in rows) / len(rows),
            "model_calls": sum(r["new_llm_calls"] for r in rows),
            "model_calls_per_turn": sum(r["new_llm_calls"] for r in rows) / len(rows),
            "hours": sum(r["seconds"] for r in rows) / 3600,
        }
    return summary
