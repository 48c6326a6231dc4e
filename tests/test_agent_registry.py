"""Adding an agent is one module plus one registry entry: the toy agent of
`tests/support/toy_agent.py` gets `install`, `hook`, turns listed under its name, rewinds, a
conversation fork with its resume command, and conflicts with another agent's session, with no
other change to rewind-ls."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

from tests.support.agent import FakeClaude
from tests.support.pinned import ROOT


class Toy:
    def __init__(self, ws: Path, home: Path) -> None:
        self.ws = ws
        self.session_id = str(uuid.uuid4())
        self.chat = home / "toy-chats" / f"{self.session_id}.jsonl"
        self.chat.parent.mkdir(parents=True)
        self.chat.write_text(json.dumps({"session": self.session_id}) + "\n")
        self.env = {
            **os.environ,
            "REWIND_LS_HOME": str(home),
            "CLAUDE_CONFIG_DIR": str(home / "claude"),
            "PYTHONPATH": str(ROOT),
        }

    def rewind_ls(
        self, *args: str, data: Any = None, ok: bool = True
    ) -> subprocess.CompletedProcess[str]:
        proc = subprocess.run(
            [sys.executable, "-m", "tests.support.toy_agent", *args],
            cwd=self.ws,
            env=self.env,
            input="" if data is None else json.dumps(data),
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert proc.returncode == 0 or not ok, proc.stdout + proc.stderr
        return proc

    def hook(self, event: str, **fields: Any) -> None:
        payload = {
            "session_id": self.session_id,
            "transcript_path": str(self.chat),
            "cwd": str(self.ws),
            "hook_event_name": event,
            **fields,
        }
        proc = self.rewind_ls("hook", "toy", data=payload)
        assert not proc.stderr, proc.stderr

    def say(self, role: str, text: str) -> None:
        with self.chat.open("a") as f:
            f.write(json.dumps({"id": uuid.uuid4().hex, "role": role, "text": text}) + "\n")

    def turn(self, prompt: str, path: str, data: bytes) -> None:
        self.say("user", prompt)
        self.hook("Ask", prompt=prompt)
        tool = {"tool_name": "put", "tool_input": {"target": path}}
        self.hook("Pre", **tool)
        (self.ws / path).write_bytes(data)
        self.hook("Post", **tool)
        self.say("toy", "done")
        self.hook("Done")


def test_a_fourth_agent_is_one_module_and_one_registry_entry(ws: Path, home: Path) -> None:
    (ws / "a.txt").write_bytes(b"base\n")
    toy = Toy(ws, home)
    out = toy.rewind_ls("install", "toy").stdout
    assert "Restart the toy." in out
    hooks = json.loads((ws / ".toy" / "hooks.json").read_text())["hooks"]
    assert set(hooks) == {"Start", "Ask", "Pre", "Post", "Done"}
    assert hooks["Pre"][0]["matcher"] == "put|sh"

    toy.hook("Start")
    toy.turn("toy one", "a.txt", b"one\r\n")
    toy.turn("toy two", "a.txt", b"two")
    listing = json.loads(toy.rewind_ls("turns", "--all", "--json").stdout)
    session = next(s for s in listing["sessions"] if s["id"] == toy.session_id)
    assert session["agent"] == "toy"
    assert [(t["prompt"], [f["path"] for f in t["files"]]) for t in session["turns"]] == [
        ("toy one", ["a.txt"]),
        ("toy two", ["a.txt"]),
    ]
    assert f"session {toy.session_id}  (agent, toy)" in toy.rewind_ls("turns", "--all").stdout

    fork = json.loads(
        toy.rewind_ls(
            "rewind", "2", "--session", toy.session_id, "--scope", "both", "--json"
        ).stdout
    )["conversation"]
    assert (ws / "a.txt").read_bytes() == b"one\r\n"
    assert fork["resumeCommand"] == f"toy --resume {fork['sessionId']}"
    lines = [json.loads(x) for x in Path(fork["transcriptPath"]).read_text().splitlines()]
    assert [ln.get("text") for ln in lines] == [None, "toy one", "done"]
    toy.rewind_ls("undo", "--yes")
    assert (ws / "a.txt").read_bytes() == b"two"

    # Another agent's later edit of the same file is a conflict for the toy's rewinds.
    FakeClaude(ws, home).turn("claude: edit a", {"a.txt": "claude\n"})
    dry = toy.rewind_ls("rewind", "1", "--session", toy.session_id, "--dry-run", ok=False)
    assert dry.returncode == 3 and "conflict (other-session): a.txt" in dry.stdout, dry.stdout
