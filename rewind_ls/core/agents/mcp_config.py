"""`rewind-ls mcp` in each agent's MCP settings, beside the hooks (`rewind-ls install AGENT`; opt
out with `--no-mcp`), idempotently, every other server and setting kept; `--uninstall` removes only
ours. Where each agent reads its MCP servers (read in the pinned binaries):

- Claude Code: the project's `.mcp.json` (`mcpServers`, shared with the team), approved for this
  person in `.claude/settings.local.json` (`enabledMcpjsonServers`, what the binary's own "use this
  server?" dialog writes: a teammate who gets `.mcp.json` from git is still asked); `--user`: the
  `mcpServers` of `$CLAUDE_CONFIG_DIR/.claude.json` (default `~/.claude.json`), as `claude mcp add
  --scope user` writes it.
- Gemini CLI: `mcpServers` in the same `settings.json` as its hooks (project or `--user`).
- Codex CLI: a `[mcp_servers.rewind-ls]` table in `config.toml` (`.codex/` of the project, or
  `$CODEX_HOME` with `--user`), written as text: the standard library reads TOML but writes none,
  and only our own table is ever touched.

The command is this interpreter running the package's `__main__.py` (`-I`: isolated from the
project's folder and PYTHON* variables) with `mcp --agent AGENT`: an absolute path, as for the hooks,
because the agent starts it with its own PATH. Nothing here imports the MCP SDK."""

from __future__ import annotations

import json
import os
import re
import sys
from typing import Any

import rewind_ls
from rewind_ls.core.agents.settings import load_json, write_json
from rewind_ls.core.errors import BadInput

NAME = "rewind-ls"
# The agents whose MCP settings rewind-ls knows (another agent gets its hooks only).
KNOWN = ("claude-code", "codex", "gemini")
# The variables that say where rewind-ls keeps its store (`core.fs.config.home_dir`).
PASSED_VARS = ("REWIND_LS_HOME", "XDG_DATA_HOME")


def mcp_argv(agent: str) -> list[str]:
    """The MCP server's command line for `agent`."""
    main = os.path.join(os.path.dirname(os.path.abspath(rewind_ls.__file__)), "__main__.py")
    return [os.path.abspath(sys.executable), "-I", main, "mcp", "--agent", agent]


def _claude_user_file() -> str:
    explicit = os.environ.get("CLAUDE_CONFIG_DIR")
    if explicit:
        return os.path.join(os.path.abspath(os.path.expanduser(explicit)), ".claude.json")
    return os.path.join(os.path.expanduser("~"), ".claude.json")


def config_path(agent: str, root: str, user: bool) -> str:
    """The file that holds `agent`'s MCP servers for workspace `root` (or the user's)."""
    if agent == "claude-code":
        return _claude_user_file() if user else os.path.join(root, ".mcp.json")
    if agent == "gemini":
        from rewind_ls.core.agents.registry import AGENTS

        return AGENTS["gemini"].settings_path(root, user)
    if agent == "codex":
        from rewind_ls.core.agents.registry import codex_home

        return os.path.join(codex_home() if user else os.path.join(root, ".codex"), "config.toml")
    raise BadInput(f"{agent}: rewind-ls does not know where this agent reads MCP servers")


def install_mcp(agent: str, root: str, user: bool, uninstall: bool = False) -> list[str]:
    """Add (or remove) our MCP server for `agent`. Returns what changed, one line per file."""
    path = config_path(agent, root, user)
    argv = mcp_argv(agent)
    if agent == "codex":
        changed = _toml_table(path, argv, uninstall)
        return [f"{path}: {changed}"] if changed else []
    entry: dict[str, Any] = {"command": argv[0], "args": argv[1:]}
    if agent == "claude-code":
        entry = {"type": "stdio", **entry}
    out = []
    changed = _json_entry(path, entry, uninstall)
    if changed:
        out.append(f"{path}: {changed}")
    if agent == "claude-code" and not user:
        from rewind_ls.core.agents.registry import AGENTS

        # The file Claude Code reads (a worktree's is its main checkout's).
        local_of = AGENTS["claude-code"].local_settings_path
        assert local_of is not None
        local = local_of(root)
        approved = _approval(local, uninstall)
        if approved:
            out.append(f"{local}: {approved}")
    return out


def installed_mcp(agent: str, root: str) -> list[tuple[str, list[str]]]:
    """The files (project, then user, then an installed Gemini CLI extension) that hold our MCP
    server for `agent`, with its command line."""
    paths = [config_path(agent, root, user) for user in (False, True)]
    if agent == "gemini":
        from rewind_ls.core.agents.gemini.hook import gemini_home

        # `gemini extensions install` copies the extension here (its manifest has mcpServers).
        paths.append(os.path.join(gemini_home(), "extensions", NAME, "gemini-extension.json"))
    found = []
    for path in paths:
        argv = _toml_argv(path) if agent == "codex" else _json_argv(path)
        if argv is not None:
            found.append((path, argv))
    return found


def _json_argv(path: str) -> list[str] | None:
    try:
        servers = load_json(path).get("mcpServers")
    except BadInput:
        return None
    entry = servers.get(NAME) if isinstance(servers, dict) else None
    if not isinstance(entry, dict):
        return None
    args = entry.get("args") if isinstance(entry.get("args"), list) else []
    return [str(entry.get("command", "")), *(str(a) for a in args or [])]


