"""Sessions and their turns: opening and ending a turn, a fork's inherited turns, the queries
over turns (pages, counts, the newest), and the ones retention asks (what may be dropped, and
dropping it).

`Sessions`: sessions and turns (opening, ending, a fork's inherited turns), the queries over turns
(pages, counts, the newest, each listed turn's stamp: what a listing shows of it, its row's shown
columns as they are and its changes as one text made by SQLite) and those retention asks.
"""

from __future__ import annotations

import os
import time
from typing import Any

from rewind_ls.core.model import Session, SessionKind, Turn, TurnState
from rewind_ls.core.store.db import Database
from rewind_ls.core.store.rows import (
    MAX_PROMPT_CHARS,
    SESSION_COLS,
    TURN_COLS,
    bounded_prompt,
    session_of,
    turn_of,
)


class Sessions:
    """The `sessions` and `turns` tables of one store."""

    def __init__(self, db: Database) -> None:
        self.db = db
        self.conn = db.conn

    def ensure_session(
        self,
        session_id: str,
        kind: SessionKind | str,
        agent: str | None = None,
        transcript: str | None = None,
    ) -> None:
        """Create the session, or note its activity. `kind` may be given as its string (the hook
        modules say "agent"); one outside the vocabulary is refused here, never stored."""
        kind = SessionKind(kind)
        now = time.time()
        with self.db.transaction():
            self.conn.execute(
                "INSERT INTO sessions(id, kind, agent, transcript_path, started_at, last_activity_at)"
                " VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT(id) DO UPDATE SET"
                " last_activity_at = excluded.last_activity_at,"
                " transcript_path = coalesce(excluded.transcript_path, transcript_path)",
                (session_id, kind, agent, transcript, now, now),
            )

    def session(self, session_id: str) -> Session | None:
        row = self.conn.execute(
            f"SELECT {SESSION_COLS} FROM sessions WHERE id = ?", (session_id,)
        ).fetchone()
        return None if row is None else session_of(row)

    def sessions(self) -> list[Session]:
        rows = self.conn.execute(f"SELECT {SESSION_COLS} FROM sessions ORDER BY last_activity_at")
        return [session_of(r) for r in rows]

    def begin_turn(
        self,
        session_id: str,
        prompt: str,
        state: TurnState = TurnState.OPEN,
        info: str | None = None,
        started_at: float | None = None,
    ) -> str:
        """Open a new turn in `session_id` (which must exist) and make it the session's open turn.
        `started_at`: when it really started (a turn reconstructed from a transcript)."""
        turn_id = "t" + os.urandom(6).hex()
        stored = bounded_prompt(prompt)
        now = time.time() if started_at is None else started_at
        with self.db.transaction():
            number = self.conn.execute(
                "SELECT coalesce(max(number), 0) + 1 FROM turns WHERE session_id = ?", (session_id,)
            ).fetchone()[0]
            self.conn.execute(
                "INSERT INTO turns(id, session_id, number, seq, prompt, started_at, state, info)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (turn_id, session_id, number, self.db.next_seq(), stored, now, state, info),
            )
            self.conn.execute(
                "UPDATE sessions SET open_turn = ?, last_activity_at = ? WHERE id = ?",
                (turn_id, now, session_id),
            )
        return turn_id

    def end_turn(
        self, turn_id: str, state: TurnState = TurnState.CLOSED, ended_at: float | None = None
    ) -> None:
        with self.db.transaction():
            self.conn.execute(
                "UPDATE turns SET ended_at = ?, state = ? WHERE id = ?",
                (time.time() if ended_at is None else ended_at, state, turn_id),
            )
            self.conn.execute(
                "UPDATE sessions SET open_turn = NULL WHERE open_turn = ?", (turn_id,)
            )

    def set_turn_state(self, turn_id: str, state: TurnState, info: str | None = None) -> None:
        with self.db.transaction():
            self.conn.execute(
                "UPDATE turns SET state = ?, info = coalesce(?, info), ended_at = ? WHERE id = ?",
                (state, info, time.time(), turn_id),
            )

    def set_turn_info(self, turn_id: str, info: str) -> None:
        with self.db.transaction():
            self.conn.execute("UPDATE turns SET info = ? WHERE id = ?", (info, turn_id))

    def inherit_turns(self, source: str, target: str, below: int, transcript: str) -> int:
        """A forked conversation (`target`) carries the turns of `source` numbered below `below`:
        copy those turns and their changes (same numbers, same `seq`: one history, two sessions)
        so the fork's next turn is number `below` and its earlier turns can be rewound. Returns
        the number of turns copied; does nothing when `target` already exists."""
        now = time.time()
        with self.db.transaction():
            if self.session(target) is not None:
                return 0
            row = self.session(source)
            agent = None if row is None else row.agent
            # No agent has worked in the fork yet: it must not become the "current" session
            # (the latest activity) before the person resumes it; its first hook makes it so.
            quiet = now if row is None else min(now, row.started_at)
            self.conn.execute(
                "INSERT INTO sessions(id, kind, agent, transcript_path, started_at,"
                " last_activity_at) VALUES (?, 'agent', ?, ?, ?, ?)",
                (target, agent, transcript, now, quiet),
            )
            turns = self.conn.execute(
                "SELECT id FROM turns WHERE session_id = ? AND number < ? ORDER BY number",
                (source, below),
            ).fetchall()
            for (old_id,) in turns:
                new_id = "t" + os.urandom(6).hex()
                self.conn.execute(
                    "INSERT INTO turns(id, session_id, number, seq, prompt, started_at, ended_at,"
                    " state, info) SELECT ?, ?, number, seq, prompt, started_at,"
                    " coalesce(ended_at, ?), CASE state WHEN 'open' THEN 'closed' ELSE state END,"
                    " info FROM turns WHERE id = ?",
                    (new_id, target, now, old_id),
                )
                self.conn.execute(
                    "INSERT INTO changes SELECT ?, path, seq, source, before_kind, before_hash,"
                    " before_mode, after_kind, after_hash, after_mode, after_seq FROM changes"
                    " WHERE turn_id = ?",
                    (new_id, old_id),
                )
                # The fork's transcript holds these turns' prompt and tool ids again: claimed,
                # so the transcript follower does not record them a second time. `inherited`:
                # neither a hook's nor the transcript's (doctor's hooks check counts those).
                self.conn.execute(
                    "INSERT OR IGNORE INTO agent_events(session_id, kind, key, turn_id, source,"
                    " at) SELECT ?, kind, key, ?, 'inherited', at FROM agent_events"
                    " WHERE session_id = ? AND turn_id = ?",
                    (target, new_id, source, old_id),
                )
        return len(turns)

    def fork_origins(self) -> dict[str, tuple[str, int]]:
        """Each forked session's origin: session id -> (the session it was forked from, the turn
        number it was forked before). A fork's inherited turns share their `seq` with the source's
        (`inherit_turns`); the source is the latest-started other session holding the fork's last
        inherited turn and started before the fork (so a fork of a fork names the fork)."""
        rows = self.conn.execute(
            "SELECT f.session_id, max(f.number), s.id, s.started_at"
            " FROM turns f JOIN sessions fs ON fs.id = f.session_id"
            " JOIN turns o ON o.seq = f.seq AND o.session_id != f.session_id"
            " JOIN sessions s ON s.id = o.session_id AND s.started_at < fs.started_at"
            " WHERE f.seq IN (SELECT seq FROM turns GROUP BY seq HAVING count(*) > 1)"
            " GROUP BY f.session_id, s.id"
        ).fetchall()
        best: dict[str, tuple[str, int, float]] = {}
        for fork, last, source, started in rows:
            have = best.get(fork)
            # The source holds the fork's latest inherited turn; among those, the newest session.
            if have is None or (last, started) > (have[1], have[2]):
                best[fork] = (source, last, started)
        return {fork: (source, last + 1) for fork, (source, last, _) in best.items()}

    def turn(self, turn_id: str) -> Turn | None:
        row = self.conn.execute(f"SELECT {TURN_COLS} FROM turns WHERE id = ?", (turn_id,))
        found = row.fetchone()
        return None if found is None else turn_of(found)

    def turns(self, session_id: str | None = None) -> list[Turn]:
        if session_id is None:
            rows = self.conn.execute(f"SELECT {TURN_COLS} FROM turns ORDER BY seq")
        else:
            rows = self.conn.execute(
                f"SELECT {TURN_COLS} FROM turns WHERE session_id = ? ORDER BY seq", (session_id,)
            )
        return [turn_of(r) for r in rows]

    def turns_page(
        self,
        session_id: str,
        limit: int,
        before_number: int | None = None,
        states: tuple[str, ...] | None = None,
    ) -> list[Turn]:
        """The newest `limit` turns of a session numbered below `before_number` (None: the newest),
        in `states` if given, newest first: a page of a long session without reading the others
        (the UNIQUE(session_id, number) index walks backwards)."""
        where, args = _page_where(session_id, before_number, states)
        rows = self.conn.execute(
            f"SELECT {TURN_COLS} FROM turns WHERE {where} ORDER BY number DESC LIMIT ?",
            (*args, limit),
        )
        return [turn_of(r) for r in rows]

    def turn_stamps_page(
        self,
        session_id: str,
        limit: int,
        before_number: int | None = None,
        states: tuple[str, ...] | None = None,
    ) -> list[tuple[str, int, tuple[Any, ...]]]:
        """The page `turns_page` gives, as (id, number, stamp), newest first. A turn's stamp is
        what a listing shows of its row and its changes (`_TURN_STAMP`): equal stamps, equal
        listings. A reader that kept what it made from a turn reads the turn again only when its
        stamp differs, so an unchanged turn is never built into records."""
        where, args = _page_where(session_id, before_number, states)
        rows = self.conn.execute(
            f"SELECT id, number, {_TURN_STAMP} FROM turns WHERE {where}"
            " ORDER BY number DESC LIMIT ?",
            (*args, limit),
        )
        return [(row[0], row[1], row[1:]) for row in rows]

    def turns_of(self, turn_ids: list[str]) -> list[Turn]:
        """The turns of `turn_ids` that exist, in no set order."""
        if not turn_ids:
            return []
        marks = ",".join("?" * len(turn_ids))
        rows = self.conn.execute(f"SELECT {TURN_COLS} FROM turns WHERE id IN ({marks})", turn_ids)
        return [turn_of(r) for r in rows]

    def turn_count(self, session_id: str, states: tuple[str, ...] | None = None) -> int:
        """How many turns a session has (in `states` if given): a count over the session's part
        of the (session_id, number) index, not a scan of every turn."""
        where, args = "session_id = ?", [session_id]
        if states is not None:
            where += f" AND state IN ({','.join('?' * len(states))})"
            args += list(states)
        row = self.conn.execute(f"SELECT COUNT(*) FROM turns WHERE {where}", args).fetchone()
        return int(row[0])

    def turn_counts(self, after_seq: int = 0) -> tuple[dict[str, int], int]:
        """How many turns each session has whose `seq` is above `after_seq`, and the highest
        `seq` counted (`after_seq` when none), in one statement (one snapshot). With `after_seq`
        the highest seq a reader already counted, this reads only the turns begun since (the
        `seq` index); without, it counts over the (session_id, number) index."""
        if after_seq <= 0:
            rows = self.conn.execute(
                "SELECT session_id, count(*), (SELECT coalesce(max(seq), 0) FROM turns)"
                " FROM turns GROUP BY session_id"
            ).fetchall()
        else:
            rows = self.conn.execute(
                "SELECT +session_id, count(*), max(seq) FROM turns WHERE seq > ? GROUP BY 1",
                (after_seq,),
            ).fetchall()
        counts = {str(session): int(n) for session, n, _ in rows}
        return counts, max((int(top) for _, _, top in rows), default=max(after_seq, 0))

    def turns_dropped(self) -> int:
        """How many times turns were deleted from this store (`drop_turns`): a reader that
        counted turns knows its counts still hold while this and the sessions are unchanged."""
        row = self.conn.execute("SELECT value FROM meta WHERE key = 'turns_dropped'").fetchone()
        return 0 if row is None else int(row[0])

    def turn_by_number(self, session_id: str, number: int) -> Turn | None:
        row = self.conn.execute(
            f"SELECT {TURN_COLS} FROM turns WHERE session_id = ? AND number = ?",
            (session_id, number),
        ).fetchone()
        return None if row is None else turn_of(row)

    def turn_number_range(self, session_id: str) -> tuple[int | None, int | None]:
        """(lowest, highest) turn number kept for a session; (None, None) when it has none."""
        low, high = self.conn.execute(
            "SELECT min(number), max(number) FROM turns WHERE session_id = ?", (session_id,)
        ).fetchone()
        return low, high

    def latest_turn(self, session_id: str) -> Turn | None:
        """The session's highest-numbered turn (None: it has none)."""
        row = self.conn.execute(
            f"SELECT {TURN_COLS} FROM turns WHERE session_id = ? ORDER BY number DESC LIMIT 1",
            (session_id,),
        ).fetchone()
        return None if row is None else turn_of(row)

    def latest_turn_seq(self) -> int | None:
        """The workspace order of the newest turn of any session (None: no turn yet)."""
        row = self.conn.execute("SELECT max(seq) FROM turns").fetchone()
        return None if row[0] is None else int(row[0])

    def latest_applied_turn(self, session_id: str) -> str | None:
        """The newest turn of `session_id` that was applied (wholly or partly): the restore
        point an undo goes back to."""
        row = self.conn.execute(
            "SELECT id FROM turns WHERE session_id = ? AND state IN ('applied', 'partial')"
            " ORDER BY seq DESC LIMIT 1",
            (session_id,),
        ).fetchone()
        return None if row is None else str(row[0])

    def latest_agent_session(self) -> str | None:
        row = self.conn.execute(
            "SELECT id FROM sessions WHERE kind = 'agent' ORDER BY last_activity_at DESC LIMIT 1"
        ).fetchone()
        return None if row is None else str(row[0])

    def recent_session_ids(self, limit: int) -> list[str]:
        """The sessions with the latest activity, latest first."""
        rows = self.conn.execute(
            "SELECT id FROM sessions ORDER BY last_activity_at DESC LIMIT ?", (limit,)
        ).fetchall()
        return [r[0] for r in rows]

    def clear_open_turn(self, session_id: str) -> None:
        with self.db.transaction():
            self.conn.execute("UPDATE sessions SET open_turn = NULL WHERE id = ?", (session_id,))

    def activity_mark(self) -> tuple[int, int, int]:
        """(newest turn seq, newest change or settled change seq, ended turns): moves whenever a
        turn starts or ends or a change is recorded or settled."""
        row = self.conn.execute(
            "SELECT (SELECT coalesce(max(seq), 0) FROM turns),"
            " (SELECT coalesce(max(coalesce(after_seq, seq)), 0) FROM changes),"
            " (SELECT count(*) FROM turns WHERE ended_at IS NOT NULL)"
        ).fetchone()
        return int(row[0]), int(row[1]), int(row[2])

    # --- retention (gc) ------------------------------------------------------------------------

    def _undo_floor(self, restore_session: str) -> int:
        """The seq of the latest applied restore point of `restore_session` (what `undo` rewinds
        to: it and every later turn are never dropped); past the newest turn when there is none."""
        row = self.conn.execute(
            "SELECT max(seq) FROM turns WHERE session_id = ? AND state IN ('applied', 'partial')",
            (restore_session,),
        ).fetchone()
        if row is not None and row[0] is not None:
            return int(row[0])
        return int(self.conn.execute("SELECT coalesce(max(seq), 0) + 1 FROM turns").fetchone()[0])

    def droppable_turns(self, ended_before: float, restore_session: str) -> list[str]:
        """Turns neither open nor pending that ended (or started, when never ended) before
        `ended_before`, oldest first; never the latest restore point nor a turn after it."""
        rows = self.conn.execute(
            "SELECT id FROM turns WHERE coalesce(ended_at, started_at) < ? AND state != 'open'"
            " AND state != 'pending' AND seq < ? ORDER BY seq",
            (ended_before, self._undo_floor(restore_session)),
        ).fetchall()
        return [r[0] for r in rows]

    def oldest_droppable_turn(self, restore_session: str) -> tuple[str, str] | None:
        """(id, session id) of the oldest turn neither open nor pending, before the latest restore
        point (see `droppable_turns`)."""
        row = self.conn.execute(
            "SELECT id, session_id FROM turns WHERE state NOT IN ('open', 'pending') AND seq < ?"
            " ORDER BY seq LIMIT 1",
            (self._undo_floor(restore_session),),
        ).fetchone()
        return None if row is None else (str(row[0]), str(row[1]))

    def turn_sessions(self, turn_ids: list[str]) -> dict[str, str]:
        """The session id of each of `turn_ids`."""
        out: dict[str, str] = {}
        for tid in turn_ids:
            row = self.conn.execute("SELECT session_id FROM turns WHERE id = ?", (tid,)).fetchone()
            if row is not None:
                out[tid] = str(row[0])
        return out

    def drop_turns(self, turn_ids: list[str]) -> None:
        """Delete turns and their changes, then every non-agent session left with no turn."""
        with self.db.transaction():
            for tid in turn_ids:
                self.conn.execute("DELETE FROM changes WHERE turn_id = ?", (tid,))
                self.conn.execute("DELETE FROM turns WHERE id = ?", (tid,))
            self.conn.execute(
                "DELETE FROM sessions WHERE open_turn IS NULL"
                " AND id NOT IN (SELECT session_id FROM turns) AND kind != 'agent'"
            )
            # Turns a count was made of may be gone: say so to readers keeping counts.
            if turn_ids:
                self.conn.execute(
                    "INSERT INTO meta VALUES ('turns_dropped', '1') ON CONFLICT(key) DO UPDATE"
                    " SET value = CAST(value AS INTEGER) + 1"
                )

    def set_turn_prompt(self, turn_id: str, prompt: str, info: str | None) -> None:
        with self.db.transaction():
            self.conn.execute(
                "UPDATE turns SET prompt = ?, info = ? WHERE id = ?",
                (bounded_prompt(prompt), info, turn_id),
            )

    def turns_in_state(self, session_id: str, state: TurnState) -> list[tuple[str, str | None]]:
        """(id, info) of a session's turns in `state`, oldest first (pending restore points)."""
        rows = self.conn.execute(
            "SELECT id, info FROM turns WHERE session_id = ? AND state = ? ORDER BY seq",
            (session_id, state),
        ).fetchall()
        return [(r[0], r[1]) for r in rows]

    def recent_restore_journals(self, limit: int) -> list[tuple[str, str | None]]:
        """(point id, journal) of the latest applied or partial restore points that name backups."""
        rows = self.conn.execute(
            "SELECT id, info FROM turns WHERE session_id = 'rewind' AND state IN ('applied', 'partial')"
            " AND info LIKE '%.bak%' ORDER BY seq DESC LIMIT ?",
            (limit,),
        ).fetchall()
        return [(r[0], r[1]) for r in rows]


