"""Local history (`core.capture.local_history`): the real watcher process, on real inotify and
real files, records the person's versions between turns once a file has been still about a
second, and loses none when it stops or is killed.

Timing: nothing here asserts how fast a version comes; the tests wait (with a generous timeout)
for what must happen, and check what must not happen after the debounce has surely passed.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Iterator
from hashlib import sha256
from pathlib import Path

import pytest

from rewind_ls.core.capture import local_history, watch_journal
from rewind_ls.core.capture.recorder import Recorder
from rewind_ls.core.model import ABSENT, EXTERNAL_SESSION, Change, Version
from rewind_ls.core.store import Store
from tests.conftest import Cli
from tests.support.waiting import wait_for
from tests.support.watcher import start_watcher, watch_dir

pytestmark = pytest.mark.skipif(
    not os.path.isdir("/proc/sys/fs/inotify"), reason="the watcher needs Linux inotify"
)

WAIT = 30.0  # a loaded 2-core machine may hold the watcher back a long time


@pytest.fixture
def store(ws: Path, home: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Store]:
    monkeypatch.setenv("REWIND_LS_HOME", str(home))
    monkeypatch.setenv("REWIND_LS_WATCH", "1")
    monkeypatch.setenv("REWIND_LS_WATCH_IDLE", "120")
    monkeypatch.setenv("REWIND_LS_WATCH_SYNC", "30")
    (ws / "a.txt").write_text("one\n")
    (ws / "keep.txt").write_text("keep\n")
    with Store.open(str(ws)) as s:
        Recorder(s).attribute_outside_changes()  # the baseline
        start_watcher(s)
        yield s
        _stop(s, signal.SIGKILL)


def _stop(store: Store, signum: int) -> None:
    """Send `signum` to the watcher and wait until it is gone."""
    wdir = watch_dir(store)
    wait_for(lambda: not Path(wdir, watch_journal.STARTING).exists(), "the watcher's lock")
    pid = watch_journal.watcher_pid(wdir)
    if pid is None or not watch_journal.alive(wdir):
        return
    try:
        os.kill(pid, signum)
    except ProcessLookupError:
        return
    try:
        os.waitpid(pid, 0)  # started by this process (posix_spawn): reaped here
    except ChildProcessError:
        pass
    wait_for(lambda: not watch_journal.alive(wdir), "the watcher to stop")


def _h(text: str) -> str:
    return sha256(text.encode()).hexdigest()


def _versions(store: Store, rel: str) -> list[Change]:
    """The external session's changes to `rel`, oldest first."""
    out: list[Change] = []
    for turn in store.turns(EXTERNAL_SESSION):
        change = store.change(turn.id, rel)
        if change is not None:
            out.append(change)
    return sorted(out, key=lambda c: c.seq)


def _after_hashes(store: Store, rel: str) -> list[str | None]:
    return [c.after.hash if c.after is not None else None for c in _versions(store, rel)]


def _has_version(store: Store, rel: str, text: str) -> bool:
    return _h(text) in _after_hashes(store, rel)


def test_a_still_file_is_a_version_and_a_burst_only_its_quiet_point(
    ws: Path, store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A 3 s debounce and saves 0.3 s apart: a loaded machine would have to stall the test for
    # seconds between two saves to make a quiet point of its own.
    _stop(store, signal.SIGKILL)
    monkeypatch.setenv("REWIND_LS_HISTORY_DEBOUNCE", "3")
    start_watcher(store)
    a = ws / "a.txt"
    for i in range(6):  # a burst: none of these is still for the debounce
        a.write_text(f"burst {i}\n")
        time.sleep(0.3)
    wait_for(lambda: _has_version(store, "a.txt", "burst 5\n"), "the quiet point's version")
    hashes = _after_hashes(store, "a.txt")
    assert hashes == [_h("burst 5\n")], "one version per quiet point, not one per write"
    (change,) = _versions(store, "a.txt")
    assert change.source == local_history.WATCH_SOURCE and change.before.hash == _h("one\n")
    assert store.get_blob(_h("burst 5\n")) == b"burst 5\n"
    # An unchanged file costs nothing, and a second quiet point is a second version.
    a.write_text("second\n")
    wait_for(lambda: _has_version(store, "a.txt", "second\n"), "the second version")
    assert _after_hashes(store, "a.txt") == [_h("burst 5\n"), _h("second\n")]
    assert _versions(store, "keep.txt") == []


def test_an_edit_kept_two_seconds_survives_git_checkout(ws: Path, store: Store) -> None:
    def git(*args: str) -> None:
        subprocess.run(["git", *args], cwd=ws, check=True, capture_output=True)

    git("init", "-q")
    git("-c", "user.name=t", "-c", "user.email=t@t", "add", "a.txt")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "one")
    (ws / "a.txt").write_text("one\nmy line by hand\n")
    time.sleep(2)
    git("checkout", "--", "a.txt")
    assert (ws / "a.txt").read_text() == "one\n"
    wait_for(lambda: _has_version(store, "a.txt", "one\n"), "the checkout's version")
    hashes = _after_hashes(store, "a.txt")
    assert _h("one\nmy line by hand\n") in hashes, "the hand edit was lost"
    assert hashes[-1] == _h("one\n")
    assert store.get_blob(_h("one\nmy line by hand\n")) == b"one\nmy line by hand\n"


