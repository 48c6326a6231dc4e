"""`rewind-ls` with no COMMAND: on a terminal, pick a turn and what to do with it, then run that."""

from __future__ import annotations

import argparse
import sys

from rewind_ls.cli.common import open_store
from rewind_ls.core.errors import RewindError


def cmd_pick(args: argparse.Namespace) -> int:
    from rewind_ls.cli.app import build_parser, run_cli

    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        build_parser().print_usage(sys.stderr)
        raise RewindError(
            "a COMMAND is needed (the turn picker needs a terminal); see rewind-ls --help"
        )
    from rewind_ls.cli.picker import ask_command

    with open_store(args) as store:
        argv = ask_command(store)
    where = args.workspace or args.top_workspace
    return run_cli([*argv, *(["-C", where] if where else [])])
