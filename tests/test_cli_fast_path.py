"""The console's fast path: a command line naming a command imports and registers only that
command's module (`cli.app.COMMANDS`), and what it prints is the whole parser's, byte for byte."""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

import pytest

from rewind_ls.cli.app import COMMANDS, _command_module, build_parser


def _subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    raise AssertionError("no subcommands")


def test_the_table_names_every_command_its_module_registers() -> None:
    full = _subparsers(build_parser())
    assert list(full) == [name for _, names in COMMANDS for name in names]
    for module, names in COMMANDS:
        assert list(_subparsers(build_parser(module))) == list(names)


@pytest.mark.parametrize("name", [n for _, names in COMMANDS for n in names])
def test_a_command_alone_prints_the_same_help(name: str) -> None:
    full = _subparsers(build_parser())[name]
    alone = _subparsers(build_parser(_command_module([name])))[name]
    assert alone.format_help() == full.format_help()
    assert alone.format_usage() == full.format_usage()


def test_top_level_options_before_the_command() -> None:
    assert _command_module(["-C", "x", "turns", "--json"]) == "turns_cmd"
    assert _command_module(["--workspace=x", "undo"]) == "rewind_cmd"
    assert _command_module(["-Cx", "diff", "1"]) == "diff_cmd"
    assert _command_module(["--help"]) is None
    assert _command_module(["nope"]) is None
    assert _command_module([]) is None


def test_turns_loads_no_other_command(ws: Path, home: Path) -> None:
    probe = (
        "import sys\n"
        "from rewind_ls.cli import main\n"
        "code = main(['turns'])\n"
        "print(sorted(m for m in sys.modules if m.startswith('rewind_ls.')))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", probe],
        cwd=ws,
        env={"REWIND_LS_HOME": str(home), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        check=True,
    )
    loaded = eval(proc.stdout.strip().splitlines()[-1])  # a list literal printed above
    commands = {f"rewind_ls.cli.{m}" for m, _ in COMMANDS}
    assert [m for m in loaded if m in commands] == ["rewind_ls.cli.turns_cmd"]
    assert not [m for m in loaded if m.startswith(("rewind_ls.server", "rewind_ls.protocol"))]
