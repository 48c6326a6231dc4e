"""The command line's dispatcher: the top-level parser, one module per command (each registers its
own subcommand: `register(add)`), and one error handler (`error_handler.run`). No logic here."""

from __future__ import annotations

import argparse
from types import ModuleType
from typing import NoReturn

from rewind_ls import __version__
from rewind_ls.cli import (
    blame_cmd,
    demo_cmd,
    diff_cmd,
    doctor_cmd,
    error_handler,
    gc_cmd,
    hook_cmd,
    import_cmd,
    install_cmd,
    log_cmd,
    record_cmd,
    rewind_cmd,
    scan_cmd,
    serve_cmd,
    summarize_cmd,
    turns_cmd,
)
from rewind_ls.cli.common import EPILOG, WORKSPACE_HELP, Add, Command, workspace_parent
from rewind_ls.cli.pick_cmd import cmd_pick

# In the order `rewind-ls --help` lists them.
COMMANDS: tuple[ModuleType, ...] = (
    turns_cmd,
    diff_cmd,
    log_cmd,
    blame_cmd,
    rewind_cmd,  # rewind, revert, undo
    summarize_cmd,
    gc_cmd,
    scan_cmd,
    doctor_cmd,
    install_cmd,
    hook_cmd,
    serve_cmd,
    record_cmd,
    import_cmd,
    demo_cmd,
)


class _OneLineParser(argparse.ArgumentParser):
    """A bad argument is one line on stderr and exit 2 (argparse's own error prints the whole
    usage first, which buries the reason); `--help` still shows the usage."""

    def error(self, message: str) -> NoReturn:
        from rewind_ls.cli.style import safe

        # Escaped: an argument can hold a newline or a terminal escape sequence.
        self.exit(2, f"{self.prog}: error: {safe(message)} (see `{self.prog} --help`)\n")


def build_parser() -> argparse.ArgumentParser:
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
    parser.set_defaults(func=cmd_pick, workspace=None, command=None, json=False)
    add = _adder(parser.add_subparsers(dest="command", metavar="COMMAND"))
    for module in COMMANDS:
        module.register(add)
    return parser


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
    args = build_parser().parse_args(argv)
    _warn_about_limits()
    return error_handler.run(args.func, args)


def _warn_about_limits() -> None:
    """A limit set in the environment to something unusable is replaced by its default: say so
    (one line each), rather than silently."""
    import sys

    from rewind_ls.cli.style import safe
    from rewind_ls.core.fs.config import limit_problems

    for problem in limit_problems():
        sys.stderr.write(f"rewind-ls: warning: {safe(problem)}\n")
