"""Planning a large restore reads the store in batches (#29): a path's history, what was last seen
of it and its target content are read ahead for all paths in a few queries, not one query each.
Counted (statements), not timed."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from rewind_ls.core.capture.recorder import Recorder
from rewind_ls.core.restore.plan import disk_reader, plan_rewind
from rewind_ls.core.store import Store

FILES = 60


@pytest.fixture
def store(ws: Path, home: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Store]:
    monkeypatch.setenv("REWIND_LS_HOME", str(home))
    monkeypatch.setenv("REWIND_LS_WATCH", "0")
    with Store.open(str(ws)) as s:
        yield s


def test_rewind_plan_reads_histories_known_rows_and_contents_in_batches(
    ws: Path, store: Store
) -> None:
    for i in range(FILES):
        (ws / f"f{i}.txt").write_text(f"before {i}\n")
    rec = Recorder(store)
    rec.baseline_budget = None
    rec.attribute_outside_changes()
    turn = rec.begin_turn("s", "change every file", agent="claude-code")
    for i in range(FILES):
        rec.before("s", f"f{i}.txt")
        (ws / f"f{i}.txt").write_text(f"after {i}\n")
        rec.after("s", f"f{i}.txt")
    rec.end_turn("s")

    statements: list[str] = []
    store.conn.set_trace_callback(statements.append)
    try:
        plan = plan_rewind(store, store.turn(turn), disk_reader(str(ws)))  # type: ignore[arg-type]
    finally:
        store.conn.set_trace_callback(None)
    assert len(plan.changes()) == FILES and not plan.conflicts
    assert all(
        pp.target_data == f"before {i}\n".encode()
        for i, pp in enumerate(sorted(plan.paths, key=lambda p: int(p.path[1:].split(".")[0])))
    )
    histories = [s for s in statements if "FROM changes c JOIN turns" in s]
    known = [s for s in statements if "FROM known" in s]
    assert len(histories) <= 1 and len(known) <= 1, (len(histories), len(known))
