"""The VS Code extension (editors/vscode) end to end, in a real VS Code.

code-server 4.100.3 runs under headless Chromium, driven through the UI by playwright-core
(editors/vscode/test/e2e/driver.mjs), with the packaged .vsix installed in a fresh profile and the
real language server (`python -m rewind_ls serve`).

Agent turns are recorded through the real Claude Code hook (tests/support/agent.py). The person
opens a file the agent edited, types an unsaved change in another file, runs "Rewind: Rewind to
Turn..." from the command palette, picks turn 1 and "Code only"; then "Rewind: Undo Last Rewind".
After each step the test compares what the editor shows (text, dirty tab) with the bytes on disk.

Needs `bash scripts/install-vscode-env.sh` (scripts/test.sh runs it). A missing tool is a failure,
not a skip; only REWIND_SKIP_EDITORS (scripts/test.sh then passes `-m "not editor"`) leaves it out.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import pytest

HERE = Path(__file__).resolve().parent
for p in (HERE, HERE.parent):  # vscode_support, and support.agent (tests/ has no package __init__)
    if str(p) not in sys.path:
        sys.path.insert(0, str(p))

from support.agent import FakeClaude  # noqa: E402
from vscode_support import (  # noqa: E402
    REPO,
    base_profile_settings,
    code_server,
    python_extension_standin,
    python_for_server,
    require_tools,
    run_driver,
)

pytestmark = pytest.mark.editor

A0, A1, A2 = "alpha v0\n", "alpha v1\n", "alpha v2\n"
B1 = "beta v1\n"
NOTES = "my notes\n"
TYPED = "unsaved line\n"
MESSAGE = ".notifications-toasts .notification-list-item-message"
# The preview's first row (rewind.confirmRestore): the restore itself.
PREVIEW_GO = "nothing is written before this"
ROW = ".pane-body .monaco-list-row"


def _obs(result: dict[str, Any], label: str) -> dict[str, Any]:
    for o in result["observations"]:
        if o.get("label") == label:
            return o  # type: ignore[no-any-return]
    raise AssertionError(f"no observation {label!r}; driver log:\n{result['log']}")


def _two_turns(tmp_path: Path) -> tuple[Path, Path, FakeClaude]:
    """A workspace with a.txt (before the agent) and notes.txt (never touched by the agent), and two
    agent turns recorded through the real hook: turn 1 edits a.txt and creates b.txt, turn 2 edits
    a.txt again."""
    ws = tmp_path / "ws"
    home = tmp_path / "rewind-home"
    ws.mkdir()
    home.mkdir()
    (ws / "a.txt").write_text(A0)
    (ws / "notes.txt").write_text(NOTES)
    agent = FakeClaude(ws, home)
    agent.turn("first prompt: bump alpha and add beta", {"a.txt": A1, "b.txt": B1})
    agent.turn("second prompt: bump alpha again", {"a.txt": A2})
    assert (ws / "a.txt").read_text() == A2
    return ws, home, agent


def _settings(agent: FakeClaude, server_command: list[str]) -> dict[str, Any]:
    """The extension's settings for a test (the rest of the profile is in vscode_support): the
    server sees the same store and Claude Code folder as the agent's hook."""
    return {
        "rewind.server.command": server_command,
        "rewind.server.env": {**agent.env, "PYTHONPATH": str(REPO)},
        "rewind.trace.server": "messages",
    }


def _run_vscode(
    tmp_path: Path,
    ws: Path,
    agent: FakeClaude,
    steps: list[dict[str, Any]],
    server_command: list[str] | str | None = None,
    *,
    settings: dict[str, Any] | None = None,
    process_env: dict[str, str] | None = None,
    extensions: dict[str, Path] | None = None,
) -> dict[str, Any]:
    """Runs the driver steps in a fresh code-server on `ws`; fails with the driver's log and the
    extension's output when a step failed or a conflict dialog showed up uninvited. `settings`
    replaces the profile's Rewind settings, `process_env` adds to code-server's environment,
    `extensions` ({id: vsix}) are installed next to Rewind."""
    tools = require_tools()
    if settings is None:
        settings = _settings(agent, server_command or python_for_server())
    env: dict[str, str] = {**settings["rewind.server.env"], **(process_env or {})}
    with code_server(tmp_path / "vscode", env, settings, tools["node"], extensions) as cs:
        url = cs.start(ws)
        config = {
            "url": url,
            "workspace": str(ws),
            "chromium": tools["chromium"],
            "logs": str(cs.user_data / "logs"),
            "steps": steps,
        }
        result = run_driver(tools["node"], config, tmp_path)
        server_log = _extension_log(cs.user_data)
    result["extension_log"] = server_log
    result["context"] = (
        f"driver log:\n{result['log']}\n--- extension output (end):\n{server_log[-6000:]}"
    )
    conflict = [o for o in result["observations"] if o.get("label") == "conflict-dialog"]
    assert not conflict, f"unexpected conflict dialog: {conflict}\n{result['context']}"
    assert "error" not in result, f"{result['error']}\n{result['context']}"
    return result


