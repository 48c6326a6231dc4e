"""Restore points: what rewind-ls records just before it changes anything, so every restore is undoable.

A restore point is a turn of the `rewind` session. Its changes hold, per path, the content found just
before the restore (`before`) and the content the restore writes (`after`). Its state is `pending`
while the restore runs, then `applied`, `partial` or `rolled-back`. Both appliers (disk, editor) use it.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Mapping, Sequence

from rewind_ls.core.capture.recorder import REWIND_SESSION, read_current
from rewind_ls.core.errors import RewindError
from rewind_ls.core.fs import config
from rewind_ls.core.model import (
    FILE,
    TOO_LARGE,
    SessionKind,
    TurnState,
    Version,
    VersionKind,
    too_large,
)
from rewind_ls.core.restore.plan import PathPlan, Plan
from rewind_ls.core.store import Store

# The states of a restore point, by their short names (the appliers use these).
PENDING = TurnState.PENDING
APPLIED = TurnState.APPLIED
PARTIAL = TurnState.PARTIAL
ROLLED_BACK = TurnState.ROLLED_BACK


# The info key of the disk contents kept under unsaved buffers (`saved_disk`); `Store.referenced_blobs`
# keeps their blobs alive.
SAVED_DISK = "savedDisk"


def open_restore_point(
    store: Store,
    plan: Plan,
    items: Sequence[PathPlan],
    journal: dict[str, object] | None = None,
    saved: Mapping[str, tuple[Version, bytes | None]] | None = None,
) -> str:
    """Record the current and target content of every path in `items` before anything is written.

    `saved`: for a path whose editor buffer held unsaved text (its `current`), what the disk held
    under it (its last saved bytes). An undo brings both back: the disk to these bytes, the buffer
    to its unsaved text."""
    store.ensure_session(REWIND_SESSION, SessionKind.REWIND, "rewind-ls")
    hold_too_large(store, items)
    under: dict[str, list[object]] = {}
    for path, (version, data) in (saved or {}).items():
        if version.kind == FILE and version.hash and data is not None:
            store.put_blob(data, h=version.hash)
        under[path] = [str(version.kind), version.hash, version.mode, version.size]
    extra: dict[str, object] = {SAVED_DISK: under} if under else {}
    info = json.dumps({"mode": plan.mode, "turn": plan.turn.id, **extra, **(journal or {})})
    with store.transaction():
        point = store.begin_turn(REWIND_SESSION, plan.label, state=PENDING, info=info)
        # The current content may never have been stored (an unsaved buffer, an unseen edit):
        # keep it now, or undo could not bring it back. Most contents are stored already: one
        # query finds those that are not, instead of one per content.
        hashes = [v.hash for pp in items for v in (pp.current, pp.target) if v.hash]
        missing = store.blobs_not_stored(hashes)
        for pp in items:
            current, target = pp.current, pp.target
            if current.kind == FILE and pp.current_data is not None and current.hash in missing:
                store.put_blob(pp.current_data, h=current.hash)
                missing.discard(current.hash)
            if target.kind == FILE and pp.target_data is not None and target.hash in missing:
                store.put_blob(pp.target_data, previous=current.hash, h=target.hash)
                missing.discard(target.hash)
        store.record_changes(
            point, [(pp.path, pp.held or pp.current, pp.target) for pp in items], "restore"
        )
        store.clear_open_turn(REWIND_SESSION)
    return point


def hold_too_large(store: Store, items: Sequence[PathPlan]) -> None:
    """A restore point holds everything it is about to change, whatever its size: a current
    content over the size cap (which scans know by its stat signature only) is read whole and
    stored now, so an undo brings it back byte for byte and the restore keeps no backup of it in
    the project. Read only while its signature is the planned one; a file that cannot be read,
    or that changed since the plan, stays `too-large` (the swap's compare-and-swap then refuses a
    changed file, and keeps the backup of an unreadable one)."""
    for pp in items:
        if pp.current.kind != TOO_LARGE or pp.held is not None or not pp.will_write:
            continue
        try:
            version, data, st = read_current(store.root, pp.path, max_bytes=sys.maxsize)
        except (RewindError, OSError):
            continue
        if st is None or data is None or too_large(st) != pp.current:
            continue
        store.put_blob(data, h=version.hash)
        pp.held = version


def update_journal(store: Store, point: str, **entries: object) -> None:
    turn = store.turn(point)
    info = json.loads(turn.info) if turn is not None and turn.info else {}
    info.update(entries)
    store.set_turn_info(point, json.dumps(info))


def finish_restore_point(
    store: Store,
    point: str,
    reached: dict[str, tuple[Version, os.stat_result | None]],
    failed: Sequence[str] = (),
) -> TurnState:
    """Mark the restore point applied (or partial) and remember what each path now holds."""
    state = PARTIAL if failed else APPLIED
    cap = config.max_file_bytes()
    with store.transaction():
        store.set_known_many(
            [
                (
                    path,
                    # Over the cap, a file is known by its signature, as scans know it.
                    too_large(st) if st and version.kind == FILE and st.st_size > cap else version,
                    st.st_mtime_ns if st else None,
                    st.st_ino if st else None,
                )
                for path, (version, st) in reached.items()
            ],
            replace=True,
        )
        store.set_turn_state(point, state, None)
    if failed:
        update_journal(store, point, failed=list(failed))
    return state


def saved_disk(store: Store, point: str) -> dict[str, Version]:
    """What the disk held under each unsaved buffer when restore point `point` was recorded."""
    turn = store.turn(point)
    try:
        info = json.loads(turn.info) if turn is not None and turn.info else {}
    except ValueError:
        return {}
    out: dict[str, Version] = {}
    for path, (kind, h, mode, size) in (info.get(SAVED_DISK) or {}).items():
        out[path] = Version(VersionKind(kind), h, mode, size)
    return out
