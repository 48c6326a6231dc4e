"""Read-side views of the store shared by the CLI and the server: sessions with their turns and files
(the fields of `rewind/listTurns`, snake_case: the server and the CLI's --json turn them into the
wire's camelCase through `rewind_ls.protocol`), and the timeline text document
(`timeline_text`).

Listing by pages: the newest `limit` turns of each session, `olderCursor` for the next, reading
only the listed turns and their changes. A long-lived reader (the server) keeps the sessions' turn
counts and the forks' origins per store, brought up to date from the turns begun since (recounted
when the sessions change or `Store.turns_dropped` moves), and each turn's entry while its stamp
(`Store.turn_stamps_page`) is equal, so a refresh reads and makes only the new or changed turns
(`TurnEntries`).
"""

from __future__ import annotations

import functools
import re
import time
from collections.abc import Callable
from typing import Any, NamedTuple, TypeVar

from rewind_ls.core.capture.recorder import REWIND_SESSION, reconstructed_note, turn_info
from rewind_ls.core.errors import BadInput, UnknownTurn
from rewind_ls.core.fs.paths import real_root, real_uri
from rewind_ls.core.model import Change, PathChange, Session, Turn, TurnState, shared_turns
from rewind_ls.core.restore.plan import current_session
from rewind_ls.core.store import Store

T = TypeVar("T")


def iso(ts: float | None) -> str | None:
    if ts is None:
        return None
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(ts))


def change_kind(row: Change | PathChange) -> str | None:
    return row.kind  # None: touched, not settled (the tool call is still running or failed)


def turn_dict(
    store: Store,
    turn: Turn,
    session_kind: str,
    changes: list[Change],
    root: str | None = None,
) -> dict[str, Any]:
    """One turn as the listing shows it. `root`: the workspace's real path, when the caller has
    it (a listing resolves it once for all its files)."""
    root = root if root is not None else real_root(store.root)
    files = []
    for c in changes:
        kind = change_kind(c)
        if kind is not None:
            partners = shared_turns(c.source)
            entry: dict[str, Any] = {
                "path": c.path,
                "uri": real_uri(root, c.path),
                "change": kind,
                "source": "shared" if partners else c.source,
                "shared_with": _sessions_of(store, partners),
            }
            files.append(entry)
    return {
        "id": turn.id,
        "number": turn.number,
        "session_id": turn.session_id,
        "session_kind": session_kind,
        "prompt": turn.prompt,
        "started_at": iso(turn.started_at),
        "ended_at": iso(turn.ended_at),
        "files": files,
        "subagents": turn_info(turn).get("subagents") or [],
        # Set when the turn was rebuilt from the agent's transcript (its hooks did not fire).
        "reconstructed": reconstructed_note(turn),
    }


class TurnEntries:
    """Turn entries kept from one listing to the next (the server's: a view refreshes its page
    after every turn, and 99 of its 100 turns are the ones it listed before). An entry is kept
    with what it was made from: the turn's stamp (`Store.turn_stamps_page`: its row and changes as
    one text) or, where no stamp was read, the turn's row and changes themselves; and the session
    kind, the workspace's real root and `Store.turns_dropped` (a shared change names the sessions
    of its other turns, which retention may drop). It is reused only while all of that is equal,
    so a turn that changed since (a late change, a new state, its info) is made again. `convert`
    turns an entry into what the caller keeps (the server: its wire form), once per distinct
    turn."""

    def __init__(
        self, convert: Callable[[dict[str, Any]], dict[str, Any]] | None = None, size: int = 4096
    ) -> None:
        self.convert = convert
        self.size = size
        self._held: dict[str, tuple[tuple[Any, ...], dict[str, Any]]] = {}

    def kept(self, turn_id: str, key: tuple[Any, ...]) -> dict[str, Any] | None:
        """The entry of `turn_id` made from `key`, if kept. The entry is shared with later
        listings: a caller must not change it."""
        held = self._held.get(turn_id)
        return held[1] if held is not None and held[0] == key else None

    def make(
        self,
        store: Store,
        turn: Turn,
        session_kind: str,
        changes: list[Change],
        root: str,
        key: tuple[Any, ...],
    ) -> dict[str, Any]:
        """The entry of `turn` made anew and kept under `key`."""
        entry = turn_dict(store, turn, session_kind, changes, root)
        if self.convert is not None:
            entry = self.convert(entry)
        if turn.id not in self._held and len(self._held) >= self.size:
            del self._held[next(iter(self._held))]  # the oldest entry made
        self._held[turn.id] = (key, entry)
        return entry

    def entry(
        self,
        store: Store,
        turn: Turn,
        session_kind: str,
        changes: list[Change],
        root: str,
        dropped: int,
    ) -> dict[str, Any]:
        """The entry of `turn` read whole (no stamp): made again only when its row or changes
        differ."""
        key = (turn, tuple(changes), session_kind, root, dropped)
        kept = self.kept(turn.id, key)
        if kept is not None:
            return kept
        return self.make(store, turn, session_kind, changes, root, key)


