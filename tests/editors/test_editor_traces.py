"""Unsaved buffers rewind-ls is not told about are still conflicts, found by the traces real editors
leave: Emacs 28's lock file (`.#a.txt`) and Neovim 0.11's swap file (marked modified). Each editor
runs in tmux with a terminal UI, the person types without saving, then `rewind-ls rewind` (the real
CLI) refuses to write under the unsaved text, naming the editor; the bytes on disk are unchanged."""

from __future__ import annotations

import os
import shutil
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
if str(HERE.parent.parent) not in sys.path:
    sys.path.insert(0, str(HERE.parent.parent))

from tests.conftest import Cli  # noqa: E402
from tests.support.agent import FakeClaude  # noqa: E402
from tests.support.tmux import TmuxScreen  # noqa: E402

pytestmark = pytest.mark.editor


@pytest.fixture
def tmux(tmp_path: Path) -> Iterator[tuple[TmuxScreen, dict[str, str]]]:
    screen = TmuxScreen("rewind-traces")
    env = {**os.environ, "XDG_STATE_HOME": str(tmp_path / "state"), "HOME": str(tmp_path / "uh")}
    (tmp_path / "uh").mkdir()
    yield screen, env
    screen.close()


def _wait(pred, what: str, seconds: float = 20) -> None:  # type: ignore[no-untyped-def]
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if pred():
            return
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


def _turn(ws: Path, home: Path) -> Cli:
    (ws / "a.txt").write_text("a0\n")
    FakeClaude(ws, home).turn("change a", {"a.txt": "a1\n"})
    return Cli(ws, home)


def test_emacs_lock_file_is_a_conflict(tmp_path: Path, tmux: tuple[str, dict[str, str]]) -> None:
    screen, env = tmux
    ws, home = tmp_path / "ws", tmp_path / "home"
    ws.mkdir()
    cli = _turn(ws, home)
    screen.start("emacs -nw -Q a.txt", ws, env)
    screen.wait_for("a1")
    screen.keys("M->", "mine")
    _wait(lambda: os.path.islink(ws / ".#a.txt"), "the Emacs lock file")
    proc = cli("rewind", "1", "--yes", ok=False)
    assert proc.returncode == 3, proc.stdout + proc.stderr
    assert "unsaved Emacs buffer" in proc.stderr and ".#a.txt" in proc.stderr, proc.stderr
    assert (ws / "a.txt").read_text() == "a1\n"


def test_neovim_swap_file_is_a_conflict(tmp_path: Path, tmux: tuple[str, dict[str, str]]) -> None:
    screen, env = tmux
    ws, home = tmp_path / "ws", tmp_path / "home"
    ws.mkdir()
    cli = _turn(ws, home)
    cli.env["XDG_STATE_HOME"] = env["XDG_STATE_HOME"]
    nvim = shutil.which("nvim") or str(Path(sys.executable).parent / "nvim")
    screen.start(f"{nvim} --clean -c 'set updatetime=100' a.txt", ws, env)
    screen.wait_for("a1")
    screen.keys("o", "mine", "Escape")
    swap = (
        Path(env["XDG_STATE_HOME"])
        / "nvim"
        / "swap"
        / (str(ws / "a.txt").replace("/", "%") + ".swp")
    )

    def dirty() -> bool:
        return swap.exists() and len(data := swap.read_bytes()) > 1007 and data[1007] == 0x55

    _wait(dirty, "the swap file marked modified")
    proc = cli("rewind", "1", "--yes", ok=False)
    assert proc.returncode == 3, proc.stdout + proc.stderr
    assert "unsaved Vim/Neovim buffer" in proc.stderr, proc.stderr
    assert (ws / "a.txt").read_text() == "a1\n"
    # Saved in Neovim: the swap is no longer marked, the rewind goes through.
    screen.keys(":w", "Enter")
    _wait(lambda: (ws / "a.txt").read_text() == "a1\nmine\n" and not dirty(), "the save")
    proc = cli("rewind", "1", "--yes", "--force", ok=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
