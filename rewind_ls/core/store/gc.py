"""Retention: drop turns older than the retention period, then the oldest turns until the store fits
its size cap, then every blob no remaining turn (or known path) needs. A blob that a kept blob is a
delta against is kept too, so nothing live ever loses its content.

What `undo` needs is never dropped: the latest restore point and every turn after it are kept
whatever the limits say. An older restore point (the content a forced restore replaced, perhaps
its only copy) is dropped only when the caller said so (`drop_points`, the CLI's `--yes`); the
automatic pass keeps them and a `gc` that would drop one without `--yes` is refused, nothing
dropped. Limits are validated where they enter: not a positive number is an error."""

from __future__ import annotations

import time
from typing import Any

from rewind_ls.core.errors import BadInput, StoreError
from rewind_ls.core.fs import config
from rewind_ls.core.model import REWIND_SESSION
from rewind_ls.core.store.db import OperationalError
from rewind_ls.core.store.facade import Store


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


# Past these, `time.time() - days * 86400` and SQLite's integers overflow: a limit this large means
# "keep everything" and is taken as such.
MAX_DAYS = 1_000_000
MAX_BYTES = 2**62


def check_limit(name: str, value: int, cap: int) -> int:
    """`value` when it is a positive limit (capped at `cap`), else BadInput naming `name`."""
    if value <= 0:
        raise BadInput(f"{name} must be a positive number (got {value}); nothing dropped")
    return min(value, cap)


class NeedsConfirmation(BadInput):
    """gc would drop restore points (what an `undo` brings back) and was not told it may."""


def collect(
    store: Store,
    retention_days: int | None = None,
    max_bytes: int | None = None,
    dry_run: bool = False,
    drop_points: bool = False,
    refuse_points: bool = True,
) -> dict[str, Any]:
    """One retention pass. `drop_points`: older restore points may go; else, with
    `refuse_points`, a pass that would drop one raises NeedsConfirmation (nothing dropped), and
    without it they are silently kept (the automatic pass)."""
    days = check_limit(
        "--retention-days",
        retention_days if retention_days is not None else config.retention_days(),
        MAX_DAYS,
    )
    cap = check_limit(
        "--max-bytes",
        max_bytes if max_bytes is not None else config.max_store_bytes(),
        MAX_BYTES,
    )
    cutoff = time.time() - days * 86400
    before_bytes = store.stored_bytes()
    spared: set[str] = set()
    points: list[str] = []

    def allowed(tid: str, session: str) -> bool:
        if session != REWIND_SESSION or drop_points:
            return True
        points.append(tid)
        spared.add(tid)
        return False

    with store.transaction():
        sessions = store.turn_sessions(old := store.droppable_turns(cutoff, REWIND_SESSION))
        doomed = [t for t in old if allowed(t, sessions.get(t, ""))]
        store.drop_turns(doomed)
        dropped_blobs = 0
        # Size cap: oldest closed turns first, until the blobs they alone need are gone.
        while store.stored_bytes() > cap:
            oldest = _oldest(store, REWIND_SESSION, spared)
            if oldest is None:
                break
            if not allowed(*oldest):
                continue
            doomed.append(oldest[0])
            store.drop_turns([oldest[0]])
            dropped_blobs += _drop_dead_blobs(store)
        if points and refuse_points and not dry_run:
            # Raised inside the transaction: rolled back, nothing dropped.
            raise NeedsConfirmation(
                f"gc would drop {len(points)} older restore point(s): the content a rewind, "
                "revert or undo replaced, which `rewind-ls undo` and a rewind to that point bring "
                "back (perhaps their only copy). Nothing dropped; run `rewind-ls gc --yes` to drop "
                "them (the latest restore point is always kept)"
            )
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


def _oldest(store: Store, restore_session: str, spared: set[str]) -> tuple[str, str] | None:
    """The oldest droppable turn not in `spared` (restore points kept this pass)."""
    if not spared:
        return store.oldest_droppable_turn(restore_session)
    for tid in store.droppable_turns(float("inf"), restore_session):
        if tid not in spared:
            return tid, store.turn_sessions([tid]).get(tid, "")
    return None


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
        result = run(store, refuse_points=False)
        store.set_meta("last_gc", repr(now))
    except (OperationalError, StoreError, BadInput):
        return None
    return result
