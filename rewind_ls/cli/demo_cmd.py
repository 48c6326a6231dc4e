"""`rewind-ls demo [--keep]`: the scripted tour (`cli/demo.py`)."""

from __future__ import annotations

import argparse

from rewind_ls.cli.common import Add


def cmd_demo(args: argparse.Namespace) -> int:
    from rewind_ls.cli.demo import run_demo

    return run_demo(keep=args.keep)


def register(add: Add) -> None:
    p = add(
        "demo",
        cmd_demo,
        "Record a scripted agent session in a temporary workspace and rewind it.",
        workspace=False,
    )
    p.add_argument("--keep", action="store_true", help="keep the temporary workspace and store")
