"""Unit tests of the planner on small real stores: what a rewind or a revert would write, and the
conflicts it reports (content changed outside, another session, a merge, missing content)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from rewind_ls.core.capture.recorder import read_current
from rewind_ls.core.model import ABSENT, FILE, UNKNOWN, Action, ConflictKind, RestoreMode, Version
from rewind_ls.core.restore.plan import PathPlan, disk_reader, plan_revert, plan_rewind
from rewind_ls.core.store import Store


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    root = tmp_path / "ws"
    root.mkdir()
    with Store.open(str(root), home=str(tmp_path / "home")) as s:
        s.ensure_session("A", "agent", "claude-code")
        yield s


def _edit(store: Store, turn: str, rel: str, data: bytes | None) -> None:
    """What a hook records around one edit: the content before (stored), the edit, the content
    after (stored, and known)."""
    full = Path(store.root, rel)
    before, before_data, _ = read_current(store.root, rel)
    if before_data is not None:
        store.put_blob(before_data)
    store.record_before(turn, rel, before, "tool")
    if data is None:
        full.unlink()
    else:
        full.write_bytes(data)
    after, after_data, st = read_current(store.root, rel)
    if after_data is not None:
        store.put_blob(after_data, previous=before.hash)
    store.record_after(turn, rel, after)
    store.set_known(rel, after, st)


def _turn(store: Store, session: str, edits: dict[str, bytes | None]) -> str:
    turn = store.begin_turn(session, f"edit {sorted(edits)}")
    for rel, data in edits.items():
        _edit(store, turn, rel, data)
    store.end_turn(turn)
    return turn


def _only(plan_paths: list[PathPlan], rel: str) -> PathPlan:
    (pp,) = [p for p in plan_paths if p.path == rel]
    return pp


LINES = b"".join(b"line %d\n" % i for i in range(1, 11))


def test_rewind_brings_back_the_start_of_the_turn(store: Store) -> None:
    Path(store.root, "a.txt").write_bytes(b"one\n")
    t1 = _turn(store, "A", {"a.txt": b"two\n", "new.txt": b"made\n"})
    _turn(store, "A", {"a.txt": b"three\n"})
    plan = plan_rewind(store, store.turn(t1), disk_reader(store.root))  # type: ignore[arg-type]
    assert plan.mode is RestoreMode.REWIND and not plan.conflicts
    a = _only(plan.paths, "a.txt")
    assert (a.action, a.target_data, a.target.kind) == (Action.MODIFY, b"one\n", FILE)
    made = _only(plan.paths, "new.txt")
    assert (made.action, made.target.kind, made.target_data) == (Action.DELETE, ABSENT, None)


def test_rewind_unchanged_when_already_there(store: Store) -> None:
    Path(store.root, "a.txt").write_bytes(b"one\n")
    t1 = _turn(store, "A", {"a.txt": b"two\n"})
    t2 = _turn(store, "A", {"a.txt": b"one\n"})  # the agent put it back itself
    plan = plan_rewind(store, store.turn(t1), disk_reader(store.root))  # type: ignore[arg-type]
    assert [(p.path, p.action, p.conflict) for p in plan.paths] == [
        ("a.txt", Action.UNCHANGED, None)
    ]
    assert plan.changes() == [] and t2


def test_rewind_conflicts_with_an_unrecorded_edit_and_another_session(store: Store) -> None:
    Path(store.root, "a.txt").write_bytes(b"one\n")
    Path(store.root, "b.txt").write_bytes(b"bee\n")
    t1 = _turn(store, "A", {"a.txt": b"two\n", "b.txt": b"bee 2\n"})
    Path(store.root, "a.txt").write_bytes(b"typed by hand\n")  # never recorded
    store.ensure_session("B", "agent", "codex")
    _turn(store, "B", {"b.txt": b"bee by B\n"})
    plan = plan_rewind(store, store.turn(t1), disk_reader(store.root))  # type: ignore[arg-type]
    a, b = _only(plan.paths, "a.txt"), _only(plan.paths, "b.txt")
    assert a.conflict is not None and a.conflict.kind is ConflictKind.MODIFIED_OUTSIDE
    assert b.conflict is not None and b.conflict.kind is ConflictKind.OTHER_SESSION
    assert "turn #1 of session B" in b.conflict.message
    assert a.conflict.forcible and b.conflict.forcible


def test_rewind_to_content_never_seen_is_not_restorable(store: Store) -> None:
    turn = store.begin_turn("A", "p")
    # A hook installed mid-edit: the content before is unknown.
    store.record_before(turn, "a.txt", Version(UNKNOWN), "tool")
    Path(store.root, "a.txt").write_bytes(b"after\n")
    after, _, st = read_current(store.root, "a.txt")
    store.record_after(turn, "a.txt", after)
    store.set_known("a.txt", after, st)
    store.end_turn(turn)
    plan = plan_rewind(store, store.turn(turn), disk_reader(store.root))  # type: ignore[arg-type]
    a = _only(plan.paths, "a.txt")
    assert a.conflict is not None and a.conflict.kind is ConflictKind.NOT_RESTORABLE
    assert not a.conflict.forcible


def test_revert_merges_a_later_edit_elsewhere_in_the_file(store: Store) -> None:
    Path(store.root, "a.txt").write_bytes(LINES)
    t1 = _turn(store, "A", {"a.txt": LINES.replace(b"line 2\n", b"LINE TWO\n")})
    now = LINES.replace(b"line 2\n", b"LINE TWO\n").replace(b"line 9\n", b"LINE NINE\n")
    Path(store.root, "a.txt").write_bytes(now)
    plan = plan_revert(store, store.turn(t1), disk_reader(store.root))  # type: ignore[arg-type]
    a = _only(plan.paths, "a.txt")
    assert plan.mode is RestoreMode.REVERT and a.conflict is None and a.action is Action.MODIFY
    assert a.target_data == LINES.replace(b"line 9\n", b"LINE NINE\n")


def test_revert_conflicts_when_a_later_edit_overlaps(store: Store) -> None:
    Path(store.root, "a.txt").write_bytes(LINES)
    t1 = _turn(store, "A", {"a.txt": LINES.replace(b"line 2\n", b"LINE TWO\n")})
    Path(store.root, "a.txt").write_bytes(LINES.replace(b"line 2\n", b"line two, again\n"))
    plan = plan_revert(store, store.turn(t1), disk_reader(store.root))  # type: ignore[arg-type]
    a = _only(plan.paths, "a.txt")
    assert a.conflict is not None and a.conflict.kind is ConflictKind.MERGE
    assert len(a.conflict.hunks) == 1 and not a.conflict.forcible


def test_revert_unchanged_and_absent(store: Store) -> None:
    Path(store.root, "a.txt").write_bytes(b"one\n")
    t1 = _turn(store, "A", {"a.txt": b"two\n", "made.txt": b"new\n"})
    Path(store.root, "a.txt").write_bytes(b"one\n")  # already back as before the turn
    Path(store.root, "made.txt").write_bytes(b"new, then edited\n")
    plan = plan_revert(store, store.turn(t1), disk_reader(store.root))  # type: ignore[arg-type]
    a, made = _only(plan.paths, "a.txt"), _only(plan.paths, "made.txt")
    assert (a.action, a.conflict) == (Action.UNCHANGED, None)
    # Created by the turn and changed since: no base to merge against.
    assert made.conflict is not None and made.conflict.kind is ConflictKind.MERGE
    assert "created or deleted" in made.conflict.message


def test_revert_of_an_untouched_turn_restores_the_content_before(store: Store) -> None:
    Path(store.root, "gone.txt").write_bytes(b"keep me\n")
    t1 = _turn(store, "A", {"gone.txt": None})
    plan = plan_revert(store, store.turn(t1), disk_reader(store.root))  # type: ignore[arg-type]
    gone = _only(plan.paths, "gone.txt")
    assert (gone.action, gone.target_data, gone.conflict) == (Action.CREATE, b"keep me\n", None)
