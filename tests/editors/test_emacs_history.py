"""M-x rewind-ls-file-history in a real Emacs 28 (batch), with lsp-mode and with eglot (local
history, issue 35): the current file's versions listed newest first, the person's overwritten edit
picked by its hash, previewed, restored and saved; M-x rewind-ls-undo takes it back."""

from __future__ import annotations

import sys
from hashlib import sha256
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
for p in (HERE, REPO):
    if str(p) not in sys.path:
        sys.path.insert(0, str(p))

from test_emacs_package import _run  # noqa: E402

from rewind_ls.core.capture.recorder import Recorder  # noqa: E402
from rewind_ls.core.store import Store  # noqa: E402
from tests.support.agent import FakeClaude  # noqa: E402

pytestmark = pytest.mark.editor

MINE = "my line by hand\na1\n"


@pytest.mark.parametrize("client", ["lsp", "eglot"])
def test_emacs_file_history_restores_the_persons_edit(client: str, tmp_path: Path) -> None:
    ws, home = tmp_path / "ws", tmp_path / "home"
    ws.mkdir()
    (ws / "a.txt").write_text("a0\n")
    FakeClaude(ws, home).turn("first: edit a", {"a.txt": "a1\n"})
    for text in (MINE, "a1\n"):  # the person's edit, then the agent's version put back over it
        (ws / "a.txt").write_text(text)
        with Store.open(str(ws), str(home)) as store:
            Recorder(store).attribute_outside_changes()
    mine = sha256(MINE.encode()).hexdigest()[:8]
    result = _run(client, ws, home, tmp_path / "result.json", "history-driver.el", RT_VERSION=mine)
    picked = result["questions"][0]
    assert picked["answer"] is not None and mine in picked["answer"], picked
    sources = [c.split()[2] for c in picked["choices"]]
    assert sources == ["outside", "outside", "agent", "first"], picked["choices"]
    steps = {s["step"]: s for s in result["steps"]}
    assert steps["restored"]["disk"] == MINE and steps["restored"]["buffer"] == MINE
    assert not steps["restored"]["modified"]
    assert any("M-x rewind-ls-undo" in m for m in result["messages"]), result["messages"]
    assert steps["undone"]["disk"] == "a1\n" and steps["undone"]["buffer"] == "a1\n"
