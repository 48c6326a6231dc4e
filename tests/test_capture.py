"""Unit tests of `core.capture.recorder.Recorder` on real files: what a turn records as `before` and `after`,
whose change a change is (an outside edit or the tool's own write), and a file the shell made
unreadable. The hook process and the agents are tested end to end elsewhere (test_scan,
test_claude, tests/agents)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from rewind_ls.core.capture.file_reader import same_signature
from rewind_ls.core.capture.recorder import EXTERNAL_SESSION, Recorder
from rewind_ls.core.model import Version
from rewind_ls.core.store import ABSENT, FILE, Store, digest
from tests.test_reliability_edges import _without_root_file_access


@pytest.fixture
def store(ws: Path, home: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Store]:
    monkeypatch.setenv("REWIND_LS_HOME", str(home))
    with Store.open(str(ws)) as s:
        yield s


def _sides(store: Store, turn: str, rel: str) -> tuple[str | None, str | None]:
    """(before, after) of `rel` in `turn` as the bytes stored ("<absent>" for no file)."""
    row = store.change(turn, rel)
    assert row is not None, f"{rel} not recorded in {turn}"

    def side(version: Version | None) -> str | None:
        if version is None:
            return None
        if version.kind == ABSENT:
            return "<absent>"
        assert version.kind == FILE and version.hash is not None
        return store.get_blob(version.hash).decode()

    return side(row.before), side(row.after)


def test_before_is_the_first_touch_and_after_the_last(ws: Path, store: Store) -> None:
    (ws / "a.txt").write_text("v1\n")
    rec = Recorder(store)
    turn = rec.before("s", "a.txt")
    (ws / "a.txt").write_text("v2\n")
    assert rec.after("s", "a.txt") == turn
    assert _sides(store, turn, "a.txt") == ("v1\n", "v2\n")
    # A second edit in the same turn: the before stays the turn's start, the after moves on.
    rec.before("s", "a.txt")
    (ws / "a.txt").write_text("v3\n")
    rec.after("s", "a.txt")
    assert _sides(store, turn, "a.txt") == ("v1\n", "v3\n")
    known = store.known("a.txt")
    assert known is not None and known[0].hash == digest(b"v3\n")


def test_created_and_deleted_files_have_an_absent_side(ws: Path, store: Store) -> None:
    (ws / "old.txt").write_text("old\n")
    rec = Recorder(store)
    turn = rec.before("s", "new.txt")
    rec.before("s", "old.txt")
    (ws / "new.txt").write_text("new\n")
    (ws / "old.txt").unlink()
    rec.after("s", "new.txt")
    rec.after("s", "old.txt")
    assert _sides(store, turn, "new.txt") == ("<absent>", "new\n")
    assert _sides(store, turn, "old.txt") == ("old\n", "<absent>")


def test_an_edit_undone_in_the_same_turn_is_no_change(ws: Path, store: Store) -> None:
    (ws / "a.txt").write_text("same\n")
    rec = Recorder(store)
    turn = rec.before("s", "a.txt")
    (ws / "a.txt").write_text("changed\n")
    rec.after("s", "a.txt")
    (ws / "a.txt").write_text("same\n")
    rec.after("s", "a.txt")
    assert store.change(turn, "a.txt") is None


def test_outside_change_goes_to_the_external_session_not_the_agents_turn(
    ws: Path, store: Store
) -> None:
    (ws / "mine.txt").write_text("person 0\n")
    (ws / "tool.txt").write_text("tool 0\n")
    rec = Recorder(store)
    rec.attribute_outside_changes()  # the workspace baseline
    (ws / "mine.txt").write_text("person 1\n")  # the person, between turns
    turn = rec.begin_turn("s", "edit tool.txt")
    rec.before("s", "tool.txt")
    (ws / "tool.txt").write_text("tool 1\n")  # the tool's own write
    rec.after("s", "tool.txt")
    rec.end_turn("s")
    assert [c.path for c in store.changes(turn)] == ["tool.txt"]
    assert _sides(store, turn, "tool.txt") == ("tool 0\n", "tool 1\n")
    external = [t.id for t in store.turns(EXTERNAL_SESSION)]
    assert len(external) == 1
    assert _sides(store, external[0], "mine.txt") == ("person 0\n", "person 1\n")
    assert store.change(external[0], "tool.txt") is None


def test_tools_own_write_found_by_the_scan_opening_its_turn_is_the_tools(
    ws: Path, store: Store
) -> None:
    """An edit arrives with no turn open and no before (no UserPromptSubmit, no PreToolUse): the
    scan that opens the turn finds the write first and gives it to the external session; the
    tool's after takes it back into its own turn, with the old content as its before."""
    (ws / "a.txt").write_text("a0\n")
    (ws / "b.txt").write_text("b0\n")
    rec = Recorder(store)
    rec.attribute_outside_changes()
    (ws / "a.txt").write_text("a1\n")  # the tool's write
    (ws / "b.txt").write_text("b1\n")  # the person's, at the same time
    turn = rec.after("s", "a.txt")
    assert _sides(store, turn, "a.txt") == ("a0\n", "a1\n")
    external = [t.id for t in store.turns(EXTERNAL_SESSION)]
    assert len(external) == 1 and external[0] != turn
    assert store.change(external[0], "a.txt") is None
    assert _sides(store, external[0], "b.txt") == ("b0\n", "b1\n")
    assert store.change(turn, "b.txt") is None


