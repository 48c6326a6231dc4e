"""`rewind/listTurns` after a new turn (#29): the server keeps what it listed (each turn's wire entry,
the sessions' turn counts, the forks' origins) and reads again only what changed. These tests hold
it to the listing made from scratch: the same JSON, at once, after every kind of write another
process makes (a new turn, a late change to an ended turn, a restore point's new state, a turn's
info, a fork, turns dropped by retention)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from rewind_ls.core.history import timeline
from rewind_ls.core.history.timeline import list_sessions
from rewind_ls.core.model import (
    ABSENT_VERSION,
    EDITOR_SESSION,
    FILE,
    REWIND_SESSION,
    UNKNOWN,
    TurnState,
    Version,
)
from rewind_ls.core.store import Store
from rewind_ls.protocol.turns import ListTurnsResult
from rewind_ls.server.service import Service
from tests.support.lsp_client import start
from tests.test_server import as_dict, request


def _turn(store: Store, session: str, prompt: str, files: dict[str, str], end: bool = True) -> str:
    turn = store.begin_turn(session, prompt)
    for path, source in files.items():
        data = f"{prompt} {path}".encode()
        store.record_before(turn, path, ABSENT_VERSION, source)
        store.record_after(turn, path, Version(FILE, store.put_blob(data), 0o644, len(data)))
    if end:
        store.end_turn(turn)
    return turn


@pytest.fixture
def ws_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Path, Path]]:
    ws, home = tmp_path / "ws", tmp_path / "home"
    ws.mkdir()
    monkeypatch.setenv("REWIND_LS_HOME", str(home))
    monkeypatch.setenv("REWIND_LS_WATCH", "0")
    yield ws, home


def _scenario(store: Store) -> dict[str, str]:
    """Sessions of every kind: an agent session whose turns have subagents, a turn rebuilt from
    the transcript, a change shared with another session, a deleted file; the person's saves; a
    restore point; a fork of the agent session."""
    store.ensure_session("s", "agent", "claude-code", "/t/s.jsonl")
    store.ensure_session("o", "agent", "codex")
    ids = {}
    for k in range(1, 13):
        ids[f"s{k}"] = _turn(store, "s", f"prompt {k}: café ✓ 日本", {f"src/f{k % 4}.txt": "tool"})
    ids["o1"] = _turn(store, "o", "other agent", {"shared.txt": f"shared:{ids['s3']}"})
    store.set_turn_info(ids["s2"], json.dumps({"subagents": ["general-purpose"]}))
    store.set_turn_prompt(
        ids["s4"], "rebuilt", json.dumps({"reconstructed": "transcript", "scanned": False})
    )
    gone = store.begin_turn("s", "delete a file")
    store.record_before(gone, "src/f1.txt", Version(FILE, store.put_blob(b"x"), 0o644, 1), "tool")
    store.record_after(gone, "src/f1.txt", ABSENT_VERSION)
    store.end_turn(gone)
    store.ensure_session(EDITOR_SESSION, "editor", "editor")
    _turn(store, EDITOR_SESSION, "save", {"notes.md": "save"})
    store.ensure_session(REWIND_SESSION, "rewind", None)
    ids["point"] = _turn(store, REWIND_SESSION, "rewind to turn 3", {"src/f3.txt": "restore"})
    store.set_turn_state(ids["point"], TurnState.PENDING)
    assert store.inherit_turns("s", "fork", 6, "/t/fork.jsonl") == 5
    return ids


def _from_scratch(store: Store, **params: Any) -> dict[str, Any]:
    """The listing as the server sent it before it kept anything: made anew (nothing the
    listings keep is used), then validated and dumped whole by the result's model."""
    kept = [dict(memo) for memo in (timeline._COUNTED, timeline._MEMO)]
    timeline._COUNTED.clear()
    timeline._MEMO.clear()
    try:
        listing = list_sessions(
            store, params.get("session_id"), params.get("limit"), params.get("before")
        )
    finally:  # what the server keeps, as it was: its next listing goes on from there
        for memo, held in zip((timeline._COUNTED, timeline._MEMO), kept, strict=True):
            memo.clear()
            memo.update(held)  # type: ignore[attr-defined]
    return ListTurnsResult.model_validate(listing).model_dump(mode="json", by_alias=True)


