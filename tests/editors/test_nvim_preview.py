"""rewind.nvim's preview before a restore (confirm = true, the default): one vim.ui.select naming the
files with their action and +/- lines, a file entry opens a diff tab and asks again, Cancel writes
nothing; the undo is previewed too. Real Neovim, real server."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

import test_nvim as base  # noqa: E402
from test_nvim import read, two_turns  # noqa: E402

workspace = base.workspace
editor = base.editor

pytestmark = pytest.mark.editor


def _previewing(workspace: tuple[Path, Path], editor: Any) -> Any:
    ws, home = workspace
    two_turns(ws, home)
    ed = editor()
    # The test profile turns the preview off for the older tests; a plain setup() has it on.
    ed.nv.lua("require('rewind.config').set({ cmd = require('rewind.config').options.cmd })")
    assert ed.nv.luajson("return require('rewind.config').options.confirm") is True
    ed.open("a.txt")
    return ed


def test_rewind_is_previewed_file_by_file_and_cancel_writes_nothing(
    workspace: tuple[Path, Path], editor: Any
) -> None:
    ws, _ = workspace
    ed = _previewing(workspace, editor)
    last = ed.run("Rewind 1", answers=["modify a.txt", "Cancel"])
    assert last["status"] == "cancelled", last
    asks = [s for s in ed.selects() if s["kind"] == "rewind.preview"]
    assert len(asks) == 2, asks  # asked again after the diff
    labels = asks[0]["labels"]
    assert labels[0].startswith("Rewind 3 files (nothing is written before this)"), labels
    assert "modify a.txt (+1 -1)" in labels and "delete c.txt (+0 -1)" in labels, labels
    assert "modify b.txt (+1 -1)" in labels and labels[-1] == "Cancel", labels
    # The diff tab, on screen while the question is asked again: a.txt now on the left, what the
    # rewind writes on the right.
    tab = asks[1]["wins"]
    assert [t["diff"] for t in tab] == [True, True], tab
    assert tab[0]["lines"] == ["a2"] and tab[1]["lines"] == ["a0"], tab
    assert read(ws, "a.txt") == b"a2\n" and read(ws, "c.txt") == b"c1\n"
    # Issue 36 item 8: the diff is on screen while the question is asked again (its tab current,
    # drawn), and answering closes it: the person is back where they started.
    assert asks[1]["tabs"] == 2 and asks[1]["tab"] == 2 and asks[1]["diff"], asks[1]
    assert ed.nv.luajson("return vim.fn.tabpagenr('$')") == 1
    assert ed.nv.luajson("return vim.fn.expand('%:t')") == "a.txt"

    last = ed.run("Rewind 1", answers=["Rewind 3 files"])
    assert last["status"] == "applied", last
    assert read(ws, "a.txt") == b"a0\n" and read(ws, "c.txt") is None


def test_undo_is_previewed(workspace: tuple[Path, Path], editor: Any) -> None:
    ws, _ = workspace
    ed = _previewing(workspace, editor)
    ed.run("Rewind 1", answers=["Rewind 3 files"])
    last = ed.run("Rewind undo", answers=["Cancel"])
    assert last["status"] == "cancelled", last
    ask = [s for s in ed.selects() if s["kind"] == "rewind.preview"][-1]
    assert ask["labels"][0].startswith("Undo 3 files"), ask
    assert "create c.txt (+1 -0)" in ask["labels"], ask
    assert ask["prompt"].startswith("Undo: rewind to turn 1"), ask
    assert read(ws, "c.txt") is None
    last = ed.run("Rewind undo", answers=["Undo 3 files"])
    assert last["status"] == "applied", last
    assert read(ws, "c.txt") == b"c1\n" and read(ws, "a.txt") == b"a2\n"