def test_shell_change_inside_a_turn_is_recorded_by_the_scan(ws: Path, store: Store) -> None:
    (ws / "gen.txt").write_text("g0\n")
    rec = Recorder(store)
    turn = rec.begin_turn("s", "run the generator")
    (ws / "gen.txt").write_text("g1\n")  # a shell command: no edit tool reported it
    (ws / "made.txt").write_text("made\n")
    found = {path for path, _old, _new in rec.scan_into(turn, "s")}
    assert found == {"gen.txt", "made.txt"}
    assert _sides(store, turn, "gen.txt") == ("g0\n", "g1\n")
    assert _sides(store, turn, "made.txt") == ("<absent>", "made\n")
    assert store.change(turn, "made.txt").source == "scan"


def test_unchanged_signature_is_not_read_again(ws: Path, store: Store) -> None:
    """`current_version` trusts a path whose stat signature did not move: same size, mtime, inode
    and mode means the content it knew (one read per changed file, none per unchanged one)."""
    f = ws / "a.txt"
    f.write_text("aaaa\n")
    os.utime(f, ns=(1_000_000_000, 1_000_000_000))  # an old mtime: not racy
    rec = Recorder(store)
    first = rec.current_version("a.txt")
    st = f.stat()
    with open(f, "r+b") as fh:  # same size, same inode; the mtime put back
        fh.write(b"bbbb\n")
    os.utime(f, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert same_signature(f.stat(), st.st_size, st.st_mtime_ns, st.st_ino, st.st_mode & 0o7777)
    assert rec.current_version("a.txt") == first  # not read: the signature vouched for it
    f.chmod(0o600)  # the mode is part of the signature
    assert not same_signature(f.stat(), st.st_size, st.st_mtime_ns, st.st_ino, st.st_mode & 0o7777)
    assert rec.current_version("a.txt").hash == digest(b"bbbb\n")


_UNREADABLE = """
import json, os, sys
from rewind_ls.core.capture.recorder import Recorder
from rewind_ls.core.capture.scan import unrecorded
from rewind_ls.core.store import Store, digest
ws = sys.argv[1]
out = {}
with Store.open(ws) as store:
    rec = Recorder(store)
    rec.attribute_outside_changes()
    turn = rec.begin_turn("s", "lock it")
    f = os.path.join(ws, "a.txt")
    with open(f, "w") as fh:  # the shell command: new content, then no one may read it
        fh.write("secret\\n")
    os.chmod(f, 0)
    out["scan"] = [c[0] for c in rec.scan_into(turn, "s")]
    out["unrecorded"] = unrecorded(store)
    out["known_is_old"] = store.known("a.txt")[0].hash == digest(b"a0\\n")
    try:
        rec.before("s", "a.txt")  # an edit tool now touches it
        out["before"] = "recorded"
    except OSError as exc:
        out["before"] = [type(exc).__name__, os.path.basename(exc.filename or "")]
    out["change"] = store.change(turn, "a.txt") is not None
    os.environ["REWIND_LS_SCAN"] = "0"  # scans off: only known paths are re-checked
    out["recheck"] = [c[0] for c in rec.scan_into(turn, "s")]
    del os.environ["REWIND_LS_SCAN"]
    os.chmod(f, 0o644)  # readable again: the change is recorded, nothing was lost
    out["later"] = [(c[0], c[1].hash == digest(b"a0\\n"), c[2].hash == digest(b"secret\\n"))
                    for c in rec.scan_into(turn, "s")]
print(json.dumps(out))
"""


def test_file_the_shell_made_unreadable_is_named_and_kept(ws: Path, home: Path) -> None:
    """A shell command writes a file and takes away read permission: the scan names it instead of
    recording a guess, the last content seen stays known, an edit tool's before fails with the
    path, and once readable the change is recorded against the right old content. Runs in a child
    process without the capabilities that let root read any file."""
    (ws / "a.txt").write_text("a0\n")
    env = {**os.environ, "REWIND_LS_HOME": str(home)}
    env["PYTHONPATH"] = str(Path(__file__).resolve().parents[1])
    done = subprocess.run(
        [*_without_root_file_access(), sys.executable, "-c", textwrap.dedent(_UNREADABLE), str(ws)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["scan"] == []
    assert out["unrecorded"] == ["a.txt: Permission denied"]
    assert out["known_is_old"]
    assert out["before"] == ["PermissionError", "a.txt"]
    assert not out["change"]
    assert out["recheck"] == []
    assert out["later"] == [["a.txt", True, True]]
