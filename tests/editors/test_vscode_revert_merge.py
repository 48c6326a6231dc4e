"""A revert whose changes overlap later edits, in a real VS Code: the question is inside the revert's
preview (issue 36 items 5, 6): every file of the turn listed, the overlapping one marked with the real
reason, and only what can work (conflict markers for the whole revert, or rewinding that file instead,
saying the turn's other files stay; never Overwrite); one decision, no second dialog. The markers land
in the editor and on disk (VS Code's conflict lenses show above them); the undo takes the revert
back."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).resolve().parent
for p in (HERE, HERE.parent):
    if str(p) not in sys.path:
        sys.path.insert(0, str(p))

from support.agent import FakeClaude  # noqa: E402
from test_vscode_e2e import MESSAGE, PREVIEW_GO, _obs, _run_vscode  # noqa: E402

pytestmark = pytest.mark.editor

MARKED = "a\n<<<<<<< now\nB2\n||||||| turn #1\nB1\n=======\nb\n>>>>>>> before turn #1\nc\n"


def _overlapping(tmp_path: Path) -> tuple[Path, FakeClaude]:
    ws = tmp_path / "ws"
    home = tmp_path / "rewind-home"
    ws.mkdir()
    home.mkdir()
    (ws / "m.txt").write_text("a\nb\nc\n")
    (ws / "o.txt").write_text("o0\n")
    agent = FakeClaude(ws, home)
    agent.turn("first prompt: B1", {"m.txt": "a\nB1\nc\n", "o.txt": "o1\n"})
    agent.turn("second prompt: B2", {"m.txt": "a\nB2\nc\n"})
    return ws, agent


def test_revert_with_overlaps_writes_markers_in_vscode(tmp_path: Path) -> None:
    ws, agent = _overlapping(tmp_path)
    steps: list[dict[str, Any]] = [
        {"do": "open-workbench"},
        {"do": "wait-status", "text": "2 turns"},
        {"do": "command", "title": "Rewind: Revert Turn..."},
        {"do": "pick", "row": "#1", "filter": "first prompt"},
        {
            "do": "pick",
            "row": "Write Conflict Markers",
            "filter": "",
            "screenshot": "vscode-revert-merge-dialog.png",
        },
        {"do": "wait-disk", "file": "m.txt", "content": MARKED},
        {"do": "wait-disk", "file": "o.txt", "content": "o0\n"},
        {"do": "wait-for", "selector": MESSAGE, "text": "conflict markers in m.txt"},
        {"do": "observe-texts", "label": "markers-note", "selector": MESSAGE, "settleMs": 300},
        {"do": "wait-for", "selector": ".codelens-decoration a", "text": "Accept Current Change"},
        {"do": "screenshot", "name": "vscode-revert-markers.png"},
        {"do": "observe", "label": "marked", "files": ["m.txt"]},
        {"do": "command", "title": "Rewind: Undo Last Rewind"},
        {"do": "pick", "row": PREVIEW_GO, "filter": ""},
        {"do": "wait-disk", "file": "m.txt", "content": "a\nB2\nc\n"},
        {"do": "wait-disk", "file": "o.txt", "content": "o1\n"},
    ]
    result = _run_vscode(tmp_path, ws, agent, steps)
    rows = _obs(result, "picker:Write Conflict Markers")["rows"]
    assert not any("Overwrite" in r for r in rows), rows
    assert "Write Conflict Markers" in rows[0] and "revert all 2 files" in rows[0], rows
    assert "Rewind m.txt Instead" in rows[1], rows
    # Every file of the turn, the overlapping one marked with the real reason.
    assert any("m.txt" in r and "conflict" in r and "later changes overlap" in r for r in rows), (
        rows
    )
    assert any("o.txt" in r and "modify" in r and "conflict" not in r for r in rows), rows
    assert not any("last saw" in r for r in rows), rows
    # The file is already saved with the markers: the note says so (issue 36 item 12).
    note = " ".join(_obs(result, "markers-note")["texts"])
    assert "saved with them" in note and "then save again" in note, note
    marked = _obs(result, "marked")["files"]["m.txt"]
    assert marked["disk"] == MARKED and marked["editor"].strip() == MARKED.strip(), marked


def test_revert_with_overlaps_rewinds_the_file_instead_in_vscode(tmp_path: Path) -> None:
    ws, agent = _overlapping(tmp_path)
    steps: list[dict[str, Any]] = [
        {"do": "open-workbench"},
        {"do": "wait-status", "text": "2 turns"},
        {"do": "command", "title": "Rewind: Revert Turn..."},
        {"do": "pick", "row": "#1", "filter": "first prompt"},
        # One decision: the row says what it does (the turn's other file stays) and does it.
        {"do": "pick", "row": "Rewind m.txt Instead", "filter": "", "seek": True},
        {"do": "wait-disk", "file": "m.txt", "content": "a\nb\nc\n"},
        {"do": "sleep", "ms": 1000},
        {"do": "observe-texts", "label": "report", "selector": MESSAGE, "settleMs": 500},
    ]
    result = _run_vscode(tmp_path, ws, agent, steps)
    rows = _obs(result, "picker:Rewind m.txt Instead")["rows"]
    assert any("Rewind m.txt Instead" in r and "other 1 file stay" in r for r in rows), rows
    assert (ws / "o.txt").read_text() == "o1\n"  # as the row said
    report = " ".join(_obs(result, "report")["texts"])
    assert "m.txt" in report and "every path already matches" not in report, report