def _sessions_of(store: Store, turn_ids: list[str]) -> list[str]:
    """The sessions of `turn_ids` (a shared change's other turns), in order, once each."""
    out: list[str] = []
    for turn_id in turn_ids:
        row = store.turn(turn_id)
        if row is not None and row.session_id not in out:
            out.append(row.session_id)
    return out


# A restore point is listed once its restore wrote something.
_SHOWN_RESTORE_POINTS = (TurnState.APPLIED.value, TurnState.PARTIAL.value)


def list_sessions(
    store: Store,
    session_id: str | None = None,
    limit: int | None = None,
    before: str | None = None,
    turn_id: str | None = None,
    entries: TurnEntries | None = None,
    root: str | None = None,
) -> dict[str, Any]:
    """Sessions with their turns (oldest first) and files. `limit`: a page, the newest `limit`
    turns of each session (`before`: those older than a session's `older_cursor`, which needs
    `session_id`); each session says how many turns it has (`turn_count`) and, when older turns
    exist beyond its page, the cursor of the next page. `turn_id`: only that turn (and its
    session). Only the listed turns and their changes are read, so a page costs the same with
    ten turns or ten thousand. `entries`: turn entries kept from the caller's earlier listings
    (reused while a turn is unchanged). `root`: the workspace's real path (`real_root`), when the
    caller has it."""
    if before is not None and session_id is None:
        raise BadInput("a page cursor (before) belongs to one session: give its session id too")
    if limit is not None and limit < 1:
        raise BadInput(f"limit must be at least 1 (got {limit})")
    before_number = _cursor_number(before)
    sessions = store.sessions()
    all_counts, forks, dropped = _counts_and_forks(store, sessions)
    only_turn = None
    if turn_id is not None:
        only_turn = store.turn(turn_id)
        if only_turn is None:
            raise UnknownTurn(turn_id, "no turn with that id in this workspace")
        session_id = only_turn.session_id
    if session_id is not None:
        sessions = [s for s in sessions if s.id == session_id]
    if root is None:  # once, not per file (a realpath is a walk of the folders)
        root = real_root(store.root)
    if entries is not None and limit is not None and only_turn is None:
        stamped = _stamped_pages(store, sessions, limit, before_number, entries, root, dropped)
    else:
        stamped = None
    counts = {s.id: _turn_count(store, s, all_counts) for s in sessions}
    if stamped is None:
        pages = {s.id: _page_of(store, s, limit, before_number, only_turn) for s in sessions}
        stamped = _read_pages(store, sessions, pages, limit, only_turn, entries, root, dropped)
    out = [_session_entry(s, counts[s.id], stamped[s.id], forks.get(s.id)) for s in sessions]
    return {"workspace": store.root, "current_session_id": current_session(store), "sessions": out}


def _turn_count(store: Store, session: Session, all_counts: dict[str, int]) -> int:
    """How many turns `session` has; the restore points' session counts only the shown states."""
    if session.id != REWIND_SESSION:
        return all_counts.get(session.id, 0)
    # Restore points change state: counted again whenever anything was committed.
    return _unchanged_since(
        store,
        ("count", session.id),
        functools.partial(store.turn_count, session.id, _SHOWN_RESTORE_POINTS),
    )


def _page_of(
    store: Store,
    session: Session,
    limit: int | None,
    before_number: int | None,
    only_turn: Turn | None,
) -> tuple[list[Turn], str | None]:
    """The turns of `session` to list (oldest first) and the cursor of its next older page."""
    states = _SHOWN_RESTORE_POINTS if session.id == REWIND_SESSION else None
    if only_turn is not None:
        return [only_turn], None
    if limit is None:
        return [t for t in store.turns(session.id) if states is None or t.state in states], None
    newest = store.turns_page(session.id, limit + 1, before_number, states)
    cursor = str(newest[limit - 1].number) if len(newest) > limit else None
    return newest[:limit][::-1], cursor


def _session_entry(
    session: Session,
    turn_count: int,
    page: tuple[list[dict[str, Any]], str | None],
    origin: tuple[str, int] | None,
) -> dict[str, Any]:
    """One session of the listing: its fields, its page of turn entries, the fork it came from."""
    listed, cursor = page
    return {
        "id": session.id,
        "kind": session.kind,
        "agent": session.agent,
        "transcript_path": session.transcript_path,
        "started_at": iso(session.started_at),
        "last_activity_at": iso(session.last_activity_at),
        "turn_count": turn_count,
        "older_cursor": cursor,
        "fork_of": None
        if origin is None
        else {"session_id": origin[0], "before_number": origin[1]},
        "turns": listed,
    }


