"""The preview before a restore in a real VS Code (code-server, the packaged extension, the real server):
a rewind without conflicts, an undo and a one-file rewind list their files with action and +/- lines,
Enter on a file opens its diff, Esc writes nothing, the restore runs only from the preview's first row;
with rewind.confirmRestore off the restore is written at once."""

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
    PREVIEW_GO,
    _obs,
    _run_vscode,
    _settings,
    _two_turns,
)
from vscode_support import python_for_server  # noqa: E402

pytestmark = pytest.mark.editor


def test_preview_lists_files_opens_a_diff_and_esc_writes_nothing(tmp_path: Path) -> None:
    ws, _, agent = _two_turns(tmp_path)
    steps: list[dict[str, Any]] = [
        {"do": "open-workbench"},
        {"do": "wait-status", "text": "2 turns"},
        {"do": "command", "title": "Rewind: Rewind to Turn..."},
        {"do": "pick", "row": "#1", "filter": "first prompt"},
        {"do": "pick", "row": "Code only"},
        # Enter on a file row: its diff (now <-> after the restore); the preview stays.
        {"do": "pick", "row": "a.txt", "filter": "a.txt", "screenshot": "vscode-preview-rows.png"},
        {"do": "observe-diff", "label": "preview-diff", "screenshot": "vscode-preview-diff.png"},
        {"do": "press", "key": "Escape"},
        {"do": "observe", "label": "after-esc", "files": ["a.txt", "b.txt"]},
        # Again, and the first row: written.
        {"do": "command", "title": "Rewind: Rewind to Turn..."},
        {"do": "pick", "row": "#1", "filter": "first prompt"},
        {"do": "pick", "row": "Code only"},
        {"do": "pick", "row": PREVIEW_GO, "filter": ""},
        {"do": "wait-disk", "file": "a.txt", "content": A0},
        {"do": "wait-disk", "file": "b.txt", "content": None},
        # The undo is previewed too, named after the restore it undoes.
        {"do": "command", "title": "Rewind: Undo Last Rewind"},
        {"do": "pick", "row": "b.txt", "filter": "b.txt"},
        {"do": "press", "key": "Escape"},
        {"do": "observe", "label": "after-undo-esc", "files": ["a.txt", "b.txt"]},
        {"do": "command", "title": "Rewind: Undo Last Rewind"},
        {"do": "pick", "row": PREVIEW_GO, "filter": ""},
        {"do": "wait-disk", "file": "a.txt", "content": A2},
        {"do": "wait-disk", "file": "b.txt", "content": B1},
    ]
    result = _run_vscode(tmp_path, ws, agent, steps)
    rows = _obs(result, "picker:a.txt")["rows"]
    assert rows and "Rewind" in rows[0] and PREVIEW_GO in rows[0], rows
    assert any("a.txt" in r and "modify +1 -1" in r for r in rows), rows
    assert any("b.txt" in r and "delete" in r for r in rows), rows
    diff = _obs(result, "preview-diff")
    assert diff["original"].strip() == A2.strip(), diff  # now
    assert diff["modified"].strip() == A0.strip(), diff  # after the restore
    assert "now ↔ after the restore" in diff["title"], diff
    kept = _obs(result, "after-esc")["files"]
    assert kept["a.txt"]["disk"] == A2 and kept["b.txt"]["disk"] == B1, kept
    undo_rows = _obs(result, "picker:b.txt")["rows"]
    assert any("b.txt" in r and "create" in r for r in undo_rows), undo_rows
    kept = _obs(result, "after-undo-esc")["files"]
    assert kept["a.txt"]["disk"] == A0 and kept["b.txt"]["disk"] is None, kept


def test_preview_off_restores_at_once(tmp_path: Path) -> None:
    ws, _, agent = _two_turns(tmp_path)
    settings = {**_settings(agent, python_for_server()), "rewind.confirmRestore": False}
    steps: list[dict[str, Any]] = [
        {"do": "open-workbench"},
        {"do": "wait-status", "text": "2 turns"},
        {"do": "command", "title": "Rewind: Rewind to Turn..."},
        {"do": "pick", "row": "#1", "filter": "first prompt"},
        {"do": "pick", "row": "Code only"},
        {"do": "wait-disk", "file": "a.txt", "content": A0},
        {"do": "wait-disk", "file": "b.txt", "content": None},
    ]
    _run_vscode(tmp_path, ws, agent, steps, settings=settings)
