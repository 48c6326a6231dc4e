"""Runs the real, unmodified `claude` binary (installed by scripts/install-claude.sh) offline against
the scripted API stand-in (`fake_anthropic.FakeAnthropic`), in a throwaway HOME.

The hooks are the ones `rewind-ls install claude-code` writes, and the binary runs with a PATH that
does NOT hold the virtualenv: the installed hook command must work on its own.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.support.fake_anthropic import FakeAnthropic
from tests.support.pinned import pinned_tool

# A one-cell notebook for NotebookEdit (the real binary edits it by cell id).
NOTEBOOK = json.dumps(
    {
        "cells": [
            {
                "cell_type": "code",
                "id": "c1",
                "metadata": {},
                "source": ["x = 1\n"],
                "outputs": [],
                "execution_count": None,
            }
        ],
        "metadata": {},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
)

VERSION = "2.1.197"


def claude_binary() -> Path:
    """The pinned binary, installing it (idempotent, cached under .tools/) when missing."""
    return pinned_tool("install-claude.sh", "CLAUDE_CODE_VERSION", VERSION, "REWIND_CLAUDE_BIN")


def rewind_ls_command() -> list[str]:
    """The venv's `rewind-ls` entry point, as a person who installed it in a virtualenv runs it."""
    return [str(Path(sys.executable).parent / "rewind-ls")]


