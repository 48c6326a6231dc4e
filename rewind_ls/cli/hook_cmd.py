"""`rewind-ls hook AGENT`: one agent hook payload from stdin. `cli/__init__.py` runs the usual form
before argparse is imported; this is the form argparse parses (`--help`)."""

from __future__ import annotations

import argparse

from rewind_ls.cli.common import Add
from rewind_ls.core.agents.registry import AGENTS


def cmd_hook(args: argparse.Namespace) -> int:
    from rewind_ls.core.agents.hook_process import run

    return run(args.agent)


def register(add: Add) -> None:
    p = add(
        "hook",
        cmd_hook,
        "Record one agent hook payload read from stdin (used by the agent; the workspace comes "
        "from the payload).",
        workspace=False,
    )
    p.add_argument("agent", choices=list(AGENTS), help="the agent sending the payload")
