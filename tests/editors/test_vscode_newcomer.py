"""The whole path a newcomer takes in a real VS Code (code-server in Chromium, the packaged extension,
the real server), issue 36: review a turn, rewind, undo, revert one change (the code action), undo,
then a conflict on undo answered in the editor. Every step through the UI as a person works it; the
disk and the editor are observed along the way, and at the end every file is byte-exact as before
and the tab shows what it showed, saved."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
for p in (HERE, HERE.parent):
    if str(p) not in sys.path:
        sys.path.insert(0, str(p))

from support.agent import FakeClaude  # noqa: E402
from test_vscode_e2e import MESSAGE, PREVIEW_GO, _obs, _run_vscode  # noqa: E402

pytestmark = pytest.mark.editor

BASE = "".join(f"line {i}\n" for i in range(1, 31))
TURN1 = BASE.replace("line 2\n", "TWO\n").replace("line 15\n", "FIFTEEN\n")
TURN2 = TURN1.replace("line 8\n", "EIGHT\n")
NOTES = "notes 1\n"
GO = {"do": "pick", "row": PREVIEW_GO, "filter": ""}


def test_newcomer_path_in_vscode(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    home = tmp_path / "rewind-home"
    ws.mkdir()
    home.mkdir()
    (ws / "f.txt").write_text(BASE)
    agent = FakeClaude(ws, home)
    agent.turn("make the numbers words", {"f.txt": TURN1, "notes.txt": NOTES})
    agent.turn("and eight", {"f.txt": TURN2})
    before = {p.name: p.read_bytes() for p in ws.iterdir() if p.is_file()}
    reverted = TURN2.replace("FIFTEEN\n", "line 15\n")
    steps = [
        {"do": "open-workbench"},
        {"do": "wait-status", "text": "2 turns"},
        # Review turn 1 (the multi-file diff), then close it.
        {"do": "command", "title": "Rewind: Review Turn..."},
        {"do": "pick", "row": "#1", "filter": "make the numbers"},
        {"do": "wait-for", "selector": ".tabs-container .tab", "text": "Turn #1"},
        {"do": "sleep", "ms": 1000},
        {"do": "command", "title": "View: Close All Editors"},
        {"do": "open", "file": "f.txt"},
        # Rewind to turn 1, then undo.
        {"do": "command", "title": "Rewind: Rewind to Turn..."},
        {"do": "pick", "row": "#1", "filter": "make the numbers"},
        {"do": "pick", "row": "Code only"},
        GO,
        {"do": "wait-disk", "file": "f.txt", "content": BASE},
        {"do": "wait-disk", "file": "notes.txt", "content": None},
        {"do": "wait-clean", "file": "f.txt"},
        {"do": "command", "title": "Rewind: Undo Last Rewind"},
        GO,
        {"do": "wait-disk", "file": "f.txt", "content": TURN2},
        {"do": "wait-disk", "file": "notes.txt", "content": NOTES},
        {"do": "wait-editor", "file": "f.txt", "text": TURN2},
        {"do": "wait-clean", "file": "f.txt"},
        # Revert one change: the code action on FIFTEEN, previewed, saved.
        {"do": "focus", "file": "f.txt"},
        {"do": "press", "key": "Control+g"},
        {"do": "type-text", "text": "15"},
        {"do": "press", "key": "Enter"},
        {"do": "sleep", "ms": 500},
        {"do": "press", "key": "Control+."},
        {
            "do": "wait-for",
            "selector": ".action-widget .monaco-list-row.focused",
            "text": "Revert this change",
        },
        {"do": "press", "key": "Enter"},
        GO,
        {"do": "wait-disk", "file": "f.txt", "content": reverted},
        {"do": "wait-clean", "file": "f.txt"},
        {"do": "observe", "label": "reverted", "files": ["f.txt"]},
        {"do": "command", "title": "Rewind: Undo Last Rewind"},
        GO,
        {"do": "wait-disk", "file": "f.txt", "content": TURN2},
        {"do": "wait-clean", "file": "f.txt"},
        # A conflict on undo: rewind, the person saves an edit, the undo asks in its preview.
        {"do": "command", "title": "Rewind: Rewind to Turn..."},
        {"do": "pick", "row": "#1", "filter": "make the numbers"},
        {"do": "pick", "row": "Code only"},
        GO,
        {"do": "wait-disk", "file": "f.txt", "content": BASE},
        {"do": "wait-clean", "file": "f.txt"},
        {"do": "type", "file": "f.txt", "text": "mine\n"},
        {"do": "press", "key": "Control+s"},
        {"do": "wait-disk", "file": "f.txt", "content": "mine\n" + BASE},
        {"do": "wait-clean", "file": "f.txt"},
        {"do": "sleep", "ms": 800},
        {"do": "command", "title": "Rewind: Undo Last Rewind"},
        {"do": "pick", "row": "Overwrite", "filter": "", "seek": True},
        {"do": "wait-disk", "file": "f.txt", "content": TURN2},
        {"do": "wait-clean", "file": "f.txt"},
        # Nothing lost: the undo of that undo brings the save back, its undo the agent's state.
        {"do": "command", "title": "Rewind: Undo Last Rewind"},
        GO,
        {"do": "wait-disk", "file": "f.txt", "content": "mine\n" + BASE},
        {"do": "command", "title": "Rewind: Undo Last Rewind"},
        GO,
        {"do": "wait-disk", "file": "f.txt", "content": TURN2},
        {"do": "wait-disk", "file": "notes.txt", "content": NOTES},
        {"do": "wait-editor", "file": "f.txt", "text": TURN2},
        {"do": "wait-clean", "file": "f.txt"},
        {"do": "observe", "label": "end", "files": ["f.txt"]},
        {"do": "observe-texts", "label": "messages", "selector": MESSAGE, "settleMs": 300},
    ]
    result = _run_vscode(tmp_path, ws, agent, steps)
    assert _obs(result, "reverted")["files"]["f.txt"]["dirty"] is False
    end = _obs(result, "end")["files"]["f.txt"]
    assert end["editor"].strip() == TURN2.strip() and end["dirty"] is False, end
    assert {p.name: p.read_bytes() for p in ws.iterdir() if p.is_file()} == before
    said = " ".join(_obs(result, "messages")["texts"])
    assert "--" not in said and "rewind.undo" not in said, said
