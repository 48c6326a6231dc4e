"""The scan's compare-and-swap commit: what was read goes into the store, in one transaction.

Files are read and compressed without holding the store's lock; then one transaction stores the
blobs, records the changes and moves each `known` row, but only if that row is still the one the
scan compared against. Otherwise another process recorded the path in between, and it owns that
change: a crash or a concurrent writer never loses one. The commit fills in the scan's
`ScanResult` (what one scan saw and did; `scan` re-exports it).
"""

from __future__ import annotations

import os
import time

from rewind_ls.core.capture.file_reader import RACY_NS, FileRead, trusted_mtime
from rewind_ls.core.store import ABSENT, ABSENT_VERSION, FILE, Store, Version

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from rewind_ls.core.store.codec import Pack

    # A change found: (path, before, after).
    Change = tuple[str, Version, Version]
    # Called inside the commit's transaction with the changes found (never an empty list);
    # records them in a turn and returns its id (None: recorded nowhere).
    Attribute = Callable[[list[Change]], "str | None"]
    # A candidate and what reading it gave: its content, why it could not be read, or None when
    # it is gone.
    Reads = list[tuple["Candidate", FileRead | str | None]]


class ScanResult:
    """What one scan saw and did."""

    __slots__ = (
        "adopted",
        "baseline_complete",
        "changes",
        "deferred",
        "elapsed",
        "files",
        "read",
        "skipped",
        "turn",
        "watched",
    )

    def __init__(self) -> None:
        self.changes: list[Change] = []  # recorded (or found, when nothing was open to record into)
        self.turn: str | None = None  # where the changes were recorded
        self.files = 0  # files the walk listed
        self.read = 0  # files opened
        self.adopted = 0  # files added to the baseline
        self.deferred = 0  # left to another session's running shell command
        self.skipped: list[str] = []  # "path: reason" for files that could not be read
        self.baseline_complete = False
        self.elapsed = 0.0
        self.watched = False  # only the paths the workspace watcher reported were looked at

    def __repr__(self) -> str:
        return (
            f"ScanResult(files={self.files}, read={self.read}, changes={len(self.changes)}, "
            f"adopted={self.adopted}, deferred={self.deferred}, baseline={self.baseline_complete})"
        )


class Candidate:
    """A path whose signature differs from its known row (or that is not known at all)."""

    __slots__ = ("known_seq", "old", "rel", "st")

    def __init__(
        self, rel: str, st: os.stat_result | None, old: Version | None, known_seq: int | None
    ) -> None:
        self.rel = rel
        self.st = st  # lstat at the walk; None: gone
        self.old = old  # the version last seen (None: unknown; ABSENT_VERSION: known gone)
        self.known_seq = known_seq  # the known row compared against, checked at commit


def commit(
    store: Store,
    attribute: Attribute,
    reads: Reads,
    result: ScanResult,
    record: bool,
    packs: Sequence[Pack] = (),
) -> None:
    """Store blobs, record changes and move `known` rows, in one transaction (module docstring).
    `record`: these are changes to attribute; otherwise files adopted into the baseline. `packs`:
    the packs holding the contents of the PACKED reads (`file_reader.ReadChunk`), written in the
    same transaction as their rows."""
    racy_from = time.time_ns() - RACY_NS
    blobs, rebase, updates = _stage(reads, result)
    if not updates:
        return
    with store.transaction():
        if packs:
            store.insert_built_packs(packs)
        if blobs:
            store.insert_packed_blobs(blobs)
        for old_hash, new_hash, data in rebase:
            store.delta_encode_older(old_hash, new_hash, data)
        rows, found = _still_ours(store, updates, record, racy_from)
        if not record:
            result.adopted += len(rows)
        if found:
            result.changes.extend(found)
            result.turn = attribute(found) or result.turn
        if rows:
            # Adoptions never replace a row: one that appeared meanwhile is someone else's record.
            store.set_known_many(rows, replace=record)


def _stage(
    reads: Reads, result: ScanResult
) -> tuple[
    list[tuple[str, int, int, bytes]],
    list[tuple[str, str, bytes]],
    list[tuple[Candidate, Version, os.stat_result | None]],
]:
    """Sort reads into (blobs to store, old blobs to delta-encode, known rows to move); what
    could not be read is noted in `result.skipped`."""
    blobs: list[tuple[str, int, int, bytes]] = []
    rebase: list[tuple[str, str, bytes]] = []
    updates: list[tuple[Candidate, Version, os.stat_result | None]] = []
    for c, r in reads:
        if isinstance(r, str):
            if r != "vanished":
                result.skipped.append(f"{c.rel}: {r}")
                continue
            r = None
            if c.old is None or c.old.kind == ABSENT:
                continue  # came and went between the walk and the read
        if r is None:
            updates.append((c, ABSENT_VERSION, None))
            continue
        result.read += 1
        v = r.version
        if r.payload is not None and v.hash is not None:
            blobs.append((v.hash, v.size, r.codec, r.payload))
            if r.data is not None and c.old is not None and c.old.kind == FILE and c.old.hash:
                rebase.append((c.old.hash, v.hash, r.data))
        updates.append((c, v, r.st))
    return blobs, rebase, updates


def _still_ours(
    store: Store,
    updates: list[tuple[Candidate, Version, os.stat_result | None]],
    record: bool,
    racy_from: int,
) -> tuple[list[tuple[str, Version, int | None, int | None]], list[Change]]:
    """The known rows to write and the changes to record, leaving out every path whose row moved
    since the scan compared it (another process recorded it, and owns that change)."""
    rows: list[tuple[str, Version, int | None, int | None]] = []
    found: list[Change] = []
    for c, v, st in updates:
        if c.known_seq is not None:
            if store.known_seq(c.rel) != c.known_seq:
                continue
        elif record and store.known_seq(c.rel) is not None:
            continue
        mtime = None if st is None else trusted_mtime(st, racy_from)
        ino = None if st is None else st.st_ino
        rows.append((c.rel, v, mtime, ino))
        old = c.old
        if (
            record
            and old is not None
            and (not old.same_content(v) or (old.mode or 0) != (v.mode or 0))
        ):
            found.append((c.rel, old, v))
    return rows, found
