"""Gemini CLI support without the binary: `install gemini`, and the hook process fed the payload
shapes Gemini CLI 0.61.0 sends (seen from its hooks in tests/agents/test_gemini_real.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from tests.conftest import Cli
from tests.support.agent import FakeClaude


class FakeGeminiCli:
    """One Gemini CLI session's hook calls, through the real `rewind-ls hook gemini` process."""

    def __init__(self, ws: Path, home: Path, user_home: Path) -> None:
        self.ws = ws
        self.session_id = str(uuid.uuid4())
        self.env = {"REWIND_LS_HOME": str(home), "HOME": str(user_home)}

    def hook(self, event: str, **fields: Any) -> subprocess.CompletedProcess[bytes]:
        payload = {
            "session_id": self.session_id,
            "transcript_path": "",
            "cwd": str(self.ws),
            "hook_event_name": event,
            # As Gemini CLI stamps each event's input (to the millisecond).
            "timestamp": datetime.now(UTC)
            .isoformat(timespec="milliseconds")
            .replace("+00:00", "Z"),
            **fields,
        }
        proc = subprocess.run(
            [sys.executable, "-m", "rewind_ls", "hook", "gemini"],
            input=json.dumps(payload).encode(),
            env={**os.environ, **self.env},
            capture_output=True,
            timeout=60,
        )
        assert proc.returncode == 0 and not proc.stderr, proc.stderr
        return proc

    def write(self, path: Path, data: bytes) -> None:
        tool = {"tool_name": "write_file", "tool_input": {"file_path": str(path), "content": ""}}
        self.hook("BeforeTool", **tool)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        self.hook("AfterTool", tool_response={"llmContent": "ok"}, **tool)


def test_install_gemini_keeps_other_settings_and_hooks(ws: Path, cli: Cli, tmp_path: Path) -> None:
    settings = ws / ".gemini" / "settings.json"
    settings.parent.mkdir()
    foreign = {"matcher": "read_file", "hooks": [{"type": "command", "command": "mine"}]}
    settings.write_text(json.dumps({"ui": {"theme": "x"}, "hooks": {"BeforeTool": [foreign]}}))
    out = cli("install", "gemini").stdout
    assert '"Trust folder"' in out and "Do you trust the files in this folder?" in out
    data = json.loads(settings.read_text())
    assert data["ui"] == {"theme": "x"} and foreign in data["hooks"]["BeforeTool"]
    ours = [g for g in data["hooks"]["AfterTool"] if "hook gemini" in json.dumps(g)]
    assert ours[0]["matcher"] == "^(write_file|replace|run_shell_command)$"
    cli("install", "gemini", "--uninstall")
    assert json.loads(settings.read_text()) == {
        "ui": {"theme": "x"},
        "hooks": {"BeforeTool": [foreign]},
    }
    user_home = tmp_path / "user"
    proc = subprocess.run(
        [sys.executable, "-m", "rewind_ls", "install", "gemini", "--user"],
        cwd=ws,
        env={**os.environ, "REWIND_LS_HOME": str(tmp_path / "h"), "HOME": str(user_home)},
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    assert "hook gemini" in (user_home / ".gemini" / "settings.json").read_text()


def test_gemini_and_claude_in_one_workspace(ws: Path, home: Path, cli: Cli, tmp_path: Path) -> None:
    (ws / "a.txt").write_bytes(b"base\n")
    gemini = FakeGeminiCli(ws, home, tmp_path / "user")
    gemini.hook("SessionStart", source="startup")
    gemini.hook("BeforeAgent", prompt="gemini: edit a")
    gemini.write(ws / "a.txt", b"gemini\n")
    # Its own folder (memory, plans) is not the project's: not recorded, and no complaint.
    gemini.write(tmp_path / "user" / ".gemini" / "GEMINI.md", b"memory\n")
    gemini.hook("AfterAgent", prompt="gemini: edit a", prompt_response="ok")
    FakeClaude(ws, home).turn("claude: edit a", {"a.txt": "claude\n"})

    listing = cli.json("turns", "--all")
    agents = {s["agent"]: s for s in listing["sessions"] if s["kind"] == "agent"}
    assert set(agents) == {"gemini", "claude-code"}
    assert [f["path"] for f in agents["gemini"]["turns"][0]["files"]] == ["a.txt"]
    dry = cli("rewind", "1", "--session", gemini.session_id, "--dry-run", ok=False)
    assert dry.returncode == 3 and "conflict (other-session): a.txt" in dry.stdout, dry.stdout
    # No chat file was reported: the conversation cannot be forked, and says why.
    conv = cli("rewind", "1", "--session", gemini.session_id, "--scope", "conversation", ok=False)
    assert conv.returncode != 0 and "chat file" in conv.stderr, conv.stdout + conv.stderr


def test_the_same_prompt_twice_forks_before_the_nearest_in_time() -> None:
    from rewind_ls.core.agents.gemini.chat import prompt_index

    lines = [
        {"sessionId": "s"},
        {
            "id": "1",
            "type": "user",
            "timestamp": "2026-11-23T10:00:00.000Z",
            "content": [{"text": "go"}],
        },
        {"id": "2", "type": "gemini", "timestamp": "2026-11-23T10:00:01.000Z", "content": "ok"},
        {
            "id": "3",
            "type": "user",
            "timestamp": "2026-11-23T11:00:00.000Z",
            "content": [{"text": "go"}],
        },
    ]
    from datetime import datetime

    later = datetime.fromisoformat("2026-11-23T11:00:00+00:00").timestamp()
    assert prompt_index(lines, "go", later) == 3
    assert prompt_index(lines, "go", later - 3600) == 1


def test_every_gemini_hook_delivered_twice_records_each_prompt_once(
    ws: Path, home: Path, cli: Cli, tmp_path: Path
) -> None:
    """Issue #38 item 2 for Gemini CLI, which sends no prompt id: both deliveries of one event
    carry the same input (its `timestamp` too), so each prompt is one turn; the same prompt sent
    again later is a turn of its own."""
    from tests.support.agent import run_hook_twice

    gemini = FakeGeminiCli(ws, home, tmp_path / "user")
    argv = [sys.executable, "-m", "rewind_ls", "hook", "gemini"]

    def twice(event: str, **fields: Any) -> None:
        stamp = datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
        payload = {
            "session_id": gemini.session_id,
            "transcript_path": "",
            "cwd": str(ws),
            "hook_event_name": event,
            "timestamp": stamp,
            **fields,
        }
        run_hook_twice(payload, gemini.env, argv)

    (ws / "seed.txt").write_text("seed\n")
    twice("SessionStart", source="startup")
    for n in range(1, 4):
        twice("BeforeAgent", prompt="go on")
        shell = {"tool_name": "run_shell_command", "tool_input": {"command": f"echo > out{n}"}}
        twice("BeforeTool", **shell)
        (ws / f"out{n}.txt").write_text(f"{n}\n")
        twice("AfterTool", tool_response={"llmContent": "ok"}, **shell)
        twice("AfterAgent", prompt="go on", prompt_response="done")
    turns = cli.json("turns", "--session", gemini.session_id)["sessions"][0]["turns"]
    assert [[f["path"] for f in t["files"]] for t in turns] == [
        ["out1.txt"],
        ["out2.txt"],
        ["out3.txt"],
    ]
