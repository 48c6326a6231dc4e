"""Nothing lost at the edges (issue #11, items 3 to 8), with the real CLI and hook processes:
other sessions' work, `--scope both` all or nothing, files rewind-ls cannot record, damaged
stores, a full disk, files over the size cap in a hook, a moved workspace."""

from __future__ import annotations

import io
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from tests.conftest import Cli
from tests.support.agent import FakeClaude
from tests.support.fault import env_for, store_db

# --- 3. other sessions ----------------------------------------------------------------------------


def test_sessions_a_b_a_on_one_file_is_a_conflict(ws: Path, home: Path, cli: Cli) -> None:
    (ws / "shared.txt").write_text("s0\n")
    a, b = FakeClaude(ws, home), FakeClaude(ws, home)
    a.turn("A one", {"shared.txt": "A1\n"})
    b.turn("B one", {"shared.txt": "B1 from the other session\n"})
    a.turn("A two", {"shared.txt": "A2\n"})
    proc = cli("rewind", "1", "--session", a.session_id, "--yes", ok=False)
    assert proc.returncode == 3, proc.stderr
    assert "shared.txt: also changed by turn #1 of session" in proc.stderr
    assert (ws / "shared.txt").read_text() == "A2\n"
    forced = cli("rewind", "1", "--session", a.session_id, "--yes", "--force")
    assert (ws / "shared.txt").read_text() == "s0\n", forced.stdout
    cli("undo", "--yes")
    assert (ws / "shared.txt").read_text() == "A2\n"


# --- 4. --scope both ------------------------------------------------------------------------------


def test_scope_both_fork_failure_restores_no_code(ws: Path, agent: FakeClaude, cli: Cli) -> None:
    agent.turn("first", {"a.txt": "1\n"})
    agent.turn("second", {"a.txt": "2\n"})
    agent.transcript.unlink()  # the conversation cannot be forked
    proc = cli("rewind", "2", "--scope", "both", "--yes", ok=False)
    assert proc.returncode == 2
    assert "code not restored either (code and conversation go together)" in proc.stderr, (
        proc.stderr
    )
    assert (ws / "a.txt").read_text() == "2\n"
    assert "nothing to undo" in cli("undo", "--yes", ok=False).stderr


