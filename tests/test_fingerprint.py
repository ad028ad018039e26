"""One config fingerprint (augmenter/fingerprint.py) behind eval resume, training resume and the precompute log."""

import copy

from omegaconf import OmegaConf

from augmenter.api.envs import CALL_SHAPING, call_fingerprint
from augmenter.config import compose
from augmenter.fingerprint import fingerprint, normalized, system_config


def test_run_options_do_not_change_the_system_but_its_settings_do():
    base = compose("eval", ["llm=fake"])
    same = compose(
        "eval", ["llm=fake", "eval.out_dir=/elsewhere", "eval.max_failed=3", "eval.progress=false", "trace=true"]
    )
    other = compose("eval", ["llm=fake", "sampling.temperature=0.5"])
    assert system_config(base) == system_config(same) and fingerprint(base) == fingerprint(same)
    assert fingerprint(base) != fingerprint(other)
    assert "prompt_files" in system_config(base)  # an edited prompt file is another system


def test_the_precompute_log_is_named_by_the_call_shaping_part_of_the_same_fingerprint():
    cfg = compose("train", ["llm=fake"])
    assert call_fingerprint(cfg) == fingerprint(cfg, CALL_SHAPING)
    assert call_fingerprint(cfg) == call_fingerprint(compose("train", ["llm=fake", "train.episodes=8"]))
    assert call_fingerprint(cfg) != call_fingerprint(compose("train", ["llm=fake", "agent.max_llm_calls=5"]))


def test_configs_stored_before_the_consolidator_group_still_match():
    snippets = system_config(compose("eval", ["llm=fake"]))
    assert "_target_" not in snippets["consolidator"]  # the default one, left out as older runs stored it
    stored = copy.deepcopy(snippets)
    stored["consolidator"].update(_target_="augmenter.knowledge.KnowledgeConsolidator", review_window=0)
    assert normalized(stored) == snippets
    table = system_config(compose("eval", ["llm=fake", "experiment=table5_core"]))
    assert table["consolidator"]["_target_"].endswith("TableTextConsolidator")
    stored = copy.deepcopy(table)
    stored["consolidator"].update(history_turns=1, focus_entities=True)  # the snippet settings it was given
    assert normalized(stored) == table
    assert normalized(copy.deepcopy(table)) == table  # idempotent


def test_the_opinions_node_is_the_flat_options_runs_were_recorded_with():
    """`consolidator.opinions: {stance: llm, ...}` compares equal to the flat `opinions_stance` of older runs."""
    judged = system_config(compose("chat", ["llm=fake", "consolidator.opinions.stance=llm"]))
    assert judged["consolidator"]["opinions"] is True and judged["consolidator"]["opinions_stance"] == "llm"
    assert "opinions_about_by" not in judged["consolidator"]  # added later, at its off value
    stored = copy.deepcopy(judged)
    stored["consolidator"]["opinions_about_by"] = "question"  # as a run recorded then stored it
    assert normalized(stored) == judged
    off = system_config(compose("eval", ["llm=fake", "experiment=table2_bm25"]))
    assert off["consolidator"]["opinions"] is False and off["consolidator"]["opinions_min_p"] == 0.3
    assert system_config(compose("chat", ["llm=fake", "consolidator.opinions.min_p=0.05"])) != judged


def test_the_eval_resumes_an_older_runs_config_and_refuses_another_system(tmp_path):
    import json

    import pytest

    from augmenter.config import build_evaluator
    from augmenter.errors import ConfigError

    args = ["llm=fake", "eval.limit=2", f"eval.out_dir={tmp_path}", "eval.progress=false", "llm_cache.enabled=false"]
    ev = build_evaluator(compose("eval", args))
    ev.run()
    stored = json.loads((ev.dir / "config.json").read_text())
    stored["consolidator"]["_target_"] = "augmenter.knowledge.KnowledgeConsolidator"  # the default, spelt out
    stored["consolidator"]["faq_context"] = 0  # an option added later, at its off value
    stored["eval"]["out_dir"] = "/another/place"  # where a run is written is not which system it is
    (ev.dir / "config.json").write_text(json.dumps(stored))
    assert build_evaluator(compose("eval", args)).run()["ok"] == 2
    with pytest.raises(ConfigError, match="consolidator"):
        build_evaluator(compose("eval", [*args, "consolidator.k=3"])).run()
    assert OmegaConf.select(compose("eval", args), "consolidator.k") == 5


def test_a_prompt_files_comments_are_no_part_of_the_system(tmp_path):
    from augmenter.prompts import PromptTemplate

    source = PromptTemplate.source("assistant")
    prompt = tmp_path / "mine.yaml"
    cfg = compose("eval", ["llm=fake", f"prompt.response={prompt}"])
    prompt.write_text(source, encoding="utf-8")
    plain = fingerprint(cfg)
    prompt.write_text("# a note on why\n" + source.replace("\n", "\n  # and another\n", 1), encoding="utf-8")
    assert PromptTemplate.content(str(prompt)) == PromptTemplate.content("assistant") and fingerprint(cfg) == plain
    prompt.write_text(source.replace("instruction: >-", "instruction: >-\n  Be brief.", 1), encoding="utf-8")
    assert fingerprint(cfg) != plain  # an edited prompt is another system
