"""What the real-agent harnesses share (`real_claude`, `real_codex`, `real_gemini`): a throwaway HOME
and rewind-ls home beside the project, the offline environment the binary runs in, `rewind-ls` run
as the person runs it, a run of the binary with its output captured, the hook log, and the agent's
interactive UI on a pseudo-terminal (`AgentTerminal`, its screen read through pyte). Each harness
adds only its agent's part: its config files, its variables, how a turn is run and read back.

The binary runs with a PATH that does NOT hold the virtualenv: the hook command `install` wrote
must work on its own.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import pty
import re
import select
import signal
import struct
import subprocess
import sys
import termios
import time
from collections.abc import Mapping
from pathlib import Path

import pyte

# No virtualenv on PATH: the hook command installed must not depend on it.
SYSTEM_PATH = "/usr/local/bin:/usr/bin:/bin"


def rewind_ls_command() -> list[str]:
    """The venv's `rewind-ls` entry point, as a person who installed it in a virtualenv runs it."""
    return [str(Path(sys.executable).parent / "rewind-ls")]


class RealAgent:
    """One throwaway home (`base/home`), rewind-ls home (`base/rewind-home`) and project."""

    # The variables of `env` the `rewind-ls` commands see too (the rest is the test's environment).
    cli_env: tuple[str, ...] = ("REWIND_LS_HOME",)

    def __init__(self, base: Path, project: Path) -> None:
        self.home = base / "home"
        self.rewind_home = base / "rewind-home"
        self.project = project
        project.mkdir(parents=True, exist_ok=True)
        self.env = {
            "PATH": SYSTEM_PATH,
            "HOME": str(self.home),
            "REWIND_LS_HOME": str(self.rewind_home),
            # The hooks start the workspace watcher as in real use; it must not outlive the test
            # by the default ten minutes (one inotify instance each).
            "REWIND_LS_WATCH_IDLE": "20",
            # Their hooks go through the hook server as in real use (one per rewind-ls home).
            "REWIND_LS_HOOK_SERVER_IDLE": "20",
            "LANG": "C.UTF-8",
        }

    def rewind_ls(
        self, *args: str, cwd: Path | None = None, ok: bool = True, input: str | None = None
    ) -> subprocess.CompletedProcess[str]:
        proc = subprocess.run(
            [*rewind_ls_command(), *args],
            cwd=cwd or self.project,
            env={**os.environ, **{k: self.env[k] for k in self.cli_env}},
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

    def run_binary(
        self, args: list[str], cwd: Path | None, timeout: float
    ) -> subprocess.CompletedProcess[str]:
        """The agent's command line in the project (or `cwd`), no input, output captured."""
        return subprocess.run(
            args,
            cwd=cwd or self.project,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=timeout,
            stdin=subprocess.DEVNULL,
        )

    def hook_log(self) -> str:
        log = self.rewind_home / "rewind-ls.log"
        return log.read_text() if log.exists() else ""


class _Screen(pyte.Screen):
    """Answers the terminal queries a TUI makes (cursor position, device attributes)."""

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


ESCAPES = re.compile(r"\x1b(\[[0-9;?]*[A-Za-z]|\][^\x07]*\x07|.)")


class AgentTerminal:
    """An agent's interactive UI on a pseudo-terminal of its own (the program's controlling terminal,
    as in a terminal emulator), its screen read through pyte; `raw` keeps every byte it wrote."""

    def __init__(
        self,
        args: list[str],
        cwd: Path,
        env: Mapping[str, str],
        columns: int = 120,
        lines: int = 40,
    ) -> None:
        env = {**env, "TERM": "xterm-256color"}
        pid, self.master = pty.fork()
        if pid == 0:  # the child: becomes the program
            try:
                # Its size before it starts (it reads it once at start-up).
                fcntl.ioctl(0, termios.TIOCSWINSZ, struct.pack("HHHH", lines, columns, 0, 0))
                os.chdir(cwd)
                os.execve(args[0], args, env)
            finally:
                os._exit(127)
        self.pid = pid
        self.screen = _Screen(columns, lines, self.master)
        self.stream = pyte.ByteStream(self.screen)
        self.raw = b""
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
        self.raw += data
        self.stream.feed(data)

    def text(self) -> str:
        return "\n".join(line.rstrip() for line in self.screen.display)

    def plain(self) -> str:
        """Everything the program wrote, escape codes removed (what scrolled off included)."""
        return ESCAPES.sub("", self.raw.decode("utf-8", "replace"))

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

    def close(self) -> None:
        # The whole process group: `sh -c "cd ... && codex ..."` does not exec the agent.
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.pid, signal.SIGKILL)
        os.waitpid(self.pid, 0)
        os.close(self.master)
