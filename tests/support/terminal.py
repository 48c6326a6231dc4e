"""A real terminal for CLI tests: the command runs on a pseudo-terminal of a given size, its output is
interpreted by pyte (a VT100 emulator), keystrokes are written to the pty. Tests read the screen as
text, like a person would see it."""

from __future__ import annotations

import fcntl
import os
import pty
import select
import struct
import subprocess
import sys
import termios
import time
from collections.abc import Mapping
from pathlib import Path

import pyte

KEYS = {
    "up": "\x1b[A",
    "down": "\x1b[B",
    "enter": "\r",
    "esc": "\x1b",
    "backspace": "\x7f",
    "ctrl-c": "\x03",
    "pagedown": "\x1b[6~",
    "pageup": "\x1b[5~",
}


class _Screen(pyte.Screen):  # type: ignore[misc]
    """Answers the terminal's status queries (cursor position) the way a real terminal does."""

    def __init__(self, columns: int, lines: int, fd: int) -> None:
        super().__init__(columns, lines)
        self._fd = fd

    def write_process_input(self, data: str) -> None:
        os.write(self._fd, data.encode())


class Terminal:
    def __init__(
        self,
        args: list[str],
        cwd: Path,
        env: Mapping[str, str],
        columns: int = 80,
        lines: int = 24,
        term: str = "xterm-256color",
        extra_env: Mapping[str, str] | None = None,
        program: list[str] | None = None,
    ) -> None:
        """`args` for `program` (default: `python -m rewind_ls`)."""
        self.master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", lines, columns, 0, 0))
        self.screen = _Screen(columns, lines, self.master)
        self.stream = pyte.ByteStream(self.screen)
        self.raw = b""
        full_env = {k: v for k, v in env.items() if k not in ("COLUMNS", "LINES", "NO_COLOR")}
        full_env["TERM"] = term
        full_env.update(extra_env or {})
        self.proc = subprocess.Popen(
            [*(program or [sys.executable, "-m", "rewind_ls"]), *args],
            cwd=cwd,
            env=full_env,
            stdin=slave,
            stdout=slave,
            stderr=slave,
            start_new_session=True,
        )
        os.close(slave)

    def _pump(self, timeout: float) -> None:
        ready, _, _ = select.select([self.master], [], [], timeout)
        if not ready:
            return
        try:
            data = os.read(self.master, 65536)
        except OSError:  # the process exited and closed the pty
            data = b""
        if data:
            self.raw += data
            self.stream.feed(data)

    def text(self) -> str:
        return "\n".join(line.rstrip() for line in self.screen.display)

    def colour_at(self, line: int, column: int) -> str:
        """The foreground colour pyte gives the character at (line, column): "default" or a name."""
        return str(self.screen.buffer[line][column].fg)

    def wait_for(self, needle: str, timeout: float = 20.0) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if needle in self.text():
                return self.text()
            self._pump(0.05)
        raise AssertionError(f"{needle!r} never appeared on screen:\n{self.text()}")

    def settle(self, quiet: float = 0.3) -> str:
        """Read until the program has been quiet for `quiet` seconds (it has redrawn)."""
        end = time.monotonic() + quiet
        while time.monotonic() < end:
            before = len(self.raw)
            self._pump(0.05)
            if len(self.raw) != before:
                end = time.monotonic() + quiet
        return self.text()

    def send(self, *keys: str) -> None:
        for key in keys:
            os.write(self.master, KEYS.get(key, key).encode())
            time.sleep(0.05)

    def wait_exit(self, timeout: float = 30.0) -> int:
        deadline = time.monotonic() + timeout
        while self.proc.poll() is None and time.monotonic() < deadline:
            self._pump(0.05)
        self._pump(0.1)
        if self.proc.poll() is None:
            self.proc.kill()
            raise AssertionError(f"still running after {timeout} s:\n{self.text()}")
        return self.proc.returncode

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        os.close(self.master)
