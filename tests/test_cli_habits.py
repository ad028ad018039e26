"""The console script's habits (Hydra, gymnasium, the usual CLI): help that lists every config group and option,
`--cfg job`, flags and overrides in any order, IF-THEN rules from a YAML file, `-v`/`-q`, `--version`, quit words,
units on printed figures, and the README's option table checked against `configs/`."""

import json
import logging
import re
from importlib.metadata import version
from pathlib import Path

import pytest
import yaml

import augmenter.cli.main as cli
import augmenter.config
from augmenter.cli.groups import group_defaults
from augmenter.cli.log import StderrHandler
from augmenter.cli.main import main, parse_args
from augmenter.config import config_dir, group_options
from augmenter.errors import ConfigError
from augmenter.llm import FakeLLM
from augmenter.policies import RulePolicy

ROOT = Path(__file__).resolve().parents[1]
GROUPS = sorted(p.name for p in config_dir().iterdir() if p.is_dir() and any(p.glob("*.yaml")))


@pytest.fixture(autouse=True)
def restore_logging():
    yield
    root = logging.getLogger()
    for handler in [h for h in root.handlers if isinstance(h, StderrHandler)]:
        root.removeHandler(handler)
    logging.getLogger("augmenter").setLevel(logging.NOTSET)


def _fail(*args, **kwargs):
    raise AssertionError("an agent, an LLM or a command was built")


def chat(tmp_path, *args):
    """A scripted chat's --output records (the script is the file `script.txt` under tmp_path)."""
    out = tmp_path / "turns.jsonl"
    assert main(["chat", "--output", str(out), *args]) == 0
    return [json.loads(line) for line in out.read_text().splitlines()]


def actions(record):
    return [step["action"] for step in record["memory"]["trace"]]


# help
@pytest.mark.parametrize("command, config", [("chat", "chat"), ("eval", "eval"), ("grid", "eval"),
                                             ("precompute", "train"), ("train", "train")])
def test_help_lists_every_group_with_its_options(command, config, capsys):
    with pytest.raises(SystemExit) as exit_:
        main([command, "--help"])
    assert exit_.value.code == 0
    shown = capsys.readouterr().out
    groups = group_defaults(config)
    assert set(groups) == set(GROUPS) - ({"experiment"} if config != "eval" else set())
    for group, default in groups.items():
        block = re.search(rf"^  {group} +(.*(?:\n {{14}}.*)*)", shown, re.M)
        assert block, f"{group} not in the help of {command}"
        listed = [o.strip() for o in block.group(1).replace("\n", " ").split(",")]
        assert listed == [o + ("*" if o == default else "") for o in group_options(group)]
    assert "group=option" in shown and "key=value" in shown and ("--cfg" in shown) == (command != "grid")


def test_defaults_follow_the_experiment_and_task():
    assert group_defaults("eval")["experiment"] == "table2_bm25_feedback"
    assert group_defaults("eval")["knowledge"] == "dstc11"  # picked by the experiment's task
    assert group_defaults("chat")["knowledge"] == "demo" and group_defaults("train")["utility"] == "kf1"


# --cfg job
@pytest.mark.parametrize("command, extra, key, expected", [
    ("chat", ["policy=self_ask"], ("policy", "_target_"), "augmenter.policies.SelfAskPolicy"),
    ("eval", ["experiment=table5_core"], ("name",), "table5_core"),
    ("train", ["env.train_limit=7"], ("env", "train_limit"), 7),
    ("precompute", ["precompute.max_states=9"], ("precompute", "max_states"), 9),
])
def test_cfg_job_prints_the_composed_config_and_builds_nothing(command, extra, key, expected, capsys, monkeypatch):
    for name in ("build_agent", "build_llm", "instantiate"):
        monkeypatch.setattr(augmenter.config, name, _fail)
    for name in ("chat", "evaluate", "run_precompute", "run_train"):
        monkeypatch.setattr(cli, name, _fail)
    assert main([command, *extra, "--cfg", "job", "llm=fake"]) == 0
    shown = capsys.readouterr().out
    cfg = yaml.safe_load(shown)
    node = cfg
    for k in key:
        node = node[k]
    assert node == expected and cfg["llm"]["_target_"] == "augmenter.llm.FakeLLM"
    assert "${" not in shown  # interpolations resolved (data_root, chat_seeds.path)


