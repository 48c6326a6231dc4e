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

import contextlib
import fcntl
import json
import os
import pty
import re
import select
import signal
import struct
import subprocess
import termios
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pyte

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
            # The hooks start the workspace watcher as in real use; it must not outlive the test
            # by the default ten minutes (one inotify instance each).
            "REWIND_LS_WATCH_IDLE": "20",
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


class _Screen(pyte.Screen):
    """Answers the terminal queries the TUI makes (cursor position, device attributes)."""

    def __init__(self, columns: int, lines: int, fd: int) -> None:
        super().__init__(columns, lines)
        self._fd = fd

    def write_process_input(self, data: str) -> None:
        write_all(self._fd, data.encode())


def write_all(fd: int, data: bytes, timeout: float = 10.0) -> None:
    """Write to the terminal without ever blocking the test: a program that stops reading its input
    (hung, or gone) fills the terminal's buffer and a plain write would wait forever."""
    deadline = time.monotonic() + timeout
    while data:
        _, ready, _ = select.select([], [fd], [], max(0.0, deadline - time.monotonic()))
        if not ready:
            raise AssertionError(f"the program read none of its input for {timeout} s")
        try:
            data = data[os.write(fd, data) :]
        except BlockingIOError:
            continue


class CodexTerminal:
    """The interactive `codex` on a pseudo-terminal, its screen read through pyte."""

    def __init__(self, args: list[str], cwd: Path, env: Mapping[str, str]) -> None:
        self.master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
        self.screen = _Screen(120, 40, self.master)
        self.stream = pyte.ByteStream(self.screen)
        self.proc = subprocess.Popen(
            args,
            cwd=cwd,
            env={**env, "TERM": "xterm-256color"},
            stdin=slave,
            stdout=slave,
            stderr=slave,
            start_new_session=True,
        )
        os.close(slave)
        os.set_blocking(self.master, False)

    def read(self, timeout: float) -> None:
        """Read what the program wrote within `timeout` seconds into the screen."""
        ready, _, _ = select.select([self.master], [], [], timeout)
        if not ready:
            return
        try:
            data = os.read(self.master, 65536)
        except BlockingIOError:
            return
        except OSError:  # the program exited and closed the terminal
            return
        if b"\x1b[?u" in data:  # keyboard-protocol query pyte does not know: "no flags"
            write_all(self.master, b"\x1b[?0u")
        self.stream.feed(data)

    def text(self) -> str:
        return "\n".join(line.rstrip() for line in self.screen.display)

    def wait_for(self, *needles: str, timeout: float = 60.0) -> str:
        """The first of `needles` to appear on the screen."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            screen = self.text()
            for needle in needles:
                if needle in screen:
                    return needle
            self.read(0.1)
        raise AssertionError(f"none of {needles} appeared on screen:\n{self.text()}")

    def send(self, keys: str) -> None:
        write_all(self.master, keys.encode())

    def choose(self, entry: str) -> None:
        """Move the menu's selection down to `entry` and confirm it."""
        for _ in range(10):
            selected = [ln for ln in self.text().splitlines() if ln.lstrip().startswith("›")]
            if selected and entry in selected[0]:
                self.send("\r")
                return
            self.send("\x1b[B")
            time.sleep(0.2)
            self.read(0.2)
        raise AssertionError(f"no menu entry {entry!r}:\n{self.text()}")

    def settle(self, quiet: float = 1.0, limit: float = 30.0) -> None:
        """Read until the program has drawn nothing for `quiet` seconds (notices come late)."""
        end, last = time.monotonic() + limit, time.monotonic()
        while time.monotonic() < end and time.monotonic() - last < quiet:
            before = self.screen.display
            self.read(0.1)
            if self.screen.display != before:
                last = time.monotonic()

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

    def close(self) -> None:
        # The whole process group: `sh -c "cd ... && codex ..."` does not exec codex.
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait(timeout=10)
        os.close(self.master)
