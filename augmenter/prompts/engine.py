"""The Prompt Engine (paper section 2.3.2): instruction, few-shot examples, h_q, q, evidence and feedback
rendered from a prompt file into chat messages."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

import jinja2
import yaml

from augmenter.errors import ConfigError
from augmenter.llm.base import Messages
from augmenter.memory import WorkingMemory
from augmenter.settings import Count, Positive

_ENV = jinja2.Environment(undefined=jinja2.StrictUndefined, keep_trailing_newline=False, autoescape=False)


@dataclass
class PromptTemplate:
    """A prompt file: `instruction` (system message), `few_shot` ([{user, assistant}]) and a Jinja `template`
    for the final user message. The template sees: q, history, evidence (rendered snippets), feedback, previous.
    `stop`: the prompt's own labels ("User:", "Feedback on it:", ...); a small model that goes on writing the
    prompt's format past its answer is cut at the first line that starts with one (see `cut`)."""

    name: str
    instruction: str
    template: str
    few_shot: list[dict] = field(default_factory=list)
    stop: list[str] = field(default_factory=list)
    own_label: str | None = None

    def cut(self, text: str) -> str:
        """The reply without the prompt format a model may continue with: a leading `own_label` ("Assistant:")
        is dropped, and everything from the first line starting with a `stop` label. Never returns an empty
        reply for a non-empty one: if the reply is nothing but labels, it is kept as it came."""
        text = text.strip()
        if self.own_label and text.startswith(self.own_label):
            text = text[len(self.own_label) :].strip()
        if self.stop:
            pattern = r"^[ \t]*(?:" + "|".join(re.escape(label) for label in self.stop) + ")"
            match = re.search(pattern, text, flags=re.MULTILINE)
            if match and text[: match.start()].strip():
                text = text[: match.start()].strip()
        return text

    @staticmethod
    def source(name_or_path: str) -> str:
        """The text of a packaged prompt by name (e.g. "customer_service") or of a YAML file by path."""
        path = Path(name_or_path)
        if path.suffix in (".yaml", ".yml"):
            if not path.exists():
                raise ConfigError(f"prompt file not found: {path}")
            return path.read_text(encoding="utf-8")
        packaged = resources.files("augmenter.prompts") / "files" / f"{name_or_path}.yaml"
        if not packaged.is_file():
            known = sorted(p.name[:-5] for p in (resources.files("augmenter.prompts") / "files").iterdir())
            raise ConfigError(f"unknown prompt {name_or_path!r}; packaged prompts: {', '.join(known)}")
        return packaged.read_text(encoding="utf-8")

    @staticmethod
    def content(name_or_path: str) -> str:
        """`source` without its comment lines: what a run's fingerprint hashes (a comment edited is no new system)."""
        lines = PromptTemplate.source(name_or_path).splitlines()
        return "\n".join(line for line in lines if not line.lstrip().startswith("#"))

    @classmethod
    def load(cls, name_or_path: str) -> PromptTemplate:
        """Load a packaged prompt by name or a YAML file by path (see `source`)."""
        path = Path(name_or_path)
        text = cls.source(name_or_path)
        try:
            data = yaml.safe_load(text)
            prompt = cls(
                name=path.stem,
                instruction=data["instruction"].strip(),
                template=data["template"],
                few_shot=list(data.get("few_shot") or []),
                stop=[str(label) for label in data.get("stop") or []],
                own_label=data.get("own_label"),
            )
            _ENV.from_string(prompt.template)
        except (yaml.YAMLError, KeyError, TypeError, AttributeError, jinja2.TemplateError) as exc:
            raise ConfigError(f"prompt {name_or_path}: needs 'instruction' and a valid 'template' ({exc})") from None
        return prompt

    @property
    def compiled(self) -> jinja2.Template:
        if getattr(self, "_compiled", None) is None or self._compiled_source != self.template:
            self._compiled, self._compiled_source = _ENV.from_string(self.template), self.template
        return self._compiled

    def render(self, **variables) -> Messages:
        messages = [{"role": "system", "content": self.instruction}]
        for shot in self.few_shot:
            messages += [
                {"role": "user", "content": shot["user"].strip()},
                {"role": "assistant", "content": shot["assistant"].strip()},
            ]
        messages.append({"role": "user", "content": self.compiled.render(**variables).strip()})
        return messages


