"""Config validation at compose time (augmenter/config_schema.py): a bad value is one line naming the key, the
value and what is allowed (exit code 2 from the CLI); every shipped config validates."""

import pytest

from augmenter.cli.main import main
from augmenter.config import GROUPS, compose, group_options
from augmenter.errors import ConfigError

BAD = [  # (command, extra overrides, the bad override, what the message must say is allowed)
    ("chat", [], "sampling.temperature=hot", "a number >= 0"),
    ("chat", [], "sampling.temperature=-1", "a number >= 0"),
    ("chat", [], "sampling.max_tokens=0", "an integer >= 1"),
    ("chat", [], "sampling.top_p=1.5", "a number in (0, 1]"),
    ("chat", [], "agent.max_llm_calls=0", "an integer >= 1"),
    ("chat", [], "agent.max_steps=2.5", "an integer >= 1"),
    ("chat", [], "consolidator.k=0", "an integer >= 1"),
    ("chat", [], "consolidator.opinions.min_p=2", "a number in [0, 1]"),
    ("chat", [], "consolidator.opinions.stance=lm", "model or llm"),
    ("chat", [], "consolidator.opinions=3", "true, false, null or a node of settings"),
    ("chat", ["utility=claims"], "utility.threshold=2", "a number in [0, 1]"),
    ("chat", [], "utility.base.threshold=2", "a number in [0, 1]"),
    ("chat", ["utility=kf1"], "utility.threshold=-0.1", "a number in [0, 1]"),
    ("chat", [], "verifier.threshold=1.5", "null or a number in [0, 1]"),
    ("chat", [], "retriever.b=1.5", "a number in [0, 1]"),
    ("chat", [], "prompt.max_history_turns=-1", "an integer >= 0"),
    ("chat", [], "trace=maybe", "true or false"),
    ("chat", [], "llm_cache.enabled=1", "true or false"),
    ("chat", [], "data_root=", "a file or directory path"),
    ("chat", [], "llm_guard.max_consecutive_failures=0", "an integer >= 1"),
    ("chat", [], "llm_guard.cooldown=-1", "a number >= 0"),
    ("chat", ["llm=openai"], "llm.timeout=abc", "a number > 0"),
    ("chat", ["llm=openai"], "llm.timeout=-5", "a number > 0"),
    ("chat", ["llm=openai"], "llm.timeout=0", "a number > 0"),
    ("chat", ["llm=openai"], "llm.deadline=0", "a number > 0"),
    ("chat", ["llm=openai"], "llm.max_retries=-1", "an integer >= 0"),
    ("chat", ["llm=openai"], "llm.base_url=not-a-url", "null or an http(s):// URL"),
    ("chat", ["llm=openai"], "llm.base_url=ftp://host/v1", "null or an http(s):// URL"),
    ("chat", ["llm=local"], "llm.n_ctx=0", "an integer >= 1"),
    ("chat", ["retriever=dense"], "retriever.batch_size=0", "an integer >= 1"),
    ("chat", ["knowledge=jsonl"], "knowledge.path=5", "a file or directory path"),
    ("eval", [], "eval.limit=-5", "null or an integer >= 0"),
    ("eval", [], "eval.limit=abc", "null or an integer >= 0"),
    ("eval", [], "eval.max_failed=1.5", "an integer >= 0 (a count) or a number in (0, 1) (a share)"),
    ("eval", [], "eval.max_failed=-1", "an integer >= 0 (a count) or a number in (0, 1) (a share)"),
    ("precompute", [], "env.heldout_share=1", "a number in (0, 1)"),
    ("precompute", [], "env.llm_call_cost=-0.5", "a number >= 0"),
    ("precompute", [], "env.train_limit=0", "null or an integer >= 1"),
    ("train", [], "train.lr=0", "a number > 0"),
    ("train", [], "model.num_heads=0", "an integer >= 1"),
]


