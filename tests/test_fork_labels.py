"""Forked conversations are labelled "fork of <session> before #N" (issue 27): in the listing the
editors read (rewind/listTurns `forkOf`) and in the timeline text, so a fork is not an unlabelled
session repeating the original's turns."""

from __future__ import annotations

import time
from pathlib import Path

from rewind_ls.core.history.timeline import list_sessions, timeline_text
from rewind_ls.core.store import Store
from rewind_ls.protocol.turns import ListTurnsResult


def _session(store: Store, sid: str, prompts: list[str]) -> None:
    store.ensure_session(sid, "agent", agent="claude-code")
    for p in prompts:
        store.end_turn(store.begin_turn(sid, p))


def test_a_fork_and_a_fork_of_a_fork_are_labelled(tmp_path: Path) -> None:
    store = Store.open(str(tmp_path), home=str(tmp_path / "home"))
    a = "aaaaaaaa-1111"
    _session(store, a, ["one", "two", "three"])
    time.sleep(0.01)
    b = "bbbbbbbb-2222"
    store.inherit_turns(a, b, 3, str(tmp_path / "b.jsonl"))
    _session(store, b, ["three again"])
    time.sleep(0.01)
    c = "cccccccc-3333"
    store.inherit_turns(b, c, 2, str(tmp_path / "c.jsonl"))

    listing = list_sessions(store)
    by_id = {s["id"]: s for s in listing["sessions"]}
    assert by_id[a]["fork_of"] is None
    assert by_id[b]["fork_of"] == {"session_id": a, "before_number": 3}
    assert by_id[c]["fork_of"] == {"session_id": b, "before_number": 2}
    wire = ListTurnsResult.model_validate(listing).model_dump(by_alias=True)
    assert {"sessionId": a, "beforeNumber": 3} in [s["forkOf"] for s in wire["sessions"]]

    titles = [ln for ln in timeline_text(store).splitlines() if " session " in ln]
    assert sorted(titles) == [
        "claude-code session aaaaaaaa",
        "claude-code session bbbbbbbb (current) · fork of aaaaaaaa before #3",
        "claude-code session cccccccc · fork of bbbbbbbb before #2",
    ]