def _page_where(
    session_id: str, before_number: int | None, states: tuple[str, ...] | None
) -> tuple[str, list[Any]]:
    where = "session_id = ?"
    args: list[Any] = [session_id]
    if before_number is not None:
        where += " AND number < ?"
        args.append(before_number)
    if states is not None:
        where += f" AND state IN ({','.join('?' * len(states))})"
        args += list(states)
    return where, args


# What a listing shows of a turn, read in the page query: its number, start and end, info
# (subagents, whether it was rebuilt from the transcript) and prompt (as far as `TURN_COLS` reads
# it) as they are, and of each change, as one text made by SQLite, the path, the source (shared
# with which turns) and the kinds that say created, modified or deleted (or not settled). The path
# is length-prefixed and the rest comes from fixed vocabularies, each ended by a separator none
# of them holds, so two turns listed differently never give the same stamp. It is made from the
# rows themselves, not kept beside them: every writer (a hook, the server, a fork, a restore,
# retention, a repair, a late change, an older rewind-ls) changes it by changing what it wrote. The changes come in the
# primary key's order; were they ever read in another, the stamp would only differ (the turn read
# again), never match wrongly. (The row's columns as they are cost a third of building them into
# the text as well; a maintained per-turn counter would cost every change written a row update of
# its turn, several times the change's own insert, by trigger.)
_TURN_STAMP = (
    f"started_at, ended_at, info, substr(prompt, 1, {MAX_PROMPT_CHARS + 100}),"
    " (SELECT group_concat(length(path)||':'||path||source||char(31)||before_kind||','||"
    "ifnull(after_kind, '-'), char(31)) FROM changes WHERE turn_id = turns.id)"
)
