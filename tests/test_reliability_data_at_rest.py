"""Data at rest: the store is private (folders 0700, files 0600: the database, its -wal and -shm, the
logs, the lock, documents the server writes), nothing from the store lands in the workspace or in
git, and `rewind-ls gc` (retention and size caps) never deletes content a remaining checkpoint needs:
every remaining turn still restores exactly.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.support.agent import FakeClaude
from tests.support.fault import (
    check_store_whole,
    cli,
    cli_json,
    doctor_ok,
    files_only,
    query,
    store_db,
    tree_digest,
    tree_state,
)
from tests.support.lsp_client import start, uri_of


def _git(ws: Path, *args: str) -> str:
    env = {**os.environ, "GIT_OPTIONAL_LOCKS": "0"}
    return subprocess.run(
        ["git", *args], cwd=ws, env=env, capture_output=True, check=True, text=True
    ).stdout


def _loose(home: Path) -> list[str]:
    loose = []
    for dirpath, dirnames, filenames in os.walk(home):
        if dirpath == str(home):
            dirnames.remove("claude")  # the fake agent's own folder (CLAUDE_CONFIG_DIR), not ours
        for name in [".", *dirnames, *filenames]:
            full = os.path.join(dirpath, name)
            if name == "." and dirpath != str(home):
                continue
            st = os.lstat(full)
            want = 0o700 if stat.S_ISDIR(st.st_mode) else 0o600
            if stat.S_IMODE(st.st_mode) != want:
                loose.append(f"{os.path.relpath(full, home)} {oct(stat.S_IMODE(st.st_mode))}")
    return loose


@pytest.mark.asyncio
async def test_store_is_private_and_stays_out_of_the_workspace_and_git(tmp_path: Path) -> None:
    ws, home = tmp_path / "ws", tmp_path / "home"
    ws.mkdir()
    (ws / "a.txt").write_text("a0\n")
    (ws / "sub").mkdir()
    (ws / "sub" / "b.txt").write_text("b0\n")
    _git(ws, "init", "-q")
    _git(ws, "add", "-A")
    _git(ws, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "init")
    (ws / "ignored.log").write_text("x\n")
    git_before = tree_digest(ws / ".git")

    os.umask(0o022)  # the usual umask: everything private must be made so by rewind-ls itself
    agent = FakeClaude(ws, home, session_id="private")
    agent.env["REWIND_LS_DEBUG"] = "1"  # the hook logs every event: the log must be private too
    agent.turn("one", {"a.txt": "a1\n", "sub/c.txt": "c1\n"})
    agent.turn("two", {"a.txt": "a2\n"})
    agent.shell("echo shell > sub/d.txt")
    agent.turn("three", {"sub/b.txt": "b3\n"})
    after_agent = tree_state(ws)

    client, editor = await start(ws, home)
    try:
        turn = str(query(ws, home, "SELECT id FROM turns WHERE number = 2")[0][0])
        await client.protocol.send_request_async("rewind/timeline", {})
        await client.workspace_execute_command_async(
            __import__("lsprotocol").types.ExecuteCommandParams("rewind.diff", [turn])
        )
        editor.open(ws / "a.txt")
        await client.protocol.send_request_async("rewind/restore", {"turnId": turn})
        await client.protocol.send_request_async("rewind/undo", {})
        # While the server holds the store open, its WAL and shared-memory files exist: private too.
        names = {p.name for p in home.rglob("*")}
        assert {"store.sqlite3-wal", "store.sqlite3-shm", "server.log"} <= names
        assert not _loose(home), _loose(home)
    finally:
        await client.shutdown_session()
    for args in (("rewind", "1", "--yes"), ("undo", "--yes"), ("gc",), ("turns",)):
        proc = cli(ws, home, *args)
        assert proc.returncode == 0, (args, proc.stderr)

    # Private: every folder 0700, every file 0600, wherever rewind-ls put it.
    names = {p.name for p in home.rglob("*")}
    assert {"store.sqlite3", "restore.lock", "rewind-ls.log", "server.log"} <= names, names
    assert not _loose(home), _loose(home)
    doctor_ok(ws, home)

    # Nothing in the workspace but the agent's files; git untouched.
    now = tree_state(ws)
    assert files_only(now) == files_only(after_agent), set(now) ^ set(after_agent)
    assert not [p for p in ws.rglob("*") if "rewind" in p.name], "store artefacts in the workspace"
    assert tree_digest(ws / ".git") == git_before, ".git changed"
    status = sorted(_git(ws, "status", "--porcelain").splitlines())
    assert status == sorted(
        [" M a.txt", " M sub/b.txt", "?? ignored.log", "?? sub/c.txt", "?? sub/d.txt"]
    ), status
    assert store_db(ws, home).parent.resolve().is_relative_to(home.resolve())


def _turn_contents(i: int) -> dict[str, bytes]:
    # Distinct, incompressible-ish content per turn so the size cap bites.
    return {
        f"f{i % 3}.bin": os.urandom(16 * 1024),
        "shared.txt": f"turn {i}\n".encode() * 200,
    }


def test_gc_never_drops_live_content(tmp_path: Path) -> None:
    ws, home = tmp_path / "ws", tmp_path / "home"
    ws.mkdir()
    for k in range(3):
        (ws / f"f{k}.bin").write_bytes(b"start %d\n" % k)
    (ws / "shared.txt").write_text("start\n")
    agent = FakeClaude(ws, home, session_id="gc")
    before: dict[int, dict[str, Any]] = {}
    turns = 10
    for i in range(1, turns + 1):
        before[i] = files_only(tree_state(ws))
        agent.turn(f"turn {i}", _turn_contents(i))
    final = files_only(tree_state(ws))
    # The first three turns are old: the retention period drops them.
    old = time.time() - 40 * 86400
    import sqlite3

    conn = sqlite3.connect(store_db(ws, home))
    conn.execute(
        "UPDATE turns SET started_at = ?, ended_at = ? WHERE session_id = 'gc' AND number <= 3",
        (old, old),
    )
    conn.commit()
    conn.close()
    stats_before = check_store_whole(ws, home)
    size = query(ws, home, "SELECT sum(length(data)) FROM blobs")[0][0]
    result = cli_json(ws, home, "gc", "--retention-days", "30", "--max-bytes", str(size * 6 // 10))
    assert result["turnsDropped"] >= 3 and result["blobsDropped"] > 0, result
    assert result["bytesAfter"] <= size * 6 // 10 or result["turnsDropped"] == turns, result
    stats_after = check_store_whole(ws, home)  # every content a change or known path names is there
    doctor_ok(ws, home)
    remaining = [n for (n,) in query(ws, home, "SELECT number FROM turns WHERE session_id = 'gc'")]
    assert remaining and min(remaining) > 3, remaining
    # Every remaining turn restores exactly, and undo brings the latest state back.
    for n in sorted(remaining, reverse=True):
        proc = cli(ws, home, "rewind", str(n), "--session", "gc", "--yes")
        assert proc.returncode == 0, (n, proc.stdout, proc.stderr)
        assert files_only(tree_state(ws)) == before[n], n
        proc = cli(ws, home, "undo", "--yes")
        assert proc.returncode == 0, (n, proc.stderr)
        assert files_only(tree_state(ws)) == final, n
    # A second gc with the same caps drops nothing a remaining turn (or restore point) needs.
    cli_json(ws, home, "gc", "--retention-days", "30", "--max-bytes", str(size * 6 // 10))
    check_store_whole(ws, home)
    sys.stderr.write(
        f"\nreliability/gc: {json.dumps(result)}; store {stats_before} -> {stats_after}; "
        f"{len(remaining)} remaining turns each restored byte-exact\n"
    )
    assert uri_of(ws)  # (keeps the import honest for type checkers)
