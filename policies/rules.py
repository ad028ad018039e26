"""Rule-based policies: ordered IF-THEN rules over the Working Memory (paper section 2.2, bootstrapping).

A rule is `{"if": "<condition>", "then": "<action>"}`; the first rule whose condition holds picks the action.
Rules come from config (`policy.rules=[...]`) or from a YAML file holding a list of them (`policy.file=PATH`).
A condition is predicates joined by `and`, each optionally preceded by `not`; a rule without `if` always
holds. Predicates:

| predicate | holds when |
|---|---|
| entity_mentioned | the linker found a knowledge-base entity in q or h_q |
| entity_in_query | ... in q itself |
| consolidated | the knowledge consolidator ran this turn |
| has_evidence | e is not empty |
| has_candidate | the LLM produced at least one candidate |
| unverified_candidate | the latest candidate has no utility score yet |
| has_feedback | the latest verified candidate failed its utility (f is set) |
| contradicted | a claim of the latest verified candidate is refuted by the knowledge (claims utility) |
| claims_supported | the latest verified candidate was claim-checked and every claim is supported |
| knowledge_answers | the evidence holds the knowledge's own answer, as its kind declares (`KnowledgeKind.answers`) |
| asked_need_knowledge | the self-ask question was asked this turn |
| needs_knowledge | the LLM said it needs external knowledge |
| query_matches:REGEX | q matches the (case-insensitive) regular expression |

`reviews_answer` (the name older rule files use) is read as `knowledge_answers`: the reviews' kind declares that
the opinion gatherer's line answers when the reviews it counts take a side on the question (`augmenter.reviews`).

Actions: consolidate_knowledge, call_llm, verify_utility, send, ask_need_knowledge.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import yaml

from augmenter.errors import ConfigError
from augmenter.memory import Action, WorkingMemory

Predicate = Callable[[WorkingMemory], bool]

PREDICATES: dict[str, Predicate] = {
    "entity_mentioned": lambda m: bool(m.entities),
    "entity_in_query": lambda m: any(e.in_query for e in m.entities),
    "consolidated": lambda m: m.consolidated,
    "has_evidence": lambda m: m.has_evidence,
    "has_candidate": lambda m: m.has_candidate,
    "unverified_candidate": lambda m: m.has_unverified_candidate,
    "has_feedback": lambda m: m.feedback is not None,
    "contradicted": lambda m: m.contradicted,
    "claims_supported": lambda m: m.claims_supported,
    "knowledge_answers": lambda m: m.knowledge_answers,  # what answers is each knowledge kind's to declare
    "asked_need_knowledge": lambda m: m.needs_knowledge is not None,
    "needs_knowledge": lambda m: bool(m.needs_knowledge),
}
# Names rule files may still use for a predicate: the name it had when reviews were the only knowledge that answered.
ALIASES = {"reviews_answer": "knowledge_answers"}


def _predicate(term: str) -> Predicate:
    term = term.strip()
    if term.startswith("not "):
        inner = _predicate(term[4:])
        return lambda m: not inner(m)
    if term.startswith("query_matches:"):
        try:
            pattern = re.compile(term.split(":", 1)[1].strip(), re.IGNORECASE)
        except re.error as exc:
            raise ConfigError(f"policy rule: bad regular expression in {term!r}: {exc}") from None
        return lambda m: bool(pattern.search(m.q))
    term = ALIASES.get(term, term)
    if term not in PREDICATES:
        raise ConfigError(
            f"policy rule: unknown predicate {term!r}; known: {', '.join(PREDICATES)}, query_matches:REGEX"
        )
    return PREDICATES[term]


@dataclass
class Rule:
    condition: str
    action: Action
    test: Predicate

    @classmethod
    def parse(cls, spec: Mapping) -> Rule:
        if not isinstance(spec, Mapping) or "then" not in spec:
            raise ConfigError(f"policy rule {spec!r}: needs 'then: <action>' (and optionally 'if: <condition>')")
        try:
            action = Action(str(spec["then"]).strip())
        except ValueError:
            raise ConfigError(
                f"policy rule: unknown action {spec['then']!r}; known: {', '.join(a.value for a in Action)}"
            ) from None
        condition = str(spec.get("if") or "").strip()
        tests = [_predicate(t) for t in re.split(r"\s+and\s+", condition) if t.strip()]
        return cls(condition, action, lambda m: all(t(m) for t in tests))


def load_rules(path: str | Path) -> list[Rule]:
    """The rules in a YAML file (a list of {if, then}); every error is one line naming the file."""
    path = Path(path)
    try:
        specs = yaml.safe_load(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"policy.file {path}: no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"policy.file {path}: cannot read it: {getattr(exc, 'strerror', None) or exc}") from None
    except yaml.YAMLError as exc:
        where = getattr(exc, "problem_mark", None)
        line = f" on line {where.line + 1}" if where else ""
        problem = getattr(exc, "problem", None) or type(exc).__name__
        raise ConfigError(f"policy.file {path}: not valid YAML{line}: {problem}") from None
    if not isinstance(specs, list) or not specs:
        raise ConfigError(f"policy.file {path}: expected a non-empty list of {{if, then}} rules")
    try:
        return [Rule.parse(r) for r in specs]
    except ConfigError as exc:
        raise ConfigError(f"policy.file {path}: {exc}") from None


class RulePolicy:
    """IF-THEN rules from config, or from a YAML file (`file`, which replaces `rules`). The named policies below
    are this class with preset rules."""

    name = "rules"
    RULES: Sequence[Mapping] = ()

    def __init__(self, rules: Sequence[Mapping] | None = None, file: str | Path | None = None):
        if file is not None:
            self.rules = load_rules(file)
        else:
            specs = list(rules) if rules is not None else list(self.RULES)
            if not specs:
                raise ConfigError("policy: no rules given")
            self.rules = [Rule.parse(r) for r in specs]
        if self.rules[-1].condition:
            self.rules.append(Rule.parse({"then": "send"}))  # a turn always ends

    def next_action(self, mem: WorkingMemory) -> Action:
        for rule in self.rules:
            if rule.test(mem):
                return rule.action
        return Action.SEND

    def __repr__(self) -> str:
        return f"{type(self).__name__}({[(r.condition, r.action.value) for r in self.rules]})"


class LLMAugmenterPolicy(RulePolicy):
    """The paper's policy: always consolidate, call the LLM, verify with the utility, retry with the
    feedback while the candidate fails (bounded by the agent's LLM-call budget), then send. A candidate the
    knowledge contradicts is always revised, whatever its score (sending never sends it: see Executor)."""

    name = "llm_augmenter"
    RULES = (
        {"if": "not consolidated", "then": "consolidate_knowledge"},
        {"if": "not has_candidate", "then": "call_llm"},
        {"if": "unverified_candidate", "then": "verify_utility"},
        {"if": "contradicted", "then": "call_llm"},
        {"if": "has_feedback", "then": "call_llm"},
        {"then": "send"},
    )


class GroundedPolicy(RulePolicy):
    """The checked system's policy: when the evidence holds the knowledge's own answer (`knowledge_answers`, e.g.
    reviews that take a side on the question), that answer is sent, quoted (no draft: a small model's summaries of
    knowledge it cannot all see are often wrong); otherwise the paper's loop: draft, verify, revise while the budget
    lasts, send (a failed draft: the knowledge's own words). Sending with no candidate is allowed only when the
    executor can answer from the knowledge (see Agent)."""

    name = "grounded"
    RULES = (
        {"if": "not consolidated", "then": "consolidate_knowledge"},
        {"if": "knowledge_answers and not has_candidate", "then": "send"},
        {"if": "not has_candidate", "then": "call_llm"},
        {"if": "unverified_candidate", "then": "verify_utility"},
        {"if": "contradicted", "then": "call_llm"},
        {"if": "has_feedback", "then": "call_llm"},
        {"then": "send"},
    )


class NoKnowledgePolicy(RulePolicy):
    """The LLM alone: no knowledge consolidator, no verification."""

    name = "no_knowledge"
    RULES = ({"if": "not has_candidate", "then": "call_llm"}, {"then": "send"})


class AlwaysUsePolicy(RulePolicy):
    """Always consolidate knowledge; the candidate is scored (for the record) but never revised."""

    name = "always_use"
    RULES = (
        {"if": "not consolidated", "then": "consolidate_knowledge"},
        {"if": "not has_candidate", "then": "call_llm"},
        {"if": "unverified_candidate", "then": "verify_utility"},
        {"then": "send"},
    )


class SelfAskPolicy(RulePolicy):
    """Ask the LLM whether it needs external knowledge; consolidate only if it says yes (paper Fig. 4).
    With `feedback=True` it also retries with the utility's feedback like the paper's policy."""

    name = "self_ask"

    def __init__(self, feedback: bool = False):
        rules = [
            {"if": "not asked_need_knowledge", "then": "ask_need_knowledge"},
            {"if": "needs_knowledge and not consolidated", "then": "consolidate_knowledge"},
            {"if": "not has_candidate", "then": "call_llm"},
            {"if": "unverified_candidate", "then": "verify_utility"},
        ]
        if feedback:
            rules.append({"if": "has_feedback", "then": "call_llm"})
        super().__init__(rules + [{"then": "send"}])
