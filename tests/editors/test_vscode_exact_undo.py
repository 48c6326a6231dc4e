"""Exact undo over an unsaved buffer in a real VS Code (code-server in Chromium, the packaged
extension, the real server): the person types in a.txt without saving, rewinds over it (Overwrite),
then undoes, with VS Code's own undo (Ctrl+Z) first or not. After every step the test reads the
editor's text, its dirty mark and the bytes on disk: the undo ends with the disk at its last saved
bytes and the tab holding the unsaved text, still unsaved, and saving it then is an ordinary save."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).resolve().parent
for p in (HERE, HERE.parent):
    if str(p) not in sys.path:
        sys.path.insert(0, str(p))

from test_vscode_e2e import A0, A2, MESSAGE, PREVIEW_GO, _obs, _run_vscode, _two_turns  # noqa: E402

pytestmark = pytest.mark.editor

MINE = "mine\n" + A2  # the person's unsaved text in a.txt


def _rewind_over_unsaved() -> list[dict[str, Any]]:
    return [
        {"do": "open-workbench"},
        {"do": "wait-status", "text": "2 turns"},
        {"do": "open", "file": "a.txt"},
        {"do": "type", "file": "a.txt", "text": "mine\n"},
        {"do": "observe", "label": "before", "files": ["a.txt"]},
        {"do": "command", "title": "Rewind: Rewind to Turn..."},
        {"do": "pick", "row": "#1", "filter": "first prompt"},
        {"do": "pick", "row": "Code only"},
        {"do": "pick", "row": "Overwrite", "filter": "", "seek": True},
        {"do": "wait-disk", "file": "a.txt", "content": A0},
        {"do": "wait-clean", "file": "a.txt"},
        {"do": "observe", "label": "rewound", "files": ["a.txt"]},
    ]


def _check_start(result: dict[str, Any]) -> None:
    before = _obs(result, "before")["files"]["a.txt"]
    assert before["disk"] == A2 and before["dirty"] and before["editor"].strip() == MINE.strip()
    rewound = _obs(result, "rewound")["files"]["a.txt"]
    assert rewound["disk"] == A0 and not rewound["dirty"], rewound


def test_undo_last_rewind_returns_unsaved_text_unsaved_in_vscode(tmp_path: Path) -> None:
    ws, _, agent = _two_turns(tmp_path)
    steps = [
        *_rewind_over_unsaved(),
        {"do": "command", "title": "Rewind: Undo Last Rewind"},
        {"do": "pick", "row": PREVIEW_GO, "filter": ""},
        {"do": "wait-disk", "file": "a.txt", "content": A2},
        {"do": "wait-editor", "file": "a.txt", "text": MINE},
        {"do": "wait-for", "selector": MESSAGE, "text": "a.txt"},
        {"do": "observe-texts", "label": "undo-report", "selector": MESSAGE, "settleMs": 500},
        {"do": "observe", "label": "undone", "files": ["a.txt"]},
        {"do": "screenshot", "name": "vscode-exact-undo.png"},
    ]
    result = _run_vscode(tmp_path, ws, agent, steps)
    _check_start(result)
    undone = _obs(result, "undone")["files"]["a.txt"]
    assert undone["disk"] == A2, undone  # the last saved bytes, not the unsaved text
    assert undone["editor"].strip() == MINE.strip() and undone["dirty"] is True, undone
    report = " ".join(_obs(result, "undo-report")["texts"])
    assert "unsaved" in report and "a.txt" in report, report
    assert (ws / "a.txt").read_bytes() == A2.encode()


def test_ctrl_z_first_then_undo_last_rewind_in_vscode(tmp_path: Path) -> None:
    ws, _, agent = _two_turns(tmp_path)
    steps = [
        *_rewind_over_unsaved(),
        {"do": "focus", "file": "a.txt"},
        {"do": "press", "key": "Control+z"},
        {"do": "wait-editor", "file": "a.txt", "text": MINE},
        {"do": "observe", "label": "ctrl-z", "files": ["a.txt"]},
        {"do": "command", "title": "Rewind: Undo Last Rewind"},
        {"do": "pick", "row": PREVIEW_GO, "filter": ""},
        {"do": "wait-disk", "file": "a.txt", "content": A2},
        {"do": "observe", "label": "undone", "files": ["a.txt"]},
        # Saving now is an ordinary save: no "the content of the file is newer" dialog.
        {"do": "focus", "file": "a.txt"},
        {"do": "press", "key": "Control+s"},
        {"do": "wait-clean", "file": "a.txt"},
        {"do": "wait-disk", "file": "a.txt", "content": MINE},
        {"do": "observe", "label": "saved", "files": ["a.txt"]},
    ]
    result = _run_vscode(tmp_path, ws, agent, steps)
    _check_start(result)
    ctrl_z = _obs(result, "ctrl-z")["files"]["a.txt"]
    assert ctrl_z["disk"] == A0 and ctrl_z["dirty"], ctrl_z  # the half state the issue reported
    undone = _obs(result, "undone")["files"]["a.txt"]
    assert undone["disk"] == A2, undone
    assert undone["editor"].strip() == MINE.strip() and undone["dirty"] is True, undone
    saved = _obs(result, "saved")["files"]["a.txt"]
    assert saved["disk"] == MINE and not saved["dirty"], saved
