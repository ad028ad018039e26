"""`augmenter converse`: simulated conversations between the LLM user simulator and one system, kept resumably.

Each conversation opens with a seed dialogue's first utterances (BotChat's ChatSEEDs, or a DSTC11 dialogue's
opening), then the user simulator and the system take `turns` turns each. One JSONL record per conversation
(`<run dir>/records.jsonl`): the opening, the ground-truth dialogue it comes from, every turn with its Working
Memory, the whole dialogue, and the cost of each side. A conversation whose LLM call failed (on either side), whose
reply is empty or whose agent crashed is recorded with `"status": "failed"` and its error, and run again on resume;
recorded ones are skipped. A fatal LLM error or an open circuit breaker stops the run with its records kept.
The runner gets built objects (the agent, the simulator, the seeds); the CLI builds them from config.
"""

from __future__ import annotations

import json
import logging
import random
import time
import traceback
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from statistics import mean
from typing import Any

from omegaconf import DictConfig, OmegaConf
from tqdm import tqdm

from augmenter.agent import Agent
from augmenter.envs.user_sim import LLMConversation, LLMUserSimulator
from augmenter.errors import AugmenterError, CircuitOpenError, ConfigError, InputError, LLMFatalError
from augmenter.eval.resume import check_config
from augmenter.eval.runner import EvalFailed, run_lock
from augmenter.fingerprint import system_config
from augmenter.memory import Snippet, Utterance, WorkingMemory
from augmenter.prompts import PromptTemplate
from augmenter.redact import redact, redact_data
from augmenter.storage import content_hash, json_error, read_jsonl, write_atomic
from augmenter.text import one_line
from augmenter.utilities.dodge import DodgeUtility
from augmenter.utilities.repetition import RepetitionUtility

log = logging.getLogger(__name__)


@dataclass
class ConversationSeed:
    """Where a conversation starts: `opening` (the seed's utterances, the assistant's last, so the user speaks
    next) and the human dialogue it is taken from (`ground_truth`, for GTEval)."""

    conversation_id: str
    opening: list[Utterance]
    ground_truth: list[Utterance] = field(default_factory=list)

    @property
    def goals(self) -> list[str]:
        """What the human user said after the opening, message by message (the user simulator's hints)."""
        return [u.text for u in self.ground_truth[len(self.opening) :] if u.speaker == "U"]


def _in_turn(texts: Sequence[str], opening: int) -> list[Utterance]:
    """Utterances in turn, speakers alternating so that the `opening`-th is the assistant's ("S")."""
    return [Utterance(speaker="S" if (opening - 1 - i) % 2 == 0 else "U", text=t) for i, t in enumerate(texts)]


def chat_seeds(path: str | Path, opening: int = 2) -> list[ConversationSeed]:
    """BotChat's ChatSEEDs (`MuTual_test_starts.jsonl`: the dialogue as a JSON list in `conv-GT`): dialogues with
    at least `opening` utterances, opened by their first `opening`; the whole dialogue is the ground truth."""
    path = Path(path)
    if not path.is_file():
        raise InputError(f"chat seeds not found: {path}")

    def bad(n: int, why: str) -> None:
        raise InputError(f"{path}:{n}: not a ChatSEED line ({why})")

    seeds = []
    for n, row in read_jsonl(path, bad):
        try:
            conv = json.loads(row["conv-GT"]) if isinstance(row.get("conv-GT"), str) else row["conv-GT"]
        except KeyError:
            bad(n, "no conv-GT list")
        except json.JSONDecodeError as exc:
            bad(n, f"conv-GT is not valid JSON: {json_error(exc)}")
        if not isinstance(conv, list) or not all(isinstance(u, str) and u.strip() for u in conv):
            bad(n, "conv-GT is not a list of utterances")
        if len(conv) >= opening:
            truth = _in_turn([" ".join(u.split()) for u in conv], opening)
            seeds.append(ConversationSeed(f"chatseed-{row.get('index', n)}", truth[:opening], truth))
    if not seeds:
        raise InputError(f"{path}: no seed dialogue with {opening} utterances")
    return seeds


def _read_json(path: Path):
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError(f"DSTC11 split not found: {path}") from None
    except json.JSONDecodeError as exc:
        raise InputError(f"{path}: not valid JSON: {json_error(exc)}") from None
    except UnicodeDecodeError as exc:
        raise InputError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None


