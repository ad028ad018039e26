"""The Action Executor (paper section 2.3): performs the policy's action on the Working Memory."""

from __future__ import annotations

import re
import time
from dataclasses import replace
from enum import Enum

from augmenter.agent.protocols import Composer, Consolidator, ReplyComposer, Utility, as_check, utility_result
from augmenter.knowledge.linker import of_entities_in_question
from augmenter.knowledge.ranking import interleave
from augmenter.llm.base import MeteredLLM, SamplingParams, TextSink
from augmenter.memory import Action, ActionRecord, Verdict, WorkingMemory
from augmenter.prompts import PromptEngine
from augmenter.prompts.leakage import allowed_text, drop_fewshot_leaks
from augmenter.settings import NonNegative, Positive
from augmenter.text import clip

ABSTAIN_REPLY = "I'm sorry, but the knowledge I have does not answer that."
CONTRADICTED_REPLY = "I could not confirm an answer; the knowledge I have says:"

NO_SEARCH = re.compile(r"^\W*(none|no search|no query|n/a)\W*$", re.IGNORECASE)


def parse_queries(text: str, limit: int = 3) -> list[str]:
    """The search queries in an LLM answer (one per line, bullets and quotes stripped); [] for NONE."""
    queries = []
    for line in text.strip().splitlines():
        line = re.sub(r"^\s*(?:[-*\d.)]+\s+)?(?:query:\s*)?", "", line, flags=re.IGNORECASE).strip().strip('"').strip()
        if not line or NO_SEARCH.match(line):
            continue
        if line not in queries:
            queries.append(line)
    return queries[:limit]


def parse_yes_no(text: str) -> bool | None:
    """The first YES/NO word in an LLM answer, else None."""
    m = re.search(r"\b(yes|no)\b", text.lower())
    return None if m is None else m.group(1) == "yes"


class Select(str, Enum):
    """Which candidate `send` sends: the one with the best utility, or the latest (no utility gating)."""

    BEST = "best"
    LATEST = "latest"


UNSUPPORTED = ("supported_part", "best")
__all__ = ["ABSTAIN_REPLY", "CONTRADICTED_REPLY", "Executor", "Select"]


