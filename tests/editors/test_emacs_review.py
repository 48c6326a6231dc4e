"""Review in Emacs 28 with lsp-mode 8 and with eglot 1.9 (no rewind-ls client code for it): the
code action reverts one hunk of a turn of three hunks, the buffer and the disk bytes checked, then
`rewind.undo` and the bytes again. The scenario is tests/editors/emacs/review-driver.el, run with the
helpers of driver.el (RT_SCENARIO)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
for p in (HERE, HERE.parent):
    if str(p) not in sys.path:
        sys.path.insert(0, str(p))

from support.agent import FakeClaude  # noqa: E402
from test_emacs import run_emacs  # noqa: E402

pytestmark = pytest.mark.editor

BASE = "".join(f"line {i}\n" for i in range(1, 31))
TURN1 = BASE.replace("line 2\n", "TWO\n").replace("line 15\n", "FIFTEEN\n")
TURN1 = TURN1.replace("line 28\n", "X28\n")
TURN2 = TURN1.replace("line 8\n", "EIGHT\n")


@pytest.mark.parametrize("client", ["lsp", "eglot"])
def test_code_action_reverts_one_hunk_then_undo(
    client: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws, home = tmp_path / "ws", tmp_path / "home"
    ws.mkdir()
    subprocess.run(["git", "init", "-q", str(ws)], check=True)
    (ws / "a.txt").write_text(BASE)
    agent = FakeClaude(ws, home)
    agent.turn("make the numbers words", {"a.txt": TURN1})
    agent.turn("and eight", {"a.txt": TURN2})
    monkeypatch.setenv("RT_SCENARIO", "review-driver.el")
    result = run_emacs(client, ws, home, tmp_path / "result.json")
    steps = {s["step"]: s for s in result["steps"]}
    assert list(steps["actions"]["titles"]) == [
        "Revert this change (turn 1: make the numbers words)",
        "Revert turn 1 in this file",
    ]
    question = next(q for q in result["questions"] if q["answer"] == "Revert")
    assert "revert turn 1, hunk 2 of 3 in a.txt" in question["prompt"]
    want = TURN2.replace("FIFTEEN\n", "line 15\n")
    assert steps["reverted"]["buffer"] == want and steps["reverted"]["disk"] == TURN2
    assert steps["reverted-saved"]["disk"] == want
    assert steps["undone"]["buffer"] == TURN2
    assert steps["undone-saved"]["disk"] == TURN2
    assert (ws / "a.txt").read_bytes() == TURN2.encode()
    assert "Traceback" not in (home / "server.log").read_text()
    assert os.environ.get("RT_SCENARIO") == "review-driver.el"
