"""Retention: drop turns older than the retention period, then the oldest turns until the store fits
its size cap, then every blob no remaining turn (or known path) needs. A blob that a kept blob is a
delta against is kept too, so nothing live ever loses its content."""

from __future__ import annotations

import sqlite3
import time
from typing import Any

from rewind_ls.core import config
from rewind_ls.core.errors import StoreError
from rewind_ls.core.store import Store


def _store_bytes(store: Store) -> int:
    row = store.conn.execute("SELECT coalesce(sum(length(data)), 0) FROM blobs").fetchone()
    return int(row[0])


def _live_blobs(store: Store) -> set[str]:
    live: set[str] = set()
    for (h,) in store.conn.execute(
        "SELECT before_hash FROM changes WHERE before_hash IS NOT NULL"
        " UNION SELECT after_hash FROM changes WHERE after_hash IS NOT NULL"
        " UNION SELECT hash FROM known WHERE hash IS NOT NULL"
    ):
        live.add(h)
    bases = dict(
        store.conn.execute("SELECT hash, base FROM blobs WHERE base IS NOT NULL").fetchall()
    )
    frontier = list(live)
    while frontier:
        base = bases.get(frontier.pop())
        if base is not None and base not in live:
            live.add(base)
            frontier.append(base)
    return live


def collect(
    store: Store,
    retention_days: int | None = None,
    max_bytes: int | None = None,
    dry_run: bool = False,
) -> dict[str, Any]:
    days = retention_days if retention_days is not None else config.retention_days()
    cap = max_bytes if max_bytes is not None else config.max_store_bytes()
    cutoff = time.time() - days * 86400
    before_bytes = _store_bytes(store)
    with store.transaction():
        doomed = [
            r[0]
            for r in store.conn.execute(
                "SELECT id FROM turns WHERE coalesce(ended_at, started_at) < ? AND state != 'open'"
                " AND state != 'pending' ORDER BY seq",
                (cutoff,),
            )
        ]
        _drop_turns(store, doomed)
        dropped_blobs = 0
        # Size cap: oldest closed turns first, until the blobs they alone need are gone.
        while _store_bytes(store) > cap:
            row = store.conn.execute(
                "SELECT id FROM turns WHERE state NOT IN ('open', 'pending') ORDER BY seq LIMIT 1"
            ).fetchone()
            if row is None:
                break
            doomed.append(row[0])
            _drop_turns(store, [row[0]])
            dropped_blobs += _drop_dead_blobs(store)
        dropped_blobs += _drop_dead_blobs(store)
        after_bytes = _store_bytes(store)
        if dry_run:
            store.conn.execute("SELECT 1")  # the transaction is rolled back below
            raise _DryRun(
                {
                    "turnsDropped": len(doomed),
                    "blobsDropped": dropped_blobs,
                    "bytesBefore": before_bytes,
                    "bytesAfter": after_bytes,
                }
            )
    if not dry_run:
        try:
            store.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        except Exception:
            pass
    return {
        "turnsDropped": len(doomed),
        "blobsDropped": dropped_blobs,
        "bytesBefore": before_bytes,
        "bytesAfter": after_bytes,
        "dryRun": False,
    }


class _DryRun(Exception):
    def __init__(self, result: dict[str, Any]) -> None:
        super().__init__("dry run")
        self.result = result


def run(store: Store, dry_run: bool = False, **kw: Any) -> dict[str, Any]:
    try:
        return collect(store, dry_run=dry_run, **kw)
    except _DryRun as done:
        return {**done.result, "dryRun": True}


def _drop_turns(store: Store, turn_ids: list[str]) -> None:
    for tid in turn_ids:
        store.conn.execute("DELETE FROM changes WHERE turn_id = ?", (tid,))
        store.conn.execute("DELETE FROM turns WHERE id = ?", (tid,))
    store.conn.execute(
        "DELETE FROM sessions WHERE open_turn IS NULL AND id NOT IN (SELECT session_id FROM turns)"
        " AND kind != 'agent'"
    )


def _drop_dead_blobs(store: Store) -> int:
    live = _live_blobs(store)
    dead = [h for (h,) in store.conn.execute("SELECT hash FROM blobs") if h not in live]
    for h in dead:
        store.conn.execute("DELETE FROM blobs WHERE hash = ?", (h,))
    return len(dead)


GC_INTERVAL_SECONDS = 86400


def maybe_run(store: Store, now: float | None = None) -> dict[str, Any] | None:
    """Opportunistic retention: at most once a day per workspace, from the CLI and the server
    (never from the hook, where the agent waits). Returns the gc result when it ran."""
    now = time.time() if now is None else now
    last = store.meta("last_gc")
    try:
        if last is not None and now - float(last) < GC_INTERVAL_SECONDS:
            return None
    except ValueError:
        pass
    try:
        # Run first, note it after: on a full disk the run fails (rolled back) and the command
        # that opened the store goes on; a read-only command must not fail for gc's sake.
        result = run(store)
        store.set_meta("last_gc", repr(now))
    except (sqlite3.OperationalError, StoreError):
        return None
    return result
