"""Two LSP clients nobody on this project wrote: Emacs 28 with lsp-mode 8.0.0 and with eglot 1.9,
from Debian's packages (scripts/install-emacs-env.sh), against the real `rewind-ls serve`.

Emacs runs in batch mode (`emacs --batch`): no terminal to scrape, so no timing guesses; the
client's own code handles every message (applyEdit, showMessageRequest, showMessage, lenses). The
driver (tests/editors/emacs/driver.el) loads the same config snippet docs/client-contract.md shows,
scripts only the person (the answer `completing-read` gives to the server's question), and records
what buffers and files hold after each step; this test checks those, the question, and the bytes on
disk at the end. Agent turns are recorded through the real Claude Code hook.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).resolve().parent
for p in (HERE.parent,):
    if str(p) not in sys.path:
        sys.path.insert(0, str(p))

from support.agent import FakeClaude  # noqa: E402

pytestmark = pytest.mark.editor
EMACS_DIR = HERE / "emacs"
REPO = HERE.parent.parent
CONFIGS = {"lsp": "rewind-lsp-mode.el", "eglot": "rewind-eglot.el"}


def run_emacs(client: str, ws: Path, home: Path, out: Path) -> dict[str, Any]:
    emacs = shutil.which("emacs")
    if emacs is None:
        pytest.fail(
            "emacs is not installed: run scripts/install-emacs-env.sh (scripts/test.sh does)"
        )
    # `rewind-ls` as the snippet names it: this checkout's entry point first on PATH.
    bindir = str(Path(sys.executable).parent)
    env = {
        **os.environ,
        "PATH": bindir + os.pathsep + os.environ.get("PATH", ""),
        "REWIND_LS_HOME": str(home),
        "CLAUDE_CONFIG_DIR": str(home / "claude"),
        "HOME": str(home / "emacs-home"),
        "RT_CLIENT": client,
        "RT_ROOT": str(ws),
        "RT_OUT": str(out),
        "RT_HOME": str(home),
    }
    (home / "emacs-home").mkdir(parents=True, exist_ok=True)
    proc = subprocess.run(
        # --batch reads no init file; Debian's site-start puts its elpa packages on the load path.
        [
            emacs,
            "--batch",
            "-l",
            str(EMACS_DIR / CONFIGS[client]),
            "-l",
            str(EMACS_DIR / "driver.el"),
        ],
        cwd=ws,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )
    if not out.exists():
        raise AssertionError(
            f"emacs wrote no result (exit {proc.returncode}):\n{proc.stderr[-4000:]}"
        )
    result: dict[str, Any] = json.loads(out.read_text())
    result["stderr"] = proc.stderr
    assert result["failure"] is None, f"{result['failure']}\n{proc.stderr[-4000:]}"
    assert proc.returncode == 0, proc.stderr[-4000:]
    return result


@pytest.mark.parametrize("client", ["lsp", "eglot"])
def test_real_emacs_client(client: str, tmp_path: Path) -> None:
    ws, home = tmp_path / "ws", tmp_path / "home"
    ws.mkdir()
    subprocess.run(["git", "init", "-q", str(ws)], check=True)  # the project root both clients find
    (ws / "a.txt").write_text("a0\n")
    (ws / "b.txt").write_text("b0\n")
    agent = FakeClaude(ws, home)
    agent.turn("first: edit a", {"a.txt": "a1\n"})
    agent.turn("second: a, b and a new c", {"a.txt": "a2\n", "b.txt": "b2\n", "c.txt": "c2\n"})

    result = run_emacs(client, ws, home, tmp_path / "result.json")
    steps = {s["step"]: s for s in result["steps"]}

    # List turns.
    assert steps["listed"]["prompts"] == ["first: edit a", "second: a, b and a new c"]
    # The timeline: readable text, inside this server's workspace.
    timeline = steps["timeline"]
    assert "Turn 1 · " in timeline["text"] and "<!--" not in timeline["text"]
    if client == "lsp":
        lenses = dict(timeline["lenses"])
        turn_lines = [k for k in lenses if k.startswith("Turn ")]
        assert len(turn_lines) == 2
        assert all(lenses[k] == ["Rewind to here", "Revert turn", "Diff"] for k in turn_lines)
        assert timeline["all_workspaces"] == 1, "a second server was started for the timeline"
    else:
        assert timeline["managed"]
        # eglot 1.9 asks again before applying any server edit (its default); the person said yes.
        assert result["confirms"] and "Server wants to edit" in result["confirms"][0]
    # The first question was cancelled: nothing written.
    first = result["questions"][0]
    assert "rewind to turn 1" in first["prompt"] and "c.txt" in first["prompt"]
    assert first["choices"] == ["Rewind", "Cancel"] and first["answer"] == "Cancel"
    assert steps["cancelled"]["disk"] == {"a.txt": "a2\n", "b.txt": "b2\n", "c.txt": "c2\n"}
    # Rewind by number, confirmed: closed files written by the server, the open one edited.
    second = result["questions"][1]
    assert "delete c.txt" in second["prompt"] and "modify b.txt" in second["prompt"]
    rewound = steps["rewound"]
    assert rewound["disk"] == {"a.txt": "a2\n", "b.txt": "b0\n", "c.txt": None}
    assert rewound["buffer_a"] == "a0\n" and rewound["modified_a"] is True
    assert steps["rewound-saved"]["disk"]["a.txt"] == "a0\n"
    # A conflict (b.txt changed outside), undo skipping it.
    third = result["questions"][2]
    assert "conflict" in third["prompt"] and "b.txt" in third["prompt"]
    assert third["choices"] == ["Undo, skip conflicts", "Undo, overwrite conflicts", "Cancel"]
    assert steps["undone"]["disk"] == {"a.txt": "a0\n", "b.txt": "bX\n", "c.txt": "c2\n"}
    assert steps["undone"]["buffer_a"] == "a2\n"
    assert steps["undone-saved"]["disk"]["a.txt"] == "a2\n"
    # The diff, as the command's result and as a message (neither client can show a server document).
    assert "+c2" in steps["diff"]["text"] and "+c2" in steps["diff"]["message"]
    # Bytes on disk at the end, read here.
    assert (ws / "a.txt").read_bytes() == b"a2\n"
    assert (ws / "b.txt").read_bytes() == b"bX\n"
    assert (ws / "c.txt").read_bytes() == b"c2\n"
    assert not (ws / ".rewind-timeline").exists()
    # Nothing the client did not ask for: no warning about an unknown notification, no traceback.
    assert "rewind/didChangeTurns" not in result["warnings"]
    assert "rewind/didChangeTurns" not in "\n".join(result["messages"])
    server_log = (home / "server.log").read_text()
    assert "Traceback" not in server_log and "Invalid Params" not in server_log


def test_contract_shows_the_tested_snippets() -> None:
    contract = (REPO / "docs" / "client-contract.md").read_text()
    for name in CONFIGS.values():
        body = (EMACS_DIR / name).read_text().strip()
        assert body in contract, f"docs/client-contract.md does not show {name} as tested"


def test_docs_show_the_tested_snippets() -> None:
    """The docs' "Any LSP client" section (docs/editors/lsp-clients.md) shows part of each tested
    configuration: every form of its snippets is, word for word, in the file the test above loads."""
    page = (REPO / "docs" / "editors" / "lsp-clients.md").read_text()
    section = page.split("## Any LSP client", 1)[1].split("\n## ", 1)[0]
    blocks = [
        textwrap.dedent("\n".join(line[len(indent) :] for line in body.split("\n")))
        for indent, body in re.findall(r"\n( *)```elisp\n(.*?)\n *```", section, re.S)
    ]
    assert len(blocks) == len(CONFIGS), section
    for name, block in zip(CONFIGS.values(), blocks, strict=True):
        tested = (EMACS_DIR / name).read_text()
        for form in block.split("\n\n"):
            assert form.strip() in tested, f"the docs' snippet is not in {name}:\n{form}"
