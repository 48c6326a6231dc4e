"""`rewind-ls` with no COMMAND: on a terminal, pick a turn and what to do with it, then run that."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable

from rewind_ls.cli.common import open_store
from rewind_ls.core.errors import RewindError


def pick_argv(args: argparse.Namespace, usage: Callable[[], str]) -> list[str]:
    """The command line the person picks (the dispatcher runs it); `usage` is the top-level usage,
    printed when there is no terminal to pick on."""
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        sys.stderr.write(usage())
        raise RewindError(
            "a COMMAND is needed (the turn picker needs a terminal); see rewind-ls --help"
        )
    from rewind_ls.cli.picker import ask_command

    with open_store(args) as store:
        argv = ask_command(store)
    where = args.workspace or args.top_workspace
    return [*argv, *(["-C", where] if where else [])]
