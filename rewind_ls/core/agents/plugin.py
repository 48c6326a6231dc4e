"""rewind-ls as an agent's own package: a Claude Code plugin (in a one-plugin marketplace, so
`claude --plugin-dir DIR/rewind-ls` and `/plugin marketplace add DIR` + `/plugin install
rewind-ls@rewind-ls` both take it) and a Gemini CLI extension (`gemini extensions install DIR`).
Each holds the hooks (the same events and matchers as `install` writes), the MCP server
(`rewind-ls mcp`) and two slash commands, `/rewind-ls:turns` and `/rewind-ls:undo`.

Two forms of the commands inside: this installation's absolute paths (`rewind-ls install AGENT
--plugin DIR`: works whatever the agent's PATH), or `rewind-ls` found on PATH (`--portable`, what
`scripts/release.sh` builds into `dist/`, for a rewind-ls installed with pipx or uv)."""

from __future__ import annotations

import json
import os
import shutil

import rewind_ls
from rewind_ls.core.agents.mcp_config import NAME, mcp_argv
from rewind_ls.core.agents.settings import default_command, install
from rewind_ls.core.errors import BadInput

DESCRIPTION = (
    "Checkpoints every turn of the agent and lets it (and you) rewind, revert one turn or hunk, "
    "and undo, never overwriting your own edits"
)

TURNS_PROMPT = (
    "Call the rewind-ls list_turns tool (no arguments) and show me this session's turns as a short "
    "list: number, prompt, files. Do not restore anything."
)
UNDO_PROMPT = (
    'Call the rewind-ls preview tool with mode "undo" and show me what it would write; then call '
    "the rewind-ls undo tool. If it is refused, tell me why and the terminal command it names."
)


def commands(agent: str, portable: bool) -> tuple[str, list[str]]:
    """(the hook command, the MCP server's command line) inside the package."""
    if portable:
        return f"rewind-ls hook {agent}", ["rewind-ls", "mcp", "--agent", agent]
    return default_command(agent), mcp_argv(agent)


def _write(path: str, text: str) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def _json(path: str, data: object) -> None:
    _write(path, json.dumps(data, indent=2) + "\n")


def _fresh(folder: str) -> None:
    """`folder` emptied of a package written before (only one that is ours), then created."""
    if os.path.exists(folder):
        marks = (".claude-plugin", "gemini-extension.json")
        if not any(os.path.exists(os.path.join(folder, m)) for m in marks):
            raise BadInput(f"{folder}: exists and is not a rewind-ls plugin; nothing was written")
        shutil.rmtree(folder)
    os.makedirs(folder)


def claude_plugin(dest: str, portable: bool = False) -> str:
    """A marketplace at `dest` holding the plugin `dest/rewind-ls`. Returns the plugin's folder."""
    hook, argv = commands("claude-code", portable)
    _fresh(dest)
    plugin = os.path.join(dest, NAME)
    _json(
        os.path.join(dest, ".claude-plugin", "marketplace.json"),
        {
            "name": NAME,
            "owner": {"name": NAME},
            "plugins": [{"name": NAME, "source": f"./{NAME}", "description": DESCRIPTION}],
        },
    )
    _json(
        os.path.join(plugin, ".claude-plugin", "plugin.json"),
        {"name": NAME, "version": rewind_ls.__version__, "description": DESCRIPTION},
    )
    install(os.path.join(plugin, "hooks", "hooks.json"), hook, agent="claude-code")
    _json(
        os.path.join(plugin, ".mcp.json"),
        {"mcpServers": {NAME: {"type": "stdio", "command": argv[0], "args": argv[1:]}}},
    )
    for name, description, prompt in _commands():
        _write(
            os.path.join(plugin, "commands", f"{name}.md"),
            f"---\ndescription: {description}\n---\n{prompt}\n",
        )
    return plugin


def gemini_extension(dest: str, portable: bool = False) -> str:
    """A Gemini CLI extension at `dest`. Returns its folder."""
    hook, argv = commands("gemini", portable)
    _fresh(dest)
    _json(
        os.path.join(dest, "gemini-extension.json"),
        {
            "name": NAME,
            "version": rewind_ls.__version__,
            "description": DESCRIPTION,
            "mcpServers": {NAME: {"command": argv[0], "args": argv[1:]}},
        },
    )
    install(os.path.join(dest, "hooks", "hooks.json"), hook, agent="gemini")
    for name, description, prompt in _commands():
        # commands/rewind-ls/NAME.toml is `/rewind-ls:NAME`.
        _write(
            os.path.join(dest, "commands", NAME, f"{name}.toml"),
            f"description = {json.dumps(description)}\nprompt = {json.dumps(prompt)}\n",
        )
    return dest


def _commands() -> list[tuple[str, str, str]]:
    return [
        ("turns", "This session's turns as rewind-ls recorded them", TURNS_PROMPT),
        ("undo", "Undo the last rewind, revert or undo (previewed first)", UNDO_PROMPT),
    ]


def write_package(agent: str, dest: str, portable: bool = False) -> str:
    if agent == "claude-code":
        return claude_plugin(dest, portable)
    if agent == "gemini":
        return gemini_extension(dest, portable)
    raise BadInput(
        f"{agent}: no plugin package (Codex has none: `rewind-ls install codex` writes its hooks "
        "and its config.toml MCP entry)"
    )
