"""M-x rewind-ls-browse in Emacs 28 (editors/emacs/rewind-ls-browse.el, over lsp-mode and over
eglot): the workspace as it was at a turn in a dired-like buffer (a folder deleted since included),
RET opens a folder or a file (read-only, in its major mode), ^ goes up, a prefix argument shows the
turn's end; the workspace untouched. Driven by tests/editors/emacs/browse-driver.el."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
for p in (HERE, HERE.parent, HERE.parent.parent):
    if str(p) not in sys.path:
        sys.path.insert(0, str(p))

from support.agent import FakeClaude  # noqa: E402
from test_emacs_package import _run  # noqa: E402

pytestmark = pytest.mark.editor

APP0 = "def app():\n    return 'v0'\n"


@pytest.mark.parametrize("client", ["lsp", "eglot"])
def test_browse_a_turn_in_emacs(client: str, tmp_path: Path) -> None:
    ws, home = tmp_path / "ws", tmp_path / "home"
    ws.mkdir()
    subprocess.run(["git", "init", "-q", str(ws)], check=True)
    (ws / "src").mkdir()
    (ws / "lib").mkdir()
    (ws / "src" / "app.py").write_text(APP0)
    (ws / "lib" / "run.sh").write_text("#!/bin/sh\n")
    (ws / "lib" / "run.sh").chmod(0o755)
    (ws / "top.txt").write_text("top\n")
    agent = FakeClaude(ws, home)
    agent.turn("edit app", {"src/app.py": "def app():\n    return 'v1'\n"})
    agent.hook("UserPromptSubmit", prompt="drop lib")
    agent.shell("rm -rf lib")
    agent.hook("Stop", stop_hook_active=False)
    disk = {p: p.read_bytes() for p in ws.rglob("*") if p.is_file() and ".git" not in p.parts}
    result = _run(client, ws, home, tmp_path / "result.json", driver="browse-driver.el")
    steps = {s["step"]: s for s in result["steps"]}
    root = steps["root"]["text"].splitlines()
    assert root[0].startswith("  Turn #1 at its start (") and root[0].endswith("read-only: /")
    assert [line.split()[-1] for line in root[1:]] == ["lib/", "src/", "top.txt"]
    assert steps["root"]["mode"] == "rewind-ls-browse-mode" and steps["root"]["read_only"]
    src = steps["src"]["text"].splitlines()
    assert src[0].endswith("read-only: /src") and [x.split()[-1] for x in src[1:]] == [
        "../",
        "app.py",
    ]
    assert src[2].split()[:2] == ["-rw-r--r--", str(len(APP0))]
    file = steps["file"]
    assert file["text"] == APP0 and file["mode"] == "python-mode" and file["read_only"]
    assert file["file"] is None and file["buffer"] == "src/app.py (turn #1 start)"
    assert steps["up"]["text"] == steps["root"]["text"]
    end = steps["end"]["text"].splitlines()
    assert end[0].startswith("  Turn #2 at its end (")
    assert [line.split()[-1] for line in end[1:]] == ["src/", "top.txt"]
    assert {
        p: p.read_bytes() for p in ws.rglob("*") if p.is_file() and ".git" not in p.parts
    } == disk
