"""`rewind-ls install AGENT [--user] [--uninstall]`: rewind-ls' hooks in an agent's settings."""

from __future__ import annotations

import argparse

from rewind_ls.cli.common import Add, workspace
from rewind_ls.core.agents.registry import AGENTS


def cmd_install(args: argparse.Namespace) -> int:
    from rewind_ls.core.agents.registry import agent
    from rewind_ls.core.agents.settings import default_command, install
    from rewind_ls.core.errors import BadInput

    who = agent(args.agent)
    # --user needs no workspace (it may be run from anywhere, `/` included).
    root = "" if args.user else workspace(args)
    if args.local:
        if who.local_settings_path is None or args.user:
            raise BadInput(
                f"--local: {who.title} has no per-person project settings file"
                if not args.user
                else "--local and --user name two different files: give one"
            )
        path = who.local_settings_path(root)
    else:
        path = who.settings_path(root, args.user)
    command = args.command or default_command(who.name)
    changed = install(path, command, args.uninstall, who.name, who.events)
    if not changed:
        print(f"{path}: already {'clean' if args.uninstall else 'installed'}, nothing changed")
    else:
        print(f"{path}: " + ", ".join(changed))
        if who.after_install and not args.uninstall:
            print(who.after_install)
    return 0


def register(add: Add) -> None:
    p = add("install", cmd_install, "Add rewind-ls' hooks to an agent's settings (idempotent).")
    p.add_argument("agent", choices=list(AGENTS), help="the agent whose hooks to set up")
    p.add_argument(
        "--user",
        action="store_true",
        help="the user's settings (~/.claude/settings.json, $CODEX_HOME/hooks.json, "
        "~/.gemini/settings.json) instead of the project's",
    )
    p.add_argument(
        "--local",
        action="store_true",
        help="the project's per-person settings, not committed (.claude/settings.local.json): "
        "the hook command names this machine's paths",
    )
    p.add_argument("--uninstall", action="store_true", help="remove only rewind-ls' hooks")
    p.add_argument("--command", help="hook command (default: this rewind-ls by absolute path)")
