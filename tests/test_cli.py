"""The `spacy-lookahead` command: help on stdout with status 0, a user error
in one short message with status 2, each command's own --help."""
import configparser
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def run(*args):
    return subprocess.run([sys.executable, "-m", "spacy_lookahead", *args], capture_output=True,
                          text=True, cwd=REPO.parent)


def test_help_lists_the_commands_and_exits_0():
    done = run("--help")
    assert done.returncode == 0 and done.stderr == ""
    for command in ("evaluate", "jackknife", "distributed"):
        assert command in done.stdout


@pytest.mark.parametrize("command,option", [("evaluate", "--inputs"), ("jackknife", "--folds"),
                                            ("distributed", "annotate")])
def test_each_command_keeps_its_own_help(command, option):
    done = run(command, "--help")
    assert done.returncode == 0 and option in done.stdout


def test_an_unknown_command_is_a_user_error():
    done = run("frobnicate")
    assert done.returncode == 2 and "No such command 'frobnicate'" in done.stderr
    assert "Traceback" not in done.stderr


def test_the_console_script_is_the_same_app():
    cfg = configparser.ConfigParser()
    cfg.read(REPO / "setup.cfg")
    scripts = cfg["options.entry_points"]["console_scripts"].split("=")
    assert [s.strip() for s in scripts] == ["spacy-lookahead", "spacy_lookahead.cli:app"]
    from spacy_lookahead import __main__, cli
    assert __main__.app is cli.app