def dstc11_seeds(split_dir: str | Path, opening: int = 2) -> list[ConversationSeed]:
    """DSTC11 dialogues (`logs.json` of a split; each dialogue once, its longest log plus the gold reply), opened by
    their first `opening` utterances (even: the user speaks first in DSTC11)."""
    if opening % 2:
        raise InputError(
            f"DSTC11 openings end with the assistant's utterance: converse.opening must be even, got {opening}"
        )
    path, labels_path = Path(split_dir) / "logs.json", Path(split_dir) / "labels.json"
    logs = _read_json(path)
    labels = _read_json(labels_path) if labels_path.exists() else [{}] * len(logs)
    longest: dict[str, tuple[int, list[Utterance]]] = {}
    for i, (turns, label) in enumerate(zip(logs, labels)):
        try:
            dialogue = [Utterance(speaker=t["speaker"], text=t["text"]) for t in turns]
        except (KeyError, TypeError, ValueError):
            raise InputError(f"{path}: dialogue {i} is not a list of {{speaker, text}} turns") from None
        if isinstance(label, dict) and label.get("response"):
            dialogue.append(Utterance(speaker="S", text=label["response"]))
        if not dialogue:
            continue
        key = dialogue[0].text.strip().lower()
        if key not in longest or len(dialogue) > len(longest[key][1]):
            longest[key] = (i, dialogue)
    seeds = [
        ConversationSeed(f"dstc11-{Path(split_dir).name}-{i}", d[:opening], d)
        for i, d in sorted(longest.values(), key=lambda x: x[0])
        if len(d) >= opening
    ]
    if not seeds:
        raise InputError(f"{path}: no dialogue with {opening} utterances")
    return seeds


def sample_seeds(
    seeds: Sequence[ConversationSeed], n: int, seed: int = 0, min_goals: int = 0
) -> list[ConversationSeed]:
    """The first `n` of a seeded shuffle (a larger n keeps the smaller one's conversations) of the seeds whose human
    user speaks at least `min_goals` more times after the opening."""
    order = [s for s in seeds if len(s.goals) >= min_goals]
    if not order:
        raise InputError(f"no seed dialogue has {min_goals} user messages after its opening (converse.min_goals)")
    order = list(order)
    random.Random(seed).shuffle(order)
    return order[:n]


def conversation_fingerprint(cfg: DictConfig) -> dict:
    """What must match for records to be resumed: the system (as `augmenter eval` fingerprints it), the user
    simulator and the conversations' settings; not where or how the run is executed and shown."""
    data = system_config(cfg)
    data["eval"] = {"knowledge": OmegaConf.select(cfg, "eval.knowledge")}  # the rest of eval is the eval's sample
    converse = OmegaConf.to_container(cfg.converse, resolve=True)
    for key in ("out_dir", "restart", "max_failed", "progress", "conversations", "chat_seeds"):  # not the system
        converse.pop(key, None)
    data["converse"] = converse
    data["user_simulator_prompt"] = content_hash(PromptTemplate.content(str(cfg.user_simulator.prompt)))
    return data


def _error(mem) -> str | None:
    """Why an answered turn counts as failed (the LLM failed, or nothing was said), or None."""
    if mem.outcome == "failed":
        notes = [t.note.removeprefix("failed: ") for t in mem.trace if t.note and t.note.startswith("failed: ")]
        return (notes or mem.warnings or ["the LLM call failed"])[-1]
    return None if (mem.response or "").strip() else "empty response"


def _calls(llm) -> tuple[int, int, int]:
    usage = getattr(llm, "usage", None)
    return (usage.calls, usage.prompt_tokens, usage.completion_tokens) if usage else (0, 0, 0)


