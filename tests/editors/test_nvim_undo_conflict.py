"""An undo that meets a conflict asks, in a real Neovim (issue 36, items 2 and 5): after `:Rewind 1`
the person writes an edit of a file it restored; `:Rewind undo` would overwrite that write. The
question is asked inside the preview (every file of the undo listed, the conflicting one marked,
"Skip conflicting files" / "Overwrite conflicting files" / Cancel), also with the preview turned
off, and no message names a command-line flag. Real Neovim, real server."""

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


def _rewound_then_written(workspace: tuple[Path, Path], editor: Any) -> Any:
    ws, home = workspace
    two_turns(ws, home)
    ed = editor()  # the test profile: previews off (`confirm = false`)
    ed.open("a.txt")
    last = ed.run("Rewind 1 code")
    assert last["status"] == "applied", last
    assert read(ws, "a.txt") == b"a0\n" and read(ws, "c.txt") is None
    ed.set_buffer("a.txt", "a0 mine\n")
    ed.nv.command("write")
    assert read(ws, "a.txt") == b"a0 mine\n"
    ed.clear_records()
    return ed


def _no_flags(ed: Any) -> None:
    said = [n["msg"] for n in ed.notes()]
    said += ed.nv.luajson("return require('rewind.message').last.lines") or []
    for s in ed.selects():
        said += [s["prompt"], *s["labels"]]
    assert not [m for m in said if "--" in m or "rewind.undo" in m], said


def test_undo_over_a_written_edit_asks_and_cancel_writes_nothing(
    workspace: tuple[Path, Path], editor: Any
) -> None:
    ws, _ = workspace
    ed = _rewound_then_written(workspace, editor)
    last = ed.run("Rewind undo", answers=["Cancel"])
    assert last["status"] == "cancelled", last
    (ask,) = [s for s in ed.selects() if s["kind"] == "rewind.conflicts"]
    labels = ask["labels"]
    assert labels[0].startswith("Skip conflicting files: undo the other 2 files"), labels
    assert labels[1].startswith("Overwrite conflicting files: undo all 3 files"), labels
    # Every file of the undo, the conflicting one marked.
    assert any(lab.startswith("conflict a.txt") for lab in labels), labels
    assert "create c.txt (+1 -0)" in labels and "modify b.txt (+1 -1)" in labels, labels
    assert "a.txt" in ask["prompt"], ask
    _no_flags(ed)
    assert read(ws, "a.txt") == b"a0 mine\n" and read(ws, "c.txt") is None


def test_undo_skip_keeps_the_write_and_overwrite_is_undoable(
    workspace: tuple[Path, Path], editor: Any
) -> None:
    ws, _ = workspace
    ed = _rewound_then_written(workspace, editor)
    last = ed.run("Rewind undo", answers=["Skip conflicting"])
    assert last["status"] == "applied", last
    assert read(ws, "a.txt") == b"a0 mine\n"  # the person's write, left alone
    assert read(ws, "b.txt") == b"b2\n" and read(ws, "c.txt") == b"c1\n"
    _no_flags(ed)


def test_undo_overwrite_then_undo_again_brings_the_write_back(
    workspace: tuple[Path, Path], editor: Any
) -> None:
    ws, _ = workspace
    ed = _rewound_then_written(workspace, editor)
    last = ed.run("Rewind undo", answers=["Overwrite"])
    assert last["status"] == "applied", last
    assert read(ws, "a.txt") == b"a2\n" and read(ws, "c.txt") == b"c1\n"
    assert ed.buffers()["a.txt"] == {"text": "a2\n", "modified": False}
    _no_flags(ed)
    last = ed.run("Rewind undo")
    assert last["status"] == "applied", last
    assert read(ws, "a.txt") == b"a0 mine\n" and read(ws, "c.txt") is None
    assert ed.buffers()["a.txt"] == {"text": "a0 mine\n", "modified": False}
