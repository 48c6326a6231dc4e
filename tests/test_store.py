"""Unit tests of the store's records: what it hands out (never database rows), versions stored and
read back whole, the paths being edited right now, and turn states."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest

from rewind_ls.core.model import (
    ABSENT,
    ABSENT_VERSION,
    FILE,
    TOO_LARGE,
    UNKNOWN,
    AgentEvent,
    Change,
    ChangeKind,
    PathChange,
    Session,
    SessionKind,
    Turn,
    TurnState,
    Version,
)
from rewind_ls.core.store import Store, digest


@pytest.fixture
def store(tmp_path: Path) -> Store:
    root = tmp_path / "ws"
    root.mkdir()
    s = Store.open(str(root), home=str(tmp_path / "home"))
    yield s  # type: ignore[misc]
    s.close()


def _file(data: bytes, mode: int = 0o644) -> Version:
    return Version(FILE, digest(data), mode, len(data))


def test_every_query_hands_out_records(store: Store) -> None:
    store.ensure_session("s1", "agent", "claude-code", "/t.jsonl")
    turn_id = store.begin_turn("s1", "make it so", info='{"promptId": "p"}')
    store.record_before(turn_id, "a.txt", ABSENT_VERSION, "tool")
    store.record_after(turn_id, "a.txt", _file(b"x\n"))
    store.claim_event("s1", "tool", "toolu_1", "hook", turn_id)

    session = store.session("s1")
    assert isinstance(session, Session) and session.kind is SessionKind.AGENT
    assert (session.agent, session.transcript_path, session.open_turn) == (
        "claude-code",
        "/t.jsonl",
        turn_id,
    )
    assert store.sessions() == [session]
    turn = store.turn(turn_id)
    assert isinstance(turn, Turn) and turn.state is TurnState.OPEN
    assert (turn.session_id, turn.number, turn.prompt, turn.info) == (
        "s1",
        1,
        "make it so",
        '{"promptId": "p"}',
    )
    assert store.turns() == store.turns("s1") == [turn] and store.turn_by_number("s1", 1) == turn
    change = store.change(turn_id, "a.txt")
    assert isinstance(change, Change) and change.kind is ChangeKind.CREATED
    assert store.changes(turn_id) == store.all_changes() == store.changes_of_turns([turn_id])
    assert store.changes_since(0) == [change]
    (entry,) = store.path_history("a.txt")
    assert isinstance(entry, PathChange)
    assert (entry.session_id, entry.turn_state, entry.session_kind) == (
        "s1",
        TurnState.OPEN,
        SessionKind.AGENT,
    )
    assert entry.kind is ChangeKind.CREATED and entry.before == change.before
    event = store.event("s1", "tool", "toolu_1")
    assert isinstance(event, AgentEvent) and (event.turn_id, event.source) == (turn_id, "hook")
    # Records are immutable, and a column name is not a key (only the store knows columns).
    with pytest.raises(AttributeError):
        turn.state = TurnState.CLOSED  # type: ignore[misc]
    with pytest.raises(TypeError):
        turn["state"]  # type: ignore[call-overload]


def test_versions_round_trip_whole(store: Store, tmp_path: Path) -> None:
    store.ensure_session("s1", SessionKind.AGENT)
    t = store.begin_turn("s1", "p")
    script = _file(b"#!/bin/sh\n", 0o755)
    cases = {
        "created.sh": (ABSENT_VERSION, script),
        "unknown.txt": (Version(UNKNOWN), _file(b"seen after\n")),
        "deleted.txt": (_file(b"gone\n", 0o600), ABSENT_VERSION),
    }
    for path, (before, after) in cases.items():
        store.record_before(t, path, before, "tool")
        store.record_after(t, path, after)
    store.record_before(t, "unsettled.txt", _file(b"before\n"), "tool")
    for path, (before, after) in cases.items():
        change = store.change(t, path)
        assert change is not None
        for wrote, read in ((before, change.before), (after, change.after)):
            assert read is not None
            assert (read.kind, read.hash, read.mode) == (wrote.kind, wrote.hash, wrote.mode)
    # The mode survives (one copy of the row-to-Version code used to drop it).
    created = store.change(t, "created.sh")
    assert created is not None and created.after is not None and created.after.mode == 0o755
    unsettled = store.change(t, "unsettled.txt")
    assert unsettled is not None and unsettled.after is None and unsettled.kind is None
    assert store.change(t, "deleted.txt").kind is ChangeKind.DELETED  # type: ignore[union-attr]
    # A known path keeps its size too; a too-large file its stat signature.
    big = tmp_path / "big.bin"
    big.write_bytes(b"0" * 10)
    st = os.lstat(big)
    from rewind_ls.core.model import too_large

    store.set_known("big.bin", too_large(st), st)
    store.set_known("created.sh", script, None)
    store.set_known("gone.txt", ABSENT_VERSION, None)
    known = store.known("big.bin")
    assert known is not None
    assert (known[0].kind, known[0].size, known[0].hash) == (TOO_LARGE, 10, too_large(st).hash)
    assert known[1:] == (st.st_mtime_ns, st.st_ino)
    versions = store.known_versions(["created.sh", "gone.txt", "never.txt"])
    assert versions["created.sh"][0] == script and versions["created.sh"][0].size == len(
        b"#!/bin/sh\n"
    )
    assert versions["gone.txt"][0].kind == ABSENT and "never.txt" not in versions
    assert [p for p, *_ in store.known_paths()] == ["big.bin", "created.sh", "gone.txt"]


def test_busy_paths_are_unsettled_changes_of_open_turns(store: Store) -> None:
    store.ensure_session("A", "agent")
    store.ensure_session("B", "agent")
    a = store.begin_turn("A", "a")
    store.record_before(a, "editing.txt", _file(b"1\n"), "tool")  # after not yet recorded
    store.record_before(a, "done.txt", _file(b"1\n"), "tool")
    store.record_after(a, "done.txt", _file(b"2\n"))
    b = store.begin_turn("B", "b")
    store.record_before(b, "left.txt", _file(b"1\n"), "tool")
    store.end_turn(b)  # a closed turn's unsettled path is not being edited any more
    assert store.paths_in_flight() == {"editing.txt"}
    assert store.paths_in_flight(except_session="B") == {"editing.txt"}
    assert store.paths_in_flight(except_session="A") == set()


def test_turn_states_are_the_enum_and_stored_as_before(store: Store) -> None:
    store.ensure_session("rewind", SessionKind.REWIND, "rewind-ls")
    point = store.begin_turn("rewind", "restore", state=TurnState.PENDING)
    assert store.turns_in_state("rewind", TurnState.PENDING) == [(point, None)]
    store.set_turn_state(point, TurnState.APPLIED)
    assert store.latest_applied_turn("rewind") == point
    store.ensure_session("s", "agent")
    t = store.begin_turn("s", "p")
    store.end_turn(t)
    states = {x.id: x.state for x in store.turns()}
    assert states == {point: TurnState.APPLIED, t: TurnState.CLOSED}
    assert all(type(s) is TurnState for s in states.values())
    # The strings in the database are exactly those of earlier versions (no migration).
    conn = sqlite3.connect(os.path.join(store.path, "store.sqlite3"))
    try:
        stored = dict(conn.execute("SELECT id, state FROM turns").fetchall())
        kinds = dict(conn.execute("SELECT id, kind FROM sessions").fetchall())
    finally:
        conn.close()
    assert stored == {point: "applied", t: "closed"}
    assert kinds == {"rewind": "rewind", "s": "agent"}
    assert f"{TurnState.ROLLED_BACK}" == str(TurnState.ROLLED_BACK) == "rolled-back"


def test_a_session_kind_outside_the_vocabulary_is_refused(store: Store) -> None:
    with pytest.raises(ValueError):
        store.ensure_session("s", "agnet")
    assert store.session("s") is None


def test_record_changes_writes_what_record_before_and_after_write(tmp_path: Path) -> None:
    """A restore point records thousands of paths in a few statements: the rows (and their
    sequence numbers) are those of `record_before` + `record_after` path by path, a path already
    recorded keeps its first `before`, and a path named twice its last `after`."""
    rows = [
        ("a.txt", _file(b"1\n"), _file(b"2\n")),
        ("b.txt", ABSENT_VERSION, _file(b"new\n")),
        ("a.txt", _file(b"other\n"), _file(b"3\n")),
        ("c.txt", _file(b"c\n"), ABSENT_VERSION),
    ]
    got = []
    for batch in (False, True):
        root = tmp_path / f"ws{batch}"
        root.mkdir()
        with Store.open(str(root), home=str(tmp_path / f"home{batch}")) as s:
            s.ensure_session("s1", "agent", "claude-code")
            turn_id = s.begin_turn("s1", "p")
            s.record_before(turn_id, "c.txt", _file(b"first\n"), "tool")
            if batch:
                s.record_changes(turn_id, rows, "restore")
            else:
                for path, before, after in rows:
                    s.record_before(turn_id, path, before, "restore")
                    s.record_after(turn_id, path, after)
            got.append([(c.path, c.seq, c.source, c.before, c.after) for c in s.changes(turn_id)])
            seqs = s.path_histories(["a.txt", "c.txt"])
            assert [h.seq for h in seqs["a.txt"]] == [got[-1][0][1]]
    assert got[0] == got[1]


def test_path_histories_bounded_by_a_seq(store: Store) -> None:
    """A restore to a turn reads only the changes after it, not each path's whole history."""
    store.ensure_session("s1", "agent", "claude-code")
    seqs = []
    for n in range(4):
        turn_id = store.begin_turn("s1", f"turn {n}")
        store.record_before(turn_id, "a.txt", _file(b"%d\n" % n), "tool")
        store.record_after(turn_id, "a.txt", _file(b"%d\n" % (n + 1)))
        store.end_turn(turn_id)
        seqs.append(store.change(turn_id, "a.txt").seq)  # type: ignore[union-attr]
    whole = store.path_histories(["a.txt", "b.txt"])
    assert [h.seq for h in whole["a.txt"]] == seqs and whole["b.txt"] == []
    later = store.path_histories(["a.txt", "b.txt"], after_seq=seqs[1])
    assert later["a.txt"] == whole["a.txt"][2:] and later["b.txt"] == []