def test_rewind_and_undo_in_vscode(tmp_path: Path) -> None:
    ws, _, agent = _two_turns(tmp_path)
    steps: list[dict[str, Any]] = [
        {"do": "open-workbench"},
        {"do": "wait-status", "text": "2 turns"},
        {"do": "open", "file": "a.txt"},
        {"do": "open", "file": "notes.txt"},
        {"do": "type", "file": "notes.txt", "text": TYPED},
        {"do": "observe", "label": "before", "files": ["a.txt", "notes.txt"]},
        {"do": "command", "title": "Rewind: Rewind to Turn..."},
        {"do": "pick", "row": "#1", "filter": "first prompt", "screenshot": "vscode-picker.png"},
        {"do": "pick", "row": "Code only"},
        # The preview (rewind.confirmRestore, on by default): nothing is written before "Rewind".
        {"do": "pick", "row": PREVIEW_GO, "filter": "", "screenshot": "vscode-preview.png"},
        {"do": "dismiss-conflicts", "ms": 1500},
        {"do": "wait-disk", "file": "a.txt", "content": A0},
        {"do": "wait-editor", "file": "a.txt", "text": A0},
        {"do": "wait-clean", "file": "a.txt"},
        {"do": "observe", "label": "after-rewind", "files": ["a.txt", "b.txt", "notes.txt"]},
        {"do": "screenshot", "name": "vscode-after-rewind.png"},
        {"do": "command", "title": "Rewind: Undo Last Rewind"},
        {"do": "pick", "row": PREVIEW_GO, "filter": ""},
        {"do": "wait-disk", "file": "a.txt", "content": A2},
        {"do": "wait-editor", "file": "a.txt", "text": A2},
        {"do": "wait-clean", "file": "a.txt"},
        {"do": "observe", "label": "after-undo", "files": ["a.txt", "b.txt", "notes.txt"]},
        # Unsaved edits in a file the agent changed, then the keybinding (Ctrl+Alt+Z) and Overwrite:
        # the file is restored on disk too (no false conflict later); Ctrl+Z brings the edits back.
        {"do": "type", "file": "a.txt", "text": "mine\n"},
        {"do": "press", "key": "Control+Alt+z"},
        {"do": "pick", "row": "#1", "filter": "first prompt"},
        {"do": "pick", "row": "Code only"},
        # The conflict's question is inside the preview: every file, the conflict marked.
        {"do": "pick", "row": "Overwrite", "filter": "", "seek": True},
        {"do": "wait-disk", "file": "a.txt", "content": A0},
        {"do": "wait-clean", "file": "a.txt"},
        {"do": "wait-for", "selector": MESSAGE, "text": "one Undo"},
        {"do": "observe-texts", "label": "overwrite-report", "selector": MESSAGE, "settleMs": 300},
        {"do": "observe", "label": "after-overwrite", "files": ["a.txt"]},
        {"do": "focus", "file": "a.txt"},
        {"do": "press", "key": "Control+z"},
        {"do": "wait-editor", "file": "a.txt", "text": "mine\n" + A2},
        {"do": "observe", "label": "after-ctrl-z", "files": ["a.txt"]},
        # The person saves notes.txt: an editor-session entry, labelled as such (not a second "#1").
        {"do": "focus", "file": "notes.txt"},
        {"do": "press", "key": "Control+s"},
        {"do": "wait-clean", "file": "notes.txt"},
        # The Rewind view: sessions > turns > files; rewind one file of turn 1 from its row.
        {"do": "click", "selector": '.activitybar .action-label[aria-label^="Rewind"]'},
        {"do": "wait-for", "selector": ROW, "text": "Your saves"},
        {"do": "click", "selector": ROW, "text": "first prompt"},
        {"do": "wait-for", "selector": ROW, "text": "b.txt"},
        {"do": "observe-texts", "label": "view", "selector": ROW, "settleMs": 300},
        {"do": "screenshot", "name": "vscode-view.png"},
        # Its inline actions: a file's diff, a turn's rewind (the turn is chosen: straight to the
        # scope; Cancel), a file's own rewind (turn #2's revert is in the third test).
        {"do": "row-action", "row": "a.txt", "action": "Compare with Current"},
        {"do": "observe-diff", "label": "view-diff"},
        {"do": "row-action", "row": "first prompt", "action": "Rewind to Before This Turn..."},
        {"do": "pick", "row": "Cancel"},
        {"do": "row-action", "row": "b.txt", "action": "Rewind This File to Before the Turn"},
        {"do": "pick", "row": PREVIEW_GO, "filter": ""},
        {"do": "wait-disk", "file": "b.txt", "content": None},
        {"do": "command", "title": "restore a checkpoint"},
        {"do": "pick", "row": "Your saves"},
        {"do": "press", "key": "Escape"},
    ]
    result = _run_vscode(tmp_path, ws, agent, steps)

    preview = _obs(result, f"picker:{PREVIEW_GO}")["rows"]
    assert any("a.txt" in r and "modify +1 -1" in r for r in preview), preview
    assert any("b.txt" in r and "delete" in r for r in preview), preview
    picker = _obs(result, "picker:#1")["rows"]
    assert any(r.startswith("#2") and "second prompt" in r for r in picker), picker
    assert any(r.startswith("#1") and "first prompt" in r for r in picker), picker
    assert [r[:2] for r in picker if r.startswith("#")] == ["#2", "#1"], f"newest first: {picker}"
    assert (REPO / "test-artifacts" / "vscode-picker.png").is_file()

    before = _obs(result, "before")["files"]
    assert before["a.txt"]["editor"].strip() == A2.strip() and before["a.txt"]["dirty"] is False, (
        before
    )
    assert before["notes.txt"]["dirty"] and before["notes.txt"]["disk"] == NOTES

    # Rewind to turn 1, code only: a.txt back to its content before turn 1 in the editor and on
    # disk (saved, since it was clean), b.txt (created in turn 1, never opened) deleted by the
    # server, the person's unsaved change in notes.txt untouched and still unsaved.
    after = _obs(result, "after-rewind")["files"]
    assert after["a.txt"]["disk"] == A0, after
    assert after["a.txt"]["editor"].strip() == A0.strip(), after
    assert after["a.txt"]["dirty"] is False, after
    assert after["b.txt"] == {"open": False, "disk": None}, after
    assert after["notes.txt"]["disk"] == NOTES, after
    assert after["notes.txt"]["dirty"] is True, after
    assert after["notes.txt"]["editor"].startswith(TYPED.strip()), after
    assert NOTES.strip() in after["notes.txt"]["editor"], after

    # Undo: back to the state after turn 2.
    undone = _obs(result, "after-undo")["files"]
    assert undone["a.txt"]["disk"] == A2, undone
    assert undone["a.txt"]["editor"].strip() == A2.strip(), undone
    assert undone["a.txt"]["dirty"] is False, undone
    assert undone["b.txt"]["disk"] == B1, undone
    assert undone["notes.txt"]["disk"] == NOTES and undone["notes.txt"]["dirty"] is True, undone

    # Overwrite over unsaved edits: disk and editor both at A0, saved; the report names the file
    # and says where the edits went; Ctrl+Z brings them back (unsaved, the disk keeps A0).
    report = " ".join(_obs(result, "overwrite-report")["texts"])
    assert "a.txt" in report and "one Undo (Ctrl+Z) away" in report, report
    over = _obs(result, "after-overwrite")["files"]["a.txt"]
    assert over["disk"] == A0 and over["editor"].strip() == A0.strip() and not over["dirty"], over
    back = _obs(result, "after-ctrl-z")["files"]["a.txt"]
    assert back["editor"].strip() == ("mine\n" + A2).strip() and back["dirty"], back
    assert back["disk"] == A0, back

    # The view: the agent's turns numbered, the person's saves named, turn 1's files with A/M.
    view = _obs(result, "view")["texts"]
    assert any("#2" in r and "second prompt" in r for r in view), view
    assert any(r.startswith("your saves in the editor") for r in view), view
    assert any("a.txt" in r and r.rstrip().endswith("M") for r in view), view
    assert any("b.txt" in r and r.rstrip().endswith("A") for r in view), view
    view_diff = _obs(result, "view-diff")
    assert view_diff["original"].strip() == A0.strip(), view_diff  # a.txt before turn 1
    assert "before turn #1" in view_diff["title"], view_diff
    scopes = _obs(result, "picker:Cancel")["rows"]
    assert any(r.startswith("Code only") and "before #1" in r for r in scopes), scopes
    # The picker (opened by its palette keyword "checkpoint"): one "#1", the saves by name.
    rows = _obs(result, "picker:Your saves")["rows"]
    assert sum(r.startswith("#1 ") for r in rows) == 1, rows
    assert any(r.startswith("Your saves") for r in rows), rows

    # The bytes on disk after the editor was closed (a.txt's Ctrl+Z was never saved; b.txt was
    # rewound alone from the view, to before turn 1 when it did not exist).
    assert (ws / "a.txt").read_bytes() == A0.encode()
    assert not (ws / "b.txt").exists()
    assert (ws / "notes.txt").read_bytes() == (TYPED + NOTES).encode()


