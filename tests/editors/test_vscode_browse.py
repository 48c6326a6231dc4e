"""A turn as a read-only folder in a real VS Code (code-server in Chromium, the packaged extension):
"Rewind: Open Workspace at Turn..." in a window of one folder shows the turn in the Turn Files view
(`rewind-turn:` files): the workspace as it was when turn 1 began (a folder deleted since included), a
file opens with its
content then, typing changes nothing, "Rewind: Find File in Turn..." opens a file only the turn has,
and the disk is untouched. (VS Code's own Go to File and Search do not reach it: they search other
file systems only through search providers, a proposed API.)"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
for p in (HERE, HERE.parent):
    if str(p) not in sys.path:
        sys.path.insert(0, str(p))

from support.agent import FakeClaude  # noqa: E402
from test_vscode_e2e import _obs, _run_vscode, _settings  # noqa: E402
from vscode_support import python_for_server  # noqa: E402

pytestmark = pytest.mark.editor

# The Turn Files view's rows (a window of one folder shows the turn there).
ROW = '.pane:has-text("Turn #1 Files (start, read-only)") .monaco-list-row'
EDITOR = ".editor-group-container.active .editor-instance .view-lines"
APP0 = "def app():\n    return 'v0'\n"


def test_open_workspace_at_turn_in_vscode(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    home = tmp_path / "rewind-home"
    ws.mkdir()
    home.mkdir()
    (ws / "src").mkdir()
    (ws / "lib").mkdir()
    (ws / "src" / "app.py").write_text(APP0)
    (ws / "lib" / "helper_gone.py").write_text("GONE = True\n")
    (ws / "top.txt").write_text("top\n")
    agent = FakeClaude(ws, home)
    agent.turn("edit app", {"src/app.py": "def app():\n    return 'v1'\n"})
    agent.hook("UserPromptSubmit", prompt="drop lib")
    agent.shell("rm -rf lib")
    agent.hook("Stop", stop_hook_active=False)
    disk = {p: p.read_bytes() for p in ws.rglob("*") if p.is_file()}
    steps = [
        {"do": "open-workbench"},
        {"do": "wait-status", "text": "2 turns"},
        {"do": "command", "title": "Rewind: Open Workspace at Turn..."},
        {"do": "pick", "row": "#1", "filter": "edit app"},
        {"do": "wait-for", "selector": ROW, "text": "lib"},
        {"do": "observe-texts", "label": "explorer", "selector": ROW, "settleMs": 800},
        {"do": "click", "selector": ROW, "text": "src"},
        {"do": "wait-for", "selector": ROW, "text": "app.py"},
        {"do": "click", "selector": ROW, "text": "app.py"},
        {"do": "wait-for", "selector": ".tabs-container .tab", "text": "app.py"},
        {"do": "sleep", "ms": 1000},
        {"do": "observe-texts", "label": "content", "selector": EDITOR},
        {"do": "screenshot", "name": "vscode-open-workspace-at-turn.png"},
        # Typing in it changes nothing: the file system is read-only.
        {"do": "click", "selector": EDITOR},
        {"do": "type-text", "text": "zzz"},
        {"do": "sleep", "ms": 500},
        {"do": "observe-texts", "label": "after-typing", "selector": EDITOR},
        # Go to File for the turn: a file only the turn has (lib/ was deleted since).
        {"do": "press", "key": "Escape"},
        {"do": "command", "title": "Rewind: Find File in Turn..."},
        {"do": "pick", "row": "helper_gone.py", "filter": "helper"},
        {"do": "wait-for", "selector": ".tabs-container .tab", "text": "helper_gone.py"},
        {"do": "sleep", "ms": 800},
        {"do": "observe-texts", "label": "found", "selector": EDITOR},
    ]
    result = _run_vscode(tmp_path, ws, agent, steps)
    explorer = _obs(result, "explorer")["texts"]
    assert explorer == ["lib", "src", "top.txt"], explorer
    content = " ".join(_obs(result, "content")["texts"])
    assert "return 'v0'" in content.replace("\xa0", " "), content
    typed = " ".join(_obs(result, "after-typing")["texts"])
    assert "zzz" not in typed and "return 'v0'" in typed.replace("\xa0", " "), typed
    found = " ".join(_obs(result, "found")["texts"]).replace("\xa0", " ")
    assert "GONE = True" in found, found
    assert {p: p.read_bytes() for p in ws.rglob("*") if p.is_file()} == disk


def test_timeline_picture_webview_in_vscode(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    home = tmp_path / "rewind-home"
    ws.mkdir()
    home.mkdir()
    (ws / "a.txt").write_text("a0\n")
    agent = FakeClaude(ws, home)
    agent.turn("first", {"a.txt": "a1\n", "docs/new.md": "# new\n"})
    agent.hook("UserPromptSubmit", prompt="shell")
    agent.shell("echo made > made.txt")
    agent.hook("Stop", stop_hook_active=False)
    steps = [
        {"do": "open-workbench"},
        {"do": "wait-status", "text": "2 turns"},
        {"do": "command", "title": "Rewind: Show Timeline Picture"},
        {"do": "observe-webview", "label": "cells", "selector": ".row .cell"},
        {"do": "observe-webview", "label": "turns", "selector": ".turn"},
        {"do": "screenshot", "name": "vscode-timeline-picture.png"},
        # A click on turn 1's a.txt cell opens its diff, before <-> after the turn.
        {"do": "click-webview", "selector": '.cell[data-path="a.txt"]'},
        {"do": "wait-for", "selector": ".tabs-container .tab", "text": "a.txt (turn #1"},
        {"do": "sleep", "ms": 1000},
        {"do": "observe-diff", "label": "diff", "screenshot": "vscode-timeline-picture-diff.png"},
        # A click on turn 1's number: what to do with it; "What this turn changed" opens its files.
        {"do": "click-webview", "selector": ".turn"},
        {"do": "pick", "row": "What this turn changed", "filter": "changed"},
        {"do": "wait-for", "selector": ".tabs-container .tab", "text": "Turn #1"},
    ]
    # Side by side even in the half window beside the picture, so each side can be read.
    settings = {
        **_settings(agent, python_for_server()),
        "diffEditor.useInlineViewWhenSpaceIsLimited": False,
    }
    result = _run_vscode(tmp_path, ws, agent, steps, settings=settings)
    cells = {
        (c["data"]["path"], c["data"]["turn"], c["data"]["who"], c["data"]["change"])
        for c in _obs(result, "cells")["items"]
    }
    assert cells == {
        ("a.txt", "1", "agent", "modified"),
        ("docs/new.md", "1", "agent", "created"),
        ("made.txt", "2", "shell", "created"),
    }, cells
    assert [t["text"] for t in _obs(result, "turns")["items"]] == ["1", "2"]
    diff = _obs(result, "diff")
    assert diff["original"].strip() == "a0" and diff["modified"].strip() == "a1", diff


def test_open_workspace_at_turn_in_a_multi_root_workspace(tmp_path: Path) -> None:
    """In a window that is already a workspace, the turn is added to the Explorer as a folder (no
    reload), after the workspace's own folder."""
    ws = tmp_path / "ws"
    home = tmp_path / "rewind-home"
    ws.mkdir()
    home.mkdir()
    (ws / "old").mkdir()
    (ws / "old" / "gone.txt").write_text("gone\n")
    (ws / "keep.txt").write_text("k0\n")
    agent = FakeClaude(ws, home)
    agent.turn("drop old", {"old/gone.txt": None, "keep.txt": "k1\n"})
    workspace_file = tmp_path / "project.code-workspace"
    workspace_file.write_text('{"folders": [{"path": "ws"}]}')
    explorer = ".explorer-folders-view .monaco-list-row"
    steps = [
        {"do": "open-workbench", "workspaceFile": str(workspace_file)},
        {"do": "wait-status", "text": "1 turn"},
        {"do": "command", "title": "Rewind: Open Workspace at Turn..."},
        {"do": "pick", "row": "#1", "filter": "drop old"},
        {"do": "wait-for", "selector": explorer, "text": "Turn #1 (start, read-only)"},
        # The workspace's folder collapsed, the turn's expanded: its rows follow its name.
        {"do": "click", "selector": explorer, "text": "ws"},
        {"do": "sleep", "ms": 800},
        {"do": "observe-texts", "label": "explorer", "selector": explorer, "settleMs": 800},
        {"do": "screenshot", "name": "vscode-turn-folder-multi-root.png"},
    ]
    result = _run_vscode(tmp_path, ws, agent, steps)
    rows = [t.strip() for t in _obs(result, "explorer")["texts"]]
    turn = rows.index("Turn #1 (start, read-only)")
    assert rows[0].lower() == "ws" and turn > 0, rows
    assert rows[turn + 1 :][:2] == ["old", "keep.txt"], rows
