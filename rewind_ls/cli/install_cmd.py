"""`rewind-ls install [AGENT] [--user] [--uninstall] [--no-mcp] [--plugin DIR]`: rewind-ls' hooks in an
agent's settings, and its MCP server (`rewind-ls mcp`) beside them; with no agent, the agents it
records and where each one's hooks are installed."""

from __future__ import annotations

import argparse

from rewind_ls.cli.common import Add, workspace
from rewind_ls.core.agents.registry import AGENTS


def cmd_install(args: argparse.Namespace) -> int:
    from rewind_ls.core.agents.mcp_config import KNOWN, install_mcp
    from rewind_ls.core.agents.registry import agent
    from rewind_ls.core.agents.settings import default_command
    from rewind_ls.core.errors import BadInput

    if args.agent is None:
        return list_agents(args)
    who = agent(args.agent)
    if args.plugin:
        return _package(who.name, args.plugin, args.portable)
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
    changed = who.hooks_file().install(path, command, args.uninstall, who.name, who.events)
    if not changed:
        print(f"{path}: already {'clean' if args.uninstall else 'installed'}, nothing changed")
    else:
        print(f"{path}: " + ", ".join(changed))
    # --uninstall removes the MCP server too, even with --no-mcp: nothing of ours is left behind.
    if who.name not in KNOWN:
        if not args.no_mcp and not args.uninstall:
            print(f"(no MCP server: rewind-ls does not know where {who.title} reads MCP servers)")
    elif args.uninstall or not args.no_mcp:
        for line in install_mcp(who.name, root, args.user, args.uninstall):
            print(line)
    if changed and who.after_install and not args.uninstall:
        print(who.after_install)
    return 0


def _package(name: str, dest: str, portable: bool) -> int:
    """`--plugin DIR`: the agent's own package (hooks, MCP server, slash commands) in DIR."""
    import os

    from rewind_ls.core.agents.plugin import write_package

    folder = write_package(name, os.path.abspath(dest), portable)
    print(f"{folder}: rewind-ls {'plugin' if name == 'claude-code' else 'extension'} written")
    if name == "claude-code":
        print(f"use it: claude --plugin-dir {folder}")
        print(f"   or, in claude: /plugin marketplace add {os.path.dirname(folder)}")
        print("                  /plugin install rewind-ls@rewind-ls")
    else:
        print(f"use it: gemini extensions install {folder}")
    return 0


def list_agents(args: argparse.Namespace) -> int:
    """Every agent, whether rewind-ls' hooks are installed for it (in this workspace's hooks file
    or the user's; with --user, the user's only) and else where `install` would put them."""
    from rewind_ls.core.agents.settings import installed_hooks

    root = "" if args.user else workspace(args)
    print("rewind-ls records these agents (set one up: rewind-ls install AGENT [--user]):")
    width = max(len(a.name) for a in AGENTS.values())
    title_width = max(len(a.title) for a in AGENTS.values())
    for who in AGENTS.values():
        if args.user:
            user_file = who.settings_path("", True)
            found = [user_file] if who.hooks_file().hook_commands(user_file, who.name) else []
        else:
            found = [path for path, _ in installed_hooks(root, who.name)]
        state = (
            f"installed: {', '.join(found)}"
            if found
            else f"not installed (would go in {who.settings_path(root, args.user)})"
        )
        print(f"  {who.name:<{width}}  {who.title:<{title_width}}  {state}")
    return 0


def register(add: Add) -> None:
    p = add(
        "install",
        cmd_install,
        "Add rewind-ls' hooks and its MCP server to an agent's settings (idempotent); with no agent, list them.",
    )
    p.add_argument(
        "agent",
        nargs="?",
        choices=list(AGENTS),
        help="the agent whose hooks to set up (none: list the agents and their hooks)",
    )
    p.add_argument(
        "--user",
        action="store_true",
        help="the user's settings (~/.claude/settings.json, $CODEX_HOME/hooks.json, "
        "~/.gemini/settings.json, ~/.config/opencode/plugins/, ~/.copilot/hooks/) instead of "
        "the project's",
    )
    p.add_argument(
        "--uninstall", action="store_true", help="remove only rewind-ls' hooks and MCP server"
    )
    p.add_argument(
        "--no-mcp",
        action="store_true",
        help="hooks only: leave out the MCP server through which the agent can rewind its own "
        "work (.mcp.json for Claude Code, settings.json for Gemini CLI, config.toml for Codex)",
    )
    p.add_argument(
        "--local",
        action="store_true",
        help="the project's per-person settings, not committed (.claude/settings.local.json): "
        "the hook command names this machine's paths",
    )
    p.add_argument("--command", help="hook command (default: this rewind-ls by absolute path)")
    p.add_argument(
        "--plugin",
        metavar="DIR",
        help="write the agent's own package to DIR instead: a Claude Code plugin (in a one-plugin "
        "marketplace) or a Gemini CLI extension, with the hooks, the MCP server and the "
        "/rewind-ls:turns and /rewind-ls:undo commands",
    )
    p.add_argument(
        "--portable",
        action="store_true",
        help="with --plugin: the package runs `rewind-ls` from PATH, not this install's paths",
    )
