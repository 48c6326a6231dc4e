"""`rewind-ls mcp [--agent NAME]`: the MCP server on stdio for the workspace it is started in, through
which an agent lists, shows, previews and restores its own turns (`rewind_ls.mcp_server`)."""

from __future__ import annotations

import argparse

from rewind_ls.cli.common import Add, workspace
from rewind_ls.core.agents.registry import AGENTS


def cmd_mcp(args: argparse.Namespace) -> int:
    import os

    from rewind_ls.mcp_server.app import serve

    if args.workspace is None and getattr(args, "top_workspace", None) is None:
        # The agent's project folder when it names one (its MCP server may start elsewhere).
        for var in ("CLAUDE_PROJECT_DIR", "GEMINI_PROJECT_DIR"):
            if os.environ.get(var) and os.path.isdir(os.environ[var]):
                args.workspace = os.environ[var]
                break
    serve(workspace(args), args.agent)
    return 0


def register(add: Add) -> None:
    p = add(
        "mcp",
        cmd_mcp,
        "Run the MCP server on stdio: the agent's own turns as tools (list_turns, show_turn, "
        "blame, preview, rewind, revert, undo); it never forces a restore.",
    )
    p.add_argument(
        "--agent",
        choices=list(AGENTS),
        help="the agent that starts it: its turns are the ones numbered (default: from the "
        "agent's variables in the environment)",
    )
