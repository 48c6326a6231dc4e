"""The workspace watcher and the watched scan, on real inotify and real files (no mocks).

After every scan the store's `known` rows must equal what the full walk finds on disk (every
non-ignored regular file: its content hash and mode), and the changes the scan recorded must be
exactly the paths whose content or mode differ from the previous truth: a watched scan that missed
anything the walk would find fails here. Whenever the watcher did not cover the whole interval
(started after the last scan, killed, restarted, overflowed), the scan must walk (`watched` False).
"""

from __future__ import annotations

import os
import random
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from hashlib import sha256
from pathlib import Path

import pytest

from rewind_ls.core.capture import scan as scan_mod
from rewind_ls.core.capture import watch_journal
from rewind_ls.core.capture.folder_cache import skip_dirs
from rewind_ls.core.capture.ignore import IgnoreRules
from rewind_ls.core.capture.walk import walk
from rewind_ls.core.store import FILE, Store
from tests.support.waiting import wait_for
from tests.support.watcher import start_watcher, watch_dir, watcher_ready

pytestmark = pytest.mark.skipif(
    not os.path.isdir("/proc/sys/fs/inotify"), reason="the watcher needs Linux inotify"
)

Truth = dict[str, tuple[str, int]]


@pytest.fixture
def store(ws: Path, home: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Store]:
    monkeypatch.setenv("REWIND_LS_HOME", str(home))
    monkeypatch.setenv("REWIND_LS_WATCH", "1")
    monkeypatch.setenv("REWIND_LS_WATCH_IDLE", "120")
    # A loaded machine may hold the watcher back for a while: a late answer is not a miss here.
    monkeypatch.setenv("REWIND_LS_WATCH_SYNC", "30")
    # These tests check that each scan records exactly what changed since the last one; the
    # watcher's own versions between scans (local history) would take some of those changes
    # first. Local history and the watched scan together: tests/test_local_history.py.
    monkeypatch.setenv("REWIND_LS_HISTORY", "0")
    with Store.open(str(ws)) as s:
        yield s
        _kill(s)


def _kill(store: Store) -> None:
    """kill -9 the watcher (and one that was waiting for the lock, if any)."""
    wdir = watch_dir(store)
    starting = Path(wdir, watch_journal.STARTING)
    wait_for(lambda: not starting.exists(), "a starting watcher to take its lock")
    for _ in range(5):
        pid = watch_journal.watcher_pid(wdir)
        if pid is None or not watch_journal.alive(wdir):
            return
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        _reap(pid)
        time.sleep(0.3)  # a second watcher waiting for the lock would take it now
    raise AssertionError("the watcher did not die")


def _reap(pid: int) -> None:
    # Started by this process (posix_spawn): a killed one is reaped here, not left a zombie.
    try:
        os.waitpid(pid, 0)
    except ChildProcessError:
        wait_for(lambda: not Path(f"/proc/{pid}").exists(), f"pid {pid} to end")


def _truth(ws: Path, store: Store) -> Truth:
    rules = IgnoreRules.load(str(ws), [])
    out: Truth = {}
    for rel, st in walk(str(ws), rules, skip_dirs(store)):
        out[rel] = (sha256((ws / rel).read_bytes()).hexdigest(), st.st_mode & 0o7777)
    return out


def _known(store: Store) -> Truth:
    return {p: (v.hash or "", v.mode or 0) for p, v, _, _ in store.known_paths() if v.kind == FILE}


def _scan_and_check(ws: Path, store: Store, before: Truth) -> tuple[scan_mod.ScanResult, Truth]:
    result = scan_mod.scan(store, lambda changes: None)
    now = _truth(ws, store)
    assert _known(store) == now, _diff(_known(store), now)
    expected = {p for p in before.keys() | now.keys() if before.get(p) != now.get(p)}
    got = {c[0] for c in result.changes}
    # New paths whose ctime is older than the previous scan (the files of a folder moved in keep
    # theirs) are adopted, not recorded as created: the walk does the same (scan's watermark).
    adopted = expected - got
    assert got <= expected and len(adopted) == result.adopted, (result.watched, got, expected)
    assert not adopted & before.keys(), adopted
    return result, now


def _diff(a: Truth, b: Truth) -> dict[str, object]:
    return {p: (a.get(p), b.get(p)) for p in a.keys() | b.keys() if a.get(p) != b.get(p)}


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def _tree(ws: Path, dirs: int = 6, files: int = 4) -> None:
    _write(ws / ".gitignore", "*.log\nbuild/\n")
    for d in range(dirs):
        for f in range(files):
            _write(ws / f"d{d}" / f"sub{d % 2}" / f"f{f}.txt", f"{d} {f}\n")
    _write(ws / "build" / "out.txt", "ignored\n")
    _write(ws / "top.log", "ignored\n")


