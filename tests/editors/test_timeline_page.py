"""`rewind-ls timeline --html FILE` opened in headless Chromium: the cells of a known session read
from the DOM (agent, shell, outside, restore; a conflict marked), no request but the page itself,
clicks, folding and filtering; and a synthetic 200-turn x 2,000-file picture checked readable.
Screenshots go to test-artifacts/ (the test output)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from rewind_ls.core.history.activity import Cell, Column, Grid
from rewind_ls.core.history.activity_page import WHO, render
from tests.conftest import Cli
from tests.support.agent import FakeClaude

pytestmark = pytest.mark.editor

REPO = Path(__file__).resolve().parents[2]
PROBE = REPO / "editors" / "vscode" / "test" / "e2e" / "timeline_page.mjs"
ARTIFACTS = REPO / "test-artifacts"


def chromium() -> tuple[str, str]:
    node = shutil.which("node")
    browser = (
        os.environ.get("REWIND_CHROMIUM")
        or shutil.which("chromium")
        or shutil.which("chromium-browser")
    )
    playwright = REPO / "editors" / "vscode" / "node_modules" / "playwright-core"
    if not node or not browser or not playwright.is_dir():
        raise AssertionError(
            "node, chromium and playwright-core are needed: run `bash scripts/install-vscode-env.sh`"
            " (or scripts/test.sh)"
        )
    return node, browser


def probe(page: Path, screenshot: str, **extra: Any) -> dict[str, Any]:
    node, browser = chromium()
    ARTIFACTS.mkdir(exist_ok=True)
    config = {
        "url": page.as_uri(),
        "chromium": browser,
        "screenshot": str(ARTIFACTS / screenshot),
        **extra,
    }
    proc = subprocess.run(
        [node, str(PROBE), json.dumps(config)],
        capture_output=True,
        text=True,
        timeout=180,
        cwd=PROBE.parent,
    )
    assert proc.returncode == 0, proc.stderr
    out: dict[str, Any] = json.loads(proc.stdout)
    assert out["requests"] == [page.as_uri()], out["requests"]  # nothing but the page itself
    assert not [c for c in out["console"] if "error" in c], out["console"]
    assert (ARTIFACTS / screenshot).stat().st_size > 1000
    return out


def shell_turn(agent: FakeClaude, prompt: str, command: str) -> None:
    agent.hook("UserPromptSubmit", prompt=prompt)
    agent.shell(command)
    agent.hook("Stop", stop_hook_active=False)


def test_known_session_cells_from_the_dom(ws: Path, home: Path, cli: Cli) -> None:
    (ws / "src").mkdir()
    (ws / "src" / "a.py").write_text("a0\n")
    (ws / "old.txt").write_text("old\n")
    (ws / "README").write_text("r0\n")
    a = FakeClaude(ws, home)
    a.turn("write a", {"src/a.py": "a1\n"})
    shell_turn(a, "generate", "mkdir gen && echo out > gen/out.txt && rm old.txt")
    (ws / "src" / "a.py").write_text("a1 and mine\n")  # the person, between turns
    a.turn("readme", {"README": "r3\n"})
    b = FakeClaude(ws, home)
    b.turn("other session", {"README": "rB\n"})  # after A's turn 3: a conflict for A's rewind
    cli("rewind", "3", "--session", a.session_id, "--yes", "--force")

    page = ws.parent / "timeline.html"
    out = cli("timeline", "--html", str(page), "--session", a.session_id).stdout
    assert "wrote" in out and page.is_file()
    shown = probe(page, "timeline-known-session.png", filter="src/")
    cells = {(c["path"], c["who"], c["change"], c["conflict"]) for c in shown["cells"]}
    by_who: dict[str, set[str]] = {}
    for c in shown["cells"]:
        by_who.setdefault(c["who"], set()).add(c["path"])
    assert ("src/a.py", "agent", "modified", True) in cells  # the person edited it later
    assert ("gen/out.txt", "shell", "created", False) in cells
    assert ("old.txt", "shell", "deleted", False) in cells
    assert ("src/a.py", "outside", "modified", False) in cells
    assert ("README", "agent", "modified", True) in cells  # B changed it after: a conflict
    assert by_who["restore"] == {"README"}  # the rewind to turn 3 put README back
    kinds = [c["kind"] for c in shown["columns"]]
    assert kinds.count("agent") == 3 and "external" in kinds and "rewind" in kinds
    agent_turns = [c["number"] for c in shown["columns"] if c["kind"] == "agent"]
    assert agent_turns == ["1", "2", "3"]
    # Turns in order: the outside change sits before turn 3, the restore after it.
    assert kinds.index("external") < kinds.index("agent", 2) < kinds.index("rewind")
    assert shown["folders"] == ["", "gen", "src"]
    assert shown["summary"] == f"{len(kinds)} turns, 4 files"
    assert shown["cellDetails"] == (  # the first cell: README in turn 3
        "README\nturn 3 (claude-code): modified by agent (edit tool)\n"
        "conflict: changed by someone else later"
    )
    assert "write a" in shown["turnDetails"] and "src/a.py" in shown["turnDetails"]
    assert shown["folded"]["after"] < shown["folded"]["before"]
    assert shown["filtered"] == ["src/a.py"]
    assert "no agent session" not in cli("timeline").stdout  # the text form still works


def big_grid(turns: int = 200, files: int = 2000) -> Grid:
    """A long session over a large workspace: every turn touches a handful of files, every who,
    some shared and some conflicts."""
    columns = [
        Column(f"t{i}", i + 1, "s", "agent", "claude-code", f"prompt {i + 1}", None, "closed")
        for i in range(turns)
    ]
    paths = sorted(
        (f"pkg{f % 40:02d}/mod{f // 40:03d}.py" for f in range(files)),
        key=lambda p: (p.rpartition("/")[0], p),
    )
    cells = []
    for t in range(turns):
        for k in range(12):
            row = (t * 37 + k * 167) % files
            cells.append(Cell(row, t, WHO[(t + k) % len(WHO)], "modified", k == 3, k == 5))
    return Grid("/big/workspace", "s", columns, paths, cells)


def test_two_hundred_turns_by_two_thousand_files_is_readable(tmp_path: Path) -> None:
    page = tmp_path / "big.html"
    grid = big_grid()
    page.write_text(render(grid), encoding="utf-8")
    shown = probe(page, "timeline-200x2000.png", width=1280, height=800)
    assert len(shown["columns"]) == 200 and shown["rows"] == 2000
    assert len(shown["cells"]) == len(grid.cells) == 2400
    assert len(shown["folders"]) == 40
    # Only changed cells are elements: a few thousand nodes, not 400,000.
    assert shown["nodes"] < 12000, shown["nodes"]
    # Zoomed to fit: all 200 turns side by side in the window, cells still visible.
    assert shown["scrollWidth"] <= shown["innerWidth"] + 2, shown
    assert shown["firstCell"]["width"] >= 2 and shown["firstCell"]["height"] >= 10
    assert shown["onScreen"] > 50
    assert {c["who"] for c in shown["cells"]} == set(WHO)
    assert sum(c["shared"] for c in shown["cells"]) == 200
    assert sum(c["conflict"] for c in shown["cells"]) == 200
    assert shown["zoomedCell"] == 2  # zoom 4 px: the cell is 2 px inside its 1 px margins
    print(f"render of 200x2000 took {shown['renderMs']} ms", file=sys.stderr)
