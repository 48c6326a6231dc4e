"""The command line's dispatcher: the top-level parser, one module per command (each registers its
own subcommand: `register(add)`), and one error handler (`error_handler.run`); a command line naming a command registers only its module. No logic here.

The dispatcher: the top-level parser (`build_parser(only=None)`), `COMMANDS` (the table of command modules and the subcommands each
registers), `run_cli`; a command line naming a command imports and registers only its module, and
with no command the picker chooses one (`pick_cmd.pick_argv`), which then runs like a typed command
line; `tests/test_cli_fast_path.py` holds the table to what the modules register and the help to the
whole parser's; no logic of its own.
"""

from __future__ import annotations

import argparse
from importlib import import_module
from typing import NoReturn

from rewind_ls import __version__
from rewind_ls.cli.common import EPILOG, WORKSPACE_HELP, Add, Command, workspace_parent
from rewind_ls.cli.error_handler import run as run_command

# The command modules, in the order `rewind-ls --help` lists them, each with the subcommands its
# `register(add)` adds. A command line naming one of them imports and registers only that
# module: `rewind-ls turns` does not load the restore engine, the server's protocol or the
# other commands' parsers. `--help`, no command or an unknown one registers them all.
COMMANDS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("turns_cmd", ("turns",)),
    ("diff_cmd", ("diff",)),
    ("log_cmd", ("log", "show")),
    ("blame_cmd", ("blame",)),
    ("export_cmd", ("export",)),
    ("timeline_cmd", ("timeline",)),
    ("rewind_cmd", ("rewind", "revert", "undo", "restore")),
    ("summarize_cmd", ("summarize",)),
    ("gc_cmd", ("gc",)),
    ("scan_cmd", ("scan",)),
    ("doctor_cmd", ("doctor",)),
    ("install_cmd", ("install",)),
    ("hook_cmd", ("hook",)),
    ("serve_cmd", ("serve",)),
    ("mcp_cmd", ("mcp",)),
    ("record_cmd", ("record",)),
    ("import_cmd", ("import",)),
    ("demo_cmd", ("demo",)),
)
_MODULE_OF = {name: module for module, names in COMMANDS for name in names}


class _OneLineParser(argparse.ArgumentParser):
    """A bad argument is one line on stderr and exit 2 (argparse's own error prints the whole
    usage first, which buries the reason); `--help` still shows the usage."""

    def error(self, message: str) -> NoReturn:
        from rewind_ls.cli.style import safe

        # Escaped: an argument can hold a newline or a terminal escape sequence.
        self.exit(2, f"{self.prog}: error: {safe(message)} (see `{self.prog} --help`)\n")


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The whole parser, or (`only`: a command's module) the top level and that command alone."""
    parser: argparse.ArgumentParser = _OneLineParser(
        prog="rewind-ls",
        description="Checkpoints and rewind for AI coding agents: restore code, conversation or both "
        "to the start of any turn, revert one turn, undo any rewind.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"rewind-ls {__version__}")
    # No COMMAND: the turn picker (on a terminal). -C before the command has its own dest: a
    # subcommand's default would overwrite it.
    parser.add_argument(
        "-C", "--workspace", dest="top_workspace", metavar="DIR", help=WORKSPACE_HELP
    )
    parser.set_defaults(func=_pick, workspace=None, command=None, json=False)
    add = _adder(parser.add_subparsers(dest="command", metavar="COMMAND"))
    for module, _ in COMMANDS:
        if only is None or module == only:
            import_module(f"rewind_ls.cli.{module}").register(add)
    return parser


def _command_module(argv: list[str]) -> str | None:
    """The module of the command `argv` names (after the top-level options), or None."""
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg in ("-C", "--workspace"):
            i += 2
            continue
        if arg.startswith("--workspace=") or (arg.startswith("-C") and len(arg) > 2):
            i += 1
            continue
        if arg.startswith("-"):
            return None  # --help, --version, or something the whole parser must judge
        return _MODULE_OF.get(arg)
    return None


def _pick(args: argparse.Namespace) -> int:
    """No COMMAND: the turn picker chooses one, then it runs like a typed command line."""
    from rewind_ls.cli.pick_cmd import pick_argv

    return run_cli(pick_argv(args, lambda: build_parser().format_usage()))


def _adder(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> Add:
    common = workspace_parent()

    def add(name: str, func: Command, help: str, workspace: bool = True) -> argparse.ArgumentParser:
        p = sub.add_parser(
            name,
            parents=[common] if workspace else [],
            help=help,
            description=help,
            epilog=EPILOG,
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        p.set_defaults(func=func)
        return p

    return add


def run_cli(argv: list[str]) -> int:
    parser = build_parser(_command_module(argv))
    args = parser.parse_args(argv)
    _warn_about_limits()
    return run_command(args.func, args)


def _warn_about_limits() -> None:
    """A limit set in the environment to something unusable is replaced by its default: say so
    (one line each), rather than silently."""
    import sys

    from rewind_ls.cli.style import safe
    from rewind_ls.core.fs.config import limit_problems

    for problem in limit_problems():
        sys.stderr.write(f"rewind-ls: warning: {safe(problem)}\n")
