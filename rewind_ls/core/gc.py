"""Retention: drop turns older than the retention period, then the oldest turns until the store fits
its size cap, then every blob no remaining turn (or known path) needs. A blob that a kept blob is a
delta against is kept too, so nothing live ever loses its content."""

from __future__ import annotations

import time
from typing import Any

from rewind_ls.core import config
from rewind_ls.core.errors import StoreError
from rewind_ls.core.store import OperationalError, Store


def _live_blobs(store: Store) -> set[str]:
    live = store.referenced_blobs()
    bases = store.delta_bases()
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
    before_bytes = store.stored_bytes()
    with store.transaction():
        doomed = store.droppable_turns(ended_before=cutoff)
        store.drop_turns(doomed)
        dropped_blobs = 0
        # Size cap: oldest closed turns first, until the blobs they alone need are gone.
        while store.stored_bytes() > cap:
            oldest = store.oldest_droppable_turn()
            if oldest is None:
                break
            doomed.append(oldest)
            store.drop_turns([oldest])
            dropped_blobs += _drop_dead_blobs(store)
        dropped_blobs += _drop_dead_blobs(store)
        after_bytes = store.stored_bytes()
        if dry_run:
            # Raised inside the transaction: it is rolled back, nothing was dropped.
            raise _DryRun(
                {
                    "turns_dropped": len(doomed),
                    "blobs_dropped": dropped_blobs,
                    "bytes_before": before_bytes,
                    "bytes_after": after_bytes,
                }
            )
    if not dry_run:
        try:
            store.checkpoint()
        except Exception:
            pass
    return {
        "turns_dropped": len(doomed),
        "blobs_dropped": dropped_blobs,
        "bytes_before": before_bytes,
        "bytes_after": after_bytes,
        "dry_run": False,
    }


class _DryRun(Exception):
    def __init__(self, result: dict[str, Any]) -> None:
        super().__init__("dry run")
        self.result = result


def run(store: Store, dry_run: bool = False, **kw: Any) -> dict[str, Any]:
    try:
        return collect(store, dry_run=dry_run, **kw)
    except _DryRun as done:
        return {**done.result, "dry_run": True}


def _drop_dead_blobs(store: Store) -> int:
    live = _live_blobs(store)
    dead = [h for h in store.blob_hashes() if h not in live]
    store.drop_blobs(dead)
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
    except (OperationalError, StoreError):
        return None
    return result