class RealClaude:
    """One throwaway Claude Code home and project, driven with `run()`."""

    def __init__(self, binary: Path, api: FakeAnthropic, base: Path, project: Path) -> None:
        self.binary = binary
        self.api = api
        self.home = base / "home"
        self.config = self.home / ".claude"
        self.rewind_home = base / "rewind-home"
        self.project = project
        self.config.mkdir(parents=True, exist_ok=True)
        project.mkdir(parents=True, exist_ok=True)
        self.env = {
            # No virtualenv on PATH: the hook command installed must not depend on it.
            "PATH": "/usr/local/bin:/usr/bin:/bin",
            "HOME": str(self.home),
            "CLAUDE_CONFIG_DIR": str(self.config),
            "REWIND_LS_HOME": str(self.rewind_home),
            # The hooks start the workspace watcher as in real use; it must not outlive the test
            # by the default ten minutes (one inotify instance each).
            "REWIND_LS_WATCH_IDLE": "20",
            "ANTHROPIC_BASE_URL": api.url,
            "ANTHROPIC_API_KEY": "sk-ant-test-offline",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_AUTOUPDATER": "1",
            "DISABLE_TELEMETRY": "1",
            "LANG": "C.UTF-8",
        }
        self.trust(project)

    def trust(self, folder: Path) -> None:
        """Accept the trust dialog for `folder` the way the binary records it (its .claude.json)."""
        state_file = self.config / ".claude.json"
        state: dict[str, Any] = {}
        if state_file.exists():
            state = json.loads(state_file.read_text())
        state.setdefault("projects", {}).setdefault(str(folder), {})["hasTrustDialogAccepted"] = (
            True
        )
        state["hasCompletedOnboarding"] = True
        # The interactive UI asks once whether to use an API key from the environment.
        state["customApiKeyResponses"] = {
            "approved": [self.env["ANTHROPIC_API_KEY"][-20:]],
            "rejected": [],
        }
        state_file.write_text(json.dumps(state))

    def allow(self, *rules: str, deny: tuple[str, ...] = ()) -> None:
        """Permission rules in the project's settings.local.json (ours stay in settings.json)."""
        path = self.project / ".claude" / "settings.local.json"
        path.parent.mkdir(exist_ok=True)
        path.write_text(json.dumps({"permissions": {"allow": list(rules), "deny": list(deny)}}))

    def rewind_ls(
        self, *args: str, cwd: Path | None = None, ok: bool = True, input: str = ""
    ) -> subprocess.CompletedProcess[str]:
        proc = subprocess.run(
            [*rewind_ls_command(), *args],
            cwd=cwd or self.project,
            env={**os.environ, **{k: self.env[k] for k in ("REWIND_LS_HOME", "CLAUDE_CONFIG_DIR")}},
            capture_output=True,
            text=True,
            timeout=120,
            input=input,
        )
        if ok and proc.returncode != 0:
            raise AssertionError(
                f"rewind-ls {' '.join(args)} exited {proc.returncode}:\n{proc.stdout}\n{proc.stderr}"
            )
        return proc

    def install_hooks(self) -> None:
        self.rewind_ls("install", "claude-code")

    def run(
        self,
        prompt: str,
        *,
        resume: str | None = None,
        cwd: Path | None = None,
        args: tuple[str, ...] = (),
        ok: bool = True,
    ) -> dict[str, Any]:
        """`claude -p PROMPT --output-format json` (resuming `resume`); returns its JSON result."""
        cmd = [str(self.binary), "-p", prompt, "--output-format", "json", *args]
        if resume is not None:
            cmd += ["--resume", resume]
        proc = subprocess.run(
            cmd,
            cwd=cwd or self.project,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=180,
            stdin=subprocess.DEVNULL,
        )
        if ok and proc.returncode != 0:
            raise AssertionError(
                f"claude exited {proc.returncode}:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
            )
        try:
            result: dict[str, Any] = json.loads(proc.stdout)
        except ValueError:
            result = {"raw": proc.stdout, "stderr": proc.stderr, "returncode": proc.returncode}
        result.setdefault("stderr", proc.stderr)
        return result

    def session(self) -> LiveSession:
        """One `claude -p` process reading prompts as stream-json on stdin: several prompts in one
        session with no SessionStart between them, as in the interactive UI."""
        return LiveSession(self)

    def interactive(self, prompt: str, until: str, timeout: float = 30.0) -> str:
        """Start the interactive UI on a pseudo-terminal with `prompt`, read the screen until `until`
        shows up (or `timeout`), then kill it. Returns the screen text without escape codes."""
        import pty
        import re
        import select
        import signal
        import time

        pid, fd = pty.fork()
        if pid == 0:  # the child: becomes the binary
            os.chdir(self.project)
            env = {**self.env, "TERM": "xterm-256color", "COLUMNS": "200", "LINES": "50"}
            os.execve(str(self.binary), [str(self.binary), prompt], env)
        screen = ""
        raw = b""
        deadline = time.monotonic() + timeout
        try:
            while time.monotonic() < deadline:
                ready, _, _ = select.select([fd], [], [], 0.5)
                if not ready:
                    continue
                try:
                    chunk = os.read(fd, 65536)
                except OSError:
                    break
                raw += chunk
                screen = re.sub(
                    r"\x1b(\[[0-9;?]*[A-Za-z]|\][^\x07]*\x07|.)", "", raw.decode("utf-8", "replace")
                )
                if until in " ".join(screen.split()):
                    break
        finally:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            os.close(fd)
        return screen

    def transcript(self, session_id: str) -> Path:
        found = list((self.config / "projects").glob(f"*/{session_id}.jsonl"))
        assert len(found) == 1, f"transcript of {session_id}: {found}"
        return found[0]

    def hook_log(self) -> str:
        log = self.rewind_home / "rewind-ls.log"
        return log.read_text() if log.exists() else ""


class LiveSession:
    """A running `claude -p --input-format stream-json` (use as a context manager): `prompt()`
    sends one user message and returns the binary's result line for it."""

    def __init__(self, claude: RealClaude) -> None:
        self.proc = subprocess.Popen(
            [
                str(claude.binary),
                "-p",
                "--input-format",
                "stream-json",
                "--output-format",
                "stream-json",
                "--verbose",
            ],
            cwd=claude.project,
            env=claude.env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

    def __enter__(self) -> LiveSession:
        return self

    def __exit__(self, *exc: object) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        try:
            self.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()

    def prompt(self, text: str) -> dict[str, Any]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        message = {"type": "user", "message": {"role": "user", "content": text}}
        self.proc.stdin.write(json.dumps(message) + "\n")
        self.proc.stdin.flush()
        for line in self.proc.stdout:
            event = json.loads(line)
            if event.get("type") == "result":
                assert event.get("subtype") == "success", event
                result: dict[str, Any] = event
                return result
        raise AssertionError(f"claude ended before answering {text!r}: {self.proc.stderr}")
