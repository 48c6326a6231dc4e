"""The whole workspace as it was at a checkpoint: every file rewind-ls knows, at the start of a
turn or at its end, for `export`, the git export and the editors' read-only browsing.

A path's content at workspace order `seq` is the `before` of its first change after `seq` in any
session (the rewind planner's target, `plan_rewind`, and `versions.version_at`), else the last
content rewind-ls saw (`known`). Here it is asked of every path at once: the later changes in one
query, the known rows in another, so a 10,000-file workspace costs two reads, not 10,000.

Files only: rewind-ls keeps no folders (an empty folder is not part of a state, as in git) and
never what its ignore rules leave out. A version that is `too-large` or `unknown` is in the state
(the file was there) but has no content to write: callers name it (`Snapshot.unwritable`).
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterator, Mapping, Sequence
from itertools import pairwise
from typing import NamedTuple

from rewind_ls.core.model import ABSENT, FILE, Turn, Version
from rewind_ls.core.store import Store


class Snapshot(NamedTuple):
    """The files at a checkpoint: path -> version (never absent; in no particular order), and
    the checkpoint's workspace order."""

    seq: int
    files: Mapping[str, Version]

    @property
    def unwritable(self) -> list[str]:
        """Paths whose content rewind-ls does not hold (over the size cap, or never seen)."""
        return sorted(p for p, v in self.files.items() if v.kind != FILE or v.hash is None)


def end_seq(store: Store, turn: Turn) -> int:
    """The workspace order of a turn's end: its last change's settling (or first touch), the
    turn's start when it changed nothing."""
    last = turn.seq
    for change in store.changes(turn.id):
        last = max(last, change.seq, change.after_seq or 0)
    return last


def state_at(store: Store, seq: int) -> Snapshot:
    """Every file rewind-ls knows, as it was at workspace order `seq`."""
    return next(iter(states_at(store, [seq])))


def states_at(store: Store, seqs: Sequence[int]) -> Iterator[Snapshot]:
    """The snapshots at several workspace orders (ascending), from one read of the store: the
    first whole, each next one moved on by the changes in between only (the git export makes one
    per turn of a long session over a large workspace)."""
    if not seqs:
        return
    if list(seqs) != sorted(seqs):
        raise ValueError("states_at: the orders must ascend")
    # `known` first, the later changes after: a change recorded between the two reads is then in
    # the second, and its `before` (what `known` held) wins, so the state is never a later one.
    known = {path: version for path, version, _mtime, _ino in store.known_paths()}
    changes = store.changes_since(seqs[0])  # oldest first
    history: dict[str, tuple[list[int], list[Version]]] = {}
    for change in changes:
        at, before = history.setdefault(change.path, ([], []))
        at.append(change.seq)
        before.append(change.before)

    def version(path: str, seq: int) -> Version | None:
        """The `before` of the path's first change after `seq`, else what was last seen."""
        entry = history.get(path)
        if entry is not None:
            i = bisect_right(entry[0], seq)
            if i < len(entry[0]):
                return entry[1][i]
        return known.get(path)

    files: dict[str, Version] = {}
    for path in known.keys() | history.keys():
        v = version(path, seqs[0])
        if v is not None and v.kind != ABSENT:
            files[path] = v
    yield Snapshot(seqs[0], dict(files))
    i = 0
    for prev, seq in pairwise(seqs):
        # Only a path changed in (prev, seq] can hold something else at `seq`.
        while i < len(changes) and changes[i].seq <= prev:
            i += 1
        moved: set[str] = set()
        while i < len(changes) and changes[i].seq <= seq:
            moved.add(changes[i].path)
            i += 1
        for path in moved:
            v = version(path, seq)
            if v is None or v.kind == ABSENT:
                files.pop(path, None)
            else:
                files[path] = v
        yield Snapshot(seq, dict(files))


def seen_paths(store: Store, since_seq: int) -> set[str]:
    """Every path rewind-ls has a record of from `since_seq` on (known now, or changed since),
    present or not: what a snapshot can say anything about."""
    seen = {path for path, _v, _m, _i in store.known_paths()}
    seen.update(c.path for c in store.changes_since(since_seq))
    return seen


def state_of_turn(store: Store, turn: Turn, after: bool = False) -> Snapshot:
    """The workspace at the start of `turn` (what `rewind TURN` brings back), or at its end."""
    return state_at(store, end_seq(store, turn) if after else turn.seq)


class Entry(NamedTuple):
    """One name in a folder of a snapshot: a file (with its version) or a folder."""

    name: str
    folder: bool
    version: Version | None


def sizes(store: Store, entries: Sequence[Entry]) -> list[int]:
    """Each entry's length in bytes (0 for a folder): a change records no size, the content's
    row does."""
    hashes = [e.version.hash for e in entries if e.version is not None and e.version.hash]
    known = store.blob_sizes(hashes)
    return [
        0
        if e.version is None
        else e.version.size or (known.get(e.version.hash, 0) if e.version.hash else 0)
        for e in entries
    ]


def list_folder(snapshot: Snapshot, folder: str, recursive: bool = False) -> list[Entry] | None:
    """The names directly inside `folder` ("" for the workspace root), folders first then files,
    each sorted by name; `recursive`: every file below it instead, by its path from `folder`.
    None when the snapshot holds no file under `folder`."""
    prefix = f"{folder.strip('/')}/" if folder.strip("/") else ""
    folders: set[str] = set()
    files: list[Entry] = []
    found = False
    for path, version in snapshot.files.items():
        if not path.startswith(prefix):
            continue
        found = True
        rest = path[len(prefix) :]
        head, sep, _ = rest.partition("/")
        if sep and not recursive:
            folders.add(head)
        else:
            files.append(Entry(rest, False, version))
    if not found:
        return None
    files.sort(key=lambda e: e.name)
    return [Entry(name, True, None) for name in sorted(folders)] + files
