"""The public Python API: the README's example runs, callbacks, plain-function parts."""

import re
import subprocess
import sys
from pathlib import Path

import pytest

from augmenter.api import Assistant
from augmenter.errors import ConfigError
from augmenter.memory import Action
from conftest import DATA

ROOT = Path(__file__).resolve().parents[1]


def test_the_readme_example_runs_from_another_directory(tmp_path):
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    code = next(b for b in re.findall(r"```python\n(.*?)```", readme, re.DOTALL) if "from augmenter.api import" in b)
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    lines = out.stdout.splitlines()
    assert "  consolidate_knowledge: 0 LLM call(s)" in lines and "  call_llm: 1 LLM call(s)" in lines
    assert "No, parking costs 15 pounds per day in the underground garage. answered" in lines
    assert any("hotel:1:faq:2" in line for line in lines)  # the citation of the parking FAQ


def test_callbacks_see_every_action_as_it_is_recorded():
    seen = []
    assistant = Assistant.from_overrides(
        ["llm=fake", "utility=kf1"], callbacks=[lambda mem, record: seen.append((record.action, len(mem.trace)))]
    )
    memory = assistant.session().say("Does the Grand Meridian Hotel have a pool?")
    assert [action for action, _ in seen] == [r.action for r in memory.trace]
    assert [n for _, n in seen] == list(range(1, len(memory.trace) + 1))  # called right after each record


def test_plain_functions_as_policy_and_utility():
    def policy(memory):
        if not memory.consolidated:
            return "consolidate_knowledge"
        if memory.has_unverified_candidate:
            return Action.VERIFY_UTILITY
        return Action.CALL_LLM if not memory.has_candidate or memory.feedback else Action.SEND

    scores = iter([0.1, 0.9])

    def utility(memory, candidate):
        score = next(scores)
        return (score, None if score > 0.5 else "Mention the pool.")

    assistant = Assistant.from_overrides(
        ["llm=fake", "llm.responses=[No idea., There is a pool.]", "agent.max_llm_calls=3"],
        policy=policy,
        utility=utility,
    )
    memory = assistant.ask("Is there a pool?")
    assert memory.o == ["No idea.", "There is a pool."] and memory.u == [0.1, 0.9]
    assert memory.f == ["Mention the pool.", None] and memory.response == "There is a pool."
    bare = Assistant.from_overrides(["llm=fake"], utility=lambda memory, candidate: 0.3)
    assert bare.ask("Is there a pool?").u[0] == pytest.approx(0.3)


def test_a_policy_function_naming_no_action_is_an_error():
    assistant = Assistant.from_overrides(["llm=fake"], policy=lambda memory: "dance")
    with pytest.raises(ValueError, match="policy function returned 'dance'"):
        assistant.ask("Hi")


def test_from_config_takes_a_dict_and_checks_it():
    from omegaconf import OmegaConf

    from augmenter.config import compose

    data = OmegaConf.to_container(compose("chat", ["llm=fake", "llm.default=Hello there."]))
    assert Assistant.from_config(data).ask("Hi").o[0] == "Hello there."
    data["agent"]["max_llm_calls"] = 0
    with pytest.raises(ConfigError, match="agent.max_llm_calls"):
        Assistant.from_config(data)
    with pytest.raises(ConfigError, match="mapping"):
        Assistant.from_config(["llm=fake"])


@pytest.mark.parametrize("greeting", ["Hello there! How can I help you today?", "Hi there.", "Thank you so much!"])
def test_a_greeting_is_no_claim_so_chit_chat_is_answered_at_once(greeting):
    assistant = Assistant.from_overrides(["llm=fake", f"llm.default='{greeting}'"])  # the default checks
    memory = assistant.ask("Hi")
    assert memory.response == greeting and memory.outcome == "answered" and memory.llm_calls == 1


# ---- the jobs the commands run (augmenter.api.jobs) ------------------------------------------------------------------
def test_experiments_are_chosen_by_name_or_prefix_each_once():
    from augmenter.api.jobs import experiments
    from augmenter.errors import InputError

    assert experiments(["table2_bm25", "table2_bm"]) == ["table2_bm25", "table2_bm25_feedback"]
    with pytest.raises(InputError, match="no experiment matches tabel2; known: claims_bm25, "):
        experiments(["tabel2"])


def test_a_grid_yields_each_experiment_and_goes_on_after_one_with_failed_turns(tmp_path, monkeypatch):
    from augmenter.api.jobs import grid
    from augmenter.eval.runner import EvalFailed, Evaluator

    def run(self):
        summary = {"name": str(self.cfg.name), "turns": 3}
        if self.cfg.name == "table2_llm_only":
            raise EvalFailed("1 of 3 turns failed", summary)
        return summary

    monkeypatch.setattr(Evaluator, "run", run)
    runs = list(
        grid(
            ["table2_llm_only", "table2_bm25"],
            [f"data_root={DATA}", "llm=fake", f"eval.out_dir={tmp_path}", "eval.limit=2"],
        )
    )
    assert [(r.name, r.summary, str(r.error) if r.error else None) for r in runs] == [
        ("table2_llm_only", {"name": "table2_llm_only", "turns": 3}, "1 of 3 turns failed"),
        ("table2_bm25", {"name": "table2_bm25", "turns": 3}, None),
    ]