_Pages = dict[str, tuple[list[dict[str, Any]], str | None]]


def _read_pages(
    store: Store,
    sessions: list[Session],
    pages: dict[str, tuple[list[Turn], str | None]],
    limit: int | None,
    only_turn: Turn | None,
    entries: TurnEntries | None,
    root: str,
    dropped: int,
) -> _Pages:
    """Each session's turn entries, from its turns read whole and their changes."""
    by_turn: dict[str, list[Change]] = {}
    if limit is None and only_turn is None:
        changes = store.all_changes()
    else:
        changes = store.changes_of_turns([t.id for turns, _ in pages.values() for t in turns])
        changes.sort(key=lambda c: c.path)
    for c in changes:
        by_turn.setdefault(c.turn_id, []).append(c)
    out: _Pages = {}
    for s in sessions:
        turns, cursor = pages[s.id]
        out[s.id] = (
            [
                turn_dict(store, t, s.kind, by_turn.get(t.id, []), root)
                if entries is None
                else entries.entry(store, t, s.kind, by_turn.get(t.id, []), root, dropped)
                for t in turns
            ],
            cursor,
        )
    return out


def _stamped_pages(
    store: Store,
    sessions: list[Session],
    limit: int,
    before_number: int | None,
    entries: TurnEntries,
    root: str,
    dropped: int,
) -> _Pages:
    """Each session's page from the turns' stamps (`Store.turn_stamps_page`): a kept entry whose
    stamp is unchanged is used as it is; only the other turns (new or changed since) are read and
    made. A turn dropped between the two reads is left out of its page."""
    listed: dict[str, tuple[list[tuple[str, tuple[Any, ...]]], str | None]] = {}
    made: dict[str, dict[str, Any]] = {}
    missing: dict[str, tuple[str, tuple[Any, ...]]] = {}
    for s in sessions:
        states = _SHOWN_RESTORE_POINTS if s.id == REWIND_SESSION else None
        newest = store.turn_stamps_page(s.id, limit + 1, before_number, states)
        cursor = str(newest[limit - 1][1]) if len(newest) > limit else None
        page = []
        for tid, _number, stamp in reversed(newest[:limit]):
            key = (stamp, s.id, s.kind, root, dropped)
            page.append((tid, key))
            entry = entries.kept(tid, key)
            if entry is None:
                missing[tid] = (s.kind, key)
            else:
                made[tid] = entry
        listed[s.id] = (page, cursor)
    if missing:
        ids = list(missing)
        by_turn: dict[str, list[Change]] = {}
        changes = store.changes_of_turns(ids)
        changes.sort(key=lambda c: c.path)
        for c in changes:
            by_turn.setdefault(c.turn_id, []).append(c)
        for t in store.turns_of(ids):
            kind, key = missing[t.id]
            made[t.id] = entries.make(store, t, kind, by_turn.get(t.id, []), root, key)
    return {
        sid: ([made[tid] for tid, _ in page if tid in made], cursor)
        for sid, (page, cursor) in listed.items()
    }


# Answers of the listing's whole-table queries (a session's turn count, the forks' origins), kept
# while the database is unchanged: a view refreshing a 10k-turn session reads only its page again.
# Key: the store's path and the query; value: the store, its write mark, the answer.
_MEMO: dict[tuple[Any, ...], tuple[Store, tuple[int, int], Any]] = {}


def _unchanged_since(store: Store, query: tuple[str, ...], compute: Callable[[], T]) -> T:
    """`compute()`, or its answer from the last call when nothing was committed to the store
    since (`Store.write_mark`: another connection's commits and this one's writes). The entry
    holds its store, so a store opened later never matches it by a reused id."""
    mark = store.write_mark()
    key = (store.path, *query)
    held = _MEMO.get(key)
    if held is not None and held[0] is store and held[1] == mark:
        return held[2]  # type: ignore[no-any-return]
    answer = compute()
    _MEMO[key] = (store, mark, answer)
    return answer


# Per store: the turn counts of every session and the forks' origins, kept across listings. A new
# turn has a `seq` above every turn committed before it and never shares it (only a fork's copies
# do, and a fork is a new session), so while the sessions and `Store.turns_dropped` are unchanged
# the counts are brought up to date from the turns above the highest `seq` counted (the `seq`
# index: the turns begun since), and the forks' origins still hold. A refresh after a new turn
# then reads no whole table.
class _Counted(NamedTuple):
    store: Store
    sessions: tuple[tuple[str, str, float], ...]
    dropped: int
    top_seq: int
    counts: dict[str, int]
    forks: dict[str, tuple[str, int]]