def test_a_deletion_is_recorded_with_the_deleted_content(ws: Path, store: Store) -> None:
    new = ws / "sub" / "new.txt"
    new.parent.mkdir()
    new.write_text("made by hand\n")
    wait_for(lambda: _has_version(store, "sub/new.txt", "made by hand\n"), "the new file's version")
    created = _versions(store, "sub/new.txt")[0]
    assert created.before.kind == ABSENT
    new.unlink()
    wait_for(lambda: None in _after_hashes(store, "sub/new.txt"), "the deletion")
    deleted = _versions(store, "sub/new.txt")[-1]
    assert deleted.after is not None and deleted.after.kind == ABSENT
    assert deleted.before.hash == _h("made by hand\n")
    assert store.get_blob(deleted.before.hash) == b"made by hand\n"


def test_ignored_files_and_files_over_the_cap_are_not_read(
    ws: Path, store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    (ws / ".gitignore").write_text("*.log\n")
    wait_for(lambda: _versions(store, ".gitignore"), "the .gitignore's version")
    (ws / "build.log").write_text("noise\n")
    (ws / "a.txt").write_text("after the log\n")
    wait_for(lambda: _has_version(store, "a.txt", "after the log\n"), "a.txt's version")
    assert _versions(store, "build.log") == [] and store.known("build.log") is None


def test_a_burst_of_100_saves_in_10_seconds_costs_a_bounded_number_of_versions(
    ws: Path, store: Store
) -> None:
    a = ws / "a.txt"
    for i in range(100):
        a.write_text(f"save {i}\n")
        time.sleep(0.1)
    wait_for(lambda: _has_version(store, "a.txt", "save 99\n"), "the last save's version")
    time.sleep(local_history.debounce_seconds() + 0.5)
    count = len(_versions(store, "a.txt"))
    # Never still for a second: a version at most every MAX_WAIT seconds, then the quiet point
    # (load may stretch the 10 s burst: the bound allows for it).
    assert 1 <= count <= 4, count


def test_inside_a_turn_the_turn_owns_the_changes(ws: Path, store: Store) -> None:
    rec = Recorder(store)
    turn = rec.begin_turn("s1", "do it", agent="claude-code")
    (ws / "a.txt").write_text("during the turn\n")
    time.sleep(local_history.debounce_seconds() + 1.5)
    assert _versions(store, "a.txt") == [], "a version was recorded inside a turn"
    rec.end_turn("s1")
    change = store.change(turn, "a.txt")
    assert change is not None and change.after is not None
    assert change.after.hash == _h("during the turn\n")


def _slow_watcher(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    """A watcher whose debounce never passes in a test: what it records, the stop made it."""
    _stop(store, signal.SIGKILL)
    monkeypatch.setenv("REWIND_LS_HISTORY_DEBOUNCE", "600")
    start_watcher(store)


def test_a_version_pending_when_the_watcher_stops_is_recorded(
    ws: Path, store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    _slow_watcher(store, monkeypatch)
    (ws / "a.txt").write_text("just before the stop\n")
    # Wait until the watcher has seen the write (its journal syncs), then stop it at once.
    assert watch_journal.sync(store.path, timeout=WAIT) is not None
    _stop(store, signal.SIGTERM)
    assert _has_version(store, "a.txt", "just before the stop\n")


def test_kill_9_with_versions_pending_is_recovered_by_the_next_scan_once(
    ws: Path, store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    _slow_watcher(store, monkeypatch)
    for round_ in range(2):  # killed twice: never lost twice either
        text = f"pending at the kill {round_}\n"
        (ws / "a.txt").write_text(text)
        assert watch_journal.sync(store.path, timeout=WAIT) is not None
        _stop(store, signal.SIGKILL)
        assert not _has_version(store, "a.txt", text)
        Recorder(store).attribute_outside_changes()  # the next scan (a hook's)
        assert _after_hashes(store, "a.txt").count(_h(text)) == 1
        start_watcher(store)
    _stop(store, signal.SIGTERM)  # the restarted watcher has nothing more to record
    assert _after_hashes(store, "a.txt") == [
        _h("pending at the kill 0\n"),
        _h("pending at the kill 1\n"),
    ]


def test_log_show_restore_and_undo_a_version_overwritten_by_git_checkout(
    ws: Path, store: Store, cli: Cli
) -> None:
    def git(*args: str) -> None:
        subprocess.run(["git", *args], cwd=ws, check=True, capture_output=True)

    git("init", "-q")
    git("-c", "user.name=t", "-c", "user.email=t@t", "add", "a.txt")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "one")
    mine = "one\nmy line by hand\n"
    (ws / "a.txt").write_text(mine)
    wait_for(lambda: _has_version(store, "a.txt", mine), "the hand edit's version")
    git("checkout", "--", "a.txt")
    wait_for(lambda: _has_version(store, "a.txt", "one\n"), "the checkout's version")
    versions = cli.json("log", "a.txt")["versions"]
    edits = [v for v in versions if v["source"] == "your edit"]
    assert [v["hash"] for v in edits] == [_h("one\n"), _h(mine)]  # newest first
    assert cli("show", "a.txt", "--version", _h(mine)[:8]).stdout == mine
    text = cli("log", "a.txt").stdout
    assert "your edit" in text and _h(mine)[:10] in text
    # Restore it: preview, a restore point, then undo takes it back.
    dry = cli("restore", "a.txt", "--version", _h(mine)[:6], "--dry-run").stdout
    assert "modify" in dry and (ws / "a.txt").read_text() == "one\n"
    out = cli("restore", "a.txt", "--version", _h(mine)[:6], "--yes").stdout
    assert "undo: rewind-ls undo" in out
    assert (ws / "a.txt").read_text() == mine
    time.sleep(local_history.debounce_seconds() + 1.0)
    # The restore is the restore point's change, not a version of the person's.
    assert _after_hashes(store, "a.txt")[-1] == _h("one\n")
    cli("undo", "--yes")
    assert (ws / "a.txt").read_text() == "one\n"


def test_a_deleted_file_is_restored_and_a_changed_one_is_a_conflict(
    ws: Path, store: Store, cli: Cli
) -> None:
    gone = ws / "gone.txt"
    gone.write_text("soon deleted\n")
    wait_for(lambda: _has_version(store, "gone.txt", "soon deleted\n"), "the new file's version")
    gone.unlink()
    wait_for(lambda: None in _after_hashes(store, "gone.txt"), "the deletion")
    result = cli.json("restore", "gone.txt", "--version", _h("soon deleted\n"))
    assert result["status"] == "applied" and result["mode"] == "version"
    assert gone.read_text() == "soon deleted\n"
    # Compare-and-swap: content rewind-ls has not seen yet is never overwritten unasked.
    (ws / "a.txt").write_text("two\n")
    wait_for(lambda: _has_version(store, "a.txt", "two\n"), "a.txt's version")
    _stop(store, signal.SIGKILL)
    (ws / "a.txt").write_text("not seen by rewind-ls\n")
    refused = cli("restore", "a.txt", "--version", _h("one\n"), "--yes", ok=False)
    assert refused.returncode != 0 and "changed since rewind-ls last saw it" in refused.stderr
    assert (ws / "a.txt").read_text() == "not seen by rewind-ls\n"
    bad = cli("show", "a.txt", "--version", "ffff", ok=False)
    assert bad.returncode != 0 and "no recorded version" in bad.stderr


def _record(store: Store, session: str, kind: str, path: str, old: str, new: str) -> None:
    from rewind_ls.core.model import FILE as FILE_KIND
    from rewind_ls.core.model import SessionKind

    store.ensure_session(session, SessionKind(kind), "workspace")
    with store.transaction():
        turn = store.begin_turn(session, "t")
        for text in (old, new):
            store.put_blob(text.encode())
        v = [Version(FILE_KIND, _h(t), 0o644, len(t)) for t in (old, new)]
        store.record_changes(turn, [(path, v[0], v[1])], local_history.WATCH_SOURCE)
        store.end_turn(turn)


def test_turns_names_each_overwritten_version_of_the_persons_once(
    ws: Path, home: Path, cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    from rewind_ls.core.history.overwritten import find_overwritten

    monkeypatch.setenv("REWIND_LS_HOME", str(home))
    with Store.open(str(ws)) as s:
        _record(s, EXTERNAL_SESSION, "external", "a.txt", "one\n", "mine\n")
        _record(s, EXTERNAL_SESSION, "external", "a.txt", "mine\n", "one\n")  # checkout
        _record(s, EXTERNAL_SESSION, "external", "b.txt", "one\n", "mine\n")
        _record(s, EXTERNAL_SESSION, "external", "b.txt", "mine\n", "newer\n")  # new work
        _record(s, EXTERNAL_SESSION, "external", "c.txt", "one\n", "mine\n")
        _record(s, "rewind", "rewind", "c.txt", "mine\n", "one\n")  # rewind-ls' own restore
        (case,) = find_overwritten(s)
    assert case.path == "a.txt" and case.version.hash == _h("mine\n")
    first = cli("turns").stdout
    assert "a.txt: your edit of " in first and " was overwritten at " in first
    assert f"rewind-ls restore a.txt --version {_h('mine' + chr(10))[:12]}" in first
    assert "b.txt" not in first and "c.txt" not in first
    assert "a.txt" not in cli("turns").stdout, "said twice"
    with Store.open(str(ws)) as s:  # a new case is said, the old one still not
        _record(s, EXTERNAL_SESSION, "external", "b.txt", "newer\n", "mine\n")
    again = cli("turns").stdout
    assert "b.txt: your edit" in again and "a.txt" not in again


def test_gc_keeps_the_persons_versions_as_long_as_turns_and_counts_those_it_drops(
    ws: Path, home: Path, cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    from rewind_ls.core.model import FILE as FILE_KIND
    from rewind_ls.core.model import SessionKind

    monkeypatch.setenv("REWIND_LS_HOME", str(home))
    day = 86400.0
    now = time.time()

    def turn(session: str, kind: str, age_days: float, text: str) -> None:
        s.ensure_session(session, SessionKind(kind), "claude-code" if kind == "agent" else None)
        at = now - age_days * day
        with s.transaction():
            tid = s.begin_turn(session, "t", started_at=at)
            s.put_blob(text.encode())
            v = Version(FILE_KIND, _h(text), 0o644, len(text))
            s.record_changes(tid, [(f"{text.strip()}.txt", Version(ABSENT), v)], "x")
            s.end_turn(tid, ended_at=at)

    with Store.open(str(ws)) as s:
        turn("agent-1", "agent", 40, "agent old\n")
        turn(EXTERNAL_SESSION, "external", 40, "mine old\n")
        turn(EXTERNAL_SESSION, "external", 35, "mine older two\n")
        turn("agent-1", "agent", 2, "agent new\n")
        turn(EXTERNAL_SESSION, "external", 2, "mine new\n")
    result = cli.json("gc", "--retention-days", "30")
    assert result["turnsDropped"] == 3 and result["versionsDropped"] == 2
    text = cli("gc", "--retention-days", "1", "--dry-run").stdout
    assert "would drop 2 turn(s) (1 of your own versions among them)" in text
    with Store.open(str(ws)) as s:
        kept = [t.started_at for t in s.turns(EXTERNAL_SESSION)]
        assert len(kept) == 1 and now - kept[0] < 3 * day


def test_without_inotify_versions_come_at_turn_boundaries_and_doctor_says_so(
    ws: Path, home: Path, cli: Cli
) -> None:
    """macOS, `REWIND_LS_PORTABLE=1`: no watcher, so no version until the next scan (a turn
    boundary), and `doctor` says so plainly."""
    cli.env.update(REWIND_LS_PORTABLE="1", REWIND_LS_WATCH="1")
    (ws / "a.txt").write_text("one\n")
    cli("scan")  # the baseline (a watcher would start here)
    (ws / "a.txt").write_text("mine\n")
    time.sleep(local_history.debounce_seconds() + 1.0)
    with Store.open(str(ws), str(home)) as s:
        assert not watch_journal.alive(watch_journal.watch_dir(s.path))
        assert _versions(s, "a.txt") == []
    cli("scan")  # what a hook does at a turn boundary
    with Store.open(str(ws), str(home)) as s:
        assert _after_hashes(s, "a.txt") == [_h("mine\n")]
    line = next(ln for ln in cli("doctor", ok=False).stdout.splitlines() if "local history" in ln)
    assert "off: no inotify" in line and "only at agent turn boundaries" in line, line
