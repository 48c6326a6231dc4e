"""rewind.nvim as a person meets it: Neovim 0.11 with a terminal UI (in tmux), the plugin loaded as its
README says, Neovim's own vim.ui.select (no picker plugin, no stubs), the real server. The screen is
read after each keystroke: the statusline is current as soon as the server answers, the turn picker's
numbers are the turns' own, Cancel leaves no "Press ENTER" prompt, and the preview names the files.
Screen captures go to test-artifacts/."""

from __future__ import annotations

import os
import shutil
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from tests.support.agent import FakeClaude  # noqa: E402
from tests.support.tmux import TmuxScreen  # noqa: E402

pytestmark = pytest.mark.editor
ARTIFACTS = REPO / "test-artifacts"


class Screen(TmuxScreen):
    def settle(self, seconds: float = 1.0) -> str:
        time.sleep(seconds)
        return self.text()

    def save(self, name: str) -> None:
        ARTIFACTS.mkdir(exist_ok=True)
        (ARTIFACTS / name).write_text(self.text())


@pytest.fixture
def nvim_ui(tmp_path: Path) -> Iterator[tuple[Screen, Path]]:
    nvim = shutil.which("nvim") or str(Path(sys.executable).parent / "nvim")
    ws, home = tmp_path / "ws", tmp_path / "home"
    ws.mkdir()
    (ws / "a.txt").write_text("a0\n")
    agent = FakeClaude(ws, home)
    for n, prompt in enumerate(("first prompt", "second prompt", "third prompt"), 1):
        agent.turn(prompt, {"a.txt": f"a{n}\n"})
    init = tmp_path / "init.lua"
    # The README's setup, with the server of this checkout and a statusline showing the plugin's part.
    init.write_text(
        f"vim.opt.runtimepath:prepend({str(REPO / 'editors' / 'nvim')!r})\n"
        "vim.opt.swapfile = false\n"
        f"require('rewind').setup({{ cmd = {{ {sys.executable!r}, '-m', 'rewind_ls', 'serve' }} }})\n"
        "vim.o.statusline = [[%f %{luaeval(\"require('rewind').statusline()\")}]]\n"
    )
    env = {
        **os.environ,
        "REWIND_LS_HOME": str(home),
        "CLAUDE_CONFIG_DIR": str(home / "claude"),
        "XDG_STATE_HOME": str(tmp_path / "state"),
        "PYTHONPATH": str(REPO),
    }
    screen = Screen("rewind-nvim")
    screen.start(f"{nvim} -u {init} a.txt", ws, env)
    try:
        yield screen, ws
    finally:
        screen.close()


def test_statusline_picker_numbers_no_press_enter_and_preview(
    nvim_ui: tuple[Screen, Path],
) -> None:
    screen, ws = nvim_ui
    # No key pressed: the statusline shows the turns once the server answers.
    screen.wait_for("a.txt ⟲ 3 turns")
    screen.save("nvim-statusline.txt")

    screen.keys(":Rewind", "Enter")
    picker = screen.wait_for("Turn number (empty cancels):")
    screen.save("nvim-picker.txt")
    assert "#3  " in picker and "#1  " in picker, picker
    screen.keys("1", "Enter")  # the turn's own number: #1, not the first row (#3)
    scopes = screen.wait_for("Rewind #1: what?")
    assert "start of #1" in scopes, scopes
    screen.keys("Enter")  # empty: cancel
    after = screen.settle()
    assert "Press ENTER" not in after, after
    assert "⟲ 3 turns" in after, after

    screen.keys(":Rewind 1", "Enter")
    preview = screen.wait_for("nothing is written before this")
    screen.save("nvim-preview.txt")
    assert "modify a.txt (+1 -1)" in preview, preview
    cancel = next(line for line in preview.splitlines() if line.endswith(": Cancel"))
    screen.keys(cancel.split(":")[0], "Enter")
    after = screen.settle()
    assert "Press ENTER" not in after, after
    assert "cancelled, nothing was changed" in after, after
    assert (ws / "a.txt").read_text() == "a3\n"

    screen.keys(":Rewind 1", "Enter")
    screen.wait_for("nothing is written before this")
    screen.keys("1", "Enter")
    done = screen.wait_for("Rewind to #1 (code): restored a.txt")
    screen.save("nvim-restored.txt")
    assert "Press ENTER" not in done, done
    assert (ws / "a.txt").read_text() == "a0\n"