class PromptEngine:
    """Builds the messages for each LLM use from the Working Memory.

    `max_history_turns` and `max_chars_per_turn` keep prompts inside small models' context windows.
    """

    def __init__(
        self,
        response: str = "assistant",
        self_ask: str = "self_ask",
        self_critique: str = "self_critique",
        search_query: str = "search_query",
        max_history_turns: Count = 6,
        max_chars_per_turn: Positive = 600,
        today: str | None = None,
        claims: str = "claims",
        verify_claim: str = "verify_claim",
    ):
        self.response = PromptTemplate.load(response)
        self.search_query_prompt = PromptTemplate.load(search_query)
        self.today = today  # the date hint of the search-query prompt (None: no hint, so prompts stay cacheable)
        self.self_ask_prompt = PromptTemplate.load(self_ask)
        self.self_critique_prompt = PromptTemplate.load(self_critique)
        self.claims_prompt = PromptTemplate.load(claims)
        self.verify_prompt = PromptTemplate.load(verify_claim)
        self.max_history_turns = max_history_turns
        self.max_chars_per_turn = max_chars_per_turn

    def _variables(self, mem: WorkingMemory, with_evidence: bool = True, previous: str | None = None) -> dict:
        def clip(text):
            return text if len(text) <= self.max_chars_per_turn else text[: self.max_chars_per_turn] + "…"

        history = mem.h_q[-self.max_history_turns :] if self.max_history_turns > 0 else []
        return {
            "q": mem.q,
            "history": [{"speaker": t.speaker, "text": clip(t.text)} for t in history],
            "evidence": [clip(s.render()) for s in mem.e] if with_evidence else [],
            "feedback": None,
            "previous": previous,
        }

    def respond(self, mem: WorkingMemory, with_feedback: bool = True) -> Messages:
        """The prompt for a candidate response; carries the latest feedback and candidate when there is one
        (unless `with_feedback` is False: then every candidate gets the same prompt)."""
        variables = self._variables(mem, previous=mem.o[-1] if mem.o else None)
        if with_feedback and mem.feedback and mem.o:
            variables["feedback"] = mem.feedback
        return self.response.render(**variables)

    def self_ask(self, mem: WorkingMemory) -> Messages:
        """Whether the turn needs knowledge, asked after the response prompt's instruction and examples: the call
        shares that prefix with the response call that follows (and with the previous turn's calls), so llama.cpp
        evaluates it once. The self-ask file's instruction opens its first user message."""
        head = self.response.render(**self._variables(mem, with_evidence=False))[:-1]
        own = self.self_ask_prompt.render(**self._variables(mem, with_evidence=False))
        first, rest = own[1:2], own[2:]
        instruction = own[0]["content"].strip()
        if instruction:
            first = [{"role": "user", "content": f"{instruction}\n\n{first[0]['content']}"}]
        return head + first + rest

    def search_query(self, mem: WorkingMemory) -> Messages:
        return self.search_query_prompt.render(**self._variables(mem, with_evidence=False), today=self.today)

    def self_critique(self, mem: WorkingMemory, candidate: str) -> Messages:
        return self.self_critique_prompt.render(**self._variables(mem, previous=candidate))

    def claims(self, q: str, history, candidate: str) -> Messages:
        """The prompt that lists a candidate's claims (the question gives the claims their subject)."""
        return self.claims_prompt.render(
            q=q,
            history=[{"speaker": t.speaker, "text": t.text} for t in history],
            evidence=[],
            feedback=None,
            previous=candidate,
        )

    def verify_claim(self, claim: str, evidence: list[str], context: str = "") -> Messages:
        """The prompt that labels a claim SUPPORTED / REFUTED / NOT ENOUGH INFO against evidence sentences."""

        def clip(text):
            return text if len(text) <= self.max_chars_per_turn else text[: self.max_chars_per_turn] + "…"

        return self.verify_prompt.render(
            q="", history=[], evidence=[clip(e) for e in evidence], feedback=None, previous=claim, context=context
        )
