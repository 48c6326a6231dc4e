"""GitHub Copilot CLI support without the binary: `install copilot` (its own file among the
person's `.github/hooks/*.json`), the hook process fed failed tools' payloads in the shapes Copilot
CLI 1.0.102 sends its Claude-form hooks (seen with the real binary; the other events are in
tests/agents/test_copilot_real.py), and the fork of a session's events."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Cli

SESSION = "b26115e1-dc6a-42c2-add2-7a61276babeb"


def hook(ws: Path, home: Path, event: str, **fields: Any) -> None:
    payload = {
        "hook_event_name": event,
        "session_id": SESSION,
        "timestamp": "2026-11-28T01:57:34.641Z",
        "cwd": str(ws),
        **fields,
    }
    proc = subprocess.run(
        [sys.executable, "-m", "rewind_ls", "hook", "copilot"],
        input=json.dumps(payload).encode(),
        env={**os.environ, "REWIND_LS_HOME": str(home), "COPILOT_PROJECT_DIR": str(ws)},
        capture_output=True,
        timeout=60,
    )
    assert proc.returncode == 0 and not proc.stderr, proc.stderr


def test_install_copilot_is_its_own_file_among_the_persons(ws: Path, cli: Cli) -> None:
    folder = ws / ".github" / "hooks"
    folder.mkdir(parents=True)
    mine = {"version": 1, "hooks": {"preToolUse": [{"type": "command", "bash": "mine"}]}}
    (folder / "mine.json").write_text(json.dumps(mine))
    out = cli("install", "copilot").stdout
    assert "trusted folder" in out
    ours = json.loads((folder / "rewind-ls.json").read_text())["hooks"]
    assert ours["PreToolUse"][0]["matcher"] == "Write|Edit|Bash"
    assert ours["PostToolUseFailure"][0]["hooks"][0]["command"].endswith(" hook copilot")
    assert "already installed" in cli("install", "copilot").stdout
    cli("install", "copilot", "--uninstall")
    assert not (folder / "rewind-ls.json").exists()
    assert json.loads((folder / "mine.json").read_text()) == mine


def test_failed_commands_and_edits_end_their_tool_calls(ws: Path, home: Path, cli: Cli) -> None:
    """As Copilot CLI 1.0.102 sends them (seen with the real binary): a shell command exiting
    non-zero fires PostToolUse ("success", its exit code in the text); an edit that fails fires
    PostToolUseFailure with an `error` and no result."""
    (ws / "mod.txt").write_bytes(b"one\n")
    hook(ws, home, "SessionStart", source="new", initial_prompt="go")
    hook(ws, home, "UserPromptSubmit", prompt="go")
    bash = {"tool_name": "Bash", "tool_input": {"command": "echo x > out.txt; exit 3"}}
    hook(ws, home, "PreToolUse", **bash)
    (ws / "out.txt").write_bytes(b"x\n")
    done = {
        "result_type": "success",
        "text_result_for_llm": "\n<shellId: 0 completed with exit code 3>",
    }
    hook(ws, home, "PostToolUse", tool_result=done, **bash)
    edit = {"tool_name": "Edit", "tool_input": {"path": str(ws / "mod.txt"), "old_str": "nope"}}
    hook(ws, home, "PreToolUse", **edit)
    hook(ws, home, "PostToolUseFailure", error="No match found", **edit)
    hook(ws, home, "Stop", stop_reason="end_turn", stop_hook_active=False)
    [session] = cli.json("turns", "--session", SESSION)["sessions"]
    [turn] = session["turns"]
    assert session["agent"] == "copilot" and turn["prompt"] == "go" and turn["endedAt"]
    assert [(f["path"], f["change"]) for f in turn["files"]] == [("out.txt", "created")]
    versions = cli.json("log", "out.txt")["versions"]
    assert [v["source"] for v in versions if v["turnId"] == turn["id"]] == ["shell"]


def _event(kind: str, data: dict[str, Any], stamp: str) -> dict[str, Any]:
    return {"type": kind, "data": data, "id": kind + stamp, "timestamp": stamp, "parentId": None}


def test_fork_cuts_before_the_nearest_same_prompt_and_its_hook(
    tmp_path: Path, monkeypatch: Any
) -> None:
    """The events as Copilot CLI 1.0.102 writes them (session-state/<id>/events.jsonl)."""
    from rewind_ls.core.agents.copilot import session
    from rewind_ls.core.errors import BadInput

    monkeypatch.setenv("COPILOT_HOME", str(tmp_path / "copilot"))
    folder = tmp_path / "copilot" / "session-state" / SESSION
    folder.mkdir(parents=True)
    start = {"sessionId": SESSION, "context": {"cwd": str(tmp_path)}}
    hook_start = {"hookType": "userPromptSubmitted", "input": {"prompt": "again"}}
    events = [
        _event("session.start", start, "2026-11-28T01:57:31.000Z"),
        _event("user.message", {"content": "again"}, "2026-11-28T01:57:34.000Z"),
        _event("assistant.message", {"content": "one"}, "2026-11-28T01:57:35.000Z"),
        _event("hook.start", hook_start, "2026-11-28T02:00:00.000Z"),
        _event("hook.end", {"hookType": "userPromptSubmitted"}, "2026-11-28T02:00:00.100Z"),
        _event("user.message", {"content": "again"}, "2026-11-28T02:00:00.200Z"),
    ]
    (folder / "events.jsonl").write_text("".join(json.dumps(e) + "\n" for e in events))
    (folder / "workspace.yaml").write_text(f"id: {SESSION}\ncwd: {tmp_path}\n")
    from datetime import datetime

    second = datetime.fromisoformat("2026-11-28T02:00:01+00:00").timestamp()
    result = session.fork(str(folder / "events.jsonl"), "again", second)
    assert result.lines == 3 and result.staged is not None
    published = Path(result.staged.publish())
    assert published == tmp_path / "copilot" / "session-state" / result.session_id / "events.jsonl"
    kept = [json.loads(line) for line in published.read_text().splitlines()]
    assert [e["type"] for e in kept] == ["session.start", "user.message", "assistant.message"]
    assert kept[0]["data"]["sessionId"] == result.session_id
    yaml = (published.parent / "workspace.yaml").read_text()
    assert yaml == f"id: {result.session_id}\ncwd: {tmp_path}\n"
    assert result.resume_command == f"cd {tmp_path} && copilot --resume={result.session_id}"
    first = datetime.fromisoformat("2026-11-28T01:57:34+00:00").timestamp()
    assert session.fork(str(folder / "events.jsonl"), "again", first).session_id == ""
    outside = tmp_path / "events.jsonl"
    outside.write_text("")
    with pytest.raises(BadInput, match="refused"):
        session.fork(str(outside), "again", first)


def test_every_copilot_hook_delivered_twice_records_each_prompt_once(
    ws: Path, home: Path, cli: Cli
) -> None:
    """Issue #38 item 2 for Copilot CLI, whose prompt carries no id: both deliveries of one event
    carry the same input (its `timestamp` too), so each prompt is one turn; the same prompt sent
    again later is a turn of its own."""
    from datetime import UTC, datetime

    from tests.support.agent import run_hook_twice

    env = {"REWIND_LS_HOME": str(home), "COPILOT_PROJECT_DIR": str(ws)}
    argv = [sys.executable, "-m", "rewind_ls", "hook", "copilot"]

    def twice(event: str, **fields: Any) -> None:
        stamp = datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
        payload = {"hook_event_name": event, "session_id": SESSION, "timestamp": stamp}
        run_hook_twice({**payload, "cwd": str(ws), **fields}, env, argv)

    (ws / "seed.txt").write_text("seed\n")
    twice("SessionStart", source="startup")
    for n in range(1, 4):
        twice("UserPromptSubmit", prompt="go on")
        bash = {"tool_name": "Bash", "tool_input": {"command": f"echo {n} > out{n}.txt"}}
        twice("PreToolUse", **bash)
        (ws / f"out{n}.txt").write_text(f"{n}\n")
        twice("PostToolUse", tool_response="ok", **bash)
        twice("Stop")
    turns = cli.json("turns", "--session", SESSION)["sessions"][0]["turns"]
    assert [[f["path"] for f in t["files"]] for t in turns] == [
        ["out1.txt"],
        ["out2.txt"],
        ["out3.txt"],
    ]
