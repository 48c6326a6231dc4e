"""A file a review showed, deleted by a rewind, comes back on undo in a real VS Code (issue 36,
item 1). "Review Turn" opens the turn's files in the multi-file diff editor; VS Code keeps those
documents open (no didClose), also after the review's tab is closed and after a restore deleted
the file. The undo's preview must list the file and the undo must recreate it on disk."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
for p in (HERE, HERE.parent):
    if str(p) not in sys.path:
        sys.path.insert(0, str(p))

from support.agent import FakeClaude  # noqa: E402
from test_vscode_e2e import A0, A1, A2, PREVIEW_GO, _run_vscode  # noqa: E402

pytestmark = pytest.mark.editor

CONFIG = "[tool]\nname = 'demo'\n"


def test_undo_recreates_a_file_the_review_showed_in_vscode(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    home = tmp_path / "rewind-home"
    ws.mkdir()
    home.mkdir()
    (ws / "a.txt").write_text(A0)
    agent = FakeClaude(ws, home)
    agent.turn("first prompt: bump alpha", {"a.txt": A1})
    agent.turn("second prompt: add a config", {"a.txt": A2, "config.toml": CONFIG})
    steps = [
        {"do": "open-workbench"},
        {"do": "wait-status", "text": "2 turns"},
        {"do": "command", "title": "Rewind: Review Turn..."},
        {"do": "pick", "row": "#2", "filter": "add a config"},
        {"do": "wait-for", "selector": ".tabs-container .tab", "text": "Turn #2"},
        {"do": "sleep", "ms": 1500},
        {"do": "command", "title": "View: Close All Editors"},
        {"do": "sleep", "ms": 500},
        {"do": "command", "title": "Rewind: Rewind to Turn..."},
        {"do": "pick", "row": "#2", "filter": "add a config"},
        {"do": "pick", "row": "Code only"},
        {"do": "pick", "row": PREVIEW_GO, "filter": ""},
        {"do": "wait-disk", "file": "config.toml", "content": None},
        {"do": "wait-disk", "file": "a.txt", "content": A1},
        {"do": "sleep", "ms": 1000},
        {"do": "command", "title": "Rewind: Undo Last Rewind"},
        {
            "do": "pick",
            "row": PREVIEW_GO,
            "filter": "",
            "screenshot": "vscode-undo-after-review.png",
        },
        {"do": "wait-disk", "file": "a.txt", "content": A2},
        {"do": "wait-disk", "file": "config.toml", "content": CONFIG},
    ]
    result = _run_vscode(tmp_path, ws, agent, steps)
    previews = [o["rows"] for o in result["observations"] if o["label"] == f"picker:{PREVIEW_GO}"]
    rewind_rows, undo_rows = previews
    assert any("config.toml" in r and "delete" in r for r in rewind_rows), rewind_rows
    assert any("config.toml" in r for r in undo_rows), undo_rows
    assert (ws / "config.toml").read_text() == CONFIG
    assert (ws / "a.txt").read_text() == A2
