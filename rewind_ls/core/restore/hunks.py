"""A turn's change to one file, hunk by hunk, and reverting some of its hunks only.

A hunk is one region of the line diff between what the file held before the turn touched it and
after it was done (`Change.before` -> `Change.after`), the merge's own diff (`merge.line_diff`).
Reverting hunks is a three-way merge like reverting the turn: base = after the turn, ours = the
content now, theirs = after the turn with only the chosen hunks put back as they were before. Edits
made since elsewhere in the file stay; an edit since that overlaps or touches a chosen hunk is a
merge conflict, and the revert is refused (`HunkState.revertable` says so before anyone asks).

The plan (`plan_revert_hunks`) is a normal `Plan` of mode revert: the same preview, compare-and-swap
and restore point as every restore, so `undo` brings the hunk back.
"""

from __future__ import annotations

from typing import NamedTuple

from rewind_ls.core.errors import CorruptBlob, RewindError
from rewind_ls.core.model import ABSENT, FILE, Action, ConflictKind, RestoreMode, Turn, Version
from rewind_ls.core.restore.plan import (
    Conflict,
    Plan,
    Reader,
    plan_revert,
    read_path_plan,
    restrict,
)
from rewind_ls.core.store import Store, digest
from rewind_ls.core.text.merge import is_binary, line_diff, merge3

# What became of a hunk since the turn (`HunkState.status`).
INTACT = "intact"  # the file still holds the turn's lines, nothing changed around them
EDITED_NEARBY = "edited-nearby"  # lines within CONTEXT of the hunk changed since; it still merges
EDITED = "edited"  # its lines (or the lines touching them) changed since: cannot revert it alone
REVERTED = "reverted"  # the file already holds what was there before the turn

CONTEXT = 3  # lines around a hunk whose later change makes its revert a merge worth previewing


class Hunk(NamedTuple):
    """`before[before_start:before_end]` became `after[after_start:after_end]` (0-based lines)."""

    idx: int  # 0-based, in the order of the file
    before_start: int
    before_end: int
    after_start: int
    after_end: int


class HunkState(NamedTuple):
    """One hunk of a turn's change to a path, against the content now."""

    hunk: Hunk
    status: str
    start: int  # where its lines are now (0-based; for a deletion, the line after the gap)
    end: int
    removed: list[bytes]  # the lines the turn removed (what a revert puts back)
    added: list[bytes]  # the lines the turn wrote (what a revert takes out)

    @property
    def revertable(self) -> bool:
        return self.status in (INTACT, EDITED_NEARBY)


class TurnFile:
    """A turn's change to one file as lines: the contents before and after it, and its hunks."""

    def __init__(self, turn: Turn, path: str, before: list[bytes], after: list[bytes]) -> None:
        self.turn = turn
        self.path = path
        self.before = before
        self.after = after
        self.hunks = [Hunk(i, *h) for i, h in enumerate(line_diff(before, after))]

    def reverted(self, indexes: set[int]) -> bytes:
        """The after content with the hunks `indexes` put back as they were before the turn."""
        out: list[bytes] = []
        pos = 0
        for h in self.hunks:
            if h.idx not in indexes:
                continue
            out.extend(self.after[pos : h.after_start])
            out.extend(self.before[h.before_start : h.before_end])
            pos = h.after_end
        out.extend(self.after[pos:])
        return b"".join(out)

    def merge(self, indexes: set[int], current: bytes) -> bytes | None:
        """The content now with hunks `indexes` reverted; None when a later edit overlaps them."""
        return merge3(b"".join(self.after), current, self.reverted(indexes)).merged

    def states(
        self,
        current: bytes,
        only: set[int] | None = None,
        lines: tuple[int, int] | None = None,
    ) -> list[HunkState]:
        """Every hunk against `current`: where it is and what became of it. `only`: those hunk
        indexes; `lines` (first, last; 0-based, inclusive): the hunks over those lines now (a
        deletion covers the line after its gap)."""
        now = current.splitlines(True)
        later = line_diff(self.after, now)
        out = []
        for h in self.hunks:
            if only is not None and h.idx not in only:
                continue
            start, end = _place(later, h.after_start, h.after_end)
            if lines is not None and not (start <= lines[1] and max(end, start + 1) > lines[0]):
                continue
            removed = self.before[h.before_start : h.before_end]
            added = self.after[h.after_start : h.after_end]
            merged = self.merge({h.idx}, current)
            if merged is None:
                status = EDITED
            elif merged == current:
                status = REVERTED
            elif any(
                c0 <= h.after_end + CONTEXT and c1 >= h.after_start - CONTEXT
                for c0, c1, _, _ in later
            ):
                status = EDITED_NEARBY
            else:
                status = INTACT
            out.append(HunkState(h, status, start, end, removed, added))
        return out


