"""`:Rewind history` in a real Neovim with the real server (local history, issue 35): a file's
recorded versions listed newest first (the agent's turns and the person's own edit between
turns), one picked and restored after the preview, `:Rewind undo` takes it back; a deleted file's
versions by name."""

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

from rewind_ls.core.capture.recorder import Recorder  # noqa: E402
from rewind_ls.core.store import Store  # noqa: E402

workspace = base.workspace
editor = base.editor

pytestmark = pytest.mark.editor


def _by_hand(ws: Path, home: Path, rel: str, text: str | None) -> None:
    """An edit between turns (recorded as the watcher or the next hook's scan records it)."""
    if text is None:
        (ws / rel).unlink()
    else:
        (ws / rel).write_text(text)
    with Store.open(str(ws), str(home)) as store:
        Recorder(store).attribute_outside_changes()


def test_history_lists_versions_and_restores_the_persons_edit(
    workspace: tuple[Path, Path], editor: Any
) -> None:
    ws, home = workspace
    (ws / "a.txt").write_text("a0\n")
    make_agent(ws, home).turn("first prompt", {"a.txt": "a1\n"})
    _by_hand(ws, home, "a.txt", "mine\na1\n")
    _by_hand(ws, home, "a.txt", "a1\n")  # overwritten (a checkout, an agent's own restore)
    ed = editor()
    ed.nv.lua("require('rewind.config').set({ cmd = require('rewind.config').options.cmd })")
    ed.open("a.txt")
    last = ed.run("Rewind history", answers=["Cancel"])
    assert last["status"] == "cancelled", last
    (picker,) = [s for s in ed.selects() if s["kind"] == "rewind.history"]
    labels = picker["labels"]
    assert [label.split()[2] for label in labels] == ["outside", "outside", "agent", "first"], (
        labels
    )
    ed.clear_records()
    # The person's edit: the second row (newest first); previewed, then restored.
    mine = labels[1].split()[3]
    last = ed.run("Rewind history", answers=[mine, "Restore a.txt to version"])
    assert last["status"] == "applied", (last["message"], ed.buffers(), read(ws, "a.txt"))
    assert read(ws, "a.txt") == b"mine\na1\n"
    assert ed.buffers()["a.txt"] == {"text": "mine\na1\n", "modified": False}
    last = ed.run("Rewind undo", answers=["nothing is written before this"])
    assert last["status"] == "applied", last
    assert read(ws, "a.txt") == b"a1\n"


def test_history_of_a_deleted_file(workspace: tuple[Path, Path], editor: Any) -> None:
    ws, home = workspace
    (ws / "keep.txt").write_text("k\n")
    make_agent(ws, home).turn("first prompt", {"gone.txt": "made by the agent\n"})
    _by_hand(ws, home, "gone.txt", None)
    ed = editor()
    ed.open("keep.txt")
    last = ed.run("Rewind history gone.txt", answers=["agent"])
    assert last["status"] == "applied", last
    assert read(ws, "gone.txt") == b"made by the agent\n"
