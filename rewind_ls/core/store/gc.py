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
from rewind_ls.core.model import EDITOR_SESSION, EXTERNAL_SESSION, REWIND_SESSION
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


# The person's own versions: edits between turns (local history, scans) and editor saves.
PERSON_SESSIONS = frozenset((EXTERNAL_SESSION, EDITOR_SESSION))


class NeedsConfirmation(BadInput):
    """gc would drop restore points (what an `undo` brings back) and was not told it may."""


def limits(retention_days: int | None, max_bytes: int | None) -> tuple[float, int]:
    """(cutoff time, size cap) from the caller's limits or the settings, validated."""
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
    return time.time() - days * 86400, cap


class _Pass:
    """One retention pass's choices: which turns go, which restore points were spared, and how
    many of the person's versions (changes of the external and editor sessions) went with them."""

    def __init__(self, store: Store, drop_points: bool) -> None:
        self.store = store
        self.drop_points = drop_points
        self.doomed: list[str] = []
        self.spared: set[str] = set()
        self.points: list[str] = []
        self.versions = 0
        self.blobs = 0

    def allowed(self, tid: str, session: str) -> bool:
        if session != REWIND_SESSION or self.drop_points:
            return True
        self.points.append(tid)
        self.spared.add(tid)
        return False

    def drop(self, turns: dict[str, str]) -> None:
        """Drop `turns` (id -> session id), counting the person's versions among them."""
        mine = [t for t, s in turns.items() if s in PERSON_SESSIONS]
        if mine:
            self.versions += len(self.store.changes_of_turns(mine))
        self.doomed.extend(turns)
        self.store.drop_turns(list(turns))

    def by_age(self, cutoff: float) -> None:
        old = self.store.droppable_turns(cutoff, REWIND_SESSION)
        sessions = self.store.turn_sessions(old)
        self.drop({t: sessions.get(t, "") for t in old if self.allowed(t, sessions.get(t, ""))})

    def by_size(self, cap: int) -> None:
        """Oldest closed turns first, until the blobs they alone needed are gone."""
        store = self.store
        while store.stored_bytes() > cap:
            oldest = _oldest(store, REWIND_SESSION, self.spared)
            if oldest is None:
                break
            if not self.allowed(*oldest):
                continue
            self.drop({oldest[0]: oldest[1]})
            self.blobs += _drop_dead_blobs(store)

    def result(self, before: int, after: int) -> dict[str, Any]:
        return {
            "turns_dropped": len(self.doomed),
            "versions_dropped": self.versions,
            "blobs_dropped": self.blobs,
            "bytes_before": before,
            "bytes_after": after,
        }


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
    without it they are silently kept (the automatic pass). The person's versions (local
    history: the external and editor sessions' turns) follow the same rules as agent turns, by
    age and oldest first, so none goes while an older turn stays; the result counts them."""
    cutoff, cap = limits(retention_days, max_bytes)
    before_bytes = store.stored_bytes()
    gc_pass = _Pass(store, drop_points)
    with store.transaction():
        gc_pass.by_age(cutoff)
        gc_pass.by_size(cap)
        if gc_pass.points and refuse_points and not dry_run:
            # Raised inside the transaction: rolled back, nothing dropped.
            raise NeedsConfirmation(
                f"gc would drop {len(gc_pass.points)} older restore point(s): the content a "
                "rewind, revert or undo replaced, which `rewind-ls undo` and a rewind to that point "
                "bring back (perhaps their only copy). Nothing dropped; run `rewind-ls gc --yes` "
                "to drop them (the latest restore point is always kept)"
            )
        gc_pass.blobs += _drop_dead_blobs(store)
        result = gc_pass.result(before_bytes, store.stored_bytes())
        if dry_run:
            # Raised inside the transaction: it is rolled back, nothing was dropped.
            raise _DryRun(result)
    if not dry_run:
        try:
            store.checkpoint()
        except Exception:
            pass
    return {**result, "dry_run": False}


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