def test_cfg_job_with_a_bad_override_is_one_line(capsys):
    assert main(["chat", "--cfg", "job", "agent.max_llm_calls=0"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("augmenter: error: agent.max_llm_calls=0") and err.count("\n") == 1


# flags and overrides in any order
def test_overrides_before_between_and_after_flags_keep_their_order():
    args = parse_args(["chat", "a=1", "--trace", "b=2", "--script", "f.txt", "c=3", "--output", "o.jsonl", "d=4"])
    assert args.overrides == ["a=1", "b=2", "c=3", "d=4"] and args.trace and args.script == "f.txt"
    assert parse_args(["-v", "eval", "x=1", "-q"]).verbosity == -1
    ground = parse_args(["ground", "runs/a", "llm=openai", "--verifier", "llm", "runs/b", "x=1"])
    assert ground.runs == ["runs/a", "runs/b"] and ground.overrides == ["llm=openai", "x=1"]


@pytest.mark.parametrize("argv", [["chat", "llm=fake", "--bogus"], ["report", "--out", "d", "x=1", "--nope"],
                                  ["ground", "llm=openai"]])
def test_unknown_flags_are_usage_errors(argv, capsys):
    with pytest.raises(SystemExit) as exit_:
        parse_args(argv)
    assert exit_.value.code == 2 and "error:" in capsys.readouterr().err


def test_a_chat_with_overrides_on_both_sides_of_the_flags(tmp_path):
    script = tmp_path / "script.txt"
    script.write_text("Does the Grand Meridian Hotel have a pool?\n")
    rows = chat(tmp_path, "llm=fake", "--trace", "--script", str(script), "policy=self_ask")
    assert actions(rows[0])[0] == "ask_need_knowledge"  # the self-ask policy, chosen after the flags


# IF-THEN rules from a file
RULES = "- if: not has_candidate\n  then: call_llm\n- then: send\n"


def test_rules_load_from_a_yaml_file(tmp_path):
    (tmp_path / "rules.yaml").write_text(RULES)
    script = tmp_path / "script.txt"
    script.write_text("Does the Grand Meridian Hotel have a pool?\n")
    rows = chat(tmp_path, "--script", str(script), "llm=fake", "policy=rules", f"policy.file={tmp_path / 'rules.yaml'}")
    assert actions(rows[0]) == ["call_llm", "send"]  # the preset rules would consolidate first
    rules = ("policy.rules=[{if: not consolidated, then: consolidate_knowledge}, "
             "{if: not has_candidate, then: call_llm}]")
    rows = chat(tmp_path, "--script", str(script), "llm=fake", "policy=rules", rules)
    assert actions(rows[-1]) == ["consolidate_knowledge", "call_llm", "send"]
    preset = chat(tmp_path, "--script", str(script), "llm=fake", "policy=rules")
    assert actions(preset[-1])[:3] == ["consolidate_knowledge", "call_llm", "verify_utility"]


@pytest.mark.parametrize("text, message", [
    (None, "no such file"),
    ("- if: [unclosed\n", "not valid YAML on line 2"),
    ("then: send\n", "expected a non-empty list of {if, then} rules"),
    ("", "expected a non-empty list"),
    ("- if: has_candidate\n  then: fly\n", "unknown action 'fly'"),
    ("- if: sunny\n  then: send\n", "unknown predicate 'sunny'"),
    ("- if: has_candidate\n", "needs 'then: <action>'"),
])
def test_a_bad_rules_file_is_one_line_naming_it(text, message, tmp_path, capsys):
    path = tmp_path / "rules.yaml"
    if text is not None:
        path.write_text(text)
    with pytest.raises(ConfigError, match=re.escape(message)):
        RulePolicy(file=path)
    assert main(["chat", "--demo", "llm=fake", "policy=rules", f"policy.file={path}"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"augmenter: error: policy.file {path}: ") and message in err and err.count("\n") == 1


# logging, version
@pytest.mark.parametrize("flags, shown, hidden", [([], ["a warning"], ["a debug line"]),
                                                  (["-v"], ["a debug line", "a warning"], []),
                                                  (["-q"], ["an error"], ["a warning", "a debug line"])])
def test_verbosity_sets_the_level_of_augmenters_loggers(flags, shown, hidden, capsys):
    assert main([*flags, "chat", "--cfg", "job", "llm=fake"]) == 0
    capsys.readouterr()
    log = logging.getLogger("augmenter.eval.runner")
    log.debug("a debug line")
    log.warning("a warning")
    log.error("an error")
    logging.getLogger("bm25s").info("another library's info")
    err = capsys.readouterr().err
    assert all(line in err for line in shown) and not any(line in err for line in hidden)
    assert "another library" not in err


def test_verbosity_after_the_command_too():
    main(["chat", "-v", "--cfg", "job", "llm=fake"])
    assert logging.getLogger("augmenter").level == logging.DEBUG
    main(["chat", "--cfg", "job", "llm=fake", "-q"])
    assert logging.getLogger("augmenter").level == logging.ERROR


def test_version(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["--version"])
    assert exit_.value.code == 0 and capsys.readouterr().out == f"augmenter {version('augmenter')}\n"


# quit words
@pytest.fixture
def prompts(monkeypatch):
    """The text of every prompt the fake LLM receives."""
    seen = []
    complete = FakeLLM.complete

    def record(self, messages, params):
        seen.append("\n".join(m["content"] for m in messages))
        return complete(self, messages, params)

    monkeypatch.setattr(FakeLLM, "complete", record)
    return seen


@pytest.mark.parametrize("word", ["quit", "exit", ":q", "  Exit ", "QUIT"])
def test_a_quit_word_ends_a_scripted_chat_unsent(word, tmp_path, prompts):
    script = tmp_path / "script.txt"
    script.write_text(f"I want to quit smoking\n{word}\nnever sent\n")
    rows = chat(tmp_path, "--script", str(script), "llm=fake")
    assert [r["memory"]["q"] for r in rows] == ["I want to quit smoking"]
    assert prompts and not any("never sent" in p or word.strip() in p.splitlines() for p in prompts)


def test_a_quit_word_ends_an_interactive_chat(tmp_path, prompts, monkeypatch):
    from rich.console import Console

    typed = iter(["Hello there", ":Q", "never sent"])
    monkeypatch.setattr(Console, "input", lambda self, prompt="": next(typed))
    rows = chat(tmp_path, "llm=fake")
    assert [r["memory"]["q"] for r in rows] == ["Hello there"] and not any("never sent" in p for p in prompts)
    assert next(typed) == "never sent"


# units
def test_the_trace_says_the_unit_of_every_figure(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "250")
    script = tmp_path / "script.txt"
    script.write_text("Does the Grand Meridian Hotel have a pool?\n")
    chat(tmp_path, "--script", str(script), "--trace", "llm=fake")
    shown = capsys.readouterr().out
    totals = r"^\d+ LLM calls, \d+ prompt \+ \d+ completion tokens, \d+\.\d\d s \(\d+\.\d ms outside the LLM\)$"
    assert re.search(totals, shown, re.M)
    assert re.search(r"^  hotel:1:\S+ \(retrieval score [\d.]+\) \[Grand Meridian Hotel\]", shown, re.M)


def test_the_eval_summary_says_the_unit_of_every_figure(capsys):
    cli._print_summary({"name": "x", "turns": 2, "run_dir": "d", "metrics": {"KF1": 85.0, "length": 12.0},
                        "cost": {"llm_calls": 1.5, "turn_seconds": 2.0}})
    assert capsys.readouterr().out == ("x: 2 of 2 turns scored; KF1 85.00 (%), length 12.00 (words); LLM calls 1.50 "
                                       "(per turn), wall time 2.00 (s per turn) -> d\n")


# the README's option table
def readme_table() -> dict[str, list[str]]:
    """{group: options} from the `| group | options |` table under "## Chatting": each row's group is its first
    code span; its options are the code spans that open each top-level (outside parentheses) comma-separated item."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    block = re.search(r"^\| group \| options \|\n\|[-|]+\|\n((?:\|.*\n)+)", text, re.M)
    assert block, "the README's option table is missing"
    table = {}
    for row in block.group(1).splitlines():
        group_cell, options_cell = (cell.strip() for cell in row.strip().strip("|").split(" | ", 1))
        items, depth, item = [], 0, ""
        for ch in options_cell:
            depth += (ch == "(") - (ch == ")")
            if ch == "," and depth == 0:
                items.append(item.strip())
                item = ""
            else:
                item += ch
        items.append(item.strip())
        table[re.match(r"`(\w+)`", group_cell).group(1)] = [re.match(r"`(\w+)`", i).group(1) for i in items if i]
    return table


def test_the_readme_option_table_lists_every_option_in_configs():
    table = readme_table()
    assert set(table) == set(GROUPS), "groups missing from (or stale in) the README's option table"
    for group in GROUPS:
        assert sorted(table[group]) == group_options(group), f"README option table, group {group}"
