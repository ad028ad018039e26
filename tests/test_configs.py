"""Every option of every config group composes and instantiates (after lightning-hydra-template's test_configs)."""

import json

import pytest

from augmenter.config import GROUPS, build_agent, compose, group_options, instantiate
from augmenter.errors import AugmenterError, ConfigError

from conftest import DATA


def _overrides(group, option, tmp_path, policy_file=None):
    extra = [f"data_root={DATA}"]
    if (group, option) == ("knowledge", "ottqa"):  # tables and passages need their own consolidator (task=ottqa)
        extra += ["task=ottqa", "retriever=bm25s"]
    if (group, option) == ("policy", "trained"):
        extra.append(f"policy.checkpoint={policy_file}")
    if group != "llm":
        extra.append("llm=fake")
    if (group, option) == ("knowledge", "jsonl"):
        kb = tmp_path / "kb.jsonl"
        kb.write_text(json.dumps({"entity": "Spa", "text": "Open daily."}) + "\n")
        extra.append(f"knowledge.path={kb}")
    return [f"{group}={option}", *extra]


CASES = [(g, o) for g in GROUPS for o in group_options(g)]


def test_every_group_has_options():
    assert all(group_options(g) for g in GROUPS)
    assert len(CASES) >= 17


@pytest.mark.parametrize("group, option", CASES)
def test_option_composes_and_instantiates(group, option, tmp_path, untrained_policy_file):
    cfg = compose("chat", _overrides(group, option, tmp_path, untrained_policy_file))
    if group == "task":
        assert cfg.knowledge._target_  # a task selects its knowledge base
        return
    verifier = instantiate(cfg.verifier, "verifier", llm=None, prompts=None)
    obj = instantiate(cfg[group], group, llm=None, prompts=None, verifier=verifier)
    from hydra.utils import get_object

    target = get_object(cfg[group]._target_)
    if isinstance(target, type):  # a class: the object is one (loaders and classmethods return their own types)
        assert isinstance(obj, target)
    if group in ("policy", "utility", "knowledge", "prompt"):
        agent = build_agent(cfg)  # and the whole agent builds around it
        assert agent.respond("Does the Grand Meridian Hotel have a pool?").response


def test_wrong_option_is_one_clear_line():
    with pytest.raises(ConfigError) as err:
        compose("chat", ["policy=nope"])
    assert "policy/nope" in str(err.value) and "llm_augmenter" in str(err.value) and "\n" not in str(err.value)


def test_missing_data_path_is_one_clear_line(tmp_path):
    with pytest.raises(AugmenterError) as err:
        build_agent(compose("chat", ["llm=fake", "task=dstc11", f"data_root={tmp_path}"]))
    assert "knowledge file not found" in str(err.value) and "\n" not in str(err.value)


def test_bad_value_is_one_clear_line():
    with pytest.raises(ConfigError, match="threshold"):
        build_agent(compose("chat", ["llm=fake", "utility.threshold=7"]))
    with pytest.raises(ConfigError, match="max_llm_calls"):
        build_agent(compose("chat", ["llm=fake", "agent.max_llm_calls=0"]))
