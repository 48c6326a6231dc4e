"""Who changed which file in which turn: the grid behind `rewind-ls timeline --html` and the
editors' timeline picture (`activity_page.render`).

Columns are turns in workspace order: a session's turns, and the turns of the person and of
rewind-ls from its start on (your saves, changes found between turns, restores), so the picture
shows everything that touched the files since the session began but other agents' sessions; or
every turn of every session (`every_session`). Rows are the files any of those turns changed, grouped by folder. A cell
says who changed the file in that turn, in blame's words (`blame.Blamer.origin`: agent, shell,
save, outside, restore, background; `subagent` for an agent's edit in a turn where subagents edited), how
(created, modified, deleted), and two marks: `shared` (a change two sessions' shell commands could
both have made: `model.SHARED_SOURCE`) and `conflict` (someone else changed the file after this
turn's change: rewinding the turn would stop on it, as `plan_rewind` does).
"""

from __future__ import annotations

import posixpath
from collections.abc import Mapping
from typing import NamedTuple

from rewind_ls.core.capture.recorder import REWIND_SESSION, turn_info
from rewind_ls.core.errors import UnknownTurn
from rewind_ls.core.history.blame import AGENT, SUBAGENT, Blamer
from rewind_ls.core.history.timeline import iso
from rewind_ls.core.model import Session, SessionKind, Turn, TurnState, shared_turns
from rewind_ls.core.store import Store

# Restore points are shown once their restore wrote something (as the listing does).
_SHOWN_RESTORES = (TurnState.APPLIED, TurnState.PARTIAL)


class Column(NamedTuple):
    turn_id: str
    number: int
    session_id: str
    session_kind: str
    agent: str | None
    prompt: str
    started_at: str | None
    state: str


class Cell(NamedTuple):
    row: int
    column: int
    who: str  # blame's sources: agent, subagent, shell, save, outside, restore, background
    change: str  # created, modified, deleted
    shared: bool
    conflict: bool


class Grid(NamedTuple):
    workspace: str
    session_id: str | None  # None: every session
    columns: list[Column]
    paths: list[str]  # grouped by folder: sorted by (folder, name)
    cells: list[Cell]


def activity(store: Store, session_id: str | None, every_session: bool = False) -> Grid:
    """The grid of `session_id` (with the person's and rewind-ls' turns in its span), or of every
    session."""
    sessions = {s.id: s for s in store.sessions()}
    turns = _columns(store, session_id, every_session, sessions)
    index = {t.id: i for i, t in enumerate(turns)}
    changes = [c for c in store.changes_of_turns(list(index)) if c.kind is not None]
    paths = sorted({c.path for c in changes}, key=lambda p: (posixpath.dirname(p), p))
    row_of = {p: i for i, p in enumerate(paths)}
    histories = store.path_histories(paths)
    blamer = Blamer(store)
    subagents = {t.id for t in turns if turn_info(t).get("subagents")}
    cells: list[Cell] = []
    for path in paths:
        history = histories[path]
        for h in history:
            col = index.get(h.turn_id)
            if col is None or h.kind is None:
                continue
            who = blamer.origin(h).source
            if who == AGENT and h.turn_id in subagents:
                who = SUBAGENT
            later = [
                o
                for o in history
                if o.seq > h.seq
                and o.session_id not in (h.session_id, REWIND_SESSION)
                and o.turn_state != TurnState.ROLLED_BACK
                and o.kind is not None
            ]
            own = {o.seq for o in history if o.session_id == h.session_id}
            conflict = h.session_kind == SessionKind.AGENT and any(o.seq not in own for o in later)
            cells.append(
                Cell(row_of[path], col, who, str(h.kind), bool(shared_turns(h.source)), conflict)
            )
    columns = [
        Column(
            t.id,
            t.number,
            t.session_id,
            str(sessions[t.session_id].kind) if t.session_id in sessions else "agent",
            sessions[t.session_id].agent if t.session_id in sessions else None,
            t.prompt,
            iso(t.started_at),
            str(t.state),
        )
        for t in turns
    ]
    return Grid(store.root, None if every_session else session_id, columns, paths, cells)


def _columns(
    store: Store, session_id: str | None, every_session: bool, sessions: Mapping[str, Session]
) -> list[Turn]:
    """The turns shown, in workspace order."""

    def shown(t: Turn) -> bool:
        return t.session_id != REWIND_SESSION or t.state in _SHOWN_RESTORES

    every = [t for t in store.turns() if shown(t)]
    every.sort(key=lambda t: t.seq)
    if every_session:
        return every
    if session_id is None or session_id not in sessions:
        raise UnknownTurn(str(session_id), "no session with that id in this workspace")
    own = [t for t in every if t.session_id == session_id]
    if not own:
        return []
    first = own[0].seq
    others = {SessionKind.EDITOR.value, SessionKind.EXTERNAL.value, SessionKind.REWIND.value}

    def in_span(t: Turn) -> bool:
        """The person's and rewind-ls' turns from the session's start on (a rewind made after the
        agent finished is part of the session's story)."""
        session = sessions.get(t.session_id)
        return session is not None and str(session.kind) in others and t.seq > first

    return [t for t in every if t.session_id == session_id or in_span(t)]