def test_scope_both_code_failure_removes_the_fork(
    ws: Path, home: Path, agent: FakeClaude, tmp_path: Path
) -> None:
    agent.turn("first", {"a.txt": "1\n"})
    agent.turn("second", {"a.txt": "2\n"})
    forks_before = set(agent.transcript.parent.iterdir())
    mark = tmp_path / "mark"
    env = env_for(home, REWIND_LS_FAULT="before-aside:1", REWIND_LS_FAULT_MARK=str(mark))
    cmd = [sys.executable, "-m", "rewind_ls", "rewind", "-C", str(ws), "2", "--scope", "both"]
    proc = subprocess.Popen(
        [*cmd, "--yes"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    deadline = time.monotonic() + 30
    while not mark.exists():
        assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
        time.sleep(0.002)
    (ws / "a.txt").write_text("the person, at the moment of the swap\n")
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 3, err
    assert b"the conversation fork was removed" in err
    assert set(agent.transcript.parent.iterdir()) == forks_before
    assert (ws / "a.txt").read_text() == "the person, at the moment of the swap\n"


# --- 5. files rewind-ls cannot record ---------------------------------------------------------------


def test_link_and_folder_where_a_file_was_are_named(ws: Path, agent: FakeClaude, cli: Cli) -> None:
    for n in ("a.txt", "b.txt", "c.txt"):
        (ws / n).write_text(f"{n} 0\n")
    agent.turn("one", {"a.txt": "a1\n", "b.txt": "b1\n", "c.txt": "c1\n"})
    # A shell command replaces a with a link and b with a folder.
    agent.turns += 1
    agent.hook("UserPromptSubmit", prompt="replace")
    agent.shell("rm a.txt && ln -s c.txt a.txt && rm b.txt && mkdir b.txt && echo x > b.txt/in")
    agent.hook("Stop", stop_hook_active=False)
    turns = cli("turns").stdout
    assert "a.txt: a symbolic link now where a file was; not recorded" in turns, turns
    assert "b.txt: a folder now where a file was; not recorded" in turns
    doctor = cli.json("doctor", ok=False)
    gaps = next(c for c in doctor["checks"] if c["name"] == "unrecorded files")
    assert "a.txt" in gaps["detail"] and "b.txt" in gaps["detail"]
    preview = cli("rewind", "1", "--dry-run", ok=False)
    assert preview.returncode == 3
    assert "a.txt" in preview.stdout and "symbolic link" in preview.stdout, preview.stdout
    assert "b.txt" in preview.stdout and "not a regular file" in preview.stdout
    refused = cli("rewind", "1", "--yes", ok=False)
    assert refused.returncode == 3 and (ws / "c.txt").read_text() == "c1\n"
    done = cli("rewind", "1", "--yes", "--skip-conflicts")
    assert "left alone" in done.stdout
    assert (ws / "c.txt").read_text() == "c.txt 0\n"
    # The link and the folder are left alone (the file turn 2 made inside the folder is undone).
    assert os.path.islink(ws / "a.txt") and (ws / "b.txt").is_dir()
    assert not (ws / "b.txt" / "in").exists()


# --- 6. damaged store, full disk ------------------------------------------------------------------


def _root_page(db: Path, table: str) -> tuple[int, int]:
    """(page size, root page number) of `table`, with the WAL folded into the file first."""
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    page = conn.execute("PRAGMA page_size").fetchone()[0]
    root = conn.execute("SELECT rootpage FROM sqlite_master WHERE name = ?", (table,)).fetchone()[0]
    conn.close()
    return int(page), int(root)


def _damage_table(db: Path, table: str) -> None:
    page, root = _root_page(db, table)
    with open(db, "r+b") as f:
        f.seek((root - 1) * page)
        f.write(b"\xa5" * page)


def test_damaged_store_page_is_an_error_then_repair_salvages(
    ws: Path, home: Path, agent: FakeClaude, cli: Cli
) -> None:
    agent.turn("one", {"a.txt": "1\n"})
    agent.turn("two", {"a.txt": "2\n", "b.txt": "b\n"})
    db = store_db(ws, home)
    _damage_table(db, "changes")
    for args in (("turns",), ("rewind", "1", "--yes"), ("doctor",)):
        proc = cli(*args, ok=False)
        assert proc.returncode == 2, (args, proc.stderr)
        assert "Traceback" not in proc.stderr, proc.stderr
        text = proc.stderr + proc.stdout
        assert "doctor --repair" in text, (args, text)
    assert (ws / "a.txt").read_text() == "2\n"
    repaired = cli("doctor", "--repair", ok=False)
    assert "Traceback" not in repaired.stderr
    assert "damaged file kept at" in repaired.stdout, repaired.stdout
    kept = [p for p in db.parent.iterdir() if ".damaged-" in p.name]
    assert kept, list(db.parent.iterdir())
    listing = cli.json("turns")
    assert [t["prompt"] for t in listing["sessions"][0]["turns"]] == ["one", "two"]
    report = cli.json("doctor", ok=False)
    assert report["ok"], report
    # Recording goes on in the new store.
    agent.turn("three", {"c.txt": "c\n"})
    assert (ws / "c.txt").exists()
    assert len(cli.json("turns")["sessions"][0]["turns"]) == 3


def _damage_first_leaf(db: Path, table: str) -> None:
    """Overwrite the first leaf page of `table` (its root must be an interior page): a scan of the
    table fails there, yet the rows on its other pages can still be read by rowid."""
    page, root = _root_page(db, table)
    with open(db, "r+b") as f:
        f.seek((root - 1) * page)
        head = f.read(page)
        assert head[0] == 0x05, f"{table}: its root page is not an interior page"
        cell = int.from_bytes(head[12:14], "big")  # the first cell: left child, then its key
        child = int.from_bytes(head[cell : cell + 4], "big")
        f.seek((child - 1) * page)
        f.write(b"\xa5" * page)


def test_repair_copies_around_a_damaged_page_and_reads_contents_back(
    ws: Path, home: Path, agent: FakeClaude, cli: Cli
) -> None:
    """A damaged leaf page of `changes` loses its rows only; a damaged `packs` table loses the
    baseline's contents, and those the workspace still holds are read back from its files."""
    names = [f"f{i:03}.txt" for i in range(160)]
    for n in names:
        (ws / n).write_text(f"{n} original\n")
    agent.hook("SessionStart", source="startup")  # the baseline: small contents go to packs
    agent.turns += 1
    agent.hook("UserPromptSubmit", prompt="append to the first 120")
    agent.shell("for f in $(ls f*.txt | head -120); do echo more >> $f; done")
    agent.hook("Stop", stop_hook_active=False)
    db = store_db(ws, home)
    total = sqlite3.connect(db).execute("SELECT count(*) FROM changes").fetchone()[0]
    _damage_first_leaf(db, "changes")
    _damage_table(db, "packs")
    report = cli.json("doctor", "--repair", ok=False)
    repair = next(c for c in report["checks"] if c["name"] == "repair")
    assert repair["ok"], repair
    kept = sqlite3.connect(db).execute("SELECT count(*) FROM changes").fetchone()[0]
    assert 0 < kept < total, (kept, total)
    assert f"changes ({total - kept} row(s))" in repair["detail"], repair["detail"]
    assert "packs (the table's rows)" in repair["detail"], repair["detail"]
    # Every file's content now was in a pack (the baseline's and the turn's): read back.
    assert "160 lost content(s) read back from the workspace's files" in repair["detail"]
    # An untouched file's content came back: a later turn that changes it can be rewound.
    agent.turn("change an untouched file", {"f150.txt": "changed\n"})
    cli("rewind", str(agent.turns), "--yes")
    assert (ws / "f150.txt").read_text() == "f150.txt original\n"


def _can_mount_tmpfs() -> bool:
    if not shutil.which("unshare"):
        return False
    probe = subprocess.run(
        ["unshare", "-rm", "sh", "-c", "mount -t tmpfs -o size=1m tmpfs /mnt"],
        capture_output=True,
    )
    return probe.returncode == 0


@pytest.mark.skipif(
    not _can_mount_tmpfs(), reason="needs a private tmpfs (unshare -rm) to fill a real disk"
)
def test_full_disk_is_a_clear_error(tmp_path: Path) -> None:
    ws, small = tmp_path / "ws", tmp_path / "small"
    ws.mkdir()
    small.mkdir()
    (ws / "a.txt").write_text("a0\n")
    out = tmp_path / "out.json"
    script = textwrap.dedent(
        f"""
        import json, os, subprocess, sys
        sys.path.insert(0, {str(Path(__file__).parent.parent)!r})
        from pathlib import Path
        from tests.support.agent import FakeClaude
        ws, home = Path({str(ws)!r}), Path({str(small)!r}) / "home"
        agent = FakeClaude(ws, home)
        agent.hook("SessionStart", source="startup")
        agent.turn("one", {{"a.txt": "a1\\n"}})
        with open(Path({str(small)!r}) / "filler", "wb") as f:
            try:
                while True:
                    f.write(b"\\0" * 65536)
                    f.flush()
            except OSError:
                pass
        results = {{}}
        for args in (["turns"], ["rewind", "1", "--yes"]):
            p = subprocess.run([sys.executable, "-m", "rewind_ls", args[0], "-C", str(ws), *args[1:]],
                               env={{**os.environ, "REWIND_LS_HOME": str(home)}},
                               capture_output=True, text=True)
            results[args[0]] = [p.returncode, p.stderr]
        hook = agent.hook("UserPromptSubmit", prompt="two")
        results["hook"] = [hook.returncode, hook.stderr.decode()]
        Path({str(out)!r}).write_text(json.dumps(results))
        """
    )
    done = subprocess.run(
        [
            "unshare",
            "-rm",
            "sh",
            "-c",
            f'mount -t tmpfs -o size=3m tmpfs "{small}" && "$0" -c "$1"',
            sys.executable,
            script,
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    results = json.loads(out.read_text())
    for name in ("turns", "rewind"):
        code, err = results[name]
        assert code == 2, (name, err)
        assert "Traceback" not in err and "no space left for the store" in err, (name, err)
    assert results["hook"][0] == 0  # the agent is never blocked
    assert (ws / "a.txt").read_text() == "a1\n"  # nothing written to the workspace


# --- 7. files over the size cap in a hook ---------------------------------------------------------


def test_over_the_cap_is_never_read_in_a_hook(ws: Path, home: Path, agent: FakeClaude) -> None:
    """A 2 GB sparse file in the workspace: the Bash hook's process reads (rchar) far less than it."""
    with open(ws / "huge.bin", "wb") as f:
        f.truncate(2 * 1024**3)
    (ws / "small.txt").write_text("s\n")
    agent.hook("SessionStart", source="startup")
    agent.hook("UserPromptSubmit", prompt="touch the huge file")
    with open(ws / "huge.bin", "r+b") as f:
        f.seek(1024**3)
        f.write(b"changed in the middle")
    payload = json.dumps(
        {
            **agent._base("PostToolUse"),
            "tool_name": "Bash",
            "tool_input": {"command": "grow"},
            "tool_use_id": "toolu_1",
            "tool_response": {},
        }
    )
    probe = textwrap.dedent(
        f"""
        import io, sys
        from rewind_ls.core.agents.hook_process import run
        run("claude-code", io.BytesIO({payload.encode()!r}))
        rchar = [l for l in open("/proc/self/io") if l.startswith("rchar")][0].split()[1]
        print(rchar)
        """
    )
    proc = subprocess.run(
        [sys.executable, "-c", probe], env={**os.environ, **agent.env}, capture_output=True
    )
    assert proc.returncode == 0, proc.stderr
    assert int(proc.stdout.split()[-1]) < 64 * 1024**2, proc.stdout
    changes = Cli(ws, home).json("turns")["sessions"][0]["turns"][-1]["files"]
    assert [f["path"] for f in changes] == ["huge.bin"]
    assert io  # the probe's own import


# --- 8. a moved workspace -------------------------------------------------------------------------


def test_moved_workspace_reattaches_automatically(tmp_path: Path, home: Path) -> None:
    ws = tmp_path / "old-name"
    ws.mkdir()
    for n in ("a.txt", "b.txt", "c.txt"):
        (ws / n).write_text(f"{n} 0\n")
    agent = FakeClaude(ws, home)
    agent.turn("one", {"a.txt": "a1\n", "b.txt": "b1\n", "c.txt": "c1\n"})
    moved = tmp_path / "new-name"
    ws.rename(moved)  # same filesystem: files keep their inodes
    cli = Cli(moved, home)
    listing = cli.json("turns")
    assert [t["prompt"] for t in listing["sessions"][0]["turns"]] == ["one"]
    cli("rewind", "1", "--yes")
    assert (moved / "a.txt").read_text() == "a.txt 0\n"


def test_moved_workspace_by_copy_reattaches_with_doctor(tmp_path: Path, home: Path) -> None:
    ws = tmp_path / "old"
    ws.mkdir()
    (ws / "a.txt").write_text("a0\n")
    agent = FakeClaude(ws, home)
    agent.turn("one", {"a.txt": "a1\n"})
    copy = tmp_path / "copied"
    shutil.copytree(ws, copy)  # new inodes: not recognised automatically
    shutil.rmtree(ws)
    cli = Cli(copy, home)
    lost = cli("turns", ok=False)
    assert lost.returncode == 2
    assert "doctor --moved-from OLD" in lost.stderr and str(ws) in lost.stderr, lost.stderr
    report = cli.json("doctor", "--moved-from", str(ws), ok=False)
    moved = next(c for c in report["checks"] if c["name"] == "moved workspace")
    assert moved["ok"], moved
    cli("rewind", "1", "--yes")
    assert (copy / "a.txt").read_text() == "a0\n"


def _without_root_file_access() -> list[str]:
    """A prefix that runs a command unable to read a file its mode forbids, even as root (the
    capabilities that bypass file modes dropped); none needed for another user."""
    if os.geteuid() != 0:
        return []
    drop = "-dac_override,-dac_read_search"
    return ["setpriv", f"--inh-caps={drop}", f"--bounding-set={drop}"]


@pytest.mark.skipif(
    os.geteuid() == 0 and not shutil.which("setpriv"), reason="root without setpriv"
)
def test_unreadable_file_is_named_and_skippable(tmp_path: Path) -> None:
    ws, home = tmp_path / "ws", tmp_path / "home"
    ws.mkdir()
    out = tmp_path / "out.json"
    script = textwrap.dedent(
        f"""
        import json, os, subprocess, sys
        sys.path.insert(0, {str(Path(__file__).parent.parent)!r})
        from pathlib import Path
        from tests.support.agent import FakeClaude
        ws, home = Path({str(ws)!r}), Path({str(home)!r})
        for n in ("a.txt", "b.txt"):
            (ws / n).write_text(n + " 0\\n")
        agent = FakeClaude(ws, home)
        agent.turn("one", {{"a.txt": "a1\\n", "b.txt": "b1\\n"}})
        agent.turns += 1
        agent.hook("UserPromptSubmit", prompt="lock")
        agent.shell("echo secret > a.txt && chmod 000 a.txt")
        agent.hook("Stop", stop_hook_active=False)
        def cli(*args):
            p = subprocess.run([sys.executable, "-m", "rewind_ls", args[0], "-C", str(ws), *args[1:]],
                               env={{**os.environ, "REWIND_LS_HOME": str(home)}},
                               capture_output=True, text=True)
            return [p.returncode, p.stdout, p.stderr]
        results = {{
            "turns": cli("turns"),
            "doctor": cli("doctor"),
            "preview": cli("rewind", "1", "--dry-run"),
            "skip": cli("rewind", "1", "--yes", "--skip-conflicts"),
        }}
        Path({str(out)!r}).write_text(json.dumps(results))
        """
    )
    done = subprocess.run(
        [*_without_root_file_access(), sys.executable, "-c", script],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    r = json.loads(out.read_text())
    assert "a.txt: Permission denied" in r["turns"][1], r["turns"]
    assert "a.txt: Permission denied" in r["doctor"][1], r["doctor"]
    assert r["preview"][0] == 3 and "a.txt" in r["preview"][1], r["preview"]
    assert r["skip"][0] == 0, r["skip"]
    assert (ws / "b.txt").read_text() == "b.txt 0\n"
    os.chmod(ws / "a.txt", 0o600)
    assert (ws / "a.txt").read_text() == "secret\n"  # left alone
