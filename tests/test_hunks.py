"""One-hunk reverts and per-line authors on small real stores (the planner's unit level; the
server, the CLI and the editors drive the same functions in their own tests)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from rewind_ls.core.capture.recorder import EDITOR_SESSION, EXTERNAL_SESSION, read_current
from rewind_ls.core.history.blame import (
    AGENT,
    ORIGINAL,
    OUTSIDE,
    RESTORE,
    SAVE,
    SHELL,
    UNRECORDED,
    Blamer,
)
from rewind_ls.core.model import Action, ConflictKind, Turn
from rewind_ls.core.restore import apply_disk
from rewind_ls.core.restore.hunks import (
    EDITED,
    EDITED_NEARBY,
    INTACT,
    REVERTED,
    plan_revert_hunks,
    turn_file,
)
from rewind_ls.core.restore.plan import Plan, disk_reader, plan_undo
from rewind_ls.core.restore.planner import select
from rewind_ls.core.store import Store


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    root = tmp_path / "ws"
    root.mkdir()
    with Store.open(str(root), home=str(tmp_path / "home")) as s:
        s.ensure_session("A", "agent", "claude-code")
        s.ensure_session(EDITOR_SESSION, "editor", "editor")
        s.ensure_session(EXTERNAL_SESSION, "external", "external")
        yield s


def _turn(store: Store, session: str, rel: str, data: bytes, source: str = "tool") -> Turn:
    """A turn that rewrites `rel` as a hook records it: before, the write, after, known."""
    turn_id = store.begin_turn(session, f"prompt of {session} #{len(store.turns(session)) + 1}")
    before, before_data, _ = read_current(store.root, rel)
    if before_data is not None:
        store.put_blob(before_data)
    store.record_before(turn_id, rel, before, source)
    Path(store.root, rel).write_bytes(data)
    after, after_data, st = read_current(store.root, rel)
    assert after_data is not None
    store.put_blob(after_data)
    store.record_after(turn_id, rel, after)
    store.set_known(rel, after, st)
    store.end_turn(turn_id)
    turn = store.turn(turn_id)
    assert turn is not None
    return turn


BASE = [b"line %d\n" % i for i in range(1, 31)]


def _with(lines: list[bytes], **at: bytes) -> bytes:
    out = list(lines)
    for key, value in at.items():
        out[int(key[1:]) - 1] = value
    return b"".join(out)


def _three_hunks(store: Store) -> Turn:
    Path(store.root, "f.txt").write_bytes(b"".join(BASE))
    return _turn(store, "A", "f.txt", _with(BASE, l2=b"TWO\n", l15=b"FIFTEEN\n", l28=b"X28\n"))


def _apply(store: Store, plan: Plan) -> None:
    apply_disk.apply_to_disk(store, plan, select(plan, False, False))


def _read(store: Store) -> bytes:
    return Path(store.root, "f.txt").read_bytes()


def test_revert_one_hunk_keeps_the_others_and_later_edits(store: Store) -> None:
    t1 = _three_hunks(store)
    # A later turn edits another line: it stays.
    _turn(store, "A", "f.txt", _read(store).replace(b"line 8\n", b"EIGHT\n"))
    tf = turn_file(store, t1, "f.txt")
    assert tf is not None and len(tf.hunks) == 3
    plan = plan_revert_hunks(store, t1, disk_reader(store.root), {"f.txt": [1]}, "one hunk")
    (pp,) = plan.paths
    assert pp.conflict is None and pp.action == Action.MODIFY
    _apply(store, plan)
    assert _read(store) == _with(BASE, l2=b"TWO\n", l8=b"EIGHT\n", l28=b"X28\n")
    # The restore point brings the hunk back.
    _apply(store, plan_undo(store, disk_reader(store.root)))
    assert _read(store) == _with(BASE, l2=b"TWO\n", l8=b"EIGHT\n", l15=b"FIFTEEN\n", l28=b"X28\n")


def test_hunk_states_edited_nearby_edited_reverted(store: Store) -> None:
    t1 = _three_hunks(store)
    now = _read(store)
    now = now.replace(b"TWO\n", b"TWO, edited\n")  # hunk 1's own line: refused
    now = now.replace(b"line 13\n", b"THIRTEEN\n")  # two lines above hunk 2: merge, previewed
    now = now.replace(b"X28\n", b"line 28\n")  # hunk 3 already put back by hand
    _turn(store, EDITOR_SESSION, "f.txt", now)
    tf = turn_file(store, t1, "f.txt")
    assert tf is not None
    states = tf.states(_read(store))
    assert [s.status for s in states] == [EDITED, EDITED_NEARBY, REVERTED]
    assert [s.revertable for s in states] == [False, True, False]
    assert [(s.start, s.end) for s in states] == [(1, 2), (14, 15), (27, 28)]
    refused = plan_revert_hunks(store, t1, disk_reader(store.root), {"f.txt": [0]})
    (pp,) = refused.paths
    assert pp.conflict is not None and pp.conflict.kind == ConflictKind.MERGE
    assert not pp.conflict.forcible


def test_hunk_places_follow_lines_added_above(store: Store) -> None:
    t1 = _three_hunks(store)
    _turn(store, "A", "f.txt", b"new 1\nnew 2\n" + _read(store))
    tf = turn_file(store, t1, "f.txt")
    assert tf is not None
    assert [(s.start, s.end, s.status) for s in tf.states(_read(store))] == [
        (3, 4, EDITED_NEARBY),  # the new lines are right above it
        (16, 17, INTACT),
        (29, 30, INTACT),
    ]


def test_pure_deletion_and_insertion_hunks(store: Store) -> None:
    Path(store.root, "f.txt").write_bytes(b"".join(BASE))
    lines = list(BASE)
    del lines[4:6]  # lines 5-6 removed
    lines.insert(20, b"inserted\n")
    t1 = _turn(store, "A", "f.txt", b"".join(lines))
    tf = turn_file(store, t1, "f.txt")
    assert tf is not None
    states = tf.states(_read(store))
    assert [(s.start, s.end, s.removed, s.added) for s in states] == [
        (4, 4, [b"line 5\n", b"line 6\n"], []),
        (20, 21, [], [b"inserted\n"]),
    ]
    _apply(store, plan_revert_hunks(store, t1, disk_reader(store.root), {"f.txt": [0]}))
    assert b"line 5\nline 6\n" in _read(store) and b"inserted\n" in _read(store)


def test_created_file_has_no_hunks_and_says_so(store: Store) -> None:
    t1 = _turn(store, "A", "new.txt", b"made\n")
    assert turn_file(store, t1, "new.txt") is None
    with pytest.raises(Exception, match="no line hunks"):
        plan_revert_hunks(store, t1, disk_reader(store.root), {"new.txt": [0]})
    # The whole file still reverts (None = the whole path).
    plan = plan_revert_hunks(store, t1, disk_reader(store.root), {"new.txt": None})
    assert [p.action for p in plan.paths] == [Action.DELETE]


def test_blame_names_every_author(store: Store) -> None:
    Path(store.root, "f.txt").write_bytes(b"".join(BASE[:10]))
    t1 = _turn(store, "A", "f.txt", _with(BASE[:10], l1=b"agent one\n"))
    t2 = _turn(store, "A", "f.txt", _read(store) + b"agent shell\n", source="scan")
    save = _turn(store, EDITOR_SESSION, "f.txt", _read(store).replace(b"line 3\n", b"saved\n"))
    out = _turn(store, EXTERNAL_SESSION, "f.txt", _read(store).replace(b"line 5\n", b"sed\n"))
    Path(store.root, "f.txt").write_bytes(_read(store).replace(b"line 7\n", b"unsaved\n"))
    blame = Blamer(store).blame("f.txt", _read(store))
    who = [(o.source, o.turn_id) for o in blame.origins]
    assert who[0] == (AGENT, t1.id)
    assert who[1] == (ORIGINAL, None)
    assert who[2] == (SAVE, save.id)
    assert who[4] == (OUTSIDE, out.id)
    assert who[6] == (UNRECORDED, None)
    assert who[10] == (SHELL, t2.id)
    assert blame.origins[0].number == 1 and blame.origins[0].agent == "claude-code"
    assert blame.origins[0].prompt.startswith("prompt of A")


def test_blame_after_a_hunk_revert_and_its_undo(store: Store) -> None:
    t1 = _three_hunks(store)
    blamer = Blamer(store)
    assert blamer.blame("f.txt", _read(store)).origins[14].turn_id == t1.id
    _apply(store, plan_revert_hunks(store, t1, disk_reader(store.root), {"f.txt": [1]}))
    after = blamer.blame("f.txt", _read(store)).origins
    assert after[14].source == RESTORE and after[1].turn_id == t1.id
    _apply(store, plan_undo(store, disk_reader(store.root)))
    # The undo brings back a content seen before: its authors come back with it.
    back = blamer.blame("f.txt", _read(store)).origins
    assert back[14].turn_id == t1.id and back[1].turn_id == t1.id


def test_blamer_extends_its_replay_as_turns_are_recorded(store: Store) -> None:
    t1 = _three_hunks(store)
    blamer = Blamer(store)
    blamer.blame("f.txt", _read(store))
    t2 = _turn(store, "A", "f.txt", _read(store).replace(b"line 20\n", b"TWENTY\n"))
    origins = blamer.blame("f.txt", _read(store)).origins
    assert origins[19].turn_id == t2.id and origins[1].turn_id == t1.id
