"""Claude Code's worktrees (`.claude/worktrees/NAME`, linked git worktrees inside the project), with
the payloads Claude Code 2.1.332 sends (tests/agents/test_claude_worktree_real.py runs the binary):
a subagent working in one is recorded in that checkout's workspace; a worktree's per-person
settings are its main checkout's, for `install --local` (hooks and MCP approval) and `doctor`; a
removed worktree's history stays readable."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

from rewind_ls.core.fs.paths import main_checkout
from tests.conftest import Cli
from tests.support.agent import FakeClaude


def git(cwd: Path, *args: str) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.devnull, HOME=str(cwd))
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        check=True,
    )


def repository(ws: Path) -> None:
    (ws / "main.txt").write_text("v1\n")
    git(ws, "init", "-q", "-b", "main")
    git(ws, "add", "main.txt")
    git(ws, "commit", "-qm", "init")


def worktree(ws: Path, name: str) -> Path:
    folder = ws / ".claude" / "worktrees" / name
    git(ws, "worktree", "add", "-q", "-b", f"worktree-{name}", str(folder))
    return folder


def test_main_checkout_of_a_linked_worktree_only(ws: Path) -> None:
    repository(ws)
    wt = worktree(ws, "nest")
    clone = ws / ".claude" / "worktrees" / "clone"
    clone.mkdir()
    git(clone, "init", "-q")
    assert main_checkout(str(wt)) == str(ws)
    assert main_checkout(str(ws)) == str(ws)
    assert main_checkout(str(clone)) == str(clone)  # a clone of its own: its own settings
    assert main_checkout(str(ws / "no-such")) == str(ws / "no-such")


def subagent(claude: FakeClaude, event: str, cwd: Path, **fields: Any) -> str:
    """One hook of a subagent (2.1.332's fields: agent_id, agent_type, the launching prompt_id,
    its worktree as cwd); returns the hook log's new lines."""
    log = claude.home / "rewind-ls.log"
    before = log.read_text() if log.exists() else ""
    claude.hook(
        event,
        cwd=str(cwd),
        agent_id="a1b2c3",
        agent_type="general-purpose",
        prompt_id="p-1",
        **fields,
    )
    return log.read_text()[len(before) :]


def write_call(claude: FakeClaude, cwd: Path, path: Path, content: str) -> str:
    tool_input = {"file_path": str(path), "content": content}
    said = subagent(claude, "PreToolUse", cwd, tool_name="Write", tool_input=tool_input)
    path.write_text(content)
    response = {"type": "create", "filePath": str(path), "content": content}
    return said + subagent(
        claude,
        "PostToolUse",
        cwd,
        tool_name="Write",
        tool_input=tool_input,
        tool_response=response,
        tool_use_id=f"toolu_{path.name}",
    )


