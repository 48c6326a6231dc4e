"""Local history with the real agents (issue #35): the person's edit between turns, overwritten by
the agent's own restore (which fires no hook), is still in rewind-ls and comes back with
`restore --version`. Claude Code's `/rewind` ("Restore code and conversation") in its interactive
UI on a pseudo-terminal; Gemini CLI's `/restore` of a tool checkpoint in its interactive UI in
tmux (pyte cannot parse its screen), which puts back a file no tool touched. The workspace
watcher is the one the hooks start, as in real use."""

from __future__ import annotations

import json
import shlex
import time
from collections.abc import Callable
from hashlib import sha256
from pathlib import Path

import pytest

from tests.support.fake_anthropic import FakeAnthropic, text, tool_use
from tests.support.fake_gemini import FakeGemini, call, text_part
from tests.support.real_agent import AgentTerminal, RealAgent
from tests.support.real_claude import RealClaude, claude_binary
from tests.support.real_gemini import RealGemini, gemini_entry
from tests.support.tmux import TmuxScreen

pytestmark = pytest.mark.agent


def _h(data: str) -> str:
    return sha256(data.encode()).hexdigest()


def _wait(cond: Callable[[], object], what: str, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.2)


def _your_edits(agent: RealAgent, path: str) -> list[str]:
    """The hashes of the person's versions of `path` (`log --json`), oldest first."""
    proc = agent.rewind_ls("log", path, "--json", ok=False)
    if proc.returncode != 0:
        return []
    versions = json.loads(proc.stdout)["versions"]
    return [v["hash"] for v in reversed(versions) if v["source"] == "your edit"]


def _restore_the_persons_edit(agent: RealAgent, project: Path, path: str, mine: str) -> None:
    """After the overwrite: `turns` names it once, `restore --version` brings it back, `undo`
    takes that back."""
    notice = agent.rewind_ls("turns").stdout
    assert f"{path}: your edit of " in notice and f"--version {_h(mine)[:12]}" in notice, notice
    assert f"{path}: your edit" not in agent.rewind_ls("turns").stdout
    assert agent.rewind_ls("show", path, "--version", _h(mine)[:8]).stdout == mine
    before = (project / path).read_text()
    out = agent.rewind_ls("restore", path, "--version", _h(mine)[:8], "--yes").stdout
    assert "undo: rewind-ls undo" in out
    assert (project / path).read_text() == mine
    agent.rewind_ls("undo", "--yes")
    assert (project / path).read_text() == before


def test_claude_rewind_in_the_interactive_ui_after_a_hand_edit(tmp_path: Path) -> None:
    with FakeAnthropic() as api:
        project = tmp_path / "proj"
        claude = RealClaude(claude_binary(), api, tmp_path, project)
        claude.install_hooks()
        claude.allow("Write", "Read")
        claude.rewind_ls("scan")  # the baseline
        a = str(project / "a.txt")
        api.add([tool_use("Write", {"file_path": a, "content": "agent one\n"})], [text("done one")])
        api.add(
            [tool_use("Read", {"file_path": a})],
            [tool_use("Write", {"file_path": a, "content": "agent two\n"})],
            [text("done two")],
        )
        env = {**claude.env, "COLUMNS": "120", "LINES": "40"}
        term = AgentTerminal([str(claude.binary)], project, env, columns=120, lines=40)
        try:
            term.wait_for("❯", timeout=90)
            term.settle(2)
            for prompt, done in (("first prompt", "done one"), ("second prompt", "done two")):
                term.send(prompt)
                time.sleep(0.5)
                term.send("\r")
                term.wait_for(done, timeout=120)
                term.settle(2)
            assert (project / "a.txt").read_text() == "agent two\n"
            mine = "agent two\nmy line by hand\n"
            (project / "a.txt").write_text(mine)
            _wait(lambda: _h(mine) in _your_edits(claude, "a.txt"), "the hand edit's version")
            # /rewind, to before "second prompt", "Restore code and conversation" (the first
            # choice, selected).
            term.send("/rewind")
            time.sleep(1)
            term.settle(1)
            term.send("\r")
            term.wait_for("Restore the code and/or conversation to the point before", timeout=30)
            term.send("\x1b[A")
            time.sleep(0.3)
            term.send("\r")
            term.wait_for("Restore code and conversation", timeout=30)
            term.settle(1)
            term.send("\r")
            _wait(lambda: (project / "a.txt").read_text() == "agent one\n", "Claude's restore")
        finally:
            term.close()
        # The restore fired no hook; the watcher kept both the hand edit and what replaced it.
        _wait(lambda: _your_edits(claude, "a.txt")[-1:] == [_h("agent one\n")], "the overwrite")
        assert _h(mine) in _your_edits(claude, "a.txt")
        _restore_the_persons_edit(claude, project, "a.txt", mine)


