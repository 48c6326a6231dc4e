"""rewind.nvim: a revert whose changes overlap later edits offers only what can work (conflict markers,
or rewinding that file), with the files and reasons in the question itself, inside the revert's
preview: every file of the turn listed, the overlapping one marked, each answer saying what it does to
the others (issue 36 items 5, 6); the markers land in the buffer and in the quickfix list; the revert
is undoable. Real Neovim, real server."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

import test_nvim as base  # noqa: E402
from test_nvim import make_agent, read  # noqa: E402

workspace = base.workspace
editor = base.editor

pytestmark = pytest.mark.editor

MARKED = "a\n<<<<<<< now\nB2\n||||||| turn #1\nB1\n=======\nb\n>>>>>>> before turn #1\nc\n"


def _overlapping(workspace: tuple[Path, Path], editor: Any) -> Any:
    ws, home = workspace
    (ws / "m.txt").write_bytes(b"a\nb\nc\n")
    (ws / "o.txt").write_bytes(b"o0\n")
    agent = make_agent(ws, home)
    agent.turn("one", {"m.txt": "a\nB1\nc\n", "o.txt": "o1\n"})
    agent.turn("two", {"m.txt": "a\nB2\nc\n"})
    ed = editor()
    ed.open("m.txt")
    return ed


def test_revert_with_overlaps_asks_markers_or_rewind_with_names_and_reasons(
    workspace: tuple[Path, Path], editor: Any
) -> None:
    ws, _ = workspace
    ed = _overlapping(workspace, editor)
    last = ed.run("Rewind revert 1", answers=["Cancel"])
    assert last["status"] == "cancelled", last
    ask = [s for s in ed.selects() if s["kind"] == "rewind.conflicts"][-1]
    labels = ask["labels"]
    assert not any("Overwrite" in label for label in labels), labels
    assert any("all 2 files with conflict markers in m.txt" in label for label in labels), labels
    assert any(
        label.startswith("Rewind m.txt to before turn #1 instead")
        and "the turn's other 1 file stay" in label
        for label in labels
    ), labels
    # Every file of the turn is in the list, the overlapping one marked.
    assert "modify o.txt (+1 -1)" in labels, labels
    assert any(label.startswith("conflict m.txt") for label in labels), labels
    # The question names the file and the real reason before the answer.
    assert "m.txt: later changes overlap this turn's changes" in ask["prompt"], ask["prompt"]
    assert "last saw" not in ask["prompt"]

    last = ed.run("Rewind revert 1", answers=["conflict markers"])
    assert last["status"] == "applied", last
    assert read(ws, "m.txt") == MARKED.encode()
    assert read(ws, "o.txt") == b"o0\n"  # the rest of the revert, as the answer said
    assert ed.buffers()["m.txt"] == {"text": MARKED, "modified": False}
    qf = ed.nv.luajson("return vim.fn.getqflist()")
    assert [(item["lnum"], item["text"]) for item in qf] == [(2, "conflict: <<<<<<< now")], qf
    notes = [n["msg"] for n in ed.notes()]
    assert any("m.txt: resolve the conflict markers, then :w" in m for m in notes), notes

    last = ed.run("Rewind undo")
    assert last["status"] == "applied", last
    assert read(ws, "m.txt") == b"a\nB2\nc\n"


def test_rewind_that_file_instead(workspace: tuple[Path, Path], editor: Any) -> None:
    ws, _ = workspace
    ed = _overlapping(workspace, editor)
    last = ed.run("Rewind revert 1", answers=["Rewind m.txt"])
    assert last["status"] == "applied", last
    assert read(ws, "m.txt") == b"a\nb\nc\n"
    assert read(ws, "o.txt") == b"o1\n"  # the turn's other file stays, as the answer said
    assert len(ed.selects()) == 1, ed.selects()  # one decision, no second question
    assert ed.buffers()["m.txt"] == {"text": "a\nb\nc\n", "modified": False}