def test_timeline_lenses_diff_and_conflict_choice_in_vscode(tmp_path: Path) -> None:
    """The timeline document with the server's code lenses; its "Diff" lens opens VS Code's diff
    editor (through the extension's `rewind:` documents); a rewind over an unsaved edit of a file
    the agent changed lists the files with the conflict marked, and "Skip Conflicts" restores only
    the rest."""
    ws, _, agent = _two_turns(tmp_path)
    lens = ".codelens-decoration a"
    steps: list[dict[str, Any]] = [
        {"do": "open-workbench"},
        {"do": "wait-status", "text": "2 turns"},
        {"do": "command", "title": "Rewind: Open Timeline"},
        {"do": "wait-for", "selector": lens, "text": "Rewind to here"},
        {"do": "observe-texts", "label": "lenses", "selector": lens, "settleMs": 500},
        {"do": "screenshot", "name": "vscode-timeline.png"},
        # A "Rewind to here" click shows the preview and asks; Cancel writes nothing.
        {"do": "click", "selector": lens, "text": "Rewind to here", "nth": 0},
        {"do": "dialog", "label": "lens-confirm", "button": "Cancel"},
        {"do": "observe", "label": "after-lens-cancel", "files": ["a.txt", "b.txt"]},
        # Turn 1's lenses come first; its Diff lens asks which of its two files to compare.
        {"do": "click", "selector": lens, "text": "Diff", "nth": 0},
        {"do": "pick", "row": "a.txt", "filter": "a.txt"},
        {"do": "observe-diff", "label": "diff", "screenshot": "vscode-diff.png"},
        # The diff's right side is a.txt's own document: typing there makes a.txt dirty.
        {"do": "type", "file": "a.txt", "text": "mine\n"},
        {"do": "command", "title": "Rewind: Rewind to Turn..."},
        {"do": "pick", "row": "#1", "filter": "first prompt"},
        {"do": "pick", "row": "Code only"},
        {
            "do": "pick",
            "row": "Skip Conflicts",
            "filter": "",
            "screenshot": "vscode-conflict.png",
        },
        {"do": "wait-disk", "file": "b.txt", "content": None},
        {"do": "observe", "label": "after-skip", "files": ["a.txt", "b.txt"]},
    ]
    result = _run_vscode(tmp_path, ws, agent, steps)
    ctx = result["context"]

    lenses = _obs(result, "lenses")["texts"]
    for title in ("Rewind to here", "Revert turn", "Diff"):
        assert sum(t.strip() == title for t in lenses) == 2, f"{title}: {lenses}\n{ctx}"

    confirm = _obs(result, "lens-confirm")
    assert "Rewind to the start of turn #1" in confirm["text"], confirm
    assert "modify a.txt" in confirm["text"] and "delete b.txt" in confirm["text"], confirm
    kept = _obs(result, "after-lens-cancel")["files"]
    assert kept["a.txt"]["disk"] == A2 and kept["b.txt"]["disk"] == B1, kept

    diff = _obs(result, "diff")
    assert diff["original"].strip() == A0.strip(), f"{diff}\n{ctx}"  # a.txt before turn 1
    assert diff["modified"].strip() == A2.strip(), f"{diff}\n{ctx}"  # the current a.txt
    assert "before turn #1" in diff["title"], diff

    # The question inside the preview: both choices, then every file, the conflicting one marked.
    rows = _obs(result, "picker:Skip Conflicts")["rows"]
    assert "Skip Conflicts" in rows[0] and "Overwrite" in rows[1], rows
    assert any("a.txt" in r and "conflict" in r for r in rows), rows
    assert any("b.txt" in r and "delete" in r and "conflict" not in r for r in rows), rows

    after = _obs(result, "after-skip")["files"]
    assert after["b.txt"]["disk"] is None, after  # restored: b.txt did not exist before turn 1
    assert after["a.txt"]["disk"] == A2, after  # the conflicting file was left alone...
    assert after["a.txt"]["dirty"] is True, after  # ...with the person's unsaved text
    assert after["a.txt"]["editor"].startswith("mine"), after
    assert (ws / "a.txt").read_bytes() == A2.encode()
    assert not (ws / "b.txt").exists()


