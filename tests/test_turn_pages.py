"""Paged turn lists (#29): `rewind/listTurns`, the timeline and `rewind-ls turns` read a long
session a page at a time, newest first, and every turn is reachable through the pages."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from rewind_ls.core.capture.recorder import Recorder
from rewind_ls.core.errors import BadInput
from rewind_ls.core.history.timeline import list_sessions, timeline_text
from rewind_ls.core.store import Store
from tests.conftest import Cli
from tests.support.baseline import first_checkpoint_running
from tests.support.lsp_client import start
from tests.test_server import as_dict, request

TURNS = 230


def _record(ws: Path, store: Store, session: str = "s", n: int = TURNS) -> list[str]:
    """`n` turns of one session, turn k writing f{k % 7}.txt (so turns share files)."""
    rec = Recorder(store)
    ids = []
    for k in range(1, n + 1):
        turn = rec.begin_turn(session, f"prompt {k} " + "words " * 20, agent="claude-code")
        name = f"f{k % 7}.txt"
        rec.before(session, name)
        (ws / name).write_text(f"turn {k}\n")
        rec.after(session, name)
        ids.append(turn)
    rec.end_turn(session)
    return ids


@pytest.fixture
def store(ws: Path, home: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Store]:
    monkeypatch.setenv("REWIND_LS_HOME", str(home))
    monkeypatch.setenv("REWIND_LS_WATCH", "0")
    with Store.open(str(ws)) as s:
        yield s


def test_pages_walk_every_turn_newest_first(ws: Path, store: Store) -> None:
    ids = _record(ws, store)
    whole = list_sessions(store, "s")["sessions"][0]
    assert [t["id"] for t in whole["turns"]] == ids and whole["turn_count"] == TURNS
    assert whole["older_cursor"] is None

    seen: list[list[dict[str, Any]]] = []
    cursor = None
    while True:
        page = list_sessions(store, "s", limit=100, before=cursor)["sessions"][0]
        assert page["turn_count"] == TURNS
        seen.append(page["turns"])
        cursor = page["older_cursor"]
        if cursor is None:
            break
    assert [len(p) for p in seen] == [100, 100, 30]
    # Pages go from newest to oldest; inside a page, oldest first (as the whole list).
    assert [t["id"] for p in reversed(seen) for t in p] == ids
    # A page's turns carry the same files as the whole listing.
    by_id = {t["id"]: t for t in whole["turns"]}
    assert all(t == by_id[t["id"]] for p in seen for t in p)

    only = list_sessions(store, turn_id=ids[5])["sessions"]
    assert [t["id"] for s in only for t in s["turns"]] == [ids[5]]
    with pytest.raises(BadInput):
        list_sessions(store, limit=10, before=cursor or "5")  # a cursor needs its session
    with pytest.raises(BadInput):
        list_sessions(store, "s", limit=10, before="not-a-cursor")


def test_timeline_shows_the_newest_page_and_counts_the_rest(ws: Path, store: Store) -> None:
    ids = _record(ws, store, n=30)
    text = timeline_text(store, limit=10)
    assert "20 older turns not shown" in text
    assert f"[{ids[-1]}]" in text and f"[{ids[19]}]" not in text
    assert f"[{ids[0]}]" in timeline_text(store)  # no limit: every turn


def test_cli_turns_prints_a_page(
    cli: Cli, ws: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("REWIND_LS_HOME", str(home))
    monkeypatch.setenv("REWIND_LS_WATCH", "0")
    with Store.open(str(ws)) as store:
        _record(ws, store, n=120)
    out = cli("turns").stdout
    assert "20 older turns of session s" in out and "--limit 0" in out
    numbers = [line.split()[0] for line in out.splitlines() if line.strip()[:1].isdigit()]
    assert numbers[0] == "21" and numbers[-1] == "120" and len(numbers) == 100
    listing = cli.json("turns", "--limit", "5")
    session = listing["sessions"][0]
    assert [t["number"] for t in session["turns"]] == [116, 117, 118, 119, 120]
    assert session["turnCount"] == 120 and session["olderCursor"] is not None
    assert len(cli.json("turns", "--limit", "0")["sessions"][0]["turns"]) == 120


async def test_list_turns_pages_over_the_wire(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws, home = tmp_path / "ws", tmp_path / "home"
    ws.mkdir()
    monkeypatch.setenv("REWIND_LS_HOME", str(home))
    monkeypatch.setenv("REWIND_LS_WATCH", "0")
    with Store.open(str(ws)) as store:
        ids = _record(ws, store)
    client, _editor = await start(ws, home)
    try:
        whole = as_dict(await request(client, "rewind/listTurns", {}))
        got: list[str] = []
        params: dict[str, Any] = {"limit": 50}
        sizes = []
        while True:
            page = as_dict(await request(client, "rewind/listTurns", params))
            sizes.append(len(json.dumps(page)))
            session = page["sessions"][0]
            assert session["turnCount"] == TURNS
            got = [t["id"] for t in session["turns"]] + got
            if session.get("olderCursor") is None:
                break
            params = {"limit": 50, "sessionId": session["id"], "before": session["olderCursor"]}
        assert got == ids
        assert max(sizes) * 3 < len(json.dumps(whole))
        one = as_dict(await request(client, "rewind/listTurns", {"turnId": ids[3]}))
        assert [t["id"] for t in one["sessions"][0]["turns"]] == [ids[3]]
        timeline = as_dict(await request(client, "rewind/timeline", {"limit": 10}))
        assert f"{TURNS - 10} older turns not shown" in timeline["text"]
    finally:
        await client.shutdown_session()


async def test_list_turns_carries_the_first_checkpoints_progress_while_it_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The editors' status bars and views show the background first checkpoint from
    `rewind/listTurns`: `baseline` is set while a worker runs and null once it is done."""
    ws, home = tmp_path / "ws", tmp_path / "home"
    ws.mkdir()
    monkeypatch.setenv("REWIND_LS_HOME", str(home))
    monkeypatch.setenv("REWIND_LS_WATCH", "0")
    with Store.open(str(ws)) as store:
        _record(ws, store, n=3)
        store_path = store.path
    client, _editor = await start(ws, home)
    try:
        before = as_dict(await request(client, "rewind/listTurns", {"limit": 1}))
        assert before["baseline"] is None
        with first_checkpoint_running(store_path, 1500, 4000):
            running = as_dict(await request(client, "rewind/listTurns", {"limit": 1}))
            assert running["baseline"] == {"done": 1500, "total": 4000}
            assert running["sessions"][0]["turnCount"] == 3
        after = as_dict(await request(client, "rewind/listTurns", {"limit": 1}))
        assert after["baseline"] is None
    finally:
        await client.shutdown_session()


def test_a_page_counts_turns_written_since_by_this_or_another_connection(
    ws: Path, store: Store
) -> None:
    """The listing keeps its whole-table answers (turn counts, fork origins) while the database is
    unchanged; a turn written by this connection or by another process is counted at once."""
    _record(ws, store, n=3)
    assert list_sessions(store, "s", limit=2)["sessions"][0]["turn_count"] == 3
    assert list_sessions(store, "s", limit=2)["sessions"][0]["turn_count"] == 3
    _record(ws, store, n=1)  # this connection
    assert list_sessions(store, "s", limit=2)["sessions"][0]["turn_count"] == 4
    with Store.open(str(ws)) as other:  # another connection, as a hook process writes
        _record(ws, other, n=2)
    page = list_sessions(store, "s", limit=2)["sessions"][0]
    assert page["turn_count"] == 6 and page["older_cursor"] == "5"
    with Store.open(str(ws)) as other:  # a fork, recorded elsewhere, shows at once
        assert other.inherit_turns("s", "fork", 3, str(ws / "fork.jsonl")) == 2
    forks = {s["id"]: s["fork_of"] for s in list_sessions(store, limit=1)["sessions"]}
    assert forks["fork"] == {"session_id": "s", "before_number": 3}
