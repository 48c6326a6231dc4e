"""A revert whose changes overlap later edits, in a real VS Code: the dialog offers only what can work
(conflict markers, or rewinding that file; never Overwrite), names the file and the real reason; the
markers land in the editor and on disk (VS Code's conflict lenses show above them); the undo takes
the revert back."""

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
    agent = FakeClaude(ws, home)
    agent.turn("first prompt: B1", {"m.txt": "a\nB1\nc\n"})
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
            "do": "dialog",
            "label": "merge-dialog",
            "button": "Write Conflict Markers",
            "screenshot": "vscode-revert-merge-dialog.png",
        },
        {"do": "wait-disk", "file": "m.txt", "content": MARKED},
        {"do": "wait-for", "selector": MESSAGE, "text": "conflict markers in m.txt"},
        {"do": "wait-for", "selector": ".codelens-decoration a", "text": "Accept Current Change"},
        {"do": "screenshot", "name": "vscode-revert-markers.png"},
        {"do": "observe", "label": "marked", "files": ["m.txt"]},
        {"do": "command", "title": "Rewind: Undo Last Rewind"},
        {"do": "pick", "row": PREVIEW_GO, "filter": ""},
        {"do": "wait-disk", "file": "m.txt", "content": "a\nB2\nc\n"},
    ]
    result = _run_vscode(tmp_path, ws, agent, steps)
    dialog = _obs(result, "merge-dialog")
    buttons = {b.strip() for b in dialog["buttons"]}
    assert "Overwrite" not in buttons, dialog
    assert {"Write Conflict Markers", "Rewind m.txt Instead"} <= buttons, dialog
    assert "m.txt" in dialog["text"] and "later changes overlap" in dialog["text"], dialog
    assert "last saw" not in dialog["text"], dialog
    marked = _obs(result, "marked")["files"]["m.txt"]
    assert marked["disk"] == MARKED and marked["editor"].strip() == MARKED.strip(), marked


def test_revert_with_overlaps_rewinds_the_file_instead_in_vscode(tmp_path: Path) -> None:
    ws, agent = _overlapping(tmp_path)
    steps: list[dict[str, Any]] = [
        {"do": "open-workbench"},
        {"do": "wait-status", "text": "2 turns"},
        {"do": "command", "title": "Rewind: Revert Turn..."},
        {"do": "pick", "row": "#1", "filter": "first prompt"},
        {"do": "dialog", "label": "merge-dialog", "button": "Rewind m.txt Instead"},
        {"do": "pick", "row": PREVIEW_GO, "filter": ""},
        {"do": "wait-disk", "file": "m.txt", "content": "a\nb\nc\n"},
    ]
    _run_vscode(tmp_path, ws, agent, steps)