def _json_entry(path: str, entry: dict[str, Any], uninstall: bool) -> str:
    data = load_json(path)
    servers = data.get("mcpServers", {})
    if not isinstance(servers, dict):
        raise BadInput(f'{path}: "mcpServers" is not an object; nothing was changed')
    if uninstall:
        if NAME not in servers:
            return ""
        del servers[NAME]
        if not servers:
            data.pop("mcpServers", None)
        write_json(path, data)
        return f"removed MCP server {NAME}"
    if servers.get(NAME) == entry:
        return ""
    verb = "updated" if NAME in servers else "added"
    data["mcpServers"] = {**servers, NAME: entry}
    write_json(path, data)
    return f"{verb} MCP server {NAME}"


def _approval(path: str, uninstall: bool) -> str:
    """Claude Code: this person's approval of the project's server (`enabledMcpjsonServers`)."""
    data = load_json(path)
    approved = data.get("enabledMcpjsonServers", [])
    if not isinstance(approved, list):
        raise BadInput(f'{path}: "enabledMcpjsonServers" is not a list; nothing was changed')
    if uninstall == (NAME not in approved):
        return ""
    if uninstall:
        data["enabledMcpjsonServers"] = [n for n in approved if n != NAME]
        if not data["enabledMcpjsonServers"]:
            del data["enabledMcpjsonServers"]
    else:
        data["enabledMcpjsonServers"] = [*approved, NAME]
    write_json(path, data)
    return f"{'withdrew' if uninstall else 'approved'} MCP server {NAME} (enabledMcpjsonServers)"


# Codex's config.toml: our table from its header to the next table header (or the end).
_TABLE = re.compile(
    r'^\[mcp_servers\.(?:"rewind-ls"|rewind-ls)\][^\n]*\n(?:(?!\[)[^\n]*\n?)*', re.MULTILINE
)


def _toml_text(argv: list[str]) -> str:
    def q(s: str) -> str:
        return json.dumps(s)  # a TOML basic string is a JSON string for these characters

    args = ", ".join(q(a) for a in argv[1:])
    # Codex starts an MCP server with a few variables only (HOME, PATH, ...): the store's location
    # must reach it, or it would read another store than the hooks write.
    passed = ", ".join(q(v) for v in PASSED_VARS)
    return f"[mcp_servers.{NAME}]\ncommand = {q(argv[0])}\nargs = [{args}]\nenv_vars = [{passed}]\n"


def _read_text(path: str) -> str:
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except FileNotFoundError:
        return ""


def _toml_argv(path: str) -> list[str] | None:
    found = _TABLE.search(_read_text(path))
    if found is None:
        return None
    command = re.search(r'^command\s*=\s*("(?:[^"\\]|\\.)*")', found.group(0), re.MULTILINE)
    args = re.search(r"^args\s*=\s*(\[.*\])", found.group(0), re.MULTILINE)
    try:
        return [
            json.loads(command.group(1)) if command else "",
            *(json.loads(args.group(1)) if args else []),
        ]
    except ValueError:
        return [json.loads(command.group(1)) if command else ""]


def _toml_table(path: str, argv: list[str], uninstall: bool) -> str:
    text = _read_text(path)
    found = _TABLE.search(text)
    wanted = _toml_text(argv)
    if uninstall:
        if found is None:
            return ""
        new = (text[: found.start()] + text[found.end() :]).rstrip("\n")
        _write_text(path, new + "\n" if new else "")
        return f"removed MCP server {NAME}"
    if found is not None and found.group(0).rstrip("\n") + "\n" == wanted:
        return ""
    if found is not None:
        new = (
            text[: found.start()]
            + wanted
            + ("\n" if text[found.end() :] else "")
            + text[found.end() :]
        )
        verb = "updated"
    else:
        new = (
            text
            + ("\n" if text and not text.endswith("\n") else "")
            + ("\n" if text else "")
            + wanted
        )
        verb = "added"
    _write_text(path, new)
    return f"{verb} MCP server {NAME}"


def _write_text(path: str, text: str) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = path + ".rewind-ls.tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, path)


def mcp_checks(root: str) -> list[dict[str, Any]]:
    """doctor: for each agent, where our MCP server is installed (project, user) and whether its
    command still names an interpreter and a rewind-ls that exist; not installed is no failure."""
    from rewind_ls.core.agents.registry import AGENTS

    checks: list[dict[str, Any]] = []
    for who in AGENTS.values():
        if who.name not in KNOWN:
            continue
        name = f"{who.title} MCP server"
        found = installed_mcp(who.name, root)
        if not found:
            checks.append(
                {
                    "name": name,
                    "ok": True,
                    "detail": f"not installed (`rewind-ls install {who.name}` adds it)",
                }
            )
            continue
        for path, argv in found:
            missing = [a for a in argv[:3] if a.startswith("/") and not os.path.exists(a)]
            if missing:
                detail = (
                    f"{path}: its command names {', '.join(missing)}, which no longer exists; "
                    f"`rewind-ls install {who.name}` writes this install's command"
                )
            else:
                detail = f"{path}: {' '.join(argv)}"
            checks.append({"name": name, "ok": not missing, "detail": detail})
    return checks
