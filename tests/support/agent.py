"""A scripted Claude Code agent for tests: real files, real hook process, real payload shapes.

Each hook call runs the hook command `rewind-ls install claude-code` writes (`python -I -S
/abs/rewind_ls/__main__.py hook claude-code`) as its own process with the payload on stdin, exactly as Claude
Code runs a command hook, so tests exercise the same path an agent does.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from rewind_ls.core.agents.settings import default_command

HOOK_ARGV = shlex.split(default_command("claude-code"))

# Content to write, or None to delete the file (done through a "shell command": not reported by a tool).
Edits = Mapping[str, "bytes | str | None"]


def run_hook(
    payload: Mapping[str, Any] | bytes, env: Mapping[str, str]
) -> subprocess.CompletedProcess[bytes]:
    data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    return subprocess.run(
        HOOK_ARGV,
        input=data,
        env={**os.environ, **env},
        capture_output=True,
        timeout=60,
    )


def run_hook_twice(
    payload: Mapping[str, Any], env: Mapping[str, str], argv: list[str] | None = None
) -> None:
    """One hook event delivered twice at once, as two rewind-ls installs (user and project
    settings) deliver it: two hook processes started together with the same payload."""
    data = json.dumps(payload).encode()
    procs = [
        subprocess.Popen(
            argv or HOOK_ARGV,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env={**os.environ, **env},
        )
        for _ in range(2)
    ]
    for proc in procs:
        assert proc.stdin is not None
        proc.stdin.write(data)
        proc.stdin.close()
    for proc in procs:
        proc.wait(60)
        assert proc.stderr is not None
        assert proc.returncode == 0, proc.stderr.read().decode()


class FakeClaude:
    """Plays one Claude Code session against `workspace`, recording through the real hook."""

    def __init__(
        self,
        workspace: Path,
        home: Path,
        session_id: str | None = None,
        transcript_dir: Path | None = None,
        prompt_ids: bool = False,
    ) -> None:
        self.workspace = workspace
        self.prompt_ids = prompt_ids
        self.home = home
        self.session_id = session_id or str(uuid.uuid4())
        # Claude Code's folder lives in the test's home too: transcripts must be under its projects/.
        self.env = {
            "REWIND_LS_HOME": str(home),
            "CLAUDE_CONFIG_DIR": str(home / "claude"),
            # A hook run with only this environment (no REWIND_LS_HOOK_SERVER=0) starts a hook
            # server: it stops 20 s after, not 15 minutes.
            "REWIND_LS_HOOK_SERVER_IDLE": "20",
        }
        tdir = transcript_dir or (home / "claude" / "projects" / "ws")
        tdir.mkdir(parents=True, exist_ok=True)
        self.transcript = tdir / f"{self.session_id}.jsonl"
        self._last_uuid: str | None = None
        self.turns = 0

    def _base(self, event: str) -> dict[str, Any]:
        return {
            "session_id": self.session_id,
            "transcript_path": str(self.transcript),
            "cwd": str(self.workspace),
            "hook_event_name": event,
            "permission_mode": "default",
        }

    def hook(self, event: str, **fields: Any) -> subprocess.CompletedProcess[bytes]:
        proc = run_hook({**self._base(event), **fields}, self.env)
        if proc.returncode != 0:
            raise AssertionError(f"hook {event} exited {proc.returncode}: {proc.stderr.decode()}")
        return proc

    def _transcript_line(self, kind: str, content: Any, **extra: Any) -> None:
        line_uuid = str(uuid.uuid4())
        line = {
            **extra,
            "type": kind,
            "uuid": line_uuid,
            "parentUuid": self._last_uuid,
            "sessionId": self.session_id,
            "timestamp": "2026-11-22T12:00:00.000Z",
            "cwd": str(self.workspace),
            "message": {"role": kind, "content": content},
        }
        with self.transcript.open("a", encoding="utf-8") as f:
            f.write(json.dumps(line) + "\n")
        self._last_uuid = line_uuid

    def write(self, rel: str, content: bytes | str, tool: str = "Write") -> None:
        """One edit-tool call: PreToolUse, the write, PostToolUse."""
        path = self.workspace / rel
        text = content if isinstance(content, str) else content.decode("utf-8", "replace")
        tool_input = {"file_path": str(path), "content": text}
        if tool == "Edit":
            tool_input = {"file_path": str(path), "old_string": "x", "new_string": "y"}
        tid = "toolu_" + uuid.uuid4().hex[:12]
        self.hook("PreToolUse", tool_name=tool, tool_input=tool_input, tool_use_id=tid)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content if isinstance(content, bytes) else content.encode())
        self.hook(
            "PostToolUse",
            tool_name=tool,
            tool_input=tool_input,
            tool_use_id=tid,
            tool_response={"filePath": str(path), "success": True},
        )

    def shell(self, command: str) -> None:
        """A Bash tool call: the hook sees the command, not the files it touches."""
        tid = "toolu_" + uuid.uuid4().hex[:12]
        tool_input = {"command": command}
        self.hook("PreToolUse", tool_name="Bash", tool_input=tool_input, tool_use_id=tid)
        subprocess.run(["sh", "-c", command], cwd=self.workspace, check=True)
        self.hook(
            "PostToolUse",
            tool_name="Bash",
            tool_input=tool_input,
            tool_use_id=tid,
            tool_response={"stdout": "", "stderr": "", "interrupted": False},
        )

    def turn(self, prompt: str, edits: Edits | None = None) -> None:
        """One user turn: the prompt, edits through the Write tool (None deletes via shell), Stop."""
        self.turns += 1
        if self.prompt_ids:  # as the real binary: the transcript's line and the hook share it
            pid = f"prompt-{uuid.uuid4().hex[:8]}"
            self._transcript_line("user", prompt, promptId=pid)
            self.hook("UserPromptSubmit", prompt=prompt, prompt_id=pid)
        else:
            self._transcript_line("user", prompt)
            self.hook("UserPromptSubmit", prompt=prompt)
        for rel, content in (edits or {}).items():
            if content is None:
                self.shell(f"rm -f -- '{rel}'")
            else:
                self.write(rel, content)
        self._transcript_line("assistant", [{"type": "text", "text": f"done: {prompt}"}])
        self.hook("Stop", stop_hook_active=False)