def _baseline(ws: Path, store: Store) -> Truth:
    """The baseline (full walk, starts the watcher), then a full scan synced with the ready
    watcher, which leaves the first mark."""
    scan_mod.scan(store, lambda changes: None)
    wait_for(lambda: watcher_ready(store), "the watcher to be ready")
    truth = _truth(ws, store)
    result, truth = _scan_and_check(ws, store, truth)
    assert not result.watched
    return truth


def _mutate(ws: Path, rng: random.Random, step: int) -> str:
    """One random operation; returns what it did (for the failure message)."""
    files = [
        p
        for p in ws.rglob("*")
        if ".git" not in p.parts and p.is_file() and not p.is_symlink() and p.name != ".gitignore"
    ]
    dirs = [p for p in ws.rglob("*") if p.is_dir() and not p.is_symlink() and ".git" not in p.parts]
    dirs.append(ws)
    kind = rng.randrange(12)
    d = rng.choice(dirs)
    if kind == 0:
        _write(d / f"new{step}.txt", f"new {step}\n")
    elif kind == 1 and files:
        f = rng.choice(files)
        f.write_text(f.read_text() + f"edit {step}\n")
    elif kind == 2 and files:
        rng.choice(files).unlink()
    elif kind == 3 and files:
        f = rng.choice(files)
        f.rename(rng.choice(dirs) / f"moved{step}{f.suffix}")
    elif kind == 4 and d != ws:
        target = rng.choice([p for p in dirs if d not in p.parents and p != d])
        d.rename(target / f"dir{step}")
    elif kind == 5 and d != ws:
        shutil.rmtree(d)
    elif kind == 6:
        _write(d / f"n{step}" / "a" / "b" / "deep.txt", "deep\n")
        _write(d / f"n{step}" / "top.txt", "top\n")
    elif kind == 7 and files:
        f = rng.choice(files)
        f.chmod(0o755 if f.stat().st_mode & 0o100 == 0 else 0o644)
    elif kind == 8 and files:
        link = d / f"link{step}"
        link.symlink_to(rng.choice(files + dirs))
    elif kind == 9 and files:
        f = rng.choice(files)  # same size, new bytes
        data = f.read_bytes()
        f.write_bytes(bytes(reversed(data)) if len(data) > 1 else b"Z")
    elif kind == 10:
        _write(d / f"x{step}.log", "ignored\n")
    elif kind == 11 and files:
        f = rng.choice(files)  # an editor's atomic save: write aside, rename over
        tmp = f.with_name(f.name + ".swp")
        tmp.write_text(f"saved {step}\n")
        tmp.replace(f)
    else:
        return f"{kind}: nothing"
    return f"{kind} in {d.relative_to(ws)}"


def test_watched_scans_find_exactly_what_the_walk_finds(ws: Path, store: Store) -> None:
    rng = random.Random(int(os.environ.get("REWIND_LS_TEST_SEED", "17")))
    _tree(ws)
    truth = _baseline(ws, store)
    watched = 0
    history: list[str] = []
    for step in range(60):
        for _ in range(rng.randrange(1, 4)):
            history.append(_mutate(ws, rng, step))
        result, truth = _scan_and_check(ws, store, truth)
        watched += result.watched
        # No ignore file changed: the watcher covered every interval.
        assert result.watched, (history, _journal_tail(store))
    assert watched == 60


def test_an_ignore_file_change_makes_the_scan_walk(ws: Path, store: Store) -> None:
    _tree(ws)
    truth = _baseline(ws, store)
    (ws / ".gitignore").write_text("*.log\n")  # build/ is not ignored any more
    result, truth = _scan_and_check(ws, store, truth)
    assert not result.watched and "build/out.txt" in truth
    (ws / "build" / "out.txt").write_text("now tracked\n")
    result, truth = _scan_and_check(ws, store, truth)
    assert result.watched
    assert [c[0] for c in result.changes] == ["build/out.txt"]