def _open(store: Store) -> str:
    """The open turn the writes below begin in session "o"."""
    turn = store.turn_by_number("o", 2)
    assert turn is not None
    return turn.id


def test_the_page_is_the_listing_made_from_scratch_after_every_kind_of_write(
    ws_home: tuple[Path, Path],
) -> None:
    ws, _home = ws_home
    with Store.open(str(ws)) as store:
        ids = _scenario(store)
    service = Service(str(ws))
    views = [(params, Service(str(ws))) for params in ({"limit": 100}, {"limit": 2})]
    # A view and its status bar: the status count comes right after the page, and before the next
    # page (its last page is from before the write), and for one session.
    status = Service(str(ws))
    status_asks: list[dict[str, Any]] = [
        {"limit": 2},
        {"limit": 2},
        {"limit": 1},
        {"limit": 100},
        {"limit": 1},
        {"limit": 2},
        {"limit": 100},
        {"limit": 100, "session_id": "s"},
        {"limit": 1, "session_id": "s"},
        {"limit": 3, "session_id": "s", "before": "9"},
        {"limit": 2, "session_id": "s", "before": "9"},
        {"limit": 1, "session_id": "s", "before": "7"},
        {"limit": 1},
    ]
    other = Store.open(str(ws))  # the agents' hooks and other commands: another connection
    try:
        writes = [
            lambda: None,
            lambda: _turn(other, "s", "a new turn", {"src/new.txt": "tool"}),
            # A late change to an ended turn (a scan attributing by time, a shell command's
            # PostToolUse after the Stop): the turn's entry must list the file.
            lambda: (
                other.record_before(ids["s12"], "late.txt", ABSENT_VERSION, "scan"),
                other.record_after(ids["s12"], "late.txt", Version(FILE, "0" * 64, 0o644, 0)),
            ),
            lambda: other.set_turn_state(ids["point"], TurnState.APPLIED),
            lambda: other.set_turn_info(ids["s11"], json.dumps({"subagents": ["Explore"]})),
            lambda: other.inherit_turns("s", "fork2", 12, "/t/fork2.jsonl"),
            lambda: _turn(other, "fork", "the fork goes on", {"src/forked.txt": "tool"}),
            lambda: other.drop_turns([ids["s1"], ids["s2"]]),
            lambda: _turn(other, "o", "open turn", {"o.txt": "tool"}, end=False),
            # The writes that change a listed turn's changes or row without a new turn: a change
            # becomes shared (its source), one is dropped, a before is set again, a prompt is
            # rebuilt from the transcript, the open turn ends.
            lambda: other.record_shared(
                [ids["s10"], ids["o1"]], "src/f2.txt", ABSENT_VERSION, ABSENT_VERSION
            ),
            lambda: other.drop_change(ids["s9"], "src/f1.txt"),
            lambda: (
                other.record_before(ids["s8"], "hook.txt", Version(UNKNOWN, None, None), "tool"),
                other.record_after(ids["s8"], "hook.txt", Version(FILE, "1" * 64, 0o644, 0)),
            ),
            # Only a before (modified becomes created), only an after (a change settles).
            lambda: other.set_before(ids["s8"], "hook.txt", ABSENT_VERSION),
            lambda: other.record_before(_open(other), "settles.txt", ABSENT_VERSION, "tool"),
            lambda: other.record_after(
                _open(other), "settles.txt", Version(FILE, "2" * 64, 0o644, 0)
            ),
            lambda: other.set_turn_prompt(ids["s7"], "rebuilt again", None),  # only the prompt
            # Only the end (a turn ended again at a time its transcript gives).
            lambda: other.end_turn(ids["s5"], ended_at=1_700_000_000.5),
            # Only the info, in a part the wire shows (subagents are not on listTurns' wire).
            lambda: other.set_turn_info(
                ids["s6"], json.dumps({"reconstructed": "transcript", "scanned": True})
            ),
            lambda: other.end_turn(_open(other)),
            # Retention drops the turn a shared change names: that change no longer lists the
            # dropped turn's session, though the sharing turn's own rows are unchanged.
            lambda: other.drop_turns([ids["s3"]]),
        ]
        for write in writes:
            write()
            for params in ({"limit": 100}, {"limit": 3}, {"limit": 1}, {}, {"session_id": "s"}):
                sent = service.list_turns(params.get("session_id"), params.get("limit"))
                expected = _from_scratch(service.store, **params)
                assert json.dumps(sent) == json.dumps(expected), (write, params)
            # A view refreshing the same page: its server's kept entries are those of its last
            # refresh, before this write (the listings above re-key them between writes).
            for params, view in views:
                sent = view.list_turns(params.get("session_id"), params.get("limit"))
                expected = _from_scratch(view.store, **params)
                assert json.dumps(sent) == json.dumps(expected), (write, params, "view")
            for params in status_asks:
                sent = status.list_turns(
                    params.get("session_id"), params.get("limit"), params.get("before")
                )
                expected = _from_scratch(status.store, **params)
                assert json.dumps(sent) == json.dumps(expected), (write, params, "status")
        counts = {s["id"]: s["turnCount"] for s in service.list_turns(None, 1)["sessions"]}
        assert counts["s"] == 11 and counts["fork2"] == 11 and counts["o"] == 2
        assert counts[REWIND_SESSION] == 1  # the restore point, once applied
    finally:
        other.close()
        service.close()
        status.close()
        for _params, view in views:
            view.close()


