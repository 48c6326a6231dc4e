"""`rewind-ls install` with no agent lists the five agents and where each one's hooks are; `doctor`
runs every installed agent's hook command (each in its own hooks file: JSON settings, OpenCode's
plugin, Copilot's hooks file), says where an agent's hooks would go when they are not installed,
and asks for some agent's hooks when none is installed."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import Cli

FIVE = ("claude-code", "codex", "gemini", "opencode", "copilot")


def test_install_lists_the_five_agents_and_which_are_installed(ws: Path, cli: Cli) -> None:
    cli("install", "opencode")
    cli("install", "copilot")
    lines = cli("install").stdout.splitlines()[1:]
    assert [line.split()[0] for line in lines] == list(FIVE)
    state = {line.split()[0]: line for line in lines}
    assert f"installed: {ws / '.opencode' / 'plugins' / 'rewind-ls.js'}" in state["opencode"]
    assert f"installed: {ws / '.github' / 'hooks' / 'rewind-ls.json'}" in state["copilot"]
    assert f"not installed (would go in {ws / '.gemini' / 'settings.json'})" in state["gemini"]


def test_doctor_checks_each_agents_hooks(ws: Path, cli: Cli) -> None:
    report = cli.json("doctor", ok=False)
    [none] = [c for c in report["checks"] if c["name"] == "agent hooks"]
    assert not none["ok"] and "rewind-ls install AGENT" in none["detail"]
    assert report["ok"]  # nothing installed is not a broken store

    cli("install", "opencode")
    cli("install", "copilot")
    report = cli.json("doctor", ok=False)
    checks = {c["name"]: c for c in report["checks"]}
    assert "agent hooks" not in checks
    assert checks["OpenCode hooks"]["ok"] and checks["GitHub Copilot CLI hooks"]["ok"], checks
    # Every agent has its line: the three not installed say where `install` puts them.
    for name, agent, where in (
        ("claude code hooks", "claude-code", ws / ".claude" / "settings.json"),
        ("Codex CLI hooks", "codex", ws / ".codex" / "hooks.json"),
        ("Gemini CLI hooks", "gemini", ws / ".gemini" / "settings.json"),
    ):
        said = checks[name]
        assert said["ok"] and said["detail"].startswith("not installed: `rewind-ls install "), said
        assert f"install {agent}` puts them in {where}" in said["detail"], said
    # Installed, it runs, and the person is told what the agent still asks first.
    assert "trust" in checks["GitHub Copilot CLI hooks"]["detail"], checks

    # A hook command that cannot run fails doctor, whatever the agent's hooks file.
    cli("install", "opencode", "--command", "/nonexistent/rewind-ls hook opencode")
    cli("install", "copilot", "--command", "/nonexistent/rewind-ls hook copilot")
    report = cli.json("doctor", ok=False)
    checks = {c["name"]: c for c in report["checks"]}
    assert not report["ok"]
    for name in ("OpenCode hooks", "GitHub Copilot CLI hooks"):
        assert not checks[name]["ok"] and "exited 127" in checks[name]["detail"], checks[name]


def test_doctor_fails_when_claude_code_would_run_no_hook(ws: Path, cli: Cli) -> None:
    """Installed is not enough: `disableAllHooks` in any Claude Code settings file it reads for
    the project turns every hook off (tests/agents/test_claude_doctor_real.py runs the binary)."""
    import json

    cli("install", "claude-code", "--no-mcp")
    assert cli.json("doctor")["ok"]
    (ws / ".claude" / "settings.local.json").write_text(json.dumps({"disableAllHooks": True}))
    report = cli.json("doctor", ok=False)
    off = [c for c in report["checks"] if c["name"] == "claude code hooks" and not c["ok"]]
    assert not report["ok"] and len(off) == 1, report
    assert "settings.local.json sets disableAllHooks: true" in off[0]["detail"], off


def test_doctor_names_the_events_an_older_install_lacks(ws: Path, cli: Cli) -> None:
    """An install written before an event was added (Claude Code's `SubagentStart`, which credits a
    background subagent's work to the turn that launched it) fails doctor, naming the event and
    the command that adds it; running it keeps the person's own hook and clears the failure."""
    import json

    cli("install", "claude-code", "--no-mcp")
    settings = ws / ".claude" / "settings.json"
    data = json.loads(settings.read_text())
    del data["hooks"]["SubagentStart"]  # as rewind-ls wrote it before 2.1.332's background work
    mine = {"type": "command", "command": "echo mine"}
    data["hooks"]["Notification"] = [{"hooks": [mine]}]
    settings.write_text(json.dumps(data))

    report = cli.json("doctor", ok=False)
    old = [c for c in report["checks"] if c["name"] == "claude code hooks" and not c["ok"]]
    assert not report["ok"] and len(old) == 1, report
    assert (
        f"{settings}: written by an older rewind-ls, no hook on SubagentStart" in old[0]["detail"]
    )
    assert "run `rewind-ls install claude-code` again" in old[0]["detail"], old

    cli("install", "claude-code", "--no-mcp")
    assert cli.json("doctor")["ok"]
    assert json.loads(settings.read_text())["hooks"]["Notification"] == [{"hooks": [mine]}]
