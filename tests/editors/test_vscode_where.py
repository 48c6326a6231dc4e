"""Where am I, in a real VS Code (code-server in Chromium, the packaged extension, the real
server), issue 27: after two rewinds the Rewind view lists both restore points, marks the current
state "you are here", and the *older* restore (not only the last) is undone from its own row; the
"Rewind to Turn" picker lists the restore points too, with the same mark."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
for p in (HERE, HERE.parent):
    if str(p) not in sys.path:
        sys.path.insert(0, str(p))

from test_vscode_e2e import A0, A1, A2, MESSAGE, PREVIEW_GO, ROW, _obs, _run_vscode, _two_turns  # noqa: E402

pytestmark = pytest.mark.editor

QUICK_ROW = ".quick-input-list .monaco-list-row"


def test_restore_points_in_view_and_picker_undone_from_their_row(tmp_path: Path) -> None:
    ws, _, agent = _two_turns(tmp_path)
    steps = [
        {"do": "open-workbench"},
        {"do": "wait-status", "text": "2 turns"},
        # Restore 1: rewind to the start of turn 1 (a.txt: v2 -> v0).
        {"do": "command", "title": "Rewind: Rewind to Turn..."},
        {"do": "pick", "row": "#1", "filter": "first prompt"},
        {"do": "pick", "row": "Code only"},
        {"do": "pick", "row": PREVIEW_GO, "filter": ""},
        {"do": "wait-disk", "file": "a.txt", "content": A0},
        # Restore 2: rewind to the start of turn 2 (a.txt: v0 -> v1).
        {"do": "command", "title": "Rewind: Rewind to Turn..."},
        {"do": "pick", "row": "#2", "filter": "second prompt"},
        {"do": "pick", "row": "Code only"},
        {"do": "pick", "row": PREVIEW_GO, "filter": ""},
        {"do": "wait-disk", "file": "a.txt", "content": A1},
        # The picker lists the restore points, the current state marked.
        {"do": "command", "title": "Rewind: Rewind to Turn..."},
        {"do": "wait-for", "selector": QUICK_ROW, "text": "you are here"},
        {"do": "observe-texts", "label": "picker", "selector": QUICK_ROW, "settleMs": 500},
        {"do": "press", "key": "Escape"},
        # The view: restore points under their own heading; the older one undone from its row.
        {"do": "click", "selector": '.activitybar .action-label[aria-label^="Rewind"]'},
        {"do": "wait-for", "selector": ROW, "text": "restore points"},
        {"do": "click", "selector": ROW, "text": "restore points"},
        {"do": "wait-for", "selector": ROW, "text": "Before rewind to turn 1"},
        {"do": "observe-texts", "label": "view", "selector": ROW, "settleMs": 500},
        {"do": "screenshot", "name": "vscode-restore-points.png"},
        {"do": "row-action", "row": "Before rewind to turn 1", "action": "Undo This Restore"},
        {"do": "pick", "row": PREVIEW_GO, "filter": ""},
        {"do": "wait-disk", "file": "a.txt", "content": A2},
        {"do": "wait-for", "selector": MESSAGE, "text": "Undo of"},
        {"do": "observe-texts", "label": "report", "selector": MESSAGE, "settleMs": 500},
    ]
    result = _run_vscode(tmp_path, ws, agent, steps)
    picker = _obs(result, "picker")["texts"]
    assert any("Restore point" in t and "before rewind to turn 2" in t for t in picker), picker
    assert any("before rewind to turn 1" in t for t in picker), picker
    here = [t for t in picker if "you are here" in t]
    assert len(here) == 1 and "before rewind to turn 2" in here[0], picker
    # The row is the state before that restore: the files are after it (issue 36 item 7).
    assert "you are here: after this restore" in here[0], picker
    view = _obs(result, "view")["texts"]
    assert any(t.startswith("restore points") for t in view), view
    rows = [t for t in view if "Before rewind to turn" in t]
    assert len(rows) == 2, view
    assert "you are here" in next(t for t in rows if "turn 2" in t), view
    assert "you are here" not in next(t for t in rows if "turn 1" in t), view
    assert (ws / "a.txt").read_text() == A2 and (ws / "b.txt").exists()
    # Called an undo of that restore, not "turn #N" (the restore session's ordinal).
    texts = _obs(result, "report")["texts"]
    undo = next(t for t in texts if "Undo of" in t)
    assert "Undo of rewind to turn 1 (code): restored a.txt" in undo and "#" not in undo, texts


def test_a_fork_is_labelled_in_the_view(tmp_path: Path) -> None:
    """A forked conversation's session says where it came from ("fork of <session> before #N")
    instead of an unlabelled session repeating the original's turns."""
    from rewind_ls.core.store import Store

    ws, home, agent = _two_turns(tmp_path)
    store = Store.open(str(ws), home=str(home))
    source = next(s.id for s in store.sessions() if s.kind == "agent")
    fork = "f0f0f0f0-fork-of-the-conversation"
    store.inherit_turns(source, fork, 2, str(tmp_path / "fork.jsonl"))
    store.ensure_session(fork, "agent", agent="claude-code")  # its first hook: now the current one
    store.close()
    steps = [
        {"do": "open-workbench"},
        {"do": "click", "selector": '.activitybar .action-label[aria-label^="Rewind"]'},
        {"do": "wait-for", "selector": ROW, "text": "fork of"},
        {"do": "observe-texts", "label": "view", "selector": ROW, "settleMs": 500},
    ]
    result = _run_vscode(tmp_path, ws, agent, steps)
    view = _obs(result, "view")["texts"]
    titles = [t for t in view if "session" in t]
    assert any(
        t.startswith("current session · claude-code session f0f0f0f0")
        and f"fork of {source[:8]} before #2" in t
        for t in titles
    ), view


def test_what_a_turn_changed_is_before_and_after_it_not_now(tmp_path: Path) -> None:
    """Show What a Turn Changed, the multi-file diff editor of before <-> after the turn (like a
    commit in Source Control), whatever later turns did: turn 1 shows alpha v0 -> v1 (turn 2's v2,
    what the file holds now, is not in it) and the file it created."""
    ws, _, agent = _two_turns(tmp_path)
    steps = [
        {"do": "open-workbench"},
        {"do": "wait-status", "text": "2 turns"},
        {"do": "command", "title": "Rewind: Show What a Turn Changed..."},
        {"do": "pick", "row": "#1", "filter": "first prompt"},
        {"do": "wait-for", "selector": ".tabs-container .tab", "text": "Turn #1 changed"},
        {"do": "wait-for", "selector": ".multiDiffEditor .view-line", "text": "alpha v1"},
        {"do": "observe-texts", "label": "headers", "selector": ".multiDiffEditor .header"},
        {
            "do": "observe-texts",
            "label": "lines",
            "selector": ".multiDiffEditor .view-line",
            "settleMs": 800,
        },
        {"do": "screenshot", "name": "vscode-turn-changes.png"},
    ]
    result = _run_vscode(tmp_path, ws, agent, steps)
    headers = " ".join(_obs(result, "headers")["texts"])
    assert "a.txt" in headers and "b.txt" in headers, headers
    lines = [t.replace("\xa0", " ").strip() for t in _obs(result, "lines")["texts"]]
    assert A0.strip() in lines and A1.strip() in lines, lines
    assert A2.strip() not in lines, lines  # now (turn 2's), not what turn 1 wrote
    assert (ws / "a.txt").read_text() == A2  # nothing written