def test_gemini_restore_of_a_checkpoint_after_hand_edits(tmp_path: Path) -> None:
    with FakeGemini() as api:
        project = tmp_path / "proj"
        gemini = RealGemini(gemini_entry(), api, tmp_path, project)
        settings = json.loads((gemini.gemini_home / "settings.json").read_text())
        settings["general"] = {"checkpointing": {"enabled": True}}  # what /restore needs
        (gemini.gemini_home / "settings.json").write_text(json.dumps(settings))
        (project / "notes.txt").write_text("notes original\n")
        gemini.rewind_ls("install", "gemini")
        gemini.rewind_ls("scan")  # the baseline
        a = str(project / "a.txt")
        api.script([call("write_file", {"file_path": a, "content": "agent one\n"})])
        api.script([text_part("done one")])
        term = TmuxScreen("rewind-gemini")
        command = f"{shlex.quote(gemini.node)} {shlex.quote(str(gemini.entry))}"
        term.start(command, project, {**gemini.env, "TERM": "xterm-256color"})
        try:
            term.wait_for("Type your message", 90)
            term.keys("-l", "first prompt")
            time.sleep(0.5)
            term.keys("Enter")
            term.wait_for("Apply this change?", 90)
            term.keys("Enter")  # 1. Allow once: the checkpoint is taken before the write
            term.wait_for("done one", 90)
            # The answer shows before AfterAgent's hook has closed the turn: an edit made while the
            # turn is open is the turn's, not the person's, so the person edits once it is closed.
            _wait(lambda: _last_turn_ended(gemini), "the end of the turn")
            mine = "notes original\nmy note by hand\n"
            (project / "notes.txt").write_text(mine)  # a file no tool touched
            _wait(lambda: _h(mine) in _your_edits(gemini, "notes.txt"), "the hand edit's version")
            checkpoints = list((gemini.gemini_home / "tmp").rglob("checkpoints/*.json"))
            assert len(checkpoints) == 1, checkpoints
            term.keys("-l", f"/restore {checkpoints[0].stem}")
            time.sleep(0.5)
            term.keys("Enter")
            term.wait_for("Restored project to the state before the tool call", 60)
            assert (project / "notes.txt").read_text() == "notes original\n"
            # Recorded by the watcher, or by the scan of the hook the re-proposed tool call fires.
            _wait(lambda: _newest(gemini, "notes.txt") == _h("notes original\n"), "the overwrite")
        finally:
            term.close()
        _restore_the_persons_edit(gemini, project, "notes.txt", mine)


def _last_turn_ended(agent: RealAgent) -> bool:
    """Whether the newest turn of the agent's latest session is closed (`turns --json`)."""
    sessions = json.loads(agent.rewind_ls("turns", "--json").stdout)["sessions"]
    return bool(sessions and sessions[0]["turns"] and sessions[0]["turns"][-1].get("endedAt"))


def _newest(agent: RealAgent, path: str) -> str | None:
    """The hash of the newest recorded version of `path`."""
    versions = json.loads(agent.rewind_ls("log", path, "--json").stdout)["versions"]
    return str(versions[0]["hash"]) if versions else None
