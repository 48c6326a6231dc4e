"""What a turn did: its changes (each path's version before and after the turn), and the agent's
own ids (prompt ids, tool_use ids) already recorded, by a hook or by a transcript, so the two
recorders never record one twice.

`Changes` (each path's before/after in a turn, many at once for a restore point: `record_changes`; a
path's history, and many paths' histories after a turn: `path_histories`) and `AgentEvents` (prompt
ids and tool_use ids already recorded, claimed with `INSERT OR IGNORE` so hook and transcript never
record one twice).
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from rewind_ls.core.model import (
    SHARED_SOURCE,
    UNKNOWN,
    AgentEvent,
    Change,
    PathChange,
    TurnState,
    Version,
)
from rewind_ls.core.store.db import Database
from rewind_ls.core.store.rows import CHANGE_COLS, CHANGES_OF_C, change_of, event_of, path_change_of


class Changes:
    """The `changes` table of one store: one row per (turn, path) the turn changed."""

    def __init__(self, db: Database) -> None:
        self.db = db
        self.conn = db.conn

    def change(self, turn_id: str, path: str) -> Change | None:
        row = self.conn.execute(
            f"SELECT {CHANGE_COLS} FROM changes WHERE turn_id = ? AND path = ?", (turn_id, path)
        ).fetchone()
        return None if row is None else change_of(row)

    def changes(self, turn_id: str) -> list[Change]:
        rows = self.conn.execute(
            f"SELECT {CHANGE_COLS} FROM changes WHERE turn_id = ? ORDER BY path", (turn_id,)
        )
        return [change_of(r) for r in rows]

    def changes_of_turns(self, turn_ids: list[str]) -> list[Change]:
        if not turn_ids:
            return []
        marks = ",".join("?" * len(turn_ids))
        rows = self.conn.execute(
            f"SELECT {CHANGE_COLS} FROM changes WHERE turn_id IN ({marks}) ORDER BY seq", turn_ids
        )
        return [change_of(r) for r in rows]

    def changes_since(self, seq: int) -> list[Change]:
        """Every change first touched after workspace order `seq`, oldest first."""
        rows = self.conn.execute(
            f"SELECT {CHANGE_COLS} FROM changes WHERE seq > ? ORDER BY seq", (seq,)
        )
        return [change_of(r) for r in rows]

    def path_history(self, path: str) -> list[PathChange]:
        """Every change to `path`, oldest first, with its turn's session and state."""
        rows = self.conn.execute(
            f"SELECT {CHANGES_OF_C}, t.session_id, t.state, s.kind"
            " FROM changes c JOIN turns t ON t.id = c.turn_id JOIN sessions s ON s.id = t.session_id"
            " WHERE c.path = ? ORDER BY c.seq",
            (path,),
        )
        return [path_change_of(r) for r in rows]

    def path_histories(
        self, paths: list[str], after_seq: int | None = None
    ) -> dict[str, list[PathChange]]:
        """`path_history` of many paths in a few queries (a restore plans thousands); with
        `after_seq`, only the changes first touched after that workspace order (a restore to a
        turn needs only what came after it: a path's whole history grows with every turn)."""
        out: dict[str, list[PathChange]] = {p: [] for p in paths}
        since = -1 if after_seq is None else after_seq
        for i in range(0, len(paths), 500):
            part = paths[i : i + 500]
            rows = self.conn.execute(
                f"SELECT {CHANGES_OF_C}, t.session_id, t.state, s.kind"
                " FROM changes c JOIN turns t ON t.id = c.turn_id"
                " JOIN sessions s ON s.id = t.session_id"
                f" WHERE c.path IN ({','.join('?' * len(part))}) AND c.seq > ? ORDER BY c.seq",
                [*part, since],
            )
            for r in rows:
                out[r[1]].append(path_change_of(r))
        return out

    def all_changes(self) -> list[Change]:
        """Every change of every turn, by path."""
        rows = self.conn.execute(f"SELECT {CHANGE_COLS} FROM changes ORDER BY path")
        return [change_of(r) for r in rows]

    def paths_in_flight(self, except_session: str | None = None) -> set[str]:
        """Paths an open turn is editing right now (before recorded, after not yet), of any
        session but `except_session`."""
        rows = self.conn.execute(
            "SELECT c.path FROM changes c JOIN turns t ON t.id = c.turn_id"
            " WHERE c.after_kind IS NULL AND t.state = ? AND t.session_id IS NOT ?",
            (TurnState.OPEN, except_session),
        )
        return {r[0] for r in rows}

    def record_before(self, turn_id: str, path: str, before: Version, source: str) -> bool:
        """Record `before` for (turn, path) on first touch only; returns True when recorded."""
        with self.db.transaction():
            if self.change(turn_id, path) is not None:
                return False
            self.conn.execute(
                "INSERT INTO changes(turn_id, path, seq, source, before_kind, before_hash,"
                " before_mode) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (turn_id, path, self.db.next_seq(), source, before.kind, before.hash, before.mode),
            )
        return True

    def record_after(self, turn_id: str, path: str, after: Version) -> None:
        with self.db.transaction():
            self.conn.execute(
                "UPDATE changes SET after_kind = ?, after_hash = ?, after_mode = ?, after_seq = ?"
                " WHERE turn_id = ? AND path = ?",
                (after.kind, after.hash, after.mode, self.db.next_seq(), turn_id, path),
            )

    def record_changes(
        self, turn_id: str, rows: Sequence[tuple[str, Version, Version]], source: str
    ) -> None:
        """`record_before` then `record_after` of each (path, before, after), in a few statements
        (a restore point records thousands), one transaction: the same rows, and for distinct
        paths the same sequence numbers. A path named twice keeps its first `before` and its last
        `after`, as the two calls do (its after's number is then taken in its first place)."""
        firsts: dict[str, Version] = {}
        lasts: dict[str, Version] = {}
        for path, before, after in rows:
            firsts.setdefault(path, before)
            lasts[path] = after
        with self.db.transaction():
            held = {
                p
                for (p,) in self.conn.execute(
                    "SELECT path FROM changes WHERE turn_id = ?", (turn_id,)
                )
            }
            count = 2 * len(firsts) - len(held.intersection(firsts))
            seq = self.db.take_seqs(count) - count
            new: list[tuple[object, ...]] = []
            after_rows: list[tuple[object, ...]] = []
            for path, before in firsts.items():
                after = lasts[path]
                if path not in held:
                    seq += 1
                    new.append((turn_id, path, seq, source, before.kind, before.hash, before.mode))
                seq += 1
                after_rows.append((after.kind, after.hash, after.mode, seq, turn_id, path))
            self.conn.executemany(
                "INSERT INTO changes(turn_id, path, seq, source, before_kind, before_hash,"
                " before_mode) VALUES (?, ?, ?, ?, ?, ?, ?)",
                new,
            )
            self.conn.executemany(
                "UPDATE changes SET after_kind = ?, after_hash = ?, after_mode = ?, after_seq = ?"
                " WHERE turn_id = ? AND path = ?",
                after_rows,
            )

    def record_shared(
        self, turn_ids: list[str], path: str, before: Version, after: Version
    ) -> None:
        """One change that cannot be told apart between `turn_ids` (`model.SHARED_SOURCE`): each
        turn holds it (its first `before` kept when it touched the path already), marked as shared
        with the others."""
        with self.db.transaction():
            for turn_id in turn_ids:
                others = ",".join(t for t in turn_ids if t != turn_id)
                source = f"{SHARED_SOURCE}{others}"
                if not self.record_before(turn_id, path, before, source):
                    self.conn.execute(
                        "UPDATE changes SET source = ? WHERE turn_id = ? AND path = ?",
                        (source, turn_id, path),
                    )
                self.record_after(turn_id, path, after)

    def record_as(
        self, turn_id: str, path: str, before: Version, after: Version, source: str
    ) -> None:
        """One change of `turn_id` seen as `source` (a background job's write): the turn's first
        `before` is kept when it touched the path already, and its source becomes `source`
        unless the change is shared; a change back to its `before` is no change."""
        with self.db.transaction():
            if not self.record_before(turn_id, path, before, source):
                self.conn.execute(
                    "UPDATE changes SET source = ? WHERE turn_id = ? AND path = ?"
                    " AND source NOT LIKE ?",
                    (source, turn_id, path, SHARED_SOURCE + "%"),
                )
            row = self.change(turn_id, path)
            if row is not None and row.before == after:
                self.drop_change(turn_id, path)
            else:
                self.record_after(turn_id, path, after)

    def drop_change(self, turn_id: str, path: str) -> None:
        with self.db.transaction():
            self.conn.execute("DELETE FROM changes WHERE turn_id = ? AND path = ?", (turn_id, path))

    def set_before(self, turn_id: str, path: str, before: Version) -> bool:
        """Replace a change's `before` when it was recorded as unknown (a hook saw only the
        after; the transcript knows what the file held). Returns True when replaced."""
        with self.db.transaction():
            cur = self.conn.execute(
                "UPDATE changes SET before_kind = ?, before_hash = ?, before_mode = ?"
                " WHERE turn_id = ? AND path = ? AND before_kind = ?",
                (before.kind, before.hash, before.mode, turn_id, path, UNKNOWN),
            )
        return cur.rowcount > 0


