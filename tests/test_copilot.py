"""GitHub Copilot CLI support without the binary: `install copilot` (its own file among the
person's `.github/hooks/*.json`), and the hook process fed a failed tool's payload in the shape
Copilot CLI 1.0.102 sends its Claude-form hooks (the other events are seen with the real binary in
tests/agents/test_copilot_real.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

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


def test_a_failed_shell_command_still_ends_its_run(ws: Path, home: Path, cli: Cli) -> None:
    hook(ws, home, "SessionStart", source="new", initial_prompt="go")
    hook(ws, home, "UserPromptSubmit", prompt="go")
    bash = {"tool_name": "Bash", "tool_input": {"command": "echo x > out.txt; exit 3"}}
    hook(ws, home, "PreToolUse", **bash)
    (ws / "out.txt").write_bytes(b"x\n")
    failed = {"result_type": "failure", "text_result_for_llm": "exit code 3"}
    hook(ws, home, "PostToolUseFailure", tool_result=failed, **bash)
    hook(ws, home, "Stop", stop_reason="end_turn", stop_hook_active=False)
    [session] = cli.json("turns", "--session", SESSION)["sessions"]
    [turn] = session["turns"]
    assert session["agent"] == "copilot" and turn["prompt"] == "go"
    assert [(f["path"], f["change"]) for f in turn["files"]] == [("out.txt", "created")]
    versions = cli.json("log", "out.txt")["versions"]
    assert [v["source"] for v in versions if v["turnId"] == turn["id"]] == ["shell"]
