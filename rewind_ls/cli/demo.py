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


def run_demo(keep: bool = False) -> int:
    base = tempfile.mkdtemp(prefix="rewind-ls-demo-")
    ws = os.path.join(base, "project")
    home = os.path.join(base, "store")
    claude = os.path.join(base, "claude")
    os.makedirs(ws)
    transcript_dir = os.path.join(claude, "projects", "demo")
    os.makedirs(transcript_dir)
    env = {**os.environ, "REWIND_LS_HOME": home, "CLAUDE_CONFIG_DIR": claude}
    session = str(uuid.uuid4())
    transcript = os.path.join(transcript_dir, f"{session}.jsonl")
    parent: list[str | None] = [None]

    def say(text: str) -> None:
        print(f"\n\033[1m== {text}\033[0m" if sys.stdout.isatty() else f"\n== {text}")

    def hook(event: str, **fields: Any) -> None:
        payload = {
            "session_id": session,
            "transcript_path": transcript,
            "cwd": ws,
            "hook_event_name": event,
            **fields,
        }
        subprocess.run(
            [sys.executable, "-m", "rewind_ls", "hook", "claude-code"],
            input=json.dumps(payload).encode(),
            env=env,
            check=True,
        )

    def transcript_line(kind: str, content: Any) -> None:
        line_id = str(uuid.uuid4())
        with open(transcript, "a", encoding="utf-8") as f:
            f.write(
                json.dumps(
                    {
                        "type": kind,
                        "uuid": line_id,
                        "parentUuid": parent[0],
                        "sessionId": session,
                        "timestamp": "2026-01-01T00:00:00Z",
                        "message": {"role": kind, "content": content},
                    }
                )
                + "\n"
            )
        parent[0] = line_id

    def write(rel: str, text: str) -> None:
        full = os.path.join(ws, rel)
        inp = {"file_path": full, "content": text}
        hook("PreToolUse", tool_name="Write", tool_input=inp, tool_use_id=uuid.uuid4().hex)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "w", encoding="utf-8") as f:
            f.write(text)
        hook(
            "PostToolUse",
            tool_name="Write",
            tool_input=inp,
            tool_use_id=uuid.uuid4().hex,
            tool_response={},
        )

    def turn(prompt: str, files: dict[str, str], shell: str | None = None) -> None:
        transcript_line("user", prompt)
        hook("UserPromptSubmit", prompt=prompt)
        for rel, text in files.items():
            write(rel, text)
        if shell:
            inp = {"command": shell}
            hook("PreToolUse", tool_name="Bash", tool_input=inp, tool_use_id="b")
            subprocess.run(["sh", "-c", shell], cwd=ws, check=True)
            hook("PostToolUse", tool_name="Bash", tool_input=inp, tool_use_id="b", tool_response={})
        transcript_line("assistant", [{"type": "text", "text": "done"}])
        hook("Stop", stop_hook_active=False)

    def cli(*args: str) -> None:
        print(f"$ rewind-ls {' '.join(args)}")
        sys.stdout.flush()
        subprocess.run([sys.executable, "-m", "rewind_ls", *args, "-C", ws], env=env, check=False)

    def show(rel: str) -> None:
        full = os.path.join(ws, rel)
        if os.path.exists(full):
            with open(full, encoding="utf-8") as f:
                print(f"   {rel}: {f.read().strip()!r}")
        else:
            print(f"   {rel}: (absent)")

    try:
        say(f"A scripted agent edits {ws} through the real Claude Code hook")
        with open(os.path.join(ws, "app.py"), "w") as f:
            f.write("def greet():\n    return 'hello'\n")
        turn(
            "add a farewell",
            {"app.py": "def greet():\n    return 'hello'\n\ndef bye():\n    return 'bye'\n"},
        )
        turn(
            "write a README and config",
            {"README.md": "# Demo\n"},
            shell="echo 'debug = true' > config.toml",
        )
        turn(
            "rename greet to hello",
            {"app.py": "def hello():\n    return 'hello'\n\ndef bye():\n    return 'bye'\n"},
        )
        cli("turns")
        say("Rewind the code to the start of turn 2 (config.toml was written by a shell command)")
        cli("rewind", "2", "--yes")
        for rel in ("app.py", "README.md", "config.toml"):
            show(rel)
        say("Undo that rewind")
        cli("undo", "--yes")
        for rel in ("app.py", "README.md", "config.toml"):
            show(rel)
        say("Revert only turn 1 (the farewell) while keeping turn 3's rename")
        cli("revert", "1", "--yes")
        show("app.py")
        say("Fork the conversation before turn 3")
        cli("rewind", "3", "--scope", "conversation", "--yes")
        say("Everything above is undoable; the store is outside the workspace")
        print(f"   store: {home}")
    finally:
        if keep:
            print(f"\nkept: {base}")
        else:
            shutil.rmtree(base, ignore_errors=True)
    return 0
