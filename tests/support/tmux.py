"""A program in a real terminal: tmux, on a server of its own (`-L`), so the environment given is
the one the program gets (a session on a shared tmux server takes the server's environment, not
its client's), and no other tmux user or test can type into it."""

from __future__ import annotations

import shutil
import subprocess
import time
import uuid
from pathlib import Path

import pytest


class TmuxScreen:
    def __init__(self, prefix: str) -> None:
        if shutil.which("tmux") is None:
            pytest.fail("tmux is not installed (scripts/install-emacs-env.sh installs it)")
        self.name = f"{prefix}-{uuid.uuid4().hex[:8]}"

    def _tmux(self, *args: str) -> list[str]:
        return ["tmux", "-L", self.name, "-f", "/dev/null", *args]

    def start(self, command: str, cwd: Path, env: dict[str, str]) -> None:
        subprocess.run(
            self._tmux(
                "new-session",
                "-d",
                "-s",
                self.name,
                "-x",
                "100",
                "-y",
                "24",
                "-c",
                str(cwd),
                command,
            ),
            env=env,
            check=True,
        )

    def text(self) -> str:
        return subprocess.run(
            self._tmux("capture-pane", "-p", "-t", self.name), capture_output=True, text=True
        ).stdout

    def keys(self, *keys: str) -> None:
        subprocess.run(self._tmux("send-keys", "-t", self.name, *keys), check=True)

    def wait_for(self, needle: str, seconds: float = 30) -> str:
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            text = self.text()
            if needle in text:
                return text
            time.sleep(0.1)
        raise AssertionError(f"{needle!r} never appeared on screen:\n{self.text()}")

    def close(self) -> None:
        subprocess.run(self._tmux("kill-server"), capture_output=True)
