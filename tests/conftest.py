from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.support.agent import FakeClaude

# No workspace watchers outside the tests that start them (tests/test_watcher.py): every hook
# would leave one running per temporary workspace, each holding an inotify instance.
os.environ.setdefault("REWIND_LS_WATCH", "0")
# Nor hook servers (tests/test_hook_server.py and the real agents' tests start them): one would
# stay up per temporary REWIND_LS_HOME for its idle time.
os.environ.setdefault("REWIND_LS_HOOK_SERVER", "0")


class Cli:
    """Runs the real `rewind-ls` command (as `python -m rewind_ls`) in a workspace."""

    def __init__(self, ws: Path, home: Path) -> None:
        self.ws = ws
        self.home = home
        self.env = {
            **os.environ,
            "REWIND_LS_HOME": str(home),
            "CLAUDE_CONFIG_DIR": str(home / "claude"),
        }

    def __call__(
        self, *args: str, input: bytes | None = None, ok: bool = True
    ) -> subprocess.CompletedProcess[str]:
        proc = subprocess.run(
            [sys.executable, "-m", "rewind_ls", *args],
            cwd=self.ws,
            env=self.env,
            input=input.decode() if input is not None else "",
            capture_output=True,
            text=True,
            timeout=120,
        )
        if ok and proc.returncode != 0:
            raise AssertionError(
                f"rewind-ls {' '.join(args)} exited {proc.returncode}:\n{proc.stdout}\n{proc.stderr}"
            )
        return proc

    def json(self, *args: str, ok: bool = True) -> Any:
        proc = self(*args, "--json", ok=ok)
        return json.loads(proc.stdout)


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    path = tmp_path / "ws"
    path.mkdir()
    return path


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


@pytest.fixture
def agent(ws: Path, home: Path) -> FakeClaude:
    return FakeClaude(ws, home)


@pytest.fixture
def cli(ws: Path, home: Path) -> Cli:
    return Cli(ws, home)


@pytest.fixture
def snapshot(ws: Path) -> Callable[[], dict[str, tuple[bytes, int]]]:
    """Every file of the workspace: bytes and mode."""

    def take() -> dict[str, tuple[bytes, int]]:
        out = {}
        for p in sorted(ws.rglob("*")):
            if p.is_file() and ".git" not in p.parts:
                out[p.relative_to(ws).as_posix()] = (p.read_bytes(), p.stat().st_mode & 0o777)
        return out

    return take