def _summarize_turn_2(choice: str, label: str) -> list[dict[str, Any]]:
    """The steps of a summary of turn 2 from the picker: `choice`, no instructions, the dialog that
    gives the resume command (observed as `label`)."""
    return [
        {"do": "command", "title": "Rewind: Rewind to Turn..."},
        {"do": "pick", "row": "#2", "filter": "second prompt"},
        {"do": "pick", "row": choice},
        {"do": "wait-for", "selector": ".quick-input-widget", "text": "summary should focus"},
        {"do": "press", "key": "Enter"},
        {"do": "dialog", "label": label, "button": "Copy"},
    ]


def test_start_error_discovery_live_turns_and_conversation_in_vscode(tmp_path: Path) -> None:
    """A server command that dies while starting gives one notification that says how to fix it
    (not a second raw one); removing the setting lets the extension find the server in the
    project's .venv, and the stale notification goes; a turn the agent records while VS Code is
    open shows up in the status bar (rewind/didChangeTurns); a conversation rewind shows the resume
    command in a dialog that stays, and "Open in Terminal" types it without running it; "Revert
    Turn..." of an empty turn says so, the Rewind view's "Revert This Turn" of a real one names the
    file it restored."""
    ws, home, agent = _two_turns(tmp_path)
    record_turn = (
        "import sys, json; from pathlib import Path; sys.path.insert(0, sys.argv[1]); "
        "from support.agent import FakeClaude; "
        "FakeClaude(Path(sys.argv[2]), Path(sys.argv[3]), session_id=sys.argv[4])"
        ".turn(sys.argv[5], json.loads(sys.argv[6]))"
    )
    record = [sys.executable, "-c", record_turn, str(HERE.parent), str(ws), str(home)]
    # What `pip install rewind-ls` in the project's .venv would leave: .venv/bin/rewind-ls.
    venv_bin = ws / ".venv" / "bin"
    venv_bin.mkdir(parents=True)
    (venv_bin / "rewind-ls").write_text(f'#!/bin/sh\nexec "{sys.executable}" -m rewind_ls "$@"\n')
    (venv_bin / "rewind-ls").chmod(0o755)
    dies = ["/bin/sh", "-c", "echo rewind_ls is not installed here >&2; exit 1"]
    found = {k: v for k, v in _settings(agent, []).items() if k != "rewind.server.command"}
    steps: list[dict[str, Any]] = [
        {"do": "open-workbench"},
        {"do": "wait-for", "selector": MESSAGE, "text": "could not start the language server"},
        {"do": "observe-texts", "label": "start-error", "selector": MESSAGE, "settleMs": 1500},
        {"do": "screenshot", "name": "vscode-start-error.png"},
        {
            "do": "edit-user-settings",
            "settings": {
                **base_profile_settings(),
                **found,
                "rewind.summarizer": "cat > /dev/null; echo VSCODE-SUMMARY",
            },
        },
        {"do": "wait-status", "text": "2 turns"},
        {"do": "observe-texts", "label": "after-fix", "selector": MESSAGE, "visible": True},
        {
            "do": "exec",
            "argv": [*record, agent.session_id, "third prompt: add gamma", '{"c.txt": "gamma\\n"}'],
        },
        {"do": "wait-status", "text": "3 turns"},
        {"do": "exec", "argv": [*record, agent.session_id, "fourth prompt: just explain", "{}"]},
        {"do": "wait-status", "text": "4 turns"},
        {"do": "command", "title": "Rewind: Rewind to Turn..."},
        {"do": "pick", "row": "#2", "filter": "second prompt"},
        {"do": "pick", "row": "Conversation only"},
        {
            "do": "dialog",
            "label": "conversation",
            "button": "Open in Terminal",
            "screenshot": "vscode-conversation.png",
        },
        {"do": "wait-for", "selector": ".xterm-rows", "text": "claude --resume"},
        {
            "do": "observe-texts",
            "label": "terminal",
            "selector": ".xterm-rows > div",
            "settleMs": 2000,
        },
        {"do": "screenshot", "name": "vscode-terminal.png"},
        # Summarize up to turn 2 (the rewind.summarizer setting): no instructions, the resume dialog.
        *_summarize_turn_2("Summarize up to here", "summarized"),
        # Summarize from turn 2: turn 1 verbatim, 2 onward replaced by the summary.
        *_summarize_turn_2("Summarize from here", "summarized-from"),
        # Revert of a turn that changed no file: said plainly, nothing written.
        {"do": "command", "title": "undo an agent turn"},
        {"do": "pick", "row": "#4", "filter": "fourth prompt"},
        {"do": "wait-for", "selector": MESSAGE, "text": "changed no file"},
        # Revert only turn 3 (it created c.txt) from the Rewind view's inline action: c.txt goes,
        # the rest stays, the report names it.
        {"do": "click", "selector": '.activitybar .action-label[aria-label^="Rewind"]'},
        {"do": "wait-for", "selector": ROW, "text": "third prompt"},
        {"do": "row-action", "row": "third prompt", "action": "Revert This Turn"},
        {"do": "pick", "row": PREVIEW_GO, "filter": ""},
        {"do": "wait-disk", "file": "c.txt", "content": None},
        {"do": "wait-for", "selector": MESSAGE, "text": "c.txt (deleted)"},
        {"do": "observe-texts", "label": "reverts", "selector": MESSAGE, "visible": True},
        # The walkthrough, as Help › Welcome lists it (the panel and the toasts out of the picture).
        {"do": "command", "title": "View: Hide Panel"},
        {"do": "command", "title": "Notifications: Clear All Notifications"},
        {"do": "command", "title": "Welcome: Open Walkthrough..."},
        {"do": "pick", "row": "Get Started with Rewind", "filter": "Rewind"},
        {"do": "wait-for", "selector": ".gettingStartedContainer", "text": "Record the agent"},
        {"do": "observe-texts", "label": "walkthrough", "selector": ".gettingStartedContainer"},
        {"do": "screenshot", "name": "vscode-walkthrough.png"},
    ]
    result = _run_vscode(tmp_path, ws, agent, steps, server_command=dies)
    ctx = result["context"]

    start_error = _obs(result, "start-error")["texts"]
    assert any("/bin/sh -c" in t and "rewind.server.command" in t for t in start_error), (
        f"{start_error}\n{ctx}"
    )
    assert not any("Pending response" in t or "connection" in t for t in start_error), start_error
    assert len(start_error) == 1, start_error
    assert not any("could not start" in t for t in _obs(result, "after-fix")["texts"]), ctx
    # Output › Rewind: "starting: … (workspace venv)", its first lines (the context shows only its end).
    assert "(workspace venv)" in result["extension_log"], ctx

    conversation = _obs(result, "conversation")
    assert "claude --resume" in conversation["text"], f"{conversation}\n{ctx}"
    assert {"Copy", "Copy Prompt", "Open in Terminal"} <= {
        b.strip() for b in conversation["buttons"]
    }
    # The result names the turn and its prompt; the clipboard is left alone unless asked.
    assert "turn #2" in conversation["text"], conversation
    assert "second prompt: bump alpha again" in conversation["text"], conversation
    assert "on the clipboard" not in conversation["text"].split("Copy Prompt")[0], conversation
    # Typed at the prompt, not run: the resume command (`cd <ws> && claude --resume <id>`, which
    # the terminal may wrap over several rows) ends the terminal's text, and nothing ran it.
    sid = re.search(
        r"claude --resume ([0-9a-f]{8}(?:-[0-9a-f]{4}){3}-[0-9a-f]{12})", conversation["text"]
    )
    assert sid, conversation
    rows = "".join(t.strip() for t in _obs(result, "terminal")["texts"] if t.strip())
    assert rows.endswith(sid.group(1)), rows
    assert rows.count(sid.group(1)) == 1, f"the command is typed once: {rows}"
    assert "not found" not in rows, rows
    summarized = _obs(result, "summarized")
    assert "summarized up to turn #2" in summarized["text"], f"{summarized}\n{ctx}"
    assert "claude --resume" in summarized["text"], summarized
    session = re.search(r"claude --resume ([0-9a-f-]{36})", summarized["text"])
    assert session, summarized
    written = [
        json.loads(x)
        for x in (agent.transcript.parent / f"{session.group(1)}.jsonl").read_text().splitlines()
    ]
    assert written[0]["subtype"] == "compact_boundary"
    assert "VSCODE-SUMMARY" in written[1]["message"]["content"]
    assert "second prompt: bump alpha again" in json.dumps(written[2:])
    summarized_from = _obs(result, "summarized-from")
    assert "summarized from turn #2" in summarized_from["text"], summarized_from
    later = re.search(r"claude --resume ([0-9a-f-]{36})", summarized_from["text"])
    assert later and later.group(1) != session.group(1), summarized_from
    kept = [
        json.loads(x)
        for x in (agent.transcript.parent / f"{later.group(1)}.jsonl").read_text().splitlines()
    ]
    assert kept[-1].get("isCompactSummary"), kept[-1]
    assert "VSCODE-SUMMARY" in json.dumps(kept[-1]["message"]["content"])
    assert "first prompt" in json.dumps(kept[:-1]), kept
    assert "second prompt: bump alpha again" not in json.dumps(kept[:-1]), kept
    reverts = " ".join(_obs(result, "reverts")["texts"])
    assert "turn #4 changed no file" in reverts, reverts
    assert "c.txt (deleted)" in reverts, reverts
    walkthrough = " ".join(_obs(result, "walkthrough")["texts"])
    for step in ("The language server", "Record the agent's turns", "Find your turns"):
        assert step in walkthrough, walkthrough
    # The conversation-only rewind left the files alone; the revert of turn 3 removed c.txt only.
    assert (ws / "a.txt").read_text() == A2
    assert (ws / "b.txt").read_text() == B1
    assert not (ws / "c.txt").exists()


