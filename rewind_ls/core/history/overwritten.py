"""Saying when something else overwrote the person's work (local history).

A version of the person's (a change of the `external` session: an edit by hand the watcher or a
scan recorded, or of the `editor` session: a save) that the very next change of the path replaced
with content equal to an EARLIER recorded version of that path is the signature of an agent's own
restore (Claude Code's `/rewind`, Gemini's `/restore`), a `git checkout`, a `git stash`: something
put old content back over the person's newer work. `turns` and the editors name each such case
once, with the command that brings the work back:

    a.txt: your edit of 12:04 was overwritten at 12:06; restore it:
    rewind-ls restore a.txt --version 3f2a9c01d2e4

A restore rewind-ls itself made (a restore point) is never named: the person asked for it, and
`rewind-ls undo` takes it back. "Once" is per reader: each remembers in the store's meta the
workspace order up to which it has told (`NOTICED_PREFIX` + the reader's name).
"""

from __future__ import annotations

import time
from itertools import pairwise
from typing import NamedTuple

from rewind_ls.core.model import (
    EDITOR_SESSION,
    EXTERNAL_SESSION,
    FILE,
    REWIND_SESSION,
    PathChange,
    Version,
)
from rewind_ls.core.store import Store

NOTICED_PREFIX = "history.noticed."
_PERSONS = (EXTERNAL_SESSION, EDITOR_SESSION)


class Overwritten(NamedTuple):
    """The person's `version` of `path`, recorded at `kept_at`, replaced at `over_at` (epoch
    seconds) by the change of workspace order `seq`."""

    path: str
    version: Version
    kept_at: float
    over_at: float
    seq: int
    saved: bool  # an editor save (else an edit the watcher or a scan found)

    def message(self) -> str:
        what = "your save" if self.saved else "your edit"
        return (
            f"{self.path}: {what} of {_clock(self.kept_at)} was overwritten at "
            f"{_clock(self.over_at)}; restore it: rewind-ls restore {_quoted(self.path)} "
            f"--version {(self.version.hash or '')[:12]}"
        )


def _clock(at: float) -> str:
    return time.strftime("%H:%M", time.localtime(at))


def _quoted(path: str) -> str:
    import shlex

    return shlex.quote(path)


def find_overwritten(store: Store, since_seq: int = 0) -> list[Overwritten]:
    """Every case (module docstring) whose overwriting change came after `since_seq`, oldest
    first."""
    later = store.changes_since(since_seq)
    paths = sorted({c.path for c in later if c.after is not None and c.after.kind == FILE})
    found: list[Overwritten] = []
    for path in paths:
        found.extend(_in_history(store, _once(store.path_history(path)), since_seq))
    return sorted(found, key=lambda o: o.seq)


def _once(rows: list[PathChange]) -> list[PathChange]:
    """One row per recorded change (a fork's copies share the seq of the change they copy)."""
    seen: dict[int, PathChange] = {}
    for row in rows:
        seen.setdefault(row.seq, row)
    return [seen[s] for s in sorted(seen)]


def _in_history(store: Store, rows: list[PathChange], since_seq: int) -> list[Overwritten]:
    out: list[Overwritten] = []
    earlier: set[str] = set()  # contents the path held before the person's version
    if rows and rows[0].before.kind == FILE and rows[0].before.hash:
        earlier.add(rows[0].before.hash)
    for mine, over in pairwise(rows):
        mine_v, over_v = mine.after, over.after
        if mine_v is not None and mine_v.kind == FILE and mine_v.hash:
            if (
                over.seq > since_seq
                and mine.session_id in _PERSONS
                and over.session_id != REWIND_SESSION
                and over_v is not None
                and over_v.kind == FILE
                and over_v.hash != mine_v.hash
                and over_v.hash in earlier
            ):
                out.append(_case(store, mine, over, mine_v))
            earlier.add(mine_v.hash)
    return out


def _case(store: Store, mine: PathChange, over: PathChange, version: Version) -> Overwritten:
    kept = store.turn(mine.turn_id)
    by = store.turn(over.turn_id)
    return Overwritten(
        mine.path,
        version,
        kept.started_at if kept is not None else 0.0,
        by.started_at if by is not None else 0.0,
        over.seq,
        mine.session_id == EDITOR_SESSION,
    )


def new_notices(store: Store, reader: str) -> list[Overwritten]:
    """The cases `reader` ("cli", an editor's name) has not told yet; remembers them as told."""
    key = NOTICED_PREFIX + reader
    raw = store.meta(key)
    since = int(raw) if raw and raw.isdigit() else 0
    now = store.seq_now()
    if now <= since:
        return []
    found = find_overwritten(store, since)
    # Up to now, found or not: the next call looks at newer changes only.
    with store.transaction():
        store.set_meta(key, str(max([now, *(o.seq for o in found)])))
    return found