def test_changes_while_the_watcher_starts(ws: Path, store: Store) -> None:
    """A tree of many folders (the watcher takes a while to watch them all) changed by a thread
    throughout the watcher's start: the first scans walk, later ones are watched, none misses."""
    for d in range(150):
        _write(ws / f"p{d % 10}" / f"q{d}" / "f.txt", f"{d}\n")
    scan_mod.scan(store, lambda changes: None)  # baseline; the watcher starts now
    truth = _truth(ws, store)
    stop = threading.Event()

    def churn() -> None:
        rng = random.Random(5)
        n = 0
        while not stop.is_set():
            n += 1
            _write(ws / f"p{rng.randrange(10)}" / f"churn{n}" / "c.txt", f"{n}\n")
            d = rng.randrange(150)
            (ws / f"p{d % 10}" / f"q{d}" / "f.txt").write_text(f"{n}\n")

    thread = threading.Thread(target=churn)
    thread.start()
    try:
        seen_watched = False
        for _ in range(15):
            result = scan_mod.scan(store, lambda changes: None)
            seen_watched |= result.watched
    finally:
        stop.set()
        thread.join()
    result, truth = _scan_and_check(ws, store, _known(store))
    _write(ws / "p1" / "after.txt", "after\n")
    result, truth = _scan_and_check(ws, store, truth)
    assert result.watched and seen_watched


def test_a_killed_watcher_means_a_full_walk(ws: Path, store: Store) -> None:
    _tree(ws)
    truth = _baseline(ws, store)
    (ws / "d0" / "sub0" / "f0.txt").write_text("watched\n")
    result, truth = _scan_and_check(ws, store, truth)
    assert result.watched
    _kill(store)  # kill -9 mid-interval: changes from here on are seen by no one
    (ws / "d1" / "sub1" / "f1.txt").write_text("while dead\n")
    _write(ws / "d2" / "fresh" / "new.txt", "while dead\n")
    start_watcher(store)  # a new watcher: it did not run for the whole interval
    result, truth = _scan_and_check(ws, store, truth)
    assert not result.watched
    assert {c[0] for c in result.changes} == {"d1/sub1/f1.txt", "d2/fresh/new.txt"}
    (ws / "d3" / "sub1" / "f2.txt").write_text("watched again\n")
    result, truth = _scan_and_check(ws, store, truth)
    assert result.watched
    _kill(store)
    (ws / "d4" / "sub0" / "f3.txt").unlink()
    result, truth = _scan_and_check(ws, store, truth)  # no watcher at all: walks, starts one
    assert not result.watched and [c[0] for c in result.changes] == ["d4/sub0/f3.txt"]


def test_queue_overflow_means_a_full_walk(ws: Path, store: Store) -> None:
    """A real IN_Q_OVERFLOW: the watcher is stopped (SIGSTOP) while more events than the kernel's
    queue holds (fs.inotify.max_queued_events) happen, then continued."""
    limit = int(Path("/proc/sys/fs/inotify/max_queued_events").read_text())
    _tree(ws)
    truth = _baseline(ws, store)
    old = os.open(os.path.join(watch_dir(store), watch_journal.JOURNAL), os.O_RDONLY)
    pid = watch_journal.watcher_pid(watch_dir(store))
    assert pid is not None
    os.kill(pid, signal.SIGSTOP)
    try:
        a, b = ws / "d0" / "sub0" / "f0.txt", ws / "d0" / "sub0" / "f1.txt"
        for i in range(limit):  # alternating paths: the kernel merges no two
            os.utime(a, ns=(i, i))
            os.utime(b, ns=(i, i))
        (ws / "d5" / "sub1" / "f3.txt").write_text("lost in the overflow\n")
    finally:
        os.kill(pid, signal.SIGCONT)
    wait_for(lambda: b"X inotify queue overflowed" in _read_all(old), "the overflow line")
    os.close(old)
    wait_for(
        lambda: watcher_ready(store), "the next epoch"
    )  # the same process, a new inotify instance
    result, truth = _scan_and_check(ws, store, truth)
    assert not result.watched
    # f0/f1 have new mtimes but the same bytes: looked at, not changed.
    assert [c[0] for c in result.changes] == ["d5/sub1/f3.txt"]
    # That walk synced with the new epoch: scans are watched again.
    (ws / "d1" / "sub1" / "f0.txt").write_text("after\n")
    result, truth = _scan_and_check(ws, store, truth)
    assert result.watched


def _journal_tail(store: Store) -> str:
    try:
        return Path(watch_dir(store), watch_journal.JOURNAL).read_text()[-2000:]
    except OSError as exc:
        return str(exc)


def _read_all(fd: int) -> bytes:
    return os.pread(fd, 1 << 24, 0)