class ConversationRunner:
    """Runs `seeds` through `agent` (an Agent, or a function that builds one, called only when conversations are
    left) with `simulator` as the user, `turns` assistant turns each, into `run_dir`. `fingerprint`: the
    configuration the records belong to (another one is refused unless `restart`); `knowledge`: "retrieved"
    (the system consolidates as configured) or "none" (no knowledge given); `max_failed`: a count, or a share
    below 1, of failed conversations allowed before the run ends with EvalFailed."""

    def __init__(
        self,
        agent: Agent | Callable[[], Agent],
        simulator: LLMUserSimulator,
        seeds: Sequence[ConversationSeed],
        turns: int,
        run_dir: Path,
        name: str = "system",
        fingerprint: dict | None = None,
        knowledge: str = "retrieved",
        seed: int = 0,
        restart: bool = False,
        max_failed: int | float = 0,
        progress: bool = True,
        goals: bool = True,
    ):
        if turns < 1:
            raise InputError(f"a conversation needs at least one turn, got {turns}")
        if knowledge not in ("retrieved", "none"):
            raise ConfigError(
                f"simulated conversations have no gold knowledge: eval.knowledge must be retrieved or "
                f"none, got {knowledge!r}"
            )
        if not ((type(max_failed) is int and max_failed >= 0) or (type(max_failed) is float and 0 < max_failed < 1)):
            raise ConfigError(
                f"converse.max_failed must be a count (an int >= 0) or a share (a float between 0 "
                f"and 1), got {max_failed!r}"
            )
        self.agent, self.simulator, self.seeds, self.turns = agent, simulator, list(seeds), turns
        self.dir, self.name, self.fingerprint = Path(run_dir), name, redact_data(fingerprint or {})
        self.given: list[Snippet] | None = [] if knowledge == "none" else None
        self.seed, self.restart, self.max_failed, self.progress = seed, restart, max_failed, progress
        self.goals = goals
        self.records_path = self.dir / "records.jsonl"
        self.repetition, self.dodge = RepetitionUtility(), DodgeUtility()

    # -- records ---------------------------------------------------------------------------------------------
    def read(self) -> dict[str, dict]:
        """The recorded conversations by id (a later line of one replaces an earlier one; bad lines skipped)."""
        if not self.records_path.exists():
            return {}
        bad: list[int] = []
        records = {}
        for n, row in read_jsonl(self.records_path, lambda n, why: bad.append(n)):
            if (
                isinstance(row.get("conversation_id"), str)
                and isinstance(row.get("turns"), list)
                and isinstance(row.get("cost"), dict)
            ):
                records[row["conversation_id"]] = row
            else:
                bad.append(n)
        if bad:
            log.warning("%s: skipped %d unreadable line(s); their conversations run again", self.records_path, len(bad))
        return records

    def _save(self, records: dict[str, dict]) -> list[dict]:
        order = {s.conversation_id: i for i, s in enumerate(self.seeds)}
        rows = sorted(records.values(), key=lambda r: order.get(r["conversation_id"], len(order)))
        write_atomic(self.records_path, "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
        return [r for r in rows if r["conversation_id"] in order]

    # -- running ---------------------------------------------------------------------------------------------
    def run(self) -> dict[str, Any]:
        with run_lock(self.dir, "converse.out_dir"):
            check_config(
                self.dir, self.records_path, self.fingerprint, self.restart, "set name=... or converse.restart=true"
            )
            records = self.read()
            if records:
                self._save(records)
            todo = [
                s
                for s in self.seeds
                if s.conversation_id not in records or records[s.conversation_id].get("status") != "ok"
            ]
            try:
                if todo:
                    agent = self.agent if hasattr(self.agent, "respond") else self.agent()
                    self._converse(agent, todo, records)
            except (CircuitOpenError, LLMFatalError) as exc:
                summary = self._finish(records)
                raise type(exc)(
                    f"{exc}; {self.name}: stopped, {summary['ok'] + summary['failed']} of "
                    f"{len(self.seeds)} conversations recorded in {self.dir}: run the same command again "
                    "to resume"
                ) from exc
            except KeyboardInterrupt:  # stopped by hand: the summary still says what is recorded and what is pending
                self._finish(records)
                raise
            summary = self._finish(records)
        allowed = self.max_failed if type(self.max_failed) is int else self.max_failed * len(self.seeds)
        if summary["failed"] > allowed:
            reason = next(iter(summary["failure_reasons"]))
            raise EvalFailed(
                f"{self.name}: {summary['failed']} of {len(self.seeds)} conversations failed "
                f"(converse.max_failed={self.max_failed}); most common reason: {reason}; they are "
                f"recorded in {self.dir}: run the same command again to retry them",
                summary,
            )
        return summary

    def _converse(self, agent, todo: Sequence[ConversationSeed], records: dict[str, dict]) -> None:
        failed = 0
        bar = tqdm(
            total=len(self.seeds),
            initial=len(self.seeds) - len(todo),
            desc=self.name,
            unit="conversation",
            disable=not self.progress,
            dynamic_ncols=True,
        )
        with bar, open(self.records_path, "a", encoding="utf-8") as sink:
            for seed in todo:
                record = self.conversation(agent, seed)
                sink.write(json.dumps(record, ensure_ascii=False) + "\n")
                sink.flush()
                records[seed.conversation_id] = record
                failed += record["status"] != "ok"
                bar.set_postfix({"failed": failed, "turns": len(record["turns"])})
                bar.update()

    def conversation(self, agent, seed: ConversationSeed) -> dict[str, Any]:
        """One conversation's record. Only a fatal LLM error or an open circuit breaker escapes."""
        start = time.perf_counter()
        turns: list[dict] = []
        user_cost = [0, 0, 0]
        sim_seed = int(content_hash(f"{self.seed}:{seed.conversation_id}", 8), 16)
        conversation = LLMConversation(
            self.simulator, seed.conversation_id, list(seed.opening), sim_seed, seed.goals if self.goals else ()
        )
        error = None
        try:
            user = self._user(conversation.first, user_cost)
            while user is not None:
                mem = agent.respond(user.q, user.history, given=self.given)
                error = _error(mem)
                turns.append(
                    {
                        "user": user.q,
                        "user_source": conversation.sources[len(turns)],
                        "response": mem.response or "",
                        "outcome": mem.outcome,
                        "status": "failed" if error else "ok",
                        "cost": mem.summary(),
                        "memory": mem.model_dump(mode="json"),
                    }
                )
                if error or len(turns) >= self.turns:
                    break
                user = self._user(lambda response=mem.response: conversation.next(response), user_cost)
        except (LLMFatalError, CircuitOpenError):
            raise
        except _UserFailed as exc:
            error = f"user simulator: {exc}"
        except Exception as exc:  # a bug: this conversation fails, the run goes on
            log.debug("conversation %s crashed:\n%s", seed.conversation_id, redact(traceback.format_exc()))
            error = f"crash: {type(exc).__name__}: {exc}"
        return self._record(seed, turns, error, user_cost, time.perf_counter() - start)

    def _user(self, write: Callable, cost: list[int]):
        """The simulator's next user turn (None: it is done); its LLM cost is added to `cost`."""
        before = _calls(self.simulator.llm)
        try:
            return write()
        except (LLMFatalError, CircuitOpenError):
            raise
        except AugmenterError as exc:
            raise _UserFailed(exc) from exc
        finally:
            after = _calls(self.simulator.llm)
            for i in range(3):
                cost[i] += after[i] - before[i]

    def _record(
        self, seed: ConversationSeed, turns: list[dict], error: str | None, user_cost: list[int], seconds: float
    ) -> dict[str, Any]:
        dialogue = [u.model_dump() for u in seed.opening]
        for t in turns:
            dialogue += [{"speaker": "U", "text": t["user"]}, {"speaker": "S", "text": t["response"]}]
        assistant = {
            k: sum(t["cost"].get(k, 0) for t in turns) for k in ("llm_calls", "prompt_tokens", "completion_tokens")
        }
        return redact_data(
            {
                "conversation_id": seed.conversation_id,
                "system": self.name,
                "status": "failed" if error else "ok",
                "error": one_line(error, 500) if error else None,
                "opening": [u.model_dump() for u in seed.opening],
                "ground_truth": [u.model_dump() for u in seed.ground_truth],
                "utterances": dialogue,
                "turns": turns,
                "ended_early": not error and len(turns) < self.turns,  # the simulator had nothing more to say
                "cost": {"assistant_" + k: v for k, v in assistant.items()}
                | {
                    "user_llm_calls": user_cost[0],
                    "user_prompt_tokens": user_cost[1],
                    "user_completion_tokens": user_cost[2],
                    "seconds": round(seconds, 3),
                },
            }
        )

    def _finish(self, records: dict[str, dict]) -> dict[str, Any]:
        rows = self._save(records)
        ok = [r for r in rows if r.get("status") == "ok"]
        reasons = Counter(str(r.get("error") or "unknown") for r in rows if r.get("status") != "ok")
        # (reply, its Working Memory, the user's message)
        replies = [
            (str(t.get("response") or ""), self._memory(t.get("memory") or {}), str(t.get("user") or ""))
            for r in ok
            for t in r["turns"]
            if isinstance(t, dict)
        ]
        summary: dict[str, Any] = {
            "name": self.name,
            "run_dir": str(self.dir),
            "conversations": len(self.seeds),
            "ok": len(ok),
            "failed": len(rows) - len(ok),
            "pending": len(self.seeds) - len(rows),
            "failure_reasons": dict(reasons.most_common()),
        }
        if ok:
            costs = [r["cost"] for r in ok]
            summary["turns_per_conversation"] = mean(len(r["turns"]) for r in ok)
            summary["user_messages"] = dict(
                Counter(
                    t.get("user_source", "llm") for r in ok for t in r["turns"] if isinstance(t, dict)
                ).most_common()
            )
            summary["cost_per_conversation"] = {k: mean(c.get(k, 0) for c in costs) for k in costs[0]}

            def percent(flags):
                return 100.0 * mean(flags) if replies else None

            summary["replies_repeating_percent"] = percent(
                self.repetition.repeats(text, mem.h_q) for text, mem, _ in replies
            )
            summary["replies_dodging_percent"] = percent(not self.dodge(mem, text).passed for text, mem, _ in replies)
            summary["replies_echoing_user_percent"] = percent(
                bool(user) and self.repetition.copies(text, [user]) for text, _, user in replies
            )
        write_atomic(self.dir / "summary.json", json.dumps(redact_data(summary), indent=1))
        return summary

    @staticmethod
    def _memory(memory: dict) -> WorkingMemory:
        try:
            return WorkingMemory.model_validate(memory)
        except ValueError:  # a damaged record: judged without its history
            return WorkingMemory(q="")


class _UserFailed(Exception):
    """The user simulator's LLM call failed."""