class AgentEvents:
    """The `agent_events` table of one store: the agent's ids, each claimed once."""

    def __init__(self, db: Database) -> None:
        self.db = db
        self.conn = db.conn

    def claim_event(
        self, session_id: str, kind: str, key: str, source: str, turn_id: str | None = None
    ) -> bool:
        """Claim the agent's `kind` ('prompt' or 'tool') id `key`: True when nobody recorded it
        before (the caller records it now), False when a hook or a transcript already did."""
        with self.db.transaction():
            cur = self.conn.execute(
                "INSERT OR IGNORE INTO agent_events(session_id, kind, key, turn_id, source, at)"
                " VALUES (?, ?, ?, ?, ?, ?)",
                (session_id, kind, key, turn_id, source, time.time()),
            )
        return cur.rowcount > 0

    def set_event_turn(self, session_id: str, kind: str, key: str, turn_id: str) -> None:
        with self.db.transaction():
            self.conn.execute(
                "UPDATE agent_events SET turn_id = ? WHERE session_id = ? AND kind = ? AND key = ?",
                (turn_id, session_id, kind, key),
            )

    def event(self, session_id: str, kind: str, key: str) -> AgentEvent | None:
        row = self.conn.execute(
            "SELECT session_id, kind, key, turn_id, source, at FROM agent_events"
            " WHERE session_id = ? AND kind = ? AND key = ?",
            (session_id, kind, key),
        ).fetchone()
        return None if row is None else event_of(row)

    def event_counts(self) -> dict[str, dict[str, int]]:
        """Per agent session: how many prompts and tool calls each recorder (`hook`,
        `transcript`) recorded first."""
        out: dict[str, dict[str, int]] = {}
        for session_id, kind, source, n in self.conn.execute(
            "SELECT session_id, kind, source, count(*) FROM agent_events"
            " GROUP BY session_id, kind, source"
        ):
            out.setdefault(session_id, {})[f"{kind}:{source}"] = n
        return out