def test_only_one_watcher_per_workspace(ws: Path, store: Store) -> None:
    _tree(ws, dirs=2)
    start_watcher(store)
    first = watch_journal.watcher_pid(watch_dir(store))
    for _ in range(3):
        watch_journal.ensure_running(store.root, store.path)
    extra = subprocess.run(
        [sys.executable, "-m", "rewind_ls.core.capture.watcher", store.root, store.path],
        timeout=30,
        capture_output=True,
    )
    assert extra.returncode == 0  # found the lock taken and left
    assert watch_journal.watcher_pid(watch_dir(store)) == first and watch_journal.alive(
        watch_dir(store)
    )


def test_an_idle_watcher_stops(ws: Path, store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REWIND_LS_WATCH_IDLE", "1")
    _tree(ws, dirs=2)
    start_watcher(store)
    wait_for(
        lambda: not watch_journal.alive(watch_dir(store)), "the idle watcher to stop", timeout=10
    )
    status = Path(watch_dir(store), watch_journal.STATUS).read_text()
    assert status.startswith("idle")
    # Like everything in the store, the watcher's files are the owner's only (the real Claude Code
    # test's `doctor` caught a world-readable `watch/` folder and status file).
    loose = [
        str(p)
        for p in [Path(store.path), *Path(store.path).rglob("*")]
        if p.lstat().st_mode & 0o077
    ]
    assert not loose, loose


def _limited_watcher(store: Store, limit: int) -> subprocess.Popen[bytes]:
    """The watcher in its own user namespace, whose inotify watch limit is `limit` (a per-namespace
    sysctl: the machine's limit is left alone)."""
    script = (
        f"echo {limit} > /proc/sys/user/max_inotify_watches && "
        'exec "$0" -m rewind_ls.core.capture.watcher "$1" "$2"'
    )
    cmd = ["unshare", "--user", "--map-root-user", "sh", "-c", script]
    return subprocess.Popen([*cmd, sys.executable, store.root, store.path])


def _user_namespaces() -> bool:
    try:
        probe = subprocess.run(
            [
                "unshare",
                "--user",
                "--map-root-user",
                "sh",
                "-c",
                "echo 3 > /proc/sys/user/max_inotify_watches",
            ],
            capture_output=True,
            timeout=30,
        )
    except OSError:
        return False
    return probe.returncode == 0


def test_watch_limit_means_a_full_walk(ws: Path, store: Store) -> None:
    """A real ENOSPC from inotify_add_watch: new folders need more watches than the limit allows."""
    if not _user_namespaces():
        pytest.skip("no user namespaces here: cannot lower the inotify watch limit for one process")
    _write(ws / "a" / "f.txt", "a\n")
    _write(ws / "b" / "g.txt", "b\n")
    proc = _limited_watcher(store, 5)  # the root, a, b and the sync folder: 4 watches
    try:
        wait_for(lambda: watcher_ready(store), "the limited watcher to be ready")
        scan_mod.scan(store, lambda changes: None)  # baseline, synced: leaves the first mark
        truth = _truth(ws, store)
        (ws / "a" / "f.txt").write_text("watched\n")
        result, truth = _scan_and_check(ws, store, truth)
        assert result.watched
        _write(ws / "c" / "d" / "e" / "deep.txt", "past the limit\n")  # c, d, e: 7 watches
        assert proc.wait(timeout=20) == 0  # the watcher stopped on the limit
        status = Path(watch_dir(store), watch_journal.STATUS).read_text()
        assert status.startswith("limit"), status
        result, truth = _scan_and_check(ws, store, truth)
        assert not result.watched
        assert [c[0] for c in result.changes] == ["c/d/e/deep.txt"]
        # No new watcher for a while: it would hit the same limit.
        time.sleep(0.3)
        assert not watch_journal.alive(watch_dir(store))
        assert not Path(watch_dir(store), watch_journal.STARTING).exists()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_the_watcher_runs_our_package_not_a_workspaces_own_rewind_ls(
    ws: Path, store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`python -m` puts the caller's folder first on sys.path, and a hook's folder is the workspace:
    a workspace holding a `rewind_ls` folder of its own (a fork of this project) must not be what
    the detached watcher imports and runs."""
    planted = ws / "rewind_ls"
    planted.mkdir()
    marker = ws.parent / "planted-package-ran"
    (planted / "__init__.py").write_text(f"open({str(marker)!r}, 'w').close()\n")
    monkeypatch.chdir(ws)
    start_watcher(store)
    assert not marker.exists()
