"""The first checkpoint off the hooks' path: a hook's scan takes what its budget allows, a detached
worker (`core.capture.baseline_worker`, one per workspace) takes the rest, and killing that worker
at any moment loses nothing: the next hook starts another, which adopts only what is missing.

The worker is the real detached process (`posix_spawn`), killed with SIGKILL."""

from __future__ import annotations

import fcntl
import hashlib
import os
import random
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from rewind_ls.core.capture import baseline_spawn as bs
from rewind_ls.core.capture import scan as scan_mod
from rewind_ls.core.store import Store
from tests.conftest import Cli


@pytest.fixture
def store(ws: Path, home: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Store]:
    # The worker opens the store the way a hook does: through REWIND_LS_HOME.
    monkeypatch.setenv("REWIND_LS_HOME", str(home))
    monkeypatch.delenv("REWIND_LS_BASELINE_SECONDS", raising=False)
    s = Store.open(str(ws), str(home))
    try:
        yield s
    finally:
        pid = bs.worker_pid(s.path)
        if pid and bs.alive(s.path):
            os.kill(pid, signal.SIGKILL)
        s.close()


def _fill(ws: Path, n: int, size: int = 3000) -> dict[str, bytes]:
    """`n` files with distinct contents (a few KB each, so reading them takes a moment)."""
    out: dict[str, bytes] = {}
    for i in range(n):
        rel = f"d{i // 100}/f{i}.txt"
        data = hashlib.sha256(str(i).encode()).hexdigest().encode() * (size // 64)
        p = ws / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data)
        out[rel] = data
    return out


def _no_change(found: object) -> str | None:
    raise AssertionError(f"no change expected, got {found!r}")


def _wait(predicate: object, seconds: float = 120.0) -> None:
    deadline = time.monotonic() + seconds
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError("timed out")
        time.sleep(0.02)


def _assert_every_file_recorded(store: Store, files: dict[str, bytes]) -> None:
    """Every file known, with its exact content in the store."""
    sigs = store.known_file_signatures()
    assert set(files) <= set(sigs), sorted(set(files) - set(sigs))[:5]
    versions = store.known_versions(sorted(files))
    hashes = {rel: v.hash for rel, (v, _) in versions.items()}
    blobs = store.get_blobs({h for h in hashes.values() if h})
    for rel, data in files.items():
        assert blobs[hashes[rel]] == data, rel  # type: ignore[index]


def test_hook_budget_leaves_the_rest_to_one_detached_worker(ws: Path, store: Store) -> None:
    files = _fill(ws, 1500)
    # A budget far too small for the tree, as a hook on a large workspace has.
    result = scan_mod.scan(store, _no_change, "s1", budget=1e-6, background=True)
    assert not result.baseline_complete
    assert bs.busy(store.path)  # started (or getting going)
    # A second boundary meanwhile neither starts another worker nor walks: it adopts nothing.
    again = scan_mod.scan(store, _no_change, "s1", budget=1e-6, background=True)
    assert again.adopted == 0 and again.files == 0
    _wait(lambda: scan_mod.baseline_complete(store))
    _wait(lambda: not bs.busy(store.path))
    _assert_every_file_recorded(store, files)
    assert not os.path.exists(os.path.join(bs.worker_dir(store.path), bs.PROGRESS))


