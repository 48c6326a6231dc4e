"""Runs the real, unmodified `codex` binary (installed by scripts/install-codex.sh) offline against the
scripted Responses API stand-in (`fake_openai.FakeOpenAI`), in a throwaway CODEX_HOME.

The model provider is a custom one in config.toml whose base_url is the loopback stand-in; the model
is `gpt-5.5`, one the binary's bundled catalog knows (it then offers `apply_patch` as a freeform tool
and the shell as `exec_command`). The hooks are the ones `rewind-ls install codex` writes; new hooks
need the person's approval in real use, so the tests (only) pass `--dangerously-bypass-hook-trust`.
The binary runs with a PATH that does NOT hold the virtualenv: the installed hook command must work
on its own.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

from tests.support.fake_openai import FakeOpenAI
from tests.support.pinned import pinned_tool
from tests.support.real_claude import rewind_ls_command

VERSION = "0.169.0"
MODEL = "gpt-5.5"


def codex_binary() -> Path:
    """The pinned binary, installing it (idempotent, cached under .tools/) when missing."""
    return pinned_tool("install-codex.sh", "CODEX_VERSION", VERSION, "REWIND_CODEX_BIN")


class RealCodex:
    """One throwaway Codex home and project, driven with `run()`."""

    def __init__(self, binary: Path, api: FakeOpenAI, base: Path, project: Path) -> None:
        self.binary = binary
        self.api = api
        self.home = base / "home"
        self.codex_home = self.home / ".codex"
        self.rewind_home = base / "rewind-home"
        self.project = project
        self.codex_home.mkdir(parents=True, exist_ok=True)
        project.mkdir(parents=True, exist_ok=True)
        (self.codex_home / "config.toml").write_text(
            f'model = "{MODEL}"\n'
            'model_provider = "fake"\n'
            "[model_providers.fake]\n"
            'name = "scripted stand-in"\n'
            f'base_url = "{api.base_url}"\n'
            'wire_api = "responses"\n'
            'env_key = "FAKE_OPENAI_KEY"\n'
            "request_max_retries = 0\n"
            "stream_max_retries = 0\n"
            # Codex's sandbox makes /tmp writable and plants mount targets such as /tmp/.git while a
            # command runs: any process then rooting a /tmp folder at /tmp (git's rule) would be
            # misled. The tests keep it off /tmp (TMPDIR below is private).
            "[sandbox_workspace_write]\n"
            "exclude_slash_tmp = true\n"
            f'[projects."{project}"]\n'
            'trust_level = "trusted"\n'
        )
        (base / "tmp").mkdir(parents=True, exist_ok=True)
        self.env = {
            # No virtualenv on PATH: the hook command installed must not depend on it.
            "PATH": "/usr/local/bin:/usr/bin:/bin",
            "HOME": str(self.home),
            "CODEX_HOME": str(self.codex_home),
            "REWIND_LS_HOME": str(self.rewind_home),
            "FAKE_OPENAI_KEY": "sk-test-offline",
            "REWIND_LS_DEBUG": "1",  # every hook call in the log: `hook_log()`
            "LANG": "C.UTF-8",
            "TMPDIR": str(base / "tmp"),
        }

    def rewind_ls(
        self, *args: str, cwd: Path | None = None, ok: bool = True
    ) -> subprocess.CompletedProcess[str]:
        proc = subprocess.run(
            [*rewind_ls_command(), *args],
            cwd=cwd or self.project,
            env={**os.environ, **{k: self.env[k] for k in ("REWIND_LS_HOME", "CODEX_HOME")}},
            capture_output=True,
            text=True,
            timeout=120,
        )
        if ok and proc.returncode != 0:
            raise AssertionError(
                f"rewind-ls {' '.join(args)} exited {proc.returncode}:\n{proc.stdout}\n{proc.stderr}"
            )
        return proc

    def run(self, prompt: str, *, resume: str | None = None, cwd: Path | None = None) -> str:
        """One `codex exec` turn (resuming session `resume`); returns the session (thread) id."""
        args = [str(self.binary), "exec", "--dangerously-bypass-hook-trust", "--json"]
        if resume:
            args += ["resume", resume, prompt]
        else:
            args += [prompt]
        proc = subprocess.run(
            args,
            cwd=cwd or self.project,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=120,
            stdin=subprocess.DEVNULL,
        )
        events = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
        started = [e["thread_id"] for e in events if e.get("type") == "thread.started"]
        failed = [e for e in events if e.get("type") in ("turn.failed", "error")]
        if proc.returncode != 0 or not started or failed:
            raise AssertionError(f"codex exited {proc.returncode}:\n{proc.stdout}\n{proc.stderr}")
        return str(started[0])

    def hook_log(self) -> str:
        log = self.rewind_home / "rewind-ls.log"
        return log.read_text() if log.exists() else ""

    def requests_with(self, text: str) -> list[dict[str, Any]]:
        return [r for r in self.api.requests if text in json.dumps(r.get("input"))]