_COUNTED: dict[str, _Counted] = {}


def _counts_and_forks(
    store: Store, sessions: list[Session]
) -> tuple[dict[str, int], dict[str, tuple[str, int]], int]:
    """Every session's turn count, the forks' origins (`Store.fork_origins`) and
    `Store.turns_dropped`. The store's
    answers are read in this order (sessions, drops, counts, forks), so a fork or a drop
    committed meanwhile changes what the next call compares and is counted again then."""
    # Sorted: `sessions` come by latest activity, which every new turn may reorder.
    shape = tuple(sorted((s.id, s.kind, s.started_at) for s in sessions))
    dropped = store.turns_dropped()
    held = _COUNTED.get(store.path)
    if (
        held is not None
        and held.store is store
        and (held.sessions, held.dropped) == (shape, dropped)
    ):
        counts, forks = dict(held.counts), held.forks
        begun, top = store.turn_counts(held.top_seq)
        for sid, n in begun.items():
            counts[sid] = counts.get(sid, 0) + n
    else:
        counts, top = store.turn_counts()
        forks = store.fork_origins()
    _COUNTED[store.path] = _Counted(store, shape, dropped, top, counts, forks)
    return counts, forks, dropped


def _cursor_number(before: str | None) -> int | None:
    if before is None:
        return None
    try:
        return int(before)
    except ValueError:
        raise BadInput(f"not a page cursor: {before!r} (pass a session's olderCursor)") from None


TIMELINE_TITLE = "rewind-ls timeline"
# The last thing on a turn's line: its id, which is what the lenses and commands act on.
TURN_ID_AT_END = re.compile(r"\[(t[0-9a-f]+)\]\s*$")

_SESSION_TITLES = {
    "editor": "Your saves in the editor",
    "external": "Changes made outside agent turns (found by scans)",
    "rewind": "Restore points: what the files held just before each rewind, revert or undo",
}


def fork_label(fork_of: dict[str, Any]) -> str:
    """Where a forked conversation came from (its earlier turns are
    copies of that session's, so they are listed again under the fork)."""
    return f"fork of {fork_of['session_id'][:8]} before #{fork_of['before_number']}"


def _when(turn: dict[str, Any]) -> str:
    return (turn["started_at"] or "").replace("T", " ").rstrip("Z")


def _one_line(text: str, limit: int = 100) -> str:
    return " ".join(text.split())[:limit]


def timeline_text(store: Store, session_id: str | None = None, limit: int | None = None) -> str:
    """The timeline as plain text: a block per session, a line per turn ending with its id in
    brackets (what code lenses and commands act on), its files indented below. Restore points are
    shown as what they are ("restore point before rewind to turn 2"), never numbered like turns.
    `limit`: only the newest `limit` turns of each session (a line says how many are left out)."""
    listing = list_sessions(store, session_id, limit)
    lines = [
        f"{TIMELINE_TITLE}: {store.root}",
        "Turn numbers are those `rewind-ls turns` and the rewind.* commands accept.",
        "",
    ]
    for session in listing["sessions"]:
        if not session["turns"]:
            continue
        kind = session["kind"]
        if kind == "agent":
            current = " (current)" if session["id"] == listing["current_session_id"] else ""
            title = f"{session['agent'] or 'agent'} session {session['id'][:8]}{current}"
            if session["fork_of"] is not None:
                title += f" · {fork_label(session['fork_of'])}"
        else:
            title = _SESSION_TITLES.get(kind, kind)
        lines.append(title)
        older = session["turn_count"] - len(session["turns"])
        if older > 0:
            lines.append(
                f"  ({older} older turns not shown: `rewind-ls turns --session {session['id']}`)"
            )
        for turn in session["turns"]:
            prompt = _one_line(turn["prompt"])
            if kind == "rewind":
                head = f"Restore point {_when(turn)} · before {prompt}"
            elif kind == "agent":
                head = f"Turn {turn['number']} · {_when(turn)} · {prompt or '(no prompt)'}"
            else:
                head = f"{_when(turn)} · {prompt or kind}"
            lines.append(f"  {head}  [{turn['id']}]")
            if turn.get("reconstructed"):
                lines.append(f"      ({turn['reconstructed']})")
            for f in turn["files"]:
                shared = f.get("shared_with")
                note = f"  (shared with {', '.join(s[:8] for s in shared)})" if shared else ""
                lines.append(f"      {f['change']:<9} {f['path']}{note}")
            if not turn["files"]:
                lines.append("      (no file changes)")
        lines.append("")
    if len(lines) == 3:
        lines.append("No turns recorded yet.")
    return "\n".join(lines) + "\n"