def test_a_hooks_walk_of_a_first_checkpoint_stops_at_its_budget(
    ws: Path, store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first hook of a large workspace stops walking when its budget is spent (the worker
    walks the rest), even though the folder cache collects a walk before yielding it: it walked
    every file before (0.7 s of CPU at 100,000 files, the longest hook of a first checkpoint)."""
    files = _fill(ws, 3000)
    calls = 0
    real = os.lstat

    def counting(*args: object, **kwargs: object) -> os.stat_result:
        nonlocal calls
        calls += 1
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "lstat", counting)
    result = scan_mod.scan(store, _no_change, "s1", budget=1e-6, background=True)
    monkeypatch.setattr(os, "lstat", real)
    assert not result.baseline_complete and result.adopted == 0
    assert calls < 1000, calls  # not one per file of the tree
    # Nothing lost: the worker walks and takes every file.
    _wait(lambda: scan_mod.baseline_complete(store))
    _wait(lambda: not bs.busy(store.path))
    _assert_every_file_recorded(store, files)


def test_without_background_the_hooks_go_on_budget_by_budget(ws: Path, store: Store) -> None:
    """REWIND_LS_BASELINE_SECONDS set (background False): no worker, as before."""
    _fill(ws, 300)
    result = scan_mod.scan(store, _no_change, "s1", budget=1e-6)
    assert not result.baseline_complete
    assert not bs.busy(store.path)


def _a_worker_running(ws: Path, store: Store) -> int:
    """known.txt recorded, the baseline not complete, and a worker holding its lock (the fd to
    close to end it)."""
    (ws / "known.txt").write_text("before\n")
    scan_mod.scan(store, _no_change, None, adopt_only=True)
    with store.transaction():
        store.set_meta(scan_mod.META_BASELINE, "")  # as if more files were still to come
    os.makedirs(bs.worker_dir(store.path), exist_ok=True)
    fd = os.open(os.path.join(bs.worker_dir(store.path), bs.LOCK), os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX)
    return fd


def test_while_the_worker_runs_a_hook_records_changes_to_known_files(
    ws: Path, store: Store
) -> None:
    """Nothing lost while the baseline is incomplete: a known file an agent's shell command
    changes is recorded in that turn even though the hook does not walk; a new file is left to
    the worker (adopted, so a rewind keeps it)."""
    fd = _a_worker_running(ws, store)
    try:
        (ws / "known.txt").write_text("after\n")
        (ws / "new.txt").write_text("new\n")
        seen: list[tuple[str, str, str]] = []

        def attribute(found: list[tuple[str, object, object]]) -> str:
            seen.extend((rel, str(old), str(new)) for rel, old, new in found)
            return "turn-1"

        result = scan_mod.scan(store, attribute, "s1", budget=5.0, background=True)
        assert [rel for rel, _, _ in seen] == ["known.txt"]
        assert result.turn == "turn-1"
        assert "new.txt" not in store.known_file_signatures()
    finally:
        os.close(fd)


def test_a_hook_starts_no_worker_when_the_baseline_was_completed_while_it_scanned(
    ws: Path, store: Store
) -> None:
    """The worker finishes and exits while a hook's lean scan runs: that scan is not complete
    by itself (it looked at known files only), but the baseline is, so no new worker starts
    (one would find nothing to do, and the first checkpoint would look busy meanwhile)."""
    fd = _a_worker_running(ws, store)
    (ws / "known.txt").write_text("after\n")

    def worker_done_meanwhile(found: list[tuple[str, object, object]]) -> str:
        # What the worker does as this scan records: its last batch, then it exits.
        store.set_meta(scan_mod.META_BASELINE, "complete")
        os.close(fd)
        return "turn-1"

    result = scan_mod.scan(store, worker_done_meanwhile, "s1", budget=5.0, background=True)
    assert result.turn == "turn-1"
    assert scan_mod.baseline_complete(store)
    assert not bs.busy(store.path)


_BACK_TO_BACK = """
import sqlite3, sys, time
conn = sqlite3.connect(sys.argv[1], isolation_level=None, timeout=30)
for i in range(1, 400):
    conn.execute("BEGIN IMMEDIATE")
    conn.execute("INSERT OR REPLACE INTO meta VALUES ('holder', ?)", (str(i),))
    time.sleep(0.05)  # a batch's rows and pack
    conn.execute("COMMIT")
    time.sleep(0.005)  # the next batch is ready: the worker's gap between transactions
"""


def test_a_writer_waits_for_one_of_the_workers_back_to_back_transactions(
    ws: Path, store: Store
) -> None:
    """A hook that needs the write lock while the worker commits batch after batch gets it in
    the first gap between two of them. SQLite's busy handler sleeps up to 100 ms a try, so it
    woke in a gap of a few ms only by luck, and a hook waited behind several batches."""
    import subprocess
    import sys

    db = os.path.join(store.path, "store.sqlite3")
    holder = subprocess.Popen([sys.executable, "-c", _BACK_TO_BACK, db])
    try:

        def held() -> int:
            return int(store.meta("holder") or 0)

        _wait(lambda: held() >= 2, 30)
        waited = []
        for _ in range(5):
            time.sleep(0.02)
            before = held()
            with store.transaction():
                waited.append(held() - before)
                store.set_meta("waiter", str(before))
        assert holder.poll() is None  # still committing back to back
        assert max(waited) <= 1, waited  # the batch in progress at most
    finally:
        holder.kill()
        holder.wait()


def test_a_worker_killed_at_any_moment_loses_nothing(ws: Path, store: Store) -> None:
    files = _fill(ws, 6000)
    rng = random.Random(29)
    kills = 0
    # Killed while listing (before any batch), then after a random number of committed batches
    # plus a random instant (inside the next batch's reads or its transaction).
    for at_least in (0, rng.randrange(1, 4) * 500, rng.randrange(6, 9) * 500):
        if scan_mod.baseline_complete(store):
            break
        assert bs.ensure_running(store.root, store.path)
        _wait(lambda: bs.alive(store.path))
        _wait(lambda n=at_least: (bs.progress(store.path) or (n, 0))[0] >= n)
        time.sleep(rng.uniform(0, 0.05))
        pid = bs.worker_pid(store.path)
        if pid is None or not bs.alive(store.path):
            continue
        os.kill(pid, signal.SIGKILL)
        kills += 1
        _wait(lambda: not bs.alive(store.path), 10)
        # What it committed is whole: every known row's content is in the store, exactly.
        sigs = store.known_file_signatures()
        _assert_every_file_recorded(store, {rel: files[rel] for rel in sigs})
    assert kills >= 1
    # The next hook's scan starts a new worker, which finishes the baseline.
    scan_mod.scan(store, _no_change, "s1", budget=1e-6, background=True)
    _wait(lambda: scan_mod.baseline_complete(store))
    _assert_every_file_recorded(store, files)


def test_turns_shows_the_workers_progress(ws: Path, store: Store, cli: Cli) -> None:
    wdir = bs.worker_dir(store.path)
    os.makedirs(wdir, exist_ok=True)
    fd = os.open(os.path.join(wdir, bs.LOCK), os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX)  # a worker is running
    try:
        with open(os.path.join(wdir, bs.PROGRESS), "w", encoding="ascii") as f:
            f.write("1500 4000\n")
        out = cli("turns").stdout
        assert "first checkpoint of this workspace in progress (1500 of 4000 files)" in out
    finally:
        os.close(fd)
    out = cli("turns").stdout
    assert "first checkpoint" not in out


def test_a_shell_command_waits_for_the_first_checkpoint(ws: Path, store: Store) -> None:
    """A shell command may change any file: before it runs (its PreToolUse hook), the hook waits
    for the worker's baseline, so a file the command changes has its first content recorded."""
    from rewind_ls.core.agents import hook_steps
    from rewind_ls.core.capture.recorder import Recorder

    files = _fill(ws, 6000)
    scan_mod.scan(store, _no_change, "s1", budget=1e-6, background=True)
    assert not scan_mod.baseline_complete(store)  # the worker has the rest
    hook_steps.shell_started(Recorder(store), "s1", "run-1", 60.0)
    assert scan_mod.baseline_complete(store)
    _assert_every_file_recorded(store, files)


def test_the_worker_is_not_whole_while_another_sessions_shell_command_runs(
    ws: Path, store: Store
) -> None:
    """Files a running shell command of another session may be writing are left to it: the
    worker's baseline is then not complete (it was marked so, and those files had no first
    content until some later scan happened to adopt them)."""
    from rewind_ls.core.capture import shell_runs

    shell_runs.shell_started(store, "other", "run-1", 60.0)
    _fill(ws, 50)  # written while the command runs
    result = scan_mod.scan(store, _no_change, None, adopt_only=True)
    assert result.deferred == 50
    assert not scan_mod.baseline_complete(store)
    shell_runs.shell_finished(store, "other", "run-1")
    scan_mod.scan(store, _no_change, None, adopt_only=True)
    assert scan_mod.baseline_complete(store)


def test_while_the_worker_runs_a_hook_looks_at_what_the_watcher_saw(
    ws: Path, store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With the workspace watcher up, a hook's scan while the worker runs `lstat`s only what the
    watcher journaled since the last scan and the rows written since (the worker's adoptions),
    not every known file; a change to a known file is still that turn's. Without a whole
    interval from the watcher (killed here) it `lstat`s every known file again. A file created
    meanwhile, which no lean scan adopts, is adopted by the first scan after the worker: that one
    walks (a lean scan's mark is for lean scans only)."""
    from tests.support.watcher import start_watcher
    from tests.test_watcher import _kill

    monkeypatch.setenv("REWIND_LS_WATCH", "1")
    monkeypatch.setenv("REWIND_LS_WATCH_IDLE", "120")
    monkeypatch.setenv("REWIND_LS_WATCH_SYNC", "30")
    files = _fill(ws, 300, size=200)
    for rel in files:  # not written "just now": their signatures are trusted (file_reader.RACY_NS)
        os.utime(ws / rel, ns=(time.time_ns() - 10**10, time.time_ns() - 10**10))
    scan_mod.scan(store, _no_change, None, adopt_only=True)
    with store.transaction():
        store.set_meta(scan_mod.META_BASELINE, "")  # as if more files were still to come
    start_watcher(store)
    os.makedirs(bs.worker_dir(store.path), exist_ok=True)
    fd = os.open(os.path.join(bs.worker_dir(store.path), bs.LOCK), os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX)  # a worker is running
    real_lstat = os.lstat
    looked: list[str] = []

    def counting_lstat(path: str, *args: object, **kwargs: object) -> os.stat_result:
        looked.append(str(path))
        return real_lstat(path, *args, **kwargs)  # type: ignore[arg-type]

    def hook(turn: str) -> tuple[list[str], scan_mod.ScanResult]:
        seen: list[str] = []

        def attribute(found: list[tuple[str, object, object]]) -> str:
            seen.extend(rel for rel, _, _ in found)
            return turn

        looked.clear()
        with monkeypatch.context() as m:
            m.setattr(os, "lstat", counting_lstat)
            result = scan_mod.scan(store, attribute, "s1", budget=5.0, background=True)
        return seen, result

    try:
        first, result = hook("turn-1")  # no mark yet: every known file
        assert first == [] and not result.watched and len(looked) >= len(files)
        (ws / "d1/f150.txt").write_text("changed by a shell command\n")
        (ws / "d2/new.txt").write_text("new while the worker runs\n")
        seen, result = hook("turn-2")
        assert seen == ["d1/f150.txt"] and result.watched
        assert len(looked) < 20, looked
        assert "d2/new.txt" not in store.known_file_signatures()  # left to the worker
        _kill(store)
        (ws / "d0/f7.txt").write_text("changed while no watcher ran\n")
        seen, result = hook("turn-3")
        assert seen == ["d0/f7.txt"] and not result.watched and len(looked) >= len(files)
    finally:
        os.close(fd)
    _wait(lambda: not bs.alive(store.path))
    # The worker is gone (its baseline still incomplete): the next scan walks and adopts.
    seen, result = hook("turn-4")
    assert seen == [] and not result.watched and result.baseline_complete
    assert "d2/new.txt" in store.known_file_signatures()
    _kill(store)
