"""Local history in a real VS Code (code-server, the packaged extension, the real server), issue 35:
"Rewind: File History" lists the active file's versions (the agent's turns and the person's own
edit between turns, newest first), the picked one is previewed and restored, saved, and "Undo
Last Rewind" takes it back."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
for p in (HERE, HERE.parent):
    if str(p) not in sys.path:
        sys.path.insert(0, str(p))

from test_vscode_e2e import A2, PREVIEW_GO, _obs, _run_vscode, _two_turns  # noqa: E402

from rewind_ls.core.capture.recorder import Recorder  # noqa: E402
from rewind_ls.core.store import Store  # noqa: E402

pytestmark = pytest.mark.editor

MINE = "my line by hand\n" + A2


def test_file_history_restores_the_persons_overwritten_edit(tmp_path: Path) -> None:
    ws, home, agent = _two_turns(tmp_path)
    for text in (MINE, A2):  # the person's edit, then something puts the agent's version back
        (ws / "a.txt").write_text(text)
        with Store.open(str(ws), str(home)) as store:
            Recorder(store).attribute_outside_changes()
    from hashlib import sha256

    mine = sha256(MINE.encode()).hexdigest()[:8]
    steps = [
        {"do": "open-workbench"},
        {"do": "wait-status", "text": "turns"},
        {"do": "open", "file": "a.txt"},
        {"do": "command", "title": "Rewind: File History"},
        {"do": "pick", "row": mine, "filter": mine, "screenshot": "vscode-file-history.png"},
        {"do": "pick", "row": PREVIEW_GO, "filter": ""},
        {"do": "wait-disk", "file": "a.txt", "content": MINE},
        {"do": "wait-clean", "file": "a.txt"},
        {"do": "command", "title": "Rewind: Undo Last Rewind"},
        {"do": "pick", "row": PREVIEW_GO, "filter": ""},
        {"do": "wait-disk", "file": "a.txt", "content": A2},
    ]
    result = _run_vscode(tmp_path, ws, agent, steps)
    rows = _obs(result, f"picker:{mine}")["rows"]
    text = " | ".join(map(str, rows))
    assert "outside" in text and "agent" in text and "first seen" in text, rows
    assert (ws / "a.txt").read_text() == A2
