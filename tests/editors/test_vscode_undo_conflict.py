"""An undo that meets a conflict asks, in a real VS Code (issue 36, items 2 and 5).

After a rewind the person saves an edit of a file it restored; "Rewind: Undo Last Rewind" would
overwrite that save. The undo's preview lists every file of the undo with the conflict marked and
asks the question there (Skip Conflicts / Overwrite; Esc cancels), as a rewind does: no dead end,
no message naming a command-line flag. Overwrite brings back every file; the undo of that undo
brings back the person's save: nothing is lost."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).resolve().parent
for p in (HERE, HERE.parent):
    if str(p) not in sys.path:
        sys.path.insert(0, str(p))

from test_vscode_e2e import (  # noqa: E402
    A0,
    A2,
    B1,
    MESSAGE,
    PREVIEW_GO,
    _obs,
    _run_vscode,
    _two_turns,
)

pytestmark = pytest.mark.editor

MINE = "mine\n" + A0


def _rewound_then_saved() -> list[dict[str, Any]]:
    return [
        {"do": "open-workbench"},
        {"do": "wait-status", "text": "2 turns"},
        {"do": "open", "file": "a.txt"},
        {"do": "command", "title": "Rewind: Rewind to Turn..."},
        {"do": "pick", "row": "#1", "filter": "first prompt"},
        {"do": "pick", "row": "Code only"},
        {"do": "pick", "row": PREVIEW_GO, "filter": ""},
        {"do": "wait-disk", "file": "a.txt", "content": A0},
        {"do": "wait-disk", "file": "b.txt", "content": None},
        {"do": "wait-clean", "file": "a.txt"},
        # The person's own edit, saved: the undo must not overwrite it unasked.
        {"do": "type", "file": "a.txt", "text": "mine\n"},
        {"do": "press", "key": "Control+s"},
        {"do": "wait-clean", "file": "a.txt"},
        {"do": "wait-disk", "file": "a.txt", "content": MINE},
        {"do": "sleep", "ms": 1000},
    ]


def test_undo_over_a_saved_edit_asks_in_the_preview_then_overwrites(tmp_path: Path) -> None:
    ws, _, agent = _two_turns(tmp_path)
    steps = [
        *_rewound_then_saved(),
        {"do": "command", "title": "Rewind: Undo Last Rewind"},
        {
            "do": "pick",
            "row": "Overwrite",
            "filter": "",
            "seek": True,
            "screenshot": "vscode-undo-conflict.png",
        },
        {"do": "wait-disk", "file": "a.txt", "content": A2},
        {"do": "wait-disk", "file": "b.txt", "content": B1},
        {"do": "wait-editor", "file": "a.txt", "text": A2},
        {"do": "wait-clean", "file": "a.txt"},
        {"do": "observe-texts", "label": "report", "selector": MESSAGE, "settleMs": 1000},
        # The undo of that undo: the person's save comes back.
        {"do": "command", "title": "Rewind: Undo Last Rewind"},
        {"do": "pick", "row": PREVIEW_GO, "filter": ""},
        {"do": "wait-disk", "file": "a.txt", "content": MINE},
        {"do": "wait-disk", "file": "b.txt", "content": None},
    ]
    result = _run_vscode(tmp_path, ws, agent, steps)
    rows = _obs(result, "picker:Overwrite")["rows"]
    assert any("Skip Conflicts" in r and "1 file" in r for r in rows), rows
    # Every file of the undo is listed, the conflicting one marked.
    assert any("a.txt" in r and "conflict" in r for r in rows), rows
    assert any("b.txt" in r and "create" in r and "conflict" not in r for r in rows), rows
    report = " ".join(_obs(result, "report")["texts"])
    assert "--" not in report and "rewind." not in report, report
    assert (ws / "a.txt").read_text() == MINE
    assert not (ws / "b.txt").exists()


def test_undo_over_a_saved_edit_skip_conflicts_keeps_the_save(tmp_path: Path) -> None:
    ws, _, agent = _two_turns(tmp_path)
    steps = [
        *_rewound_then_saved(),
        {"do": "command", "title": "Rewind: Undo Last Rewind"},
        {"do": "pick", "row": "Skip Conflicts", "filter": ""},
        {"do": "wait-disk", "file": "b.txt", "content": B1},
        {"do": "sleep", "ms": 1000},
        {"do": "observe", "label": "skipped", "files": ["a.txt"]},
        {"do": "observe-texts", "label": "report", "selector": MESSAGE, "settleMs": 500},
    ]
    result = _run_vscode(tmp_path, ws, agent, steps)
    skipped = _obs(result, "skipped")["files"]["a.txt"]
    assert skipped["disk"] == MINE and not skipped["dirty"], skipped
    report = " ".join(_obs(result, "report")["texts"])
    assert "--" not in report, report
    assert (ws / "a.txt").read_text() == MINE and (ws / "b.txt").read_text() == B1