@pytest.mark.parametrize("command, extra, override, allowed", BAD, ids=[b[2] for b in BAD])
def test_bad_value_is_one_line_naming_key_value_and_what_is_allowed(
    command, extra, override, allowed, capsys, tmp_path
):
    # were the value let through, nothing would load: no model (llm=fake), no script (chat)
    safety = ["--script", str(tmp_path / "missing.txt")] if command == "chat" else []
    llm = [] if any(x.startswith("llm=") for x in extra) else ["llm=fake"]
    assert main([command, *safety, *llm, *extra, override]) == 2
    captured = capsys.readouterr()
    key, value = override.split("=", 1)
    assert captured.err.count("\n") == 1 and "Traceback" not in captured.err
    assert captured.err.startswith(f"augmenter: error: {key}=") and value in captured.err
    assert f"expected {allowed}" in captured.err


GOOD = [
    "eval.limit=null",
    "eval.limit=0",
    "eval.max_failed=3",
    "eval.max_failed=0.1",
    "llm=openai",
    "llm=openai llm.base_url=https://api.example.com/v1 llm.timeout=2.5 llm.deadline=10 llm.max_retries=0",
    "sampling.temperature=1",
    "sampling.seed=null",
    "utility.threshold=0",
    "llm_guard.cooldown=0",
]


@pytest.mark.parametrize("overrides", GOOD)
def test_good_values_compose(overrides):
    compose("eval", overrides.split())


def test_options_are_checked_by_their_target():
    # a key another option has is not a key of this one; a target the schema does not know is free-form
    with pytest.raises(ConfigError, match="llm.timeout=5 is invalid: augmenter.llm.FakeLLM has no setting 'timeout'"):
        compose("chat", ["llm=fake", "+llm.timeout=5"])
    with pytest.raises(ConfigError, match=r"llm.fallbacks\[1\].timeout=\"x\" is invalid: expected a number > 0"):
        compose(
            "chat",
            [
                "llm=openai",
                "+llm.fallbacks=[{_target_: augmenter.llm.FakeLLM}, "
                "{_target_: augmenter.llm.OpenAICompatLLM, model: m, timeout: x}]",
            ],
        )
    compose("chat", ["llm._target_=my_package.MyLLM", "+llm.anything=1"])
    with pytest.raises(ConfigError, match="agent has no setting 'speed'"):
        compose("chat", ["+agent.speed=3"])


def test_hydra_still_rejects_unknown_keys():
    with pytest.raises(ConfigError, match="nope"):
        compose("chat", ["agent.nope=1"])


def test_every_shipped_config_validates():
    for group in GROUPS:
        for option in group_options(group):
            compose("chat", [f"{group}={option}"])
    for name in group_options("experiment"):
        compose("eval", [f"experiment={name}"])
    compose("train")


def test_a_value_under_the_home_folder_is_expanded_as_a_shell_would(monkeypatch, tmp_path):
    """`knowledge.path=~/handbook`: the shell leaves ~ alone after `=`, and Hydra's grammar rejected it."""
    monkeypatch.setenv("HOME", str(tmp_path / "me"))
    cfg = compose("chat", ["knowledge=docs", "knowledge.path=~/handbook"])
    assert cfg.knowledge.path == str(tmp_path / "me" / "handbook")
    monkeypatch.setenv("HOME", str(tmp_path / "my home"))  # a space: quoted for Hydra
    assert compose("chat", ["knowledge=docs", "knowledge.path=~/hand book"]).knowledge.path == str(
        tmp_path / "my home" / "hand book"
    )
    assert compose("chat", ["knowledge=docs", "knowledge.path='docs/~x'"]).knowledge.path == "docs/~x"  # as written


def test_the_consolidators_opinions_are_off_the_defaults_or_a_node_of_settings():
    from augmenter.reviews.evidence import OpinionSettings

    assert OpinionSettings.of(False) is None and OpinionSettings.of(None) is None
    assert OpinionSettings.of(True) == OpinionSettings()
    assert OpinionSettings.of({"stance": "llm", "min_p": 0.05}) == OpinionSettings(stance="llm", min_p=0.05)
    with pytest.raises(ConfigError, match="no setting 'stanc'; settings: min_p"):
        OpinionSettings.of({"stanc": "llm"})
    with pytest.raises(ConfigError, match="did you mean 'stance'"):
        compose("chat", ["+consolidator.opinions.stanc=llm"])
    assert compose("chat", ["consolidator.opinions=false"]).consolidator.opinions is False
