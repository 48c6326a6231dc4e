"""`rewind-ls demo`: a scripted agent session in a temporary workspace, recorded through the real hook
process and store, then rewound, reverted and undone, with every step printed."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import uuid
from typing import Any


def say(text: str) -> None:
    print(f"\n\033[1m== {text}\033[0m" if sys.stdout.isatty() else f"\n== {text}")


class DemoAgent:
    """A scripted Claude Code session in a temporary folder: its transcript lines and hook calls
    (the real hook process), and the `rewind-ls` commands a person runs on its workspace."""

    def __init__(self, base: str) -> None:
        self.ws = os.path.join(base, "project")
        self.home = os.path.join(base, "store")
        claude = os.path.join(base, "claude")
        os.makedirs(self.ws)
        transcript_dir = os.path.join(claude, "projects", "demo")
        os.makedirs(transcript_dir)
        self.env = {**os.environ, "REWIND_LS_HOME": self.home, "CLAUDE_CONFIG_DIR": claude}
        self.session = str(uuid.uuid4())
        self.transcript = os.path.join(transcript_dir, f"{self.session}.jsonl")
        self.parent: str | None = None

    def hook(self, event: str, **fields: Any) -> None:
        payload = {
            "session_id": self.session,
            "transcript_path": self.transcript,
            "cwd": self.ws,
            "hook_event_name": event,
            **fields,
        }
        subprocess.run(
            [sys.executable, "-m", "rewind_ls", "hook", "claude-code"],
            input=json.dumps(payload).encode(),
            env=self.env,
            check=True,
        )

    def transcript_line(self, kind: str, content: Any) -> None:
        line_id = str(uuid.uuid4())
        line = {
            "type": kind,
            "uuid": line_id,
            "parentUuid": self.parent,
            "sessionId": self.session,
            "timestamp": "2026-01-01T00:00:00Z",
            "message": {"role": kind, "content": content},
        }
        with open(self.transcript, "a", encoding="utf-8") as f:
            f.write(json.dumps(line) + "\n")
        self.parent = line_id

    def write(self, rel: str, text: str) -> None:
        """The agent's Write tool: its hooks around the write."""
        full = os.path.join(self.ws, rel)
        inp = {"file_path": full, "content": text}
        self.hook("PreToolUse", tool_name="Write", tool_input=inp, tool_use_id=uuid.uuid4().hex)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "w", encoding="utf-8") as f:
            f.write(text)
        self.hook(
            "PostToolUse",
            tool_name="Write",
            tool_input=inp,
            tool_use_id=uuid.uuid4().hex,
            tool_response={},
        )

    def shell(self, command: str) -> None:
        """The agent's Bash tool: its hooks around the command."""
        inp = {"command": command}
        self.hook("PreToolUse", tool_name="Bash", tool_input=inp, tool_use_id="b")
        subprocess.run(["sh", "-c", command], cwd=self.ws, check=True)
        self.hook(
            "PostToolUse", tool_name="Bash", tool_input=inp, tool_use_id="b", tool_response={}
        )

    def turn(self, prompt: str, files: dict[str, str], shell: str | None = None) -> None:
        self.transcript_line("user", prompt)
        self.hook("UserPromptSubmit", prompt=prompt)
        for rel, text in files.items():
            self.write(rel, text)
        if shell:
            self.shell(shell)
        self.transcript_line("assistant", [{"type": "text", "text": "done"}])
        self.hook("Stop", stop_hook_active=False)

    def cli(self, *args: str) -> None:
        print(f"$ rewind-ls {' '.join(args)}")
        sys.stdout.flush()
        cmd = [sys.executable, "-m", "rewind_ls", *args, "-C", self.ws]
        subprocess.run(cmd, env=self.env, check=False)

    def show(self, *rels: str) -> None:
        for rel in rels:
            full = os.path.join(self.ws, rel)
            if os.path.exists(full):
                with open(full, encoding="utf-8") as f:
                    print(f"   {rel}: {f.read().strip()!r}")
            else:
                print(f"   {rel}: (absent)")


def scene_three_turns(agent: DemoAgent) -> None:
    say(f"A scripted agent edits {agent.ws} through the real Claude Code hook")
    with open(os.path.join(agent.ws, "app.py"), "w") as f:
        f.write("def greet():\n    return 'hello'\n")
    agent.turn(
        "add a farewell",
        {"app.py": "def greet():\n    return 'hello'\n\ndef bye():\n    return 'bye'\n"},
    )
    agent.turn(
        "write a README and config",
        {"README.md": "# Demo\n"},
        shell="echo 'debug = true' > config.toml",
    )
    agent.turn(
        "rename greet to hello",
        {"app.py": "def hello():\n    return 'hello'\n\ndef bye():\n    return 'bye'\n"},
    )
    agent.cli("turns")


def scene_rewind_and_undo(agent: DemoAgent) -> None:
    say("Rewind the code to the start of turn 2 (config.toml was written by a shell command)")
    agent.cli("rewind", "2", "--yes")
    agent.show("app.py", "README.md", "config.toml")
    say("Undo that rewind")
    agent.cli("undo", "--yes")
    agent.show("app.py", "README.md", "config.toml")


def scene_revert_one_turn(agent: DemoAgent) -> None:
    say("Revert only turn 1 (the farewell) while keeping turn 3's rename")
    agent.cli("revert", "1", "--yes")
    agent.show("app.py")


def scene_fork_conversation(agent: DemoAgent) -> None:
    say("Fork the conversation before turn 3")
    agent.cli("rewind", "3", "--scope", "conversation", "--yes")
    say("Everything above is undoable; the store is outside the workspace")
    print(f"   store: {agent.home}")


SCENES = (scene_three_turns, scene_rewind_and_undo, scene_revert_one_turn, scene_fork_conversation)


def run_demo(keep: bool = False) -> int:
    base = tempfile.mkdtemp(prefix="rewind-ls-demo-")
    try:
        agent = DemoAgent(base)
        for scene in SCENES:
            scene(agent)
    finally:
        if keep:
            print(f"\nkept: {base}")
        else:
            shutil.rmtree(base, ignore_errors=True)
    return 0
