"""Restores of more files than `apply_disk` fsyncs one by one (one syncfs flushes them all, moves use
renameat2, checks and deletes run in threads), through the real CLI: bytes on disk, a process killed
midway rolled back, and the file-system calls' own edge cases."""

from __future__ import annotations

import os
from pathlib import Path

from rewind_ls.core.fs.disk_sync import flush_files, parallel_map, portable, rename_noreplace
from rewind_ls.core.restore import pinned, swap
from tests.conftest import Cli
from tests.support.agent import FakeClaude

FILES = 100  # over swap._SYNC_EACH_MAX and parallel_map's threshold


def _setup(ws: Path, agent: FakeClaude, cli: Cli) -> None:
    for i in range(FILES):
        d = ws / f"dir{i % 7}"
        d.mkdir(exist_ok=True)
        (d / f"f{i}.txt").write_bytes(b"original %d\n" % i * (i + 1))
    (ws / "run.sh").write_bytes(b"#!/bin/sh\n")
    (ws / "run.sh").chmod(0o755)
    cli("scan")


def _turn(agent: FakeClaude) -> None:
    agent.turns += 1
    agent.hook("UserPromptSubmit", prompt="rewrite everything")
    agent.shell(
        "for f in dir*/*.txt; do printf 'rewritten\\n' >> \"$f\"; done; "
        "mkdir -p new/deep && echo made > new/deep/x.txt && chmod 600 run.sh"
    )
    agent.hook("Stop", stop_hook_active=False)


def test_large_rewind_and_undo_bytes_exact(ws: Path, agent: FakeClaude, cli: Cli, snapshot) -> None:  # type: ignore[no-untyped-def]
    assert FILES > swap._SYNC_EACH_MAX
    _setup(ws, agent, cli)
    start = snapshot()
    _turn(agent)
    changed = snapshot()
    assert len(changed) == len(start) + 1  # new/deep/x.txt
    cli("rewind", "1", "--yes")
    assert snapshot() == start
    cli("undo", "--yes")
    assert snapshot() == changed
    leftovers = [p for p in ws.rglob("*") if ".rewind-" in p.name]
    assert not leftovers


def test_large_rewind_killed_midway_is_rolled_back(
    ws: Path, agent: FakeClaude, cli: Cli, snapshot
) -> None:  # type: ignore[no-untyped-def]
    _setup(ws, agent, cli)
    _turn(agent)
    changed = snapshot()
    killed = Cli(ws, cli.home)
    killed.env["REWIND_LS_FAULT"] = f"after-swap:{FILES // 2}"
    proc = killed("rewind", "1", "--yes", ok=False)
    assert proc.returncode == 137, proc.stderr
    assert snapshot() != changed  # half swapped
    cli("turns")  # any command recovers first
    assert snapshot() == changed
    assert not [p for p in ws.rglob("*") if ".rewind-" in p.name]


def test_restore_killed_while_writing_a_temporary_file_leaves_nothing_behind(
    ws: Path, agent: FakeClaude, cli: Cli, snapshot
) -> None:  # type: ignore[no-untyped-def]
    """Killed with a temporary file half written (before any file moved): the next command rolls
    back and deletes that file too; it holds only what rewind-ls wrote, cut short (a recovery used
    to keep it, as content "rewind-ls did not write", litter in the person's folder)."""
    _setup(ws, agent, cli)
    _turn(agent)
    changed = snapshot()
    killed = Cli(ws, cli.home)
    killed.env["REWIND_LS_FAULT"] = "tmp-half-written:3"
    proc = killed("rewind", "1", "--yes", ok=False)
    assert proc.returncode == 137, proc.stderr
    assert [p for p in ws.rglob("*") if p.name.endswith(".tmp")]  # the half-written one
    out = cli("turns")  # any command recovers first
    assert snapshot() == changed
    assert not [p for p in ws.rglob("*") if ".rewind-" in p.name]
    assert "kept" not in out.stderr


def test_rename_noreplace(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    a.write_text("a")
    b.write_text("b")
    if portable():
        # No renameat2 in portable mode (as on macOS without renameatx_np): the caller's link +
        # unlink fallback is what the rest of this suite then runs.
        assert rename_noreplace(str(a), str(b)) is None
        return
    # Supported on this machine's file systems (tmpfs, ext4, overlayfs): the fallback is not taken.
    assert rename_noreplace(str(a), str(b)) is False
    assert a.read_text() == "a" and b.read_text() == "b"
    b.unlink()
    assert rename_noreplace(str(a), str(b)) is True
    assert not a.exists() and b.read_text() == "a"
    try:
        rename_noreplace(str(a), str(tmp_path / "c"))
    except FileNotFoundError as exc:
        assert exc.filename == str(a)
    else:
        raise AssertionError("a missing source must raise")


def test_flush_and_parallel_map(tmp_path: Path) -> None:
    flush_files([str(tmp_path), str(tmp_path)])
    try:
        flush_files([str(tmp_path / "missing")])
    except FileNotFoundError:
        pass
    else:
        raise AssertionError("a missing folder must raise")
    assert list(parallel_map(lambda x: x * 2, list(range(500)))) == [x * 2 for x in range(500)]

    def boom(x: int) -> int:
        if x == 300:
            raise OSError(5, "boom", f"f{x}")
        return x

    try:
        list(parallel_map(boom, list(range(500))))
    except OSError as exc:
        assert exc.filename == "f300"
    else:
        raise AssertionError("the worker's error must reach the caller")
    assert os.path.isdir(tmp_path)


def test_place_without_renameat2_never_replaces(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Where renameat2 is missing (old kernels, some file systems), `Pinned.place` falls back to link +
    unlink: the same promise, a file that appeared at the destination is never replaced."""
    monkeypatch.setattr(pinned, "rename_noreplace", lambda *args, **kw: None)
    a, b = tmp_path / "a", tmp_path / "b"
    a.write_text("new")
    b.write_text("the person's")
    with pinned.Pinned(str(tmp_path)) as fs:
        assert fs.place(str(a), str(b)) is False
        assert a.read_text() == "new" and b.read_text() == "the person's"
        b.unlink()
        assert fs.place(str(a), str(b)) is True
    assert not a.exists() and b.read_text() == "new"


def test_a_finished_restore_is_not_searched_for_backups_again(
    ws: Path, agent: FakeClaude, cli: Cli, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    """Every command starts with a recovery that looks for the backups a killed restore left. A
    restore that finished (no backup kept, emptied folders removed) says so in its journal as its
    last step, so the recovery does not look for its thousands of backups again; one killed
    before that step is still searched (test_reliability_crash kills it at every commit)."""
    from rewind_ls.core.restore import recovery
    from rewind_ls.core.store import Store

    _setup(ws, agent, cli)
    _turn(agent)
    cli("rewind", "1", "--yes")
    looked: list[str] = []
    real_exists = pinned.Pinned.exists

    def exists(self: pinned.Pinned, full: str) -> bool:
        looked.append(full)
        return real_exists(self, full)

    monkeypatch.setattr(pinned.Pinned, "exists", exists)
    monkeypatch.setenv("REWIND_LS_HOME", str(cli.home))
    with Store.open(str(ws)) as store:
        recovery._discard_leftover_backups(store)
    assert looked == []
