"""Runs the real, unmodified `claude` binary (installed by scripts/install-claude.sh) offline against
the scripted API stand-in (`fake_anthropic.FakeAnthropic`), in a throwaway HOME.

The hooks are the ones `rewind-ls install claude-code` writes, and the binary runs with a PATH that
does NOT hold the virtualenv: the installed hook command must work on its own. The home, the
environment, `rewind-ls` and the terminal are `real_agent`'s; this is Claude Code's part.
"""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path
from typing import Any

from tests.support.fake_anthropic import FakeAnthropic
from tests.support.pinned import pinned_tool
from tests.support.real_agent import AgentTerminal, RealAgent, rewind_ls_command

__all__ = ["MCP_CONNECT_WAIT_MS", "NOTEBOOK", "RealClaude", "claude_binary", "rewind_ls_command"]

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

VERSION = "2.1.332"

# How long the binary waits for an MCP server to start before going on without it
# (`MCP_CONNECT_TIMEOUT_MS`, 5 s by default): `rewind-ls mcp` imports the MCP SDK first, about a
# second on a quiet machine and several on the loaded 2-core one the tests share.
MCP_CONNECT_WAIT_MS = "60000"


def claude_binary() -> Path:
    """The pinned binary, installing it (idempotent, cached under .tools/) when missing."""
    return pinned_tool("install-claude.sh", "CLAUDE_CODE_VERSION", VERSION, "REWIND_CLAUDE_BIN")


class RealClaude(RealAgent):
    """One throwaway Claude Code home and project, driven with `run()`."""

    cli_env = ("REWIND_LS_HOME", "CLAUDE_CONFIG_DIR")

    def __init__(self, binary: Path, api: FakeAnthropic, base: Path, project: Path) -> None:
        super().__init__(base, project)
        self.binary = binary
        self.api = api
        self.config = self.home / ".claude"
        self.config.mkdir(parents=True, exist_ok=True)
        self.env |= {
            "CLAUDE_CONFIG_DIR": str(self.config),
            "ANTHROPIC_BASE_URL": api.url,
            "ANTHROPIC_API_KEY": "sk-ant-test-offline",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_AUTOUPDATER": "1",
            "DISABLE_TELEMETRY": "1",
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
        # Kept: what `install` wrote there (its approval of the project's MCP server).
        local = json.loads(path.read_text()) if path.exists() else {}
        local["permissions"] = {"allow": list(rules), "deny": list(deny)}
        path.write_text(json.dumps(local))

    def rewind_ls(
        self, *args: str, cwd: Path | None = None, ok: bool = True, input: str | None = ""
    ) -> subprocess.CompletedProcess[str]:
        return super().rewind_ls(*args, cwd=cwd, ok=ok, input=input)

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
        proc = self.run_binary(cmd, cwd, timeout=180)
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
        """Start the interactive UI on a pseudo-terminal with `prompt`, read until `until` shows up
        (or `timeout`), then kill it. Returns all it wrote, without escape codes."""
        env = {**self.env, "COLUMNS": "200", "LINES": "50"}
        term = AgentTerminal([str(self.binary), prompt], self.project, env, columns=200, lines=50)
        deadline = time.monotonic() + timeout
        try:
            while time.monotonic() < deadline and until not in " ".join(term.plain().split()):
                term.read(0.5)
        finally:
            term.close()
        return term.plain()

    def transcript(self, session_id: str) -> Path:
        found = list((self.config / "projects").glob(f"*/{session_id}.jsonl"))
        assert len(found) == 1, f"transcript of {session_id}: {found}"
        return found[0]


def stream_json_process(claude: RealClaude) -> subprocess.Popen[str]:
    """`claude -p` reading user messages as stream-json on its stdin, its events on its stdout:
    one process, several prompts (and the turns the binary starts by itself)."""
    return subprocess.Popen(
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


class LiveSession:
    """A running `claude -p --input-format stream-json` (use as a context manager): `prompt()`
    sends one user message and returns the binary's result line for it."""

    def __init__(self, claude: RealClaude) -> None:
        self.proc = stream_json_process(claude)

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
