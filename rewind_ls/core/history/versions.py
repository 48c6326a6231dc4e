"""Read-side history across turns and sessions: every recorded version of one file, and what a path
held at a checkpoint (the start of a turn), for comparing two checkpoints or a checkpoint with now."""

from __future__ import annotations

from typing import Any

from rewind_ls.core.capture.local_history import WATCH_SOURCE
from rewind_ls.core.history.timeline import iso
from rewind_ls.core.model import (
    ABSENT,
    BACKGROUND,
    FILE,
    PathChange,
    Session,
    SessionKind,
    Version,
    is_background,
)
from rewind_ls.core.store import Store


def source_label(session_kind: str, source: str) -> str:
    """Who made a change, in the person's words: agent, your save, your edit, shell, outside,
    restore, background."""
    if session_kind == SessionKind.REWIND or source == "restore":
        return "restore"
    if session_kind == SessionKind.EDITOR or source == "save":
        return "your save"
    if session_kind == SessionKind.EXTERNAL and source == WATCH_SOURCE:
        return "your edit"  # recorded by the watcher as it happened (local history)
    if session_kind == SessionKind.EXTERNAL:
        return "outside"  # found between turns: a shell, another tool, the person
    if is_background(source):
        return BACKGROUND  # work the turn started, after it ended (a background subagent, shell)
    if source == "scan":
        return "shell"  # found at a boundary of the agent's turn: its shell commands
    return "agent"


def file_log(store: Store, path: str) -> list[dict[str, Any]]:
    """Every recorded version of `path`, newest first: one entry per change (its `after`), then the
    oldest `before` (the version rewind-ls first saw)."""
    sessions = {s.id: s for s in store.sessions()}
    rows = _recorded_once(store.path_history(path), sessions)
    out: list[dict[str, Any]] = []
    for row in rows:
        kind = row.kind
        if kind is None or row.after is None:
            continue  # touched but not settled: no version to show
        turn = store.turn(row.turn_id)
        session = sessions.get(row.session_id)
        out.append(
            {
                "turn_id": row.turn_id,
                "number": turn.number if turn is not None else None,
                "session_id": row.session_id,
                "session_kind": row.session_kind,
                "agent": session.agent if session is not None else None,
                "prompt": turn.prompt if turn is not None else "",
                "time": iso(turn.started_at) if turn is not None else None,
                "source": source_label(row.session_kind, row.source),
                "change": kind,
                "kind": row.after.kind,
                "hash": row.after.hash,
                "mode": row.after.mode,
            }
        )
    out.reverse()
    if rows:
        first = rows[0]
        out.append(
            {
                "turn_id": None,
                "number": None,
                "session_id": None,
                "session_kind": None,
                "agent": None,
                "prompt": "",
                "time": None,
                "source": "first seen",
                "change": "absent" if first.before.kind == ABSENT else "baseline",
                "kind": first.before.kind,
                "hash": first.before.hash,
                "mode": first.before.mode,
            }
        )
    return out


def _recorded_once(rows: list[PathChange], sessions: dict[str, Session]) -> list[PathChange]:
    """A forked conversation carries copies of its earlier turns (same `seq`, `Store.inherit_turns`):
    one version recorded once, listed under the session that recorded it (the one started first)."""

    def started(row: PathChange) -> float:
        session = sessions.get(row.session_id)
        return session.started_at if session is not None else 0.0

    first: dict[int, PathChange] = {}
    for row in rows:
        have = first.get(row.seq)
        if have is None or started(row) < started(have):
            first[row.seq] = row
    return sorted(first.values(), key=lambda r: r.seq)


def changed_paths_since(store: Store, seq: int) -> list[str]:
    return sorted({c.path for c in store.changes_since(seq)})


def version_at(store: Store, path: str, seq: int) -> Version | None:
    """What `path` held at workspace order `seq` (a turn's start): the `before` of the first change
    to it after `seq` in any session; with no later change, the last content rewind-ls saw. None
    when rewind-ls never saw the path."""
    later = [h for h in store.path_history(path) if h.seq > seq]
    if later:
        return later[0].before
    known = store.known(path)
    return None if known is None else known[0]


def last_on_disk(store: Store, path: str) -> Version | None:
    """The last content `path` held on disk as far as rewind-ls recorded it (before its deletion,
    when the newest change deleted it); None when it never saw the path hold a file. An editor's
    document of a deleted file that still shows this content is a leftover, not unsaved text."""
    for change in reversed(store.path_history(path)):
        for version in (change.after, change.before):
            if version is not None and version.kind == FILE:
                return version
    known = store.known(path)
    return known[0] if known is not None and known[0].kind == FILE else None