def test_server_discovery_in_vscode(tmp_path: Path) -> None:
    """With no rewind.server.command and rewind-ls neither on PATH nor in the project, the extension
    finds a uv tool install; choosing an interpreter that has rewind_ls in the Python extension
    restarts it with that interpreter; a plain string path in the setting wins over both, and the
    Settings UI edits it as a text field (not "Edit in settings.json"). No start error on the way.

    The Python extension is a stand-in with its id and the API shape we read
    (tests/editors/vscode/python_standin): the real one cannot be installed offline."""
    ws, _, agent = _two_turns(tmp_path)
    # Where `uv tool install rewind-ls` puts it: $XDG_DATA_HOME/uv/tools/rewind-ls/bin/rewind-ls
    # (code-server's XDG_DATA_HOME is <tmp>/vscode/xdg-data, vscode_support.CodeServer).
    uv_tool = tmp_path / "vscode" / "xdg-data" / "uv" / "tools" / "rewind-ls" / "bin" / "rewind-ls"
    uv_tool.parent.mkdir(parents=True)
    uv_tool.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m rewind_ls "$@"\n')
    uv_tool.chmod(0o755)
    # A Python without rewind_ls, selected in the Python extension at first.
    bare = tmp_path / "bare" / "python3"
    bare.parent.mkdir()
    bare.write_text("#!/bin/sh\necho 'No module named rewind_ls' >&2\nexit 1\n")
    bare.chmod(0o755)
    empty = tmp_path / "empty-bin"  # pipx's and uv's command folders: nothing there
    empty.mkdir()
    process_env = {
        # No rewind-ls on PATH (the test's .venv/bin is not on it).
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "PIPX_BIN_DIR": str(empty),
        "UV_TOOL_BIN_DIR": str(empty),
    }
    plain = str(Path(sys.executable).parent / "rewind-ls")  # the path of rewind-ls, as a string
    assert Path(plain).is_file(), plain
    rewind = {k: v for k, v in _settings(agent, []).items() if k != "rewind.server.command"}
    first = {**rewind, "python.defaultInterpreterPath": str(bare)}
    chosen = {**rewind, "python.defaultInterpreterPath": sys.executable}
    steps: list[dict[str, Any]] = [
        {"do": "open-workbench"},
        {"do": "wait-status", "text": "2 turns"},
        {"do": "wait-log", "text": "(pipx/uv)"},
        {"do": "edit-user-settings", "settings": {**base_profile_settings(), **chosen}},
        {"do": "wait-log", "text": "(Python extension)"},
        {"do": "wait-log", "text": "language server running", "count": 2},
        {
            "do": "edit-user-settings",
            "settings": {**base_profile_settings(), **chosen, "rewind.server.command": plain},
        },
        {"do": "wait-log", "text": "(setting)"},
        {"do": "wait-log", "text": "language server running", "count": 3},
        {"do": "wait-status", "text": "2 turns"},
        {"do": "command", "title": "Preferences: Open Settings (UI)"},
        {"do": "wait-for", "selector": ".settings-editor .suggest-input-container"},
        {"do": "type-text", "text": "rewind.server.command"},
        {"do": "wait-for", "selector": ".setting-item-contents", "text": "Server: Command"},
        {"do": "wait-value", "selector": ".setting-item-contents input", "value": plain},
        {"do": "observe-texts", "label": "setting", "selector": ".setting-item-contents"},
        {
            "do": "observe-values",
            "label": "setting-input",
            "selector": ".setting-item-contents input",
        },
        {"do": "screenshot", "name": "vscode-setting-string.png"},
        {"do": "observe-texts", "label": "toasts", "selector": MESSAGE, "visible": True},
        # The extension's icon in the Extensions view (its package.json "icon").
        {"do": "command", "title": "Extensions: Show Enabled Extensions"},
        {"do": "wait-for", "selector": ".extension-list-item", "text": "Rewind (rewind-ls)"},
        # "Show Enabled Extensions" swaps the list for its search result, even after our row and its
        # icon have shown: the icons are read when one is seen, not a moment later (a CI flake).
        {
            "do": "wait-value",
            "label": "extension-icons",
            "selector": ".extension-list-item img.icon",
            "attr": "src",
            "contains": "rewind-ls.rewind-ls-",
        },
        {"do": "screenshot", "name": "vscode-extension-icon.png"},
    ]
    result = _run_vscode(
        tmp_path,
        ws,
        agent,
        steps,
        settings={**base_profile_settings(), **first},
        process_env=process_env,
        extensions={"ms-python.python": python_extension_standin(tmp_path)},
    )
    ctx = result["context"]
    starts = re.findall(r"starting: (.*) \(([^()]+)\)$", result["extension_log"], re.MULTILINE)
    assert [origin for _, origin in starts] == ["pipx/uv", "Python extension", "setting"], (
        f"{starts}\n{ctx}"
    )
    assert starts[0][0] == f"{uv_tool} serve", starts
    assert starts[1][0] == f"{sys.executable} -m rewind_ls serve", starts
    assert starts[2][0] == f"{plain} serve", starts
    assert "could not start" not in result["extension_log"], ctx
    assert not any("could not start" in t for t in _obs(result, "toasts")["texts"]), ctx
    setting = " ".join(_obs(result, "setting")["texts"])
    assert "Server: Command" in setting and "Edit in settings.json" not in setting, setting
    assert plain in _obs(result, "setting-input")["values"], result["observations"]
    icons = _obs(result, "extension-icons")["values"]
    assert any(
        "/rewind-ls.rewind-ls-" in unquote(src) and "/media/icon.png" in unquote(src)
        for src in icons
        if src
    ), icons