def _map(later: list[tuple[int, int, int, int]], x: int, start: bool) -> int:
    """Where line boundary `x` of the after content is in the content now (diff after -> now);
    lines inserted exactly at `x` count before a hunk's start and after its end."""
    off = 0
    for c0, c1, d0, d1 in later:
        if c0 < x < c1:
            return d0 if start else d1
        if c1 < x or (c1 == x and (c0 < x or start)):
            off += (d1 - d0) - (c1 - c0)
            continue
        break
    return x + off


def _place(later: list[tuple[int, int, int, int]], a0: int, a1: int) -> tuple[int, int]:
    """Where after-lines [a0, a1) are in the content now."""
    start = _map(later, a0, True)
    return start, max(start, _map(later, a1, False))


def turn_file(store: Store, turn: Turn, path: str) -> TurnFile | None:
    """The turn's change to `path` as lines; None when it has no line hunks (the turn created or
    deleted the file, it is binary or too large, or the turn is still editing it)."""
    change = store.change(turn.id, path)
    if change is None or change.after is None:
        return None
    if ABSENT in (change.before.kind, change.after.kind):
        return None
    contents = []
    for version in (change.before, change.after):
        if version.kind != FILE or version.hash is None:
            return None
        try:
            data = store.get_blob(version.hash)
        except CorruptBlob:
            return None
        if is_binary(data):
            return None
        contents.append(data.splitlines(True))
    return TurnFile(turn, path, contents[0], contents[1])


def hunk_label(turn: Turn, path: str, indexes: list[int], total: int) -> str:
    """The restore's name (its restore point is listed under it; `undo` says it)."""
    which = ", ".join(str(i + 1) for i in sorted(indexes))
    noun = "hunk" if len(indexes) == 1 else "hunks"
    return f"revert turn {turn.number}, {noun} {which} of {total} in {path}"


def plan_revert_hunks(
    store: Store,
    turn: Turn,
    reader: Reader,
    selection: dict[str, list[int] | None],
    label: str = "",
) -> Plan:
    """Revert only some of `turn`'s changes: per path the hunk indexes to revert, or None for the
    whole path (as `revert --path`). A hunk edited since is a merge conflict (never forcible)."""
    whole = [p for p, idx in selection.items() if idx is None]
    if whole:
        plan = restrict(plan_revert(store, turn, reader, label), whole)
    else:
        plan = Plan(RestoreMode.REVERT, turn, label)
    for path, indexes in selection.items():
        if indexes is None:
            continue
        tf = turn_file(store, turn, path)
        if tf is None:
            raise RewindError(
                f"turn {turn.number}: {path} has no line hunks to revert one by one (created, "
                "deleted, binary or too large in that turn, or not changed by it); revert the "
                "whole file instead"
            )
        bad = [i for i in indexes if not 0 <= i < len(tf.hunks)]
        if bad or not indexes:
            raise RewindError(
                f"turn {turn.number}: {path} has hunks 1..{len(tf.hunks)}, "
                f"not {', '.join(str(i + 1) for i in bad) or 'none'}"
            )
        pp = read_path_plan(reader, path)
        plan.paths.append(pp)
        if pp.conflict is not None:
            continue
        if pp.current.kind != FILE or pp.current_data is None:
            pp.action = Action.MODIFY
            pp.conflict = Conflict(
                ConflictKind.MERGE, f"{path}: deleted since turn {turn.number}; cannot merge"
            )
            continue
        merged = tf.merge(set(indexes), pp.current_data)
        if merged is None:
            pp.action = Action.MODIFY
            pp.conflict = Conflict(
                ConflictKind.MERGE,
                f"{path}: lines of the chosen hunk(s) were changed since turn {turn.number}; "
                "reverting them would discard that edit",
            )
            continue
        pp.set_target(Version(FILE, digest(merged), pp.current.mode, len(merged)), merged)
    return plan


__all__ = [
    "CONTEXT",
    "EDITED",
    "EDITED_NEARBY",
    "INTACT",
    "REVERTED",
    "Hunk",
    "HunkState",
    "TurnFile",
    "hunk_label",
    "plan_revert_hunks",
    "turn_file",
]
