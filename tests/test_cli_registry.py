"""The command registry (`augmenter.cli.commands.COMMANDS`): the parser, the extra checks, `--cfg job` and the
dispatch all come from it."""

import re
from dataclasses import replace

import pytest

import augmenter.extras
from augmenter.cli.commands import COMMANDS
from augmenter.cli.main import main
from augmenter.extras import MODULES

ARGS = {"ground": ["runs/x"], "curve": ["runs/x"], "judge": ["runs/x"], "index": ["docs"]}  # their required ones


def _fail(*args, **kwargs):
    raise AssertionError("the command ran")


def _help(argv, capsys) -> str:
    with pytest.raises(SystemExit) as exited:
        main([*argv, "--help"])
    assert exited.value.code == 0
    return capsys.readouterr().out


def test_the_top_level_help_lists_every_registered_command_in_order(capsys):
    shown = _help([], capsys)
    assert "{" + ",".join(COMMANDS) + "}" in shown
    for command in COMMANDS.values():
        assert re.search(rf"^    {command.name} +{re.escape(command.help[:30])}", shown, re.M), command.name


@pytest.mark.parametrize("name", list(COMMANDS))
def test_every_registered_command_parses_help(name, capsys):
    command = COMMANDS[name]
    shown = _help([name], capsys)
    assert shown.startswith(f"usage: augmenter {name} [-h] [-v | -q]")
    assert " ".join(command.help.split()) in " ".join(shown.split())  # the description, however wrapped
    assert ("--cfg {job}" in shown) == command.takes_cfg
    assert ("config groups (choose one" in shown) == (command.config is not None)
    assert command.takes_cfg <= (command.config is not None)  # --cfg job prints the command's config
    assert command.extra is None or command.extra in MODULES
    assert set(command.modules or ()) <= set(MODULES.get(command.extra, ()))


@pytest.mark.parametrize("name", [n for n, c in COMMANDS.items() if c.extra])
def test_a_registered_extra_is_checked_before_the_command_runs(name, monkeypatch, capsys):
    command = COMMANDS[name]
    hidden = command.modules or MODULES[command.extra]
    real = augmenter.extras.find_spec
    monkeypatch.setattr(augmenter.extras, "find_spec", lambda module: None if module in hidden else real(module))
    monkeypatch.setitem(COMMANDS, name, replace(command, handler=_fail))
    assert main([name, *ARGS.get(name, [])]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"augmenter: error: augmenter {name} needs {hidden[0]}")
    assert err.endswith(f"pip install 'augmenter[{command.extra}]'\n") and err.count("\n") == 1


def test_the_registered_handler_runs_with_the_parsed_arguments(monkeypatch):
    seen = []
    monkeypatch.setitem(COMMANDS, "chat", replace(COMMANDS["chat"], handler=lambda args: seen.append(args) or 7))
    assert main(["chat", "policy=self_ask", "--trace", "llm=fake"]) == 7
    assert seen[0].command == "chat" and seen[0].trace and seen[0].overrides == ["policy=self_ask", "llm=fake"]


def test_cfg_job_prints_the_registered_config_without_running_the_command(monkeypatch, capsys):
    monkeypatch.setitem(COMMANDS, "judge", replace(COMMANDS["judge"], handler=_fail))
    assert main(["judge", "runs/x", "--cfg", "job", "llm=fake", "judge.limit=3"]) == 0
    shown = capsys.readouterr().out
    assert re.search(r"^judge:\n(  .*\n)*  limit: 3$", shown, re.M)