def test_status_bar_and_view_show_the_first_checkpoint_while_it_runs(tmp_path: Path) -> None:
    """#29: while the first checkpoint of a large workspace runs in the background (a worker holds
    its lock; `baseline` of rewind/listTurns), the status bar shows "first checkpoint N/M" moving as
    the worker goes on, and the Rewind view says it; the extension asks again until it is done (the
    server sends no notification then), and the turn count comes back."""
    from rewind_ls.core.capture import baseline_spawn
    from rewind_ls.core.store import Store

    ws, home, agent = _two_turns(tmp_path)
    with Store.open(str(ws), home=str(home)) as store:
        store_path = store.path
    wdir = Path(baseline_spawn.worker_dir(store_path))
    wdir.mkdir(parents=True, exist_ok=True)
    progress = wdir / baseline_spawn.PROGRESS
    progress.write_text("1500 4000\n")
    # The worker, as the others see it: a process holding the lock (the last step ends it).
    hold = (
        "import fcntl, os, sys, time; fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o600); "
        "fcntl.flock(fd, fcntl.LOCK_EX); print('locked', flush=True); time.sleep(600)"
    )
    worker = subprocess.Popen(
        [sys.executable, "-c", hold, str(wdir / baseline_spawn.LOCK)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert worker.stdout is not None and worker.stdout.readline().strip() == "locked"
        steps: list[dict[str, Any]] = [
            {"do": "open-workbench"},
            {"do": "wait-status", "text": "first checkpoint 1500/4000"},
            {"do": "click", "selector": '.activitybar .action-label[aria-label^="Rewind"]'},
            {
                "do": "wait-for",
                "selector": ".pane-body",
                "text": "First checkpoint of this workspace in progress (1500 of 4000 files)",
            },
            {"do": "screenshot", "name": "vscode-first-checkpoint.png"},
            {"do": "exec", "argv": ["/bin/sh", "-c", f"echo 3000 4000 > '{progress}'"]},
            {"do": "wait-status", "text": "first checkpoint 3000/4000"},
            {"do": "exec", "argv": ["kill", str(worker.pid)]},
            {"do": "wait-status", "text": "2 turns"},
            {"do": "wait-for", "selector": ROW, "text": "second prompt"},
        ]
        _run_vscode(tmp_path, ws, agent, steps)
    finally:
        worker.kill()
        worker.wait()


def test_extension_npm_test() -> None:
    """`npm test` in editors/vscode: tsc --noEmit (strict), eslint, node:test unit tests."""
    require_tools()
    proc = subprocess.run(
        ["npm", "test"],
        cwd=REPO / "editors" / "vscode",
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout[-8000:] + proc.stderr[-4000:]
    assert "# fail 0" in proc.stdout, proc.stdout[-4000:]


def _extension_log(user_data: Path) -> str:
    """The extension's output channel (Output › Rewind), from the profile's log folder."""
    logs = (
        sorted((user_data / "logs").rglob("*Rewind*.log")) if (user_data / "logs").is_dir() else []
    )
    return "\n".join(p.read_text(errors="replace") for p in logs) or "(no Rewind output log found)"
