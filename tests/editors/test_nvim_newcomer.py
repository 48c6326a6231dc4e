"""The whole path a newcomer takes in a real Neovim, previews on (a plain setup()), issue 36: review a
turn, rewind, undo, revert one change (the code action), undo, then a conflict on undo answered in
the editor. After every step the bytes on disk and the buffer are checked; at the end every file is
byte-exact as before and the buffer as before. Real Neovim, real server, turns recorded through the
real Claude Code hook."""

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

BASE = "".join(f"line {i}\n" for i in range(1, 31))
TURN1 = BASE.replace("line 2\n", "TWO\n").replace("line 15\n", "FIFTEEN\n")
TURN2 = TURN1.replace("line 8\n", "EIGHT\n")
NOTES = b"notes 1\n"


def test_newcomer_path_in_neovim(workspace: tuple[Path, Path], editor: Any) -> None:
    ws, home = workspace
    (ws / "f.txt").write_text(BASE)
    agent = make_agent(ws, home)
    agent.turn("make the numbers words", {"f.txt": TURN1, "notes.txt": NOTES})
    agent.turn("and eight", {"f.txt": TURN2})
    before = {p.name: p.read_bytes() for p in ws.iterdir() if p.is_file()}
    ed = editor()
    ed.nv.lua("require('rewind.config').set({ cmd = require('rewind.config').options.cmd })")
    ed.open("f.txt")

    def state() -> tuple[bytes | None, dict[str, Any]]:
        return read(ws, "f.txt"), ed.buffers()["f.txt"]

    # Review turn 1: its hunks in the quickfix list.
    ed.nv.command("Rewind review 1")
    ed.nv.wait_for("#vim.fn.getqflist() >= 2", what="turn 1 in the quickfix list")
    ed.nv.command("cclose")
    # Rewind to turn 1, previewed.
    assert ed.run("Rewind 1 code", answers=["Rewind 2 files"])["status"] == "applied"
    assert state() == (BASE.encode(), {"text": BASE, "modified": False})
    assert read(ws, "notes.txt") is None
    # Undo, previewed.
    assert ed.run("Rewind undo", answers=["Undo 2 files"])["status"] == "applied"
    assert state() == (TURN2.encode(), {"text": TURN2, "modified": False})
    assert read(ws, "notes.txt") == NOTES
    # Revert one change: the code action on FIFTEEN, previewed, the buffer written.
    ed.nv.command("call cursor(15, 1)")
    ed.clear_records()
    seq = ed.status()["seq"]
    ed.nv.lua("_G.rewind_test.answers = { 'Revert 1 file' }")
    ed.nv.lua(
        "vim.lsp.buf.code_action({ apply = true, filter = function(a)"
        " return a.title:find('Revert this change', 1, true) ~= nil end })"
    )
    ed.nv.wait_for(
        f"require('rewind').status().seq > {seq} and require('rewind').status().busy == nil",
        what="the code action's restore",
    )
    reverted = TURN2.replace("FIFTEEN\n", "line 15\n")
    assert state() == (reverted.encode(), {"text": reverted, "modified": False})
    # Undo it.
    assert ed.run("Rewind undo", answers=["Undo 1 file"])["status"] == "applied"
    assert state() == (TURN2.encode(), {"text": TURN2, "modified": False})
    # A conflict on undo: rewind, the person writes an edit, the undo would overwrite it.
    assert ed.run("Rewind 1 code", answers=["Rewind 2 files"])["status"] == "applied"
    ed.set_buffer("f.txt", "mine\n" + BASE)
    ed.nv.command("write")
    last = ed.run("Rewind undo", answers=["Overwrite"])
    assert last["status"] == "applied", last
    ask = [s for s in ed.selects() if s["kind"] == "rewind.conflicts"][-1]
    assert any(lab.startswith("conflict f.txt") for lab in ask["labels"]), ask
    assert state() == (TURN2.encode(), {"text": TURN2, "modified": False})
    # Nothing lost: the undo of that undo brings the person's write back...
    assert ed.run("Rewind undo", answers=["Undo 2 files"])["status"] == "applied"
    assert state() == (b"mine\n" + BASE.encode(), {"text": "mine\n" + BASE, "modified": False})
    # ...and its undo the agent's state again: every file byte-exact as before, the buffer too.
    assert ed.run("Rewind undo", answers=["Undo 2 files"])["status"] == "applied"
    assert {p.name: p.read_bytes() for p in ws.iterdir() if p.is_file()} == before
    assert ed.buffers()["f.txt"] == {"text": TURN2, "modified": False}
    said = [n["msg"] for n in ed.notes()]
    for s in ed.selects():
        said += [s["prompt"], *s["labels"]]
    assert not [m for m in said if "--" in m or "rewind.undo" in m], said
