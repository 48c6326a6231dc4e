"""Review in a real VS Code (code-server 4.100 in Chromium, the packaged extension, no client code
for the actions themselves): Ctrl+. on a line of a turn of three hunks offers "Revert this change
(turn 1: ...)"; the action runs the extension's restore flow (issue 36 item 3): the preview quick
pick like every restore, the hunk reverted in the editor (later edits of other lines stay) and
saved like after every restore, a report without protocol ids; then "Rewind: Undo Last Rewind"
brings it back; the disk bytes are checked at each step."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
for p in (HERE, HERE.parent):
    if str(p) not in sys.path:
        sys.path.insert(0, str(p))

from support.agent import FakeClaude  # noqa: E402
from test_vscode_e2e import PREVIEW_GO, _obs, _run_vscode  # noqa: E402

pytestmark = pytest.mark.editor

BASE = "".join(f"line {i}\n" for i in range(1, 31))
TURN1 = BASE.replace("line 2\n", "TWO\n").replace("line 15\n", "FIFTEEN\n")
TURN1 = TURN1.replace("line 28\n", "X28\n")
TURN2 = TURN1.replace("line 8\n", "EIGHT\n")
NOTE = ".notifications-toasts .notification-list-item"


def test_code_action_reverts_one_hunk_then_undo_in_vscode(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    home = tmp_path / "rewind-home"
    ws.mkdir()
    home.mkdir()
    (ws / "f.txt").write_text(BASE)
    agent = FakeClaude(ws, home)
    agent.turn("make the numbers words", {"f.txt": TURN1})
    agent.turn("and eight", {"f.txt": TURN2})
    want = TURN2.replace("FIFTEEN\n", "line 15\n")
    steps = [
        {"do": "open-workbench"},
        {"do": "wait-status", "text": "2 turns"},
        {"do": "open", "file": "f.txt"},
        {"do": "focus", "file": "f.txt"},
        {"do": "press", "key": "Control+g"},
        {"do": "type-text", "text": "15"},
        {"do": "press", "key": "Enter"},
        {"do": "sleep", "ms": 500},
        {"do": "press", "key": "Control+."},
        {"do": "wait-for", "selector": ".action-widget", "text": "Revert this change"},
        {"do": "observe-texts", "label": "actions", "selector": ".action-widget .monaco-list-row"},
        # The first action is focused (the menu takes keys, as a person uses it after Ctrl+.).
        {
            "do": "wait-for",
            "selector": ".action-widget .monaco-list-row.focused",
            "text": "Revert this change",
        },
        {"do": "press", "key": "Enter"},
        # The preview, as before every restore: a quick pick, the file's change one key away.
        {
            "do": "pick",
            "row": PREVIEW_GO,
            "filter": "",
            "screenshot": "vscode-revert-hunk-question.png",
        },
        {"do": "wait-disk", "file": "f.txt", "content": want},
        {"do": "wait-clean", "file": "f.txt"},
        {"do": "wait-editor", "file": "f.txt", "text": want},
        {"do": "observe", "label": "reverted", "files": ["f.txt"]},
        {"do": "observe-texts", "label": "report", "selector": NOTE, "settleMs": 500},
        {"do": "command", "title": "Rewind: Undo Last Rewind"},
        {"do": "pick", "row": PREVIEW_GO, "filter": ""},  # the undo's preview (issue #27)
        {"do": "wait-editor", "file": "f.txt", "text": TURN2},
        {"do": "wait-disk", "file": "f.txt", "content": TURN2},
        {"do": "observe", "label": "undone", "files": ["f.txt"]},
    ]
    result = _run_vscode(tmp_path, ws, agent, steps)
    actions = _obs(result, "actions")["texts"]
    assert any("Revert this change (turn 1: make the numbers words)" in a for a in actions), actions
    assert any("Revert turn 1 in this file" in a for a in actions), actions
    preview = _obs(result, f"picker:{PREVIEW_GO}")["rows"]
    assert any("f.txt" in r and "modify +1 -1" in r for r in preview), preview
    reverted = _obs(result, "reverted")["files"]["f.txt"]
    assert reverted["editor"].strip() == want.strip(), reverted
    assert reverted["disk"] == want and reverted["dirty"] is False, reverted  # saved
    report = " ".join(_obs(result, "report")["texts"])
    assert "f.txt" in report and "rewind." not in report, report
    undone = _obs(result, "undone")["files"]["f.txt"]
    assert undone["disk"] == TURN2 and undone["editor"].strip() == TURN2.strip(), undone
    assert (ws / "f.txt").read_bytes() == TURN2.encode()


DECORATED = '.editor-group-container.active .view-overlays [class*="ced-"]'


def test_review_turn_multi_diff_and_latest_turn_gutter_in_vscode(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    home = tmp_path / "rewind-home"
    ws.mkdir()
    home.mkdir()
    (ws / "f.txt").write_text(BASE)
    (ws / "g.txt").write_text("alpha\nbeta\n")
    agent = FakeClaude(ws, home)
    agent.turn("make the numbers words", {"f.txt": TURN1, "g.txt": "alpha\nBETA\n"})
    agent.turn("and eight", {"f.txt": TURN2})
    steps = [
        {"do": "open-workbench"},
        {"do": "wait-status", "text": "2 turns"},
        {"do": "open", "file": "f.txt"},
        {"do": "sleep", "ms": 1500},
        # The cursor on the empty last line: no word highlight decorates the text.
        {"do": "press", "key": "Control+End"},
        {"do": "sleep", "ms": 500},
        # The latest turn (2) wrote line 8: marked in the gutter.
        {"do": "observe-texts", "label": "marked", "selector": DECORATED, "settleMs": 500},
        {"do": "screenshot", "name": "vscode-latest-turn-gutter.png"},
        # The person types: they moved on, the marks go.
        {"do": "type", "file": "f.txt", "text": "x"},
        {"do": "press", "key": "Control+End"},
        {"do": "sleep", "ms": 800},
        {"do": "observe-texts", "label": "moved-on", "selector": DECORATED, "settleMs": 300},
        {"do": "press", "key": "Control+z"},
        # Review turn 1: its two files in the multi-file diff editor.
        {"do": "command", "title": "Rewind: Review Turn..."},
        {"do": "pick", "row": "#1", "filter": "make the numbers"},
        {"do": "wait-for", "selector": ".tabs-container .tab", "text": "Turn #1"},
        {"do": "sleep", "ms": 1500},
        {
            "do": "observe-texts",
            "label": "review",
            "selector": ".multiDiffEditor .header",
            "settleMs": 500,
        },
        {"do": "screenshot", "name": "vscode-review-turn.png"},
    ]
    result = _run_vscode(tmp_path, ws, agent, steps)
    # One decorated line (EIGHT), none once the person typed.
    assert len(_obs(result, "marked")["texts"]) == 1, _obs(result, "marked")
    assert len(_obs(result, "moved-on")["texts"]) == 0, _obs(result, "moved-on")
    review = " ".join(_obs(result, "review")["texts"])
    assert "f.txt" in review and "g.txt" in review, review