class Executor:
    """Knowledge Consolidator + Prompt Engine + LLM + Utility behind one `execute(action, memory)`.

    Ablation switches (paper Fig. 5): `feedback_in_prompt=False` makes later candidates fresh samples of the
    same prompt (re-ranking instead of revising); `select="latest"` sends the last candidate instead of the
    one with the best utility (feedback without utility gating).
    `utility`: any utility; what sending relies on is what it declares as a `Check` (`as_check`: a plain function
    checks no claims). Sending never sends a candidate with a claim the knowledge refutes. When candidates were
    claim-checked (the utility's `checks_claims`, or claims in its results) and none passed,
    `unsupported="supported_part"` answers in the knowledge's own words (`replies.answer(memory)`: for FAQs and
    reviews, the answer of the FAQ about the question or what the reviews on it say, quoted); else it sends only the
    supported claims of the best candidate (those on the question: the utility's `on_topic(memory, sentence)`);
    else it says that the knowledge does not answer and what it did find (`mem.outcome`: answered, quoted, partial,
    abstained); `unsupported="best"` sends the best candidate that is not contradicted. A candidate that may be sent
    goes out as written, or re-said in the knowledge's words where its checked claims rest on them
    (`replies.quote(memory, checks)`: e.g. review sentences quoted, "quoted").
    `fewshot_guard=True`: a candidate's sentences that copy the response prompt's few-shot examples (a name or a
    phrase the turn's own query, history and evidence lack) are dropped before anything sees it, the raw reply kept
    in the trace; a candidate that is nothing but such copies becomes the "does not answer" reply.
    `query_generation=True`: consolidating first asks the LLM for the search queries (prompt `search_query`; it
    may answer NONE: no lookup) instead of searching with q and h_q.
    `replies`: the knowledge's replies in its own words (`ReplyComposer`, e.g. `augmenter.reviews.ReviewReplies`
    for FAQs and reviews; None: none, the "does not answer" reply instead).
    `composer`: a knowledge kind's own way of answering (`Composer`, e.g. the documents'), which then gathers the
    evidence after retrieval, writes the drafting prompt, checks each draft and writes the reply in place of the
    prompt engine's response prompt, the utility and the replies above.
    """

    def __init__(
        self,
        llm: MeteredLLM,
        prompts: PromptEngine,
        utility: Utility,
        consolidator: Consolidator | None = None,
        params: SamplingParams | None = None,
        retry_temperature: NonNegative = 0.7,
        feedback_in_prompt: bool = True,
        select: str | Select = Select.BEST,
        query_generation: bool = False,
        max_queries: Positive = 3,
        unsupported: str = "supported_part",
        fewshot_guard: bool = True,
        composer: Composer | None = None,
        replies: ReplyComposer | None = None,
    ):
        try:
            select = Select(select)
        except ValueError:
            raise ValueError(f"select must be one of {', '.join(s.value for s in Select)}, got {select!r}") from None
        if unsupported not in UNSUPPORTED:
            raise ValueError(f"unsupported must be one of {', '.join(UNSUPPORTED)}, got {unsupported!r}")
        self.unsupported = unsupported
        self.fewshot_guard = fewshot_guard
        self.feedback_in_prompt = feedback_in_prompt
        self.select = select
        self.query_generation, self.max_queries = query_generation, max_queries
        self.llm = llm
        self.prompts = prompts
        self.utility, self.check = utility, as_check(utility)  # what sending may rely on, declared (see Check)
        self.consolidator = consolidator
        self.params = params or llm.params
        self.retry_temperature = retry_temperature
        self.composer, self.replies = composer, replies
        self.actions = {
            Action.CONSOLIDATE_KNOWLEDGE: self._consolidate_knowledge,
            Action.CALL_LLM: self._call_llm,
            Action.VERIFY_UTILITY: self._verify_utility,
            Action.SEND: self._send,
            Action.ASK_NEED_KNOWLEDGE: self._ask_need_knowledge,
        }

    def _response_params(self, mem: WorkingMemory) -> SamplingParams:
        """First candidate: the configured sampling. Revisions: `retry_temperature` with a per-attempt seed,
        so that a greedy model does not repeat its rejected answer (and runs stay reproducible)."""
        attempt = len(mem.o)
        if attempt == 0 or self.retry_temperature <= self.params.temperature:
            return self.params
        seed = None if self.params.seed is None else self.params.seed + attempt
        return replace(self.params, temperature=self.retry_temperature, seed=seed)

    def observe(self, mem: WorkingMemory) -> None:
        """State tracking before the policy looks: which knowledge-base entities q and h_q mention."""
        if self.consolidator is not None:
            start = time.perf_counter()
            mem.entities = self.consolidator.link(mem.q, mem.h_q)
            mem.overhead_seconds["link_entities"] = time.perf_counter() - start

    def execute(self, action: Action, mem: WorkingMemory, on_text: TextSink | None = None) -> ActionRecord:
        """Perform `action`; with `on_text`, a response call streams its reply (the draft) to it."""
        record = ActionRecord(action=action)
        before = self.llm.usage.copy()
        start = time.perf_counter()
        if on_text is not None and action == Action.CALL_LLM:
            self._call_llm(mem, record, on_text)
        else:
            self.actions[action](mem, record)
        record.seconds = time.perf_counter() - start
        spent = self.llm.usage.minus(before)
        record.llm_calls, record.llm_seconds, record.llm_cached_calls = spent.calls, spent.seconds, spent.cached_calls
        record.prompt_tokens, record.completion_tokens = spent.prompt_tokens, spent.completion_tokens
        return record

    def _consolidate_knowledge(self, mem: WorkingMemory, record: ActionRecord) -> None:
        mem.consolidated = True
        if mem.given is not None:
            mem.e = list(mem.given)
            record.note = "knowledge given with the turn"
            record.outputs = {"evidence": [s.id for s in mem.e]}
            return
        if self.consolidator is None:
            record.note = "no knowledge base configured"
            return
        if self.composer is not None:
            query, mem.e = self.composer.gather(mem, self.consolidator)
        elif self.query_generation:
            self._generated_search(mem, record)
            return
        else:
            query, mem.e = self.consolidator.retrieve(mem.q, mem.h_q, mem.entities)
        record.inputs = {"query": query, "entities": [m.name for m in mem.entities]}
        record.outputs = {"evidence": [s.id for s in mem.e]}

    def _generated_search(self, mem: WorkingMemory, record: ActionRecord) -> None:
        """Search with the LLM's queries; the evidence interleaves their rankings (first hits first), k in all."""
        answer = self.llm.complete(self.prompts.search_query(mem), SamplingParams(max_tokens=40, temperature=0.0)).text
        queries = parse_queries(self.prompts.search_query_prompt.cut(answer), self.max_queries)
        record.inputs = {"generated": answer, "queries": queries, "entities": [m.name for m in mem.entities]}
        rankings = [self.consolidator.retrieve(query, (), mem.entities)[1] for query in queries]
        mem.e = interleave(rankings, self.consolidator.k, key=lambda snippet: snippet.id)
        record.outputs = {"evidence": [s.id for s in mem.e]}
        if not queries:
            record.note = "the LLM wrote no search query: no lookup"

    def _call_llm(self, mem: WorkingMemory, record: ActionRecord, on_text: TextSink | None = None) -> None:
        composer = self.composer
        if composer:
            messages = composer.messages(mem)
        else:
            messages = self.prompts.respond(mem, with_feedback=self.feedback_in_prompt)
        record.inputs = {"messages": messages}
        params = self._response_params(mem)
        record.inputs["temperature"] = params.temperature
        if composer is not None and not mem.o:  # a scoring pass first: its prompt's KV cache serves the draft
            scored = self.llm.complete(messages, SamplingParams(max_tokens=1, temperature=0.0, logprobs=20))
            if scored.top_logprobs:  # a backend without log-probs gives none: no signal
                mem.signals["refusal"] = round(composer.refusal(scored.top_logprobs[0]), 4)
                record.outputs["refusal_probability"] = mem.signals["refusal"]
        if on_text is None:
            completion = self.llm.complete(messages, params)
        else:
            completion = self.llm.complete(messages, params, on_text=on_text)
        if completion.served_by:  # a fallback answered (llm.fallbacks)
            record.outputs["served_by"] = completion.served_by
        raw = completion.text.strip()
        candidate = (composer.prompt if composer else self.prompts.response).cut(raw)
        if self.fewshot_guard and composer is None:
            # the agent's own earlier replies are not the turn's text: a leak they carry must not license a copy
            candidate, leaks = drop_fewshot_leaks(candidate, self.prompts.response, allowed_text(mem, False))
            if leaks:
                candidate = candidate or ABSTAIN_REPLY
                record.outputs["fewshot_leaks"] = leaks
                mem.warnings.append(
                    f"candidate {len(mem.o) + 1} copied the prompt's examples "
                    f"({'; '.join(leaks)}): those sentences were dropped"
                )
        mem.add_candidate(candidate)
        record.outputs["candidate"] = candidate
        if candidate != raw:
            record.outputs["raw"] = raw  # before the prompt format the model went on with was cut off

    def _verify_utility(self, mem: WorkingMemory, record: ActionRecord) -> None:
        candidate = mem.o[len(mem.u)]
        result = utility_result((self.composer.check if self.composer else self.check)(mem, candidate))
        checks = result.claims or []
        mem.add_verdict(result.score, result.feedback, checks)
        record.inputs = {"candidate_index": len(mem.u) - 1}
        record.outputs = {"score": round(result.score, 4), "feedback": result.feedback}
        if checks:
            record.outputs["claims"] = {v.value: n for v, n in mem.verdict_counts(len(mem.u) - 1).items()}

    def _ask_need_knowledge(self, mem: WorkingMemory, record: ActionRecord) -> None:
        answer = self.llm.complete(self.prompts.self_ask(mem), SamplingParams(max_tokens=4, temperature=0.0)).text
        verdict = parse_yes_no(answer)
        mem.needs_knowledge = True if verdict is None else verdict  # when unsure, look it up
        record.outputs = {"answer": answer, "needs_knowledge": mem.needs_knowledge}

    def _send(self, mem: WorkingMemory, record: ActionRecord) -> None:
        if self.composer is not None:
            reply = self.composer.reply(mem)
            mem.response, mem.outcome, mem.sent_index, mem.sent_claims = (
                reply.text,
                reply.outcome,
                reply.index,
                reply.claims,
            )
            record.outputs = {"response": mem.response, "outcome": mem.outcome}
            return
        index = mem.best_index(self.select)
        checked = any(mem.checks) or self.check.checks_claims
        if checked and self.unsupported == "supported_part":
            passing = [i for i in range(len(mem.u)) if mem.f[i] is None and not mem.contradicts(i)]
            if self.select == Select.BEST and passing:
                index = max(passing, key=lambda i: (mem.u[i], i))
            elif index not in passing:
                index = None
        if index is None:
            self._answer_from_knowledge(mem, record)
        elif (
            self.replies is not None
            and (quoting := self.replies.quote(mem, mem.checks[index] if index < len(mem.checks) else [])) is not None
        ):
            mem.response, mem.sent_claims, mem.outcome = quoting.text, quoting.claims, "quoted"
            record.note = quoting.note
            record.outputs.update(quoting.outputs)
        else:
            mem.response, mem.sent_index, mem.outcome = mem.o[index], index, "answered"
        record.outputs.update(response=mem.response, outcome=mem.outcome)

    def answers_from_knowledge(self, mem: WorkingMemory) -> bool:
        """Whether the knowledge's own words answer the question (`replies.answers`): a checked utility's executor
        may then send without a candidate of the model."""
        if not (any(mem.checks) or self.check.checks_claims):
            return False
        return self.replies is not None and self.replies.answers(mem)

    def _answer_from_knowledge(self, mem: WorkingMemory, record: ActionRecord) -> None:
        """No candidate may be sent: the knowledge's own answer (`replies.answer`: for FAQs and reviews, the answer
        of the FAQ about the question, or what the reviews on it say, quoted); else the supported claims on the
        question of the candidate with the most of them; else a plain statement that the knowledge does not answer
        (or says otherwise), with the best evidence found."""
        composed = self.replies.answer(mem) if self.replies is not None else None
        if composed is not None:
            mem.response, mem.outcome, mem.sent_claims = composed.text, "quoted", composed.claims
            record.outputs.update(composed.outputs)
            record.note = (
                "no candidate passed: answered in the knowledge's own words"
                if mem.o
                else "the knowledge answers the question: its own words, no draft"
            )
            return
        supported = [[c for c in checks if c.supported and self.check.on_topic(mem, c.claim)] for checks in mem.checks]
        best = max(range(len(supported)), key=lambda i: (len(supported[i]), mem.u[i]), default=None)
        if best is not None and supported[best]:
            mem.sent_claims = supported[best]
            mem.response, mem.outcome = " ".join(c.claim for c in supported[best]), "partial"
            record.note = (
                f"no candidate passed: sent the {len(supported[best])} supported claim(s) of candidate {best + 1}"
            )
            return
        refuting = next(
            (c.evidence[0] for checks in mem.checks for c in checks if c.verdict == Verdict.REFUTED and c.evidence),
            None,
        )
        if refuting is not None:
            # what answers the question best (the top evidence) first, then what refuted the candidate
            quotes = [mem.e[0].render()] if mem.e and mem.e[0].id != refuting.id else []
            quotes.append(refuting.text)
            mem.response = f"{CONTRADICTED_REPLY} " + " and ".join(f'"{clip(q)}"' for q in quotes)
        else:
            shown = of_entities_in_question(mem.e, mem.entities)[:1]  # another entity's is no finding
            found = f' What I found: "{clip(shown[0].render())}"' if shown else ""
            mem.response = ABSTAIN_REPLY + found
        mem.outcome = "abstained"
        record.note = "no candidate passed and no claim is supported: said so instead of guessing"