def test_a_subagent_in_a_worktree_is_recorded_there(ws: Path, home: Path, cli: Cli) -> None:
    repository(ws)
    wt = worktree(ws, "agent-a1b2c3")
    clone = ws / ".claude" / "worktrees" / "clone"
    clone.mkdir()
    git(clone, "init", "-q")
    claude = FakeClaude(ws, home)
    claude.env["REWIND_LS_DEBUG"] = "1"  # each hook's outcome in the log
    claude.hook("SessionStart", source="startup")
    claude.hook("UserPromptSubmit", prompt="launch it", prompt_id="p-1")

    said = write_call(claude, wt, wt / "a.txt", "sub\n")
    assert "in another checkout" not in said, said
    # Not a Claude Code worktree (a clone of its own): left to that checkout, as before.
    assert "in another checkout" in write_call(claude, clone, clone / "c.txt", "x\n")
    # The main agent's own edit in the worktree: no subagent there, not recorded (issue 38).
    tool_input = {"file_path": str(wt / "m.txt"), "content": "m\n"}
    claude.hook("PreToolUse", tool_name="Write", tool_input=tool_input)
    assert "in another checkout" in (home / "rewind-ls.log").read_text().splitlines()[-1]
    subagent(claude, "SubagentStop", wt, stop_hook_active=False)
    claude.hook("Stop", stop_hook_active=False)

    main = cli.json("turns", "--session", claude.session_id)["sessions"][0]["turns"]
    assert [(t["number"], t["prompt"], t["files"]) for t in main] == [(1, "launch it", [])]
    assert main[0]["subagents"] == ["general-purpose in .claude/worktrees/agent-a1b2c3"]
    nested = cli.json("-C", str(wt), "turns", "--all")["sessions"]
    [session] = [s for s in nested if s["kind"] == "agent"]
    assert session["id"] == claude.session_id
    [turn] = session["turns"]
    assert (turn["number"], turn["prompt"]) == (1, "launch it")
    assert [f["path"] for f in turn["files"]] == ["a.txt"]
    assert turn["subagents"] == ["general-purpose"] and turn["endedAt"], turn

    # Removed, its history stays: listed and exported with -C the folder that is gone.
    git(ws, "worktree", "remove", "--force", str(wt))
    gone = cli.json("-C", str(wt), "turns", "--session", claude.session_id)["sessions"][0]
    assert [t["prompt"] for t in gone["turns"]] == ["launch it"]
    out = ws.parent / "out"
    cli("-C", str(wt), "export", "1", "--session", claude.session_id, "--after", "--to", str(out))
    assert (out / "a.txt").read_text() == "sub\n" and (out / "main.txt").read_text() == "v1\n"
    assert cli("-C", str(ws / "never-there"), "turns", ok=False).returncode != 0
    moved = checks(cli)["moved workspaces"]  # doctor names it, and how to read it
    assert str(wt) in moved["detail"] and "rewind-ls -C DIR turns" in moved["detail"], moved


def checks(cli: Cli, *args: str) -> dict[str, dict[str, Any]]:
    report = json.loads(cli(*args, "doctor", "--json", ok=False).stdout)
    return {c["name"]: c for c in report["checks"]}


def test_worktrees_read_the_main_checkouts_local_settings(ws: Path, cli: Cli) -> None:
    repository(ws)
    wt = worktree(ws, "nest")
    cli("install", "claude-code", "--no-mcp")
    said = checks(cli)["claude code worktrees"]
    assert said["ok"] and "--local" in said["detail"], said

    # `install --local` in the worktree writes the main checkout's per-person file, the one
    # Claude Code reads there; doctor in the worktree finds the hooks in it.
    # (and the approval of the project's MCP server goes there too)
    cli("-C", str(wt), "install", "claude-code", "--local")
    local = json.loads((ws / ".claude" / "settings.local.json").read_text())
    assert "hook claude-code" in json.dumps(local["hooks"]), local
    assert local["enabledMcpjsonServers"] == ["rewind-ls"], local
    assert not (wt / ".claude" / "settings.local.json").exists()
    said = checks(cli)["claude code worktrees"]
    assert "reach every worktree" in said["detail"], said
    inside = checks(cli, "-C", str(wt))
    assert inside["claude code hooks"]["ok"], inside


def test_worktree_events_are_not_hooked(cli: Cli, ws: Path) -> None:
    """A `WorktreeCreate` hook replaces Claude Code's own worktree creation (2.1.332: a hook that
    prints no path fails `claude -w` with "hook succeeded but returned no worktree path", no
    worktree made), and `WorktreeRemove` runs only for worktrees such a hook made: rewind-ls
    installs neither; `SubagentStop` closes an isolated subagent's turn."""
    cli("install", "claude-code", "--no-mcp")
    hooks = json.loads((ws / ".claude" / "settings.json").read_text())["hooks"]
    assert "WorktreeCreate" not in hooks and "WorktreeRemove" not in hooks
    assert "SubagentStop" in hooks
