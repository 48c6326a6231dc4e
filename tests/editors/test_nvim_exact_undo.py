"""Exact undo over an unsaved buffer in a real Neovim (rewind.nvim and the real server): after
`:Rewind N` over unsaved edits and `:Rewind undo`, in every order of the person's steps (the
editor's `u` first or not, the buffer closed meanwhile), the disk holds its last saved bytes again
and the buffer the unsaved text, still unsaved. Bytes of both are checked after every step."""

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

# The fixtures of the Neovim tests (a workspace with its store; a factory starting Neovim on it).
workspace = base.workspace
editor = base.editor

pytestmark = pytest.mark.editor

SAVED = b"a1\n"  # what the agent's turn left on disk (the last saved bytes)
MINE = "a1 mine\n"  # the person's unsaved text


def _rewound(workspace: tuple[Path, Path], editor: Any) -> Any:
    ws, home = workspace
    (ws / "a.txt").write_bytes(b"a0\n")
    make_agent(ws, home).turn("change a", {"a.txt": "a1\n"})
    ed = editor()
    ed.open("a.txt")
    ed.nv.command("normal! ggcca1 mine")  # typed, not saved
    assert ed.buffers()["a.txt"] == {"text": MINE, "modified": True}
    last = ed.run("Rewind 1", answers=["Overwrite"])
    assert last["status"] == "applied", last
    assert ed.buffers()["a.txt"] == {"text": "a0\n", "modified": False}
    assert read(ws, "a.txt") == b"a0\n"
    return ed


def test_undo_returns_the_unsaved_buffer_and_the_saved_disk(
    workspace: tuple[Path, Path], editor: Any
) -> None:
    ws, _ = workspace
    ed = _rewound(workspace, editor)
    last = ed.run("Rewind undo")
    assert last["status"] == "applied", last
    assert read(ws, "a.txt") == SAVED  # not the unsaved text: the disk's last saved bytes
    assert ed.buffers()["a.txt"] == {"text": MINE, "modified": True}
    notes = [n["msg"] for n in ed.notes()]
    assert any("a.txt (unsaved, as before)" in m for m in notes), notes


def test_u_first_then_rewind_undo_returns_the_disk(
    workspace: tuple[Path, Path], editor: Any
) -> None:
    ws, _ = workspace
    ed = _rewound(workspace, editor)
    ed.nv.command("normal! u")  # the editor's undo first: the buffer is the person's again
    assert ed.buffers()["a.txt"] == {"text": MINE, "modified": True}
    assert read(ws, "a.txt") == b"a0\n"  # the half state the issue reported
    last = ed.run("Rewind undo")
    assert last["status"] == "applied", last
    assert read(ws, "a.txt") == SAVED
    assert ed.buffers()["a.txt"] == {"text": MINE, "modified": True}
    # Writing it now is an ordinary save, with no "file changed since reading it" question.
    ed.nv.command("write")
    assert read(ws, "a.txt") == MINE.encode()


def test_undo_after_the_buffer_was_closed_opens_it_unsaved(
    workspace: tuple[Path, Path], editor: Any
) -> None:
    ws, _ = workspace
    ed = _rewound(workspace, editor)
    ed.open("notes.txt") if (ws / "notes.txt").exists() else None
    (ws / "other.txt").write_bytes(b"other\n")
    ed.open("other.txt")  # keeps the server attached while a.txt is gone
    ed.nv.command("bwipeout! " + str(ws / "a.txt"))
    assert "a.txt" not in ed.buffers()
    last = ed.run("Rewind undo")
    assert last["status"] == "applied", last
    assert read(ws, "a.txt") == SAVED
    assert ed.buffers()["a.txt"] == {"text": MINE, "modified": True}


def test_a_second_undo_leaves_the_unsaved_buffer_alone(
    workspace: tuple[Path, Path], editor: Any
) -> None:
    """After the exact undo, the buffer holds unsaved text again: undoing the undo would write
    over it, so it is a conflict naming the file, and nothing changes."""
    ws, _ = workspace
    ed = _rewound(workspace, editor)
    ed.run("Rewind undo")
    last = ed.run("Rewind undo")
    assert last["status"] != "applied", last
    assert "a.txt" in str(last), last
    assert read(ws, "a.txt") == SAVED
    assert ed.buffers()["a.txt"] == {"text": MINE, "modified": True}
