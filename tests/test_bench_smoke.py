"""The benchmark's smoke mode still runs end to end and prints its table (timings are not asserted:
they mean nothing at smoke sizes, and the full suite is not part of the unit tests)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_bench_smoke_prints_the_table(tmp_path: Path) -> None:
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    proc = subprocess.run(
        [sys.executable, "-m", "bench", "--smoke"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = proc.stdout.splitlines()
    header = next(line for line in lines if line.startswith("| figure"))
    assert [c.strip() for c in header.strip("|").split("|")] == [
        "figure",
        "rewind-ls",
        "baseline",
        "ratio",
        "target",
        "verdict",
    ]
    rows = [line for line in lines if line.startswith("| ") and not line.startswith("| figure")]
    figures = " ".join(rows)
    for name in (
        "hook on an edit",
        "first checkpoint of the tree: time",
        "first checkpoint of the tree: bytes",
        "turn boundary",
        "restore 10 files from the CLI",
        "storage:",
        "through the language server",
        "rewind/listTurns, a page",
        "the view's refresh",
        "rewind/listTurns response",
        "server peak memory",
        "rewind-ls turns",
        "MCP list_turns",
        "MCP preview",
        "[loaded]",
        "export --to of",
        "export --git of a",
        "export --git rerun",
    ):
        assert name in figures, f"{name!r} missing from the table:\n{proc.stdout}"
    # Every ratio row that has both sides measured prints a ratio and a verdict.
    for row in rows:
        cells = [c.strip() for c in row.strip("|").split("|")]
        if cells[4] != "-" and cells[2] != "-":
            assert cells[3].endswith("x") and cells[5] in ("MET", "MISSED"), row
    # The bench cleans up after itself.
    assert not [p for p in tmp_path.iterdir() if p.name.startswith("rewind-ls-bench-")]


def test_history_bench_smoke_prints_its_rows(tmp_path: Path) -> None:
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    proc = subprocess.run(
        [sys.executable, "-m", "bench", "history", "--smoke"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    rows = {
        line.split("|")[1].strip(): line.split("|")[2].strip()
        for line in proc.stdout.splitlines()
        if line.startswith("| ") and line.count("|") == 3
    }
    assert int(rows["versions recorded"]) >= 10  # at least each file's last save (10 files)
    for name in ("watcher CPU per save", "store growth", "a day of normal work"):
        assert name in rows, proc.stdout
    assert not [p for p in tmp_path.iterdir() if p.name.startswith("rewind-ls-history-bench-")]
