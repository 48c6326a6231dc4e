"""Runs the real, unmodified `codex` binary (installed by scripts/install-codex.sh) offline against the
scripted Responses API stand-in (`fake_openai.FakeOpenAI`), in a throwaway CODEX_HOME.

The model provider is a custom one in config.toml whose base_url is the loopback stand-in; the model
is `gpt-5.5`, one the binary's bundled catalog knows (it then offers `apply_patch` as a freeform tool
and the shell as `exec_command`). The hooks are the ones `rewind-ls install codex` writes; new hooks
need the person's approval in real use, so the tests (only) pass `--dangerously-bypass-hook-trust`.
The binary runs with a PATH that does NOT hold the virtualenv: the installed hook command must work
on its own. The home, the environment, `rewind-ls` and the terminal are `real_agent`'s; this is
Codex's part.
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path
from typing import Any

from tests.support.fake_openai import FakeOpenAI
from tests.support.pinned import pinned_tool
from tests.support.real_agent import AgentTerminal, RealAgent

VERSION = "0.169.0"
MODEL = "gpt-5.5"


def codex_binary() -> Path:
    """The pinned binary, installing it (idempotent, cached under .tools/) when missing."""
    return pinned_tool("install-codex.sh", "CODEX_VERSION", VERSION, "REWIND_CODEX_BIN")


class RealCodex(RealAgent):
    """One throwaway Codex home and project, driven with `run()`."""

    cli_env = ("REWIND_LS_HOME", "CODEX_HOME")

    def __init__(self, binary: Path, api: FakeOpenAI, base: Path, project: Path) -> None:
        super().__init__(base, project)
        self.binary = binary
        self.api = api
        self.codex_home = self.home / ".codex"
        self.codex_home.mkdir(parents=True, exist_ok=True)
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
        self.env |= {
            "CODEX_HOME": str(self.codex_home),
            "FAKE_OPENAI_KEY": "sk-test-offline",
            "REWIND_LS_DEBUG": "1",  # every hook call in the log: `hook_log()`
            "TMPDIR": str(base / "tmp"),
        }

    def run(
        self,
        prompt: str,
        *,
        resume: str | None = None,
        cwd: Path | None = None,
        bypass_trust: bool = True,
    ) -> str:
        """One `codex exec` turn (resuming session `resume`); returns the session (thread) id.
        `bypass_trust=False`: the hooks run only if the person trusted them (`trust_hooks`)."""
        args = [str(self.binary), "exec", "--json"]
        if bypass_trust:
            args.insert(2, "--dangerously-bypass-hook-trust")
        if resume:
            args += ["resume", resume, prompt]
        else:
            args += [prompt]
        proc = self.run_binary(args, cwd, timeout=120)
        events = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
        started = [e["thread_id"] for e in events if e.get("type") == "thread.started"]
        failed = [e for e in events if e.get("type") in ("turn.failed", "error")]
        if proc.returncode != 0 or not started or failed:
            raise AssertionError(f"codex exited {proc.returncode}:\n{proc.stdout}\n{proc.stderr}")
        return str(started[0])

    def requests_with(self, text: str) -> list[dict[str, Any]]:
        return [r for r in self.api.requests if text in json.dumps(r.get("input"))]

    def tui(self, command: str) -> CodexTerminal:
        """A shell command line starting the interactive `codex` (e.g. the resume command rewind-ls
        printed) on a terminal. `codex` there is the pinned binary with `--no-daemon`: the TUI
        otherwise starts a background app server that would outlive the test."""
        line = re.sub(r"(^|&& )codex\b", rf"\g<1>{self.binary} --no-daemon", command, count=1)
        assert line != command, command
        return CodexTerminal(["/bin/sh", "-c", line], self.project, self.env)

    def trust_hooks(self) -> None:
        """What `rewind-ls install codex` tells the person to do: start `codex` in the project and
        trust the new hooks when it asks (its startup review, "Trust all and continue")."""
        term = self.tui("codex")
        try:
            term.wait_for("Hooks need review")
            term.choose("Trust all and continue")
            term.ready()
        finally:
            term.close()


class CodexTerminal(AgentTerminal):
    """The interactive `codex` on a pseudo-terminal, its screen read through pyte."""

    def ready(self) -> None:
        """Past the start-up notices, at the prompt."""
        self.wait_for("Ask Codex", "Use existing model")
        self.settle()
        while "Use existing model" in self.text():
            self.choose("Use existing model")  # a model announcement: keep the configured model
            self.settle()
        self.wait_for("Ask Codex")

    def prompt(self, text: str) -> None:
        self.ready()
        self.send(text)
        time.sleep(0.3)
        self.send("\r")