def test_a_refresh_reads_only_the_turns_that_changed(
    ws_home: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """After a new turn, and after a late change to a listed turn, the server's page reads the
    listed turns' stamps and builds records only for the new or changed turn: the 99 others are
    never read whole (building them was the larger part of a refresh)."""
    ws, _home = ws_home
    with Store.open(str(ws)) as store:
        store.ensure_session("s", "agent", "claude-code")
        ids = [_turn(store, "s", f"p{k}", {f"f{k}.txt": "tool"}) for k in range(120)]
    service = Service(str(ws))
    other = Store.open(str(ws))
    read: list[list[str]] = []
    try:
        assert len(service.list_turns(None, 100)["sessions"][0]["turns"]) == 100
        store = service.store
        for name in ("turns_page", "turns", "turn", "turns_of", "changes_of_turns"):
            method = getattr(store, name)

            def spy(*args: Any, _name: str = name, _method: Any = method) -> Any:
                found = _method(*args)
                ids_read = [getattr(r, "id", None) or r.turn_id for r in found]
                read.append([_name, *sorted(set(ids_read))])
                return found

            monkeypatch.setattr(store, name, spy)
        new = _turn(other, "s", "new", {"new.txt": "tool"})
        page = service.list_turns(None, 100)["sessions"][0]["turns"]
        assert [t["id"] for t in page] == [*ids[21:], new]
        assert sorted(read) == [["changes_of_turns", new], ["turns_of", new]]
        read.clear()
        other.record_before(ids[50], "late.txt", ABSENT_VERSION, "scan")
        other.record_after(ids[50], "late.txt", Version(FILE, "0" * 64, 0o644, 0))
        page = service.list_turns(None, 100)["sessions"][0]["turns"]
        assert [f["path"] for f in page[29]["files"]] == ["f50.txt", "late.txt"]
        assert sorted(read) == [["changes_of_turns", ids[50]], ["turns_of", ids[50]]]
    finally:
        other.close()
        service.close()


def test_the_status_count_right_after_the_page_is_cut_from_it(
    ws_home: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The status bar's `limit: 1` right after the view's page, nothing committed between: the
    answer is cut from that page, no listing query runs. Anything committed since (by another
    connection or by the server's own), or the first checkpoint's progress, is there at once."""
    ws, _home = ws_home
    with Store.open(str(ws)) as store:
        store.ensure_session("s", "agent", "claude-code")
        for k in range(5):
            _turn(store, "s", f"p{k}", {f"f{k}.txt": "tool"})
    service = Service(str(ws))
    other = Store.open(str(ws))
    queries: list[str] = []
    try:
        page = service.list_turns(None, 100)
        store = service.store
        for name in ("sessions", "turn_stamps_page", "turns_page", "turn_counts", "turns_dropped"):
            method = getattr(store, name)

            def spy(*args: Any, _name: str = name, _method: Any = method) -> Any:
                queries.append(_name)
                return _method(*args)

            monkeypatch.setattr(store, name, spy)
        status = service.list_turns(None, 1)
        assert queries == []
        assert status["sessions"][0]["turns"] == page["sessions"][0]["turns"][-1:]
        assert status["sessions"][0]["olderCursor"] == "5"
        assert status["sessions"][0]["turnCount"] == 5
        assert json.dumps(status) == json.dumps(_from_scratch(store, limit=1))
        _turn(other, "s", "from a hook", {"hook.txt": "tool"})
        assert service.list_turns(None, 1)["sessions"][0]["turns"][0]["prompt"] == "from a hook"
        assert "turn_stamps_page" in queries
        service.list_turns(None, 100)
        _turn(store, "s", "the server's own", {"own.txt": "tool"})
        assert service.list_turns(None, 1)["sessions"][0]["turnCount"] == 7
        service.list_turns(None, 100)
        queries.clear()
        monkeypatch.setattr("rewind_ls.server.service.turns.progress", lambda _path: (3, 9))
        assert service.list_turns(None, 1)["baseline"] == {"done": 3, "total": 9}
        assert queries == []
    finally:
        other.close()
        service.close()


def test_turn_counts_are_read_again_after_turns_are_dropped(ws_home: tuple[Path, Path]) -> None:
    """Retention drops old turns without touching the sessions: the counts a listing keeps are
    counted again (a count kept across the drop would stay too high)."""
    ws, _home = ws_home
    with Store.open(str(ws)) as store:
        store.ensure_session("s", "agent", "claude-code")
        ids = [_turn(store, "s", f"p{k}", {"a.txt": "tool"}) for k in range(5)]
        assert list_sessions(store, limit=1)["sessions"][0]["turn_count"] == 5
        with Store.open(str(ws)) as other:
            other.drop_turns(ids[:2])
            _turn(other, "s", "p5", {"a.txt": "tool"})
        assert list_sessions(store, limit=1)["sessions"][0]["turn_count"] == 4


async def test_the_page_over_the_wire_carries_any_text_with_its_byte_length(
    ws_home: tuple[Path, Path],
) -> None:
    """The page is encoded as UTF-8 (not escaped): the Content-Length the server sends counts
    bytes, so a client reading non-ASCII prompts and paths gets every message whole."""
    ws, home = ws_home
    with Store.open(str(ws)) as store:
        store.ensure_session("s", "agent", "claude-code")
        for k in range(30):
            _turn(store, "s", f"déjà vu ✓ 日本語 {k}", {f"données/été {k}.txt": "tool"})
    client, _editor = await start(ws, home)
    try:
        for _ in range(3):
            page = as_dict(await request(client, "rewind/listTurns", {"limit": 20}))
            turns = page["sessions"][0]["turns"]
            assert [t["prompt"] for t in turns] == [f"déjà vu ✓ 日本語 {k}" for k in range(10, 30)]
            assert turns[-1]["files"][0]["path"] == "données/été 29.txt"
            trivial = await request(client, "rewind/listTurns", {"limit": 1})
            assert as_dict(trivial)["sessions"][0]["turnCount"] == 30
    finally:
        await client.shutdown_session()
