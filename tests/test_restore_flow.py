"""`core.restore.flow` in process, on a real store: the planner and label of each mode, and the
all-or-nothing rule of code and conversation. The CLI and server tests run the same flow end to
end (test_cli_restore, test_reliability_edges, test_server)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from rewind_ls.core.capture.recorder import Recorder
from rewind_ls.core.conversation.fork import fork_turn
from rewind_ls.core.errors import ConflictError, RewindError
from rewind_ls.core.model import RestoreMode, Scope
from rewind_ls.core.restore.flow import RestoreFlow
from rewind_ls.core.restore.plan import disk_reader
from rewind_ls.core.restore.planner import plan_restore
from rewind_ls.core.restore.request import RestoreRequest
from rewind_ls.core.store import Store


@pytest.fixture
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Store:
    monkeypatch.setenv("REWIND_LS_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("REWIND_LS_SCAN", "0")
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_bytes(b"one\n")
    s = Store.open(str(ws), create=True)
    rec = Recorder(s)
    rec.begin_turn("s1", "change a", "agent", "other")
    rec.before("s1", "a.txt", "record", "other")
    (ws / "a.txt").write_bytes(b"two\n")
    rec.after("s1", "a.txt", "record", "other")
    rec.end_turn("s1")
    return s


def _turn(store: Store) -> Any:
    turn = store.turn_by_number("s1", 1)
    assert turn is not None
    return turn


def test_labels_and_planners(store: Store) -> None:
    turn = _turn(store)
    reader = disk_reader(store.root)
    rewind = plan_restore(store, "rewind", turn, reader, scope="both")
    assert rewind.label == "rewind to turn 1 (both)" and rewind.mode == "rewind"
    assert [(p.path, p.action) for p in rewind.changes()] == [("a.txt", "modify")]
    revert = plan_restore(store, "revert", turn, reader, ["a.txt"])
    assert revert.label == "revert turn 1" and revert.mode == "revert"
    with pytest.raises(RewindError, match=r"did not change b\.txt \(it changed a\.txt\)"):
        plan_restore(store, "revert", turn, reader, ["b.txt"])
    with pytest.raises(RewindError, match="nothing to undo"):
        plan_restore(store, "undo", None, reader)
    with pytest.raises(RewindError, match="scope must be"):
        RestoreFlow(store, RestoreRequest(RestoreMode.REWIND, turn.id, "files"), turn)


def test_code_then_undo_names_the_restore(store: Store) -> None:
    flow = RestoreFlow(store, RestoreRequest(RestoreMode.REWIND), _turn(store))
    outcome = flow.apply_to_disk(flow.plan(disk_reader(store.root)))
    assert outcome is not None and outcome.status == "applied" and flow.fork is None
    assert Path(store.root, "a.txt").read_bytes() == b"one\n"
    undo = RestoreFlow(store, RestoreRequest(RestoreMode.UNDO), None)
    plan = undo.plan(disk_reader(store.root))
    assert plan.label == "undo of: rewind to turn 1 (code)"
    assert not undo.conversation  # an undo restores code only


def test_both_a_fork_that_fails_writes_no_code(store: Store) -> None:
    """The session has no conversation to fork (agent `other`): `--scope both` restores nothing."""
    flow = RestoreFlow(
        store, RestoreRequest(RestoreMode.REWIND, scope=Scope.BOTH), _turn(store), fork_turn
    )
    with pytest.raises(
        RewindError, match=r"code not restored either \(code and conversation go together\)"
    ):
        flow.apply_to_disk(flow.plan(disk_reader(store.root)))
    assert Path(store.root, "a.txt").read_bytes() == b"two\n"
    assert store.latest_applied_turn("rewind") is None


def test_code_that_fails_drops_the_fork(store: Store, tmp_path: Path) -> None:
    flow = RestoreFlow(
        store, RestoreRequest(RestoreMode.REWIND, scope=Scope.BOTH), _turn(store), fork_turn
    )

    class Fork:
        path = str(tmp_path / "fork.jsonl")

    Path(Fork.path).write_text("{}\n")
    flow.fork = Fork()
    error = flow.code_failed(ConflictError("a.txt: changed", ["a.txt"]))
    assert isinstance(error, ConflictError) and error.paths == ["a.txt"] and error.exit_code == 3
    assert (
        str(error)
        == "a.txt: changed; the conversation fork was removed (code and conversation go together)"
    )
    assert not Path(Fork.path).exists() and flow.fork is None
    other = KeyboardInterrupt()
    assert flow.code_failed(other) is other  # nothing left to drop; not a RewindError: as is


def test_paths_are_chosen_once_before_the_fork(
    store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`--scope both`: the paths to write are chosen once (`planner.select`), before the fork, and
    the disk applier writes exactly those."""
    import rewind_ls.core.restore.flow as flow_module

    calls: list[str] = []
    real_select = flow_module.select

    def select(plan: Any, force: bool, skip: bool) -> Any:
        calls.append("select")
        return real_select(plan, force, skip)

    def forker(store: Store, turn: Any) -> Any:
        calls.append("fork")

        class Fork:
            path = ""

        return Fork()

    monkeypatch.setattr(flow_module, "select", select)
    request = RestoreRequest(RestoreMode.REWIND, scope=Scope.BOTH)
    flow = RestoreFlow(store, request, _turn(store), forker)
    outcome = flow.apply_to_disk(flow.plan(disk_reader(store.root)))
    assert calls == ["select", "fork"]
    assert outcome is not None and outcome.status == "applied"
    assert [p.path for p in outcome.items] == ["a.txt"]
    assert Path(store.root, "a.txt").read_bytes() == b"one\n"
