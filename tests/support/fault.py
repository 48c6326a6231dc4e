"""Helpers for the reliability tests: run the real CLI, snapshot workspaces byte for byte, check that a
store is whole after a crash, and size the long loops.

`REWIND_RELIABILITY_RUNS` sizes the random-kill loops and the concurrency load. CI uses the small
defaults written next to each loop; the full-size run is `REWIND_RELIABILITY_RUNS=200` (see
`runs()`), which also scales the concurrency test to 8 hook processes x 200 edits.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sqlite3
import stat
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

FULL_RUNS = 200

# path -> (bytes, mode) for files, (None, mode) for folders, ("->target", 0) for symlinks.
TreeState = dict[str, tuple["bytes | str | None", int]]


class Tally:
    """Counts what a reliability module tried; printed once at the end of the module (the figures
    the issue notes quote). Each module makes one and exposes `report` as an autouse fixture."""

    def __init__(self, label: str) -> None:
        self.label = label
        self.counts: dict[str, int] = {}

    def __call__(self, what: str, n: int = 1) -> None:
        self.counts[what] = self.counts.get(what, 0) + n

    def __setitem__(self, what: str, n: int) -> None:
        self.counts[what] = n

    def report(self) -> None:
        sys.stderr.write(f"\n{self.label}: {json.dumps(self.counts, sort_keys=True)}\n")


def runs(ci_default: int) -> int:
    """How many iterations a loop makes: $REWIND_RELIABILITY_RUNS, else the CI default."""
    raw = os.environ.get("REWIND_RELIABILITY_RUNS")
    if raw and raw.isdigit() and int(raw) > 0:
        return int(raw)
    return ci_default


def full_size() -> bool:
    return runs(0) >= FULL_RUNS


def env_for(home: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("REWIND_LS_")}
    env.update(
        {
            "REWIND_LS_HOME": str(home),
            "CLAUDE_CONFIG_DIR": str(home / "claude"),
            "LC_ALL": "C.UTF-8",
            # No workspace watcher left running per test workspace (tests/test_watcher.py has it).
            "REWIND_LS_WATCH": "0",
            # The hook servers these processes start (their real path) stop soon after the test
            # rather than after 15 minutes, one per test home.
            "REWIND_LS_HOOK_SERVER_IDLE": "20",
        }
    )
    env.update(extra)
    return env


def cli(
    ws: Path,
    home: Path,
    *args: str,
    extra_env: Mapping[str, str] | None = None,
    timeout: float = 60,
) -> subprocess.CompletedProcess[bytes]:
    """`rewind-ls -C ws ARGS...` as its own process (the way a person runs it)."""
    cmd = [sys.executable, "-m", "rewind_ls", args[0], "-C", str(ws), *args[1:]]
    return subprocess.run(
        cmd,
        env=env_for(home, **dict(extra_env or {})),
        capture_output=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )


def cli_json(ws: Path, home: Path, *args: str, ok: tuple[int, ...] = (0,)) -> Any:
    proc = cli(ws, home, *args, "--json")
    assert proc.returncode in ok, (args, proc.returncode, proc.stdout, proc.stderr)
    return json.loads(proc.stdout)


def tree_state(
    root: Path, skip: tuple[str, ...] = (".git",), empty_folders: bool = True
) -> TreeState:
    """Every file (bytes and mode), folder and link under `root`: two states compare byte-exact, and
    a stray temporary or backup file makes them differ. `empty_folders=False` leaves folders out
    (rewind-ls does not track folders: a restore that deletes a file leaves its folder)."""
    out: TreeState = {}
    for dirpath, dirnames, filenames in os.walk(root):
        rel_dir = os.path.relpath(dirpath, root)
        dirnames[:] = sorted(d for d in dirnames if not (rel_dir == "." and d in skip))
        for name in dirnames + sorted(filenames):
            full = os.path.join(dirpath, name)
            rel = os.path.normpath(os.path.join(rel_dir, name))
            st = os.lstat(full)
            if stat.S_ISLNK(st.st_mode):
                out[rel] = ("->" + os.readlink(full), 0)
            elif stat.S_ISDIR(st.st_mode):
                if empty_folders:
                    out[rel] = (None, stat.S_IMODE(st.st_mode))
            else:
                with open(full, "rb") as f:
                    out[rel] = (f.read(), stat.S_IMODE(st.st_mode))
    return out


def files_only(state: TreeState) -> TreeState:
    return {k: v for k, v in state.items() if v[0] is not None}


def describe_diff(a: TreeState, b: TreeState) -> str:
    lines = []
    for key in sorted(set(a) | set(b)):
        if key not in a:
            lines.append(f"+ {key}")
        elif key not in b:
            lines.append(f"- {key}")
        elif a[key] != b[key]:
            lines.append(f"~ {key} ({oct(a[key][1])} -> {oct(b[key][1])})")
    return "\n".join(lines[:20])


def tree_digest(root: Path) -> str:
    """One hash for a whole folder tree: names, kinds, modes, contents, link targets, mtimes."""
    h = hashlib.sha256()
    if not root.exists():
        return "absent"
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for name in [*dirnames, *sorted(filenames)]:
            full = os.path.join(dirpath, name)
            st = os.lstat(full)
            h.update(os.path.relpath(full, root).encode("utf-8", "surrogateescape") + b"\0")
            h.update(f"{st.st_mode}:{st.st_mtime_ns}\0".encode())
            if stat.S_ISLNK(st.st_mode):
                h.update(os.readlink(full).encode("utf-8", "surrogateescape"))
            elif stat.S_ISREG(st.st_mode):
                with open(full, "rb") as f:
                    h.update(f.read())
    return h.hexdigest()


def reset_tree(dst: Path, src: Path) -> None:
    """Make `dst` an exact copy of `src` (same path, so the store's workspace key is unchanged)."""
    if dst.exists():
        for dirpath, dirnames, _ in os.walk(dst):
            for d in dirnames:
                os.chmod(os.path.join(dirpath, d), 0o755)
        shutil.rmtree(dst)
    shutil.copytree(src, dst, symlinks=True)


def store_db(ws: Path, home: Path) -> Path:
    from rewind_ls.core.store import store_dir_for

    return Path(store_dir_for(str(ws), str(home))) / "store.sqlite3"


def check_store_whole(ws: Path, home: Path) -> dict[str, int]:
    """The store opens, passes SQLite's integrity check, every blob decodes to its hash and every
    content a change or the known table names is present. Returns counts."""
    from rewind_ls.core.store import Store

    db = store_db(ws, home)
    assert db.exists(), db
    store = Store.open(str(ws), home=str(home), create=False)
    try:
        assert store.conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        hashes = [r[0] for r in store.conn.execute("SELECT hash FROM blobs")]
        for h in hashes:
            store.get_blob(h)  # raises CorruptBlob when the content does not match its hash
        missing = store.conn.execute(
            "SELECT count(*) FROM (SELECT before_hash AS h FROM changes WHERE before_kind = 'file'"
            " UNION SELECT after_hash FROM changes WHERE after_kind = 'file'"
            " UNION SELECT hash FROM known WHERE kind = 'file') x"
            " WHERE h NOT IN (SELECT hash FROM blobs)"
        ).fetchone()[0]
        assert missing == 0, f"{missing} referenced content(s) missing from the store"
        turns = store.conn.execute("SELECT count(*) FROM turns").fetchone()[0]
        changes = store.conn.execute("SELECT count(*) FROM changes").fetchone()[0]
        return {"blobs": len(hashes), "turns": turns, "changes": changes}
    finally:
        store.close()


def doctor_ok(ws: Path, home: Path) -> dict[str, Any]:
    report: dict[str, Any] = cli_json(ws, home, "doctor", ok=(0, 2))
    bad = [
        c
        for c in report["checks"]
        if not c["ok"] and c["name"] not in ("claude code hooks", "agent hooks")
    ]
    assert report["ok"] and not bad, bad
    return report


def query(ws: Path, home: Path, sql: str, *args: Any) -> list[tuple[Any, ...]]:
    conn = sqlite3.connect(f"file:{store_db(ws, home)}?mode=ro", uri=True, timeout=30)
    try:
        return list(conn.execute(sql, args).fetchall())
    finally:
        conn.close()
