"""Undoing journaled swaps, compare-and-swap: a path is put back only while it holds what the
restore wrote; anything else is left as found and named. Used live (a restore that failed midway,
`rollback`) and after a crash (`recovery.py`, through `undo_swap`, which infers from the files how
far a swap got)."""

from __future__ import annotations

import itertools
import os
from collections.abc import Sequence
from typing import Any

from rewind_ls.core.errors import RewindError
from rewind_ls.core.fs.faults import fault as _fault
from rewind_ls.core.model import ABSENT, FILE, Version
from rewind_ls.core.restore.pinned import Pinned
from rewind_ls.core.store import Store


def op_target(op: dict[str, Any]) -> Version:
    kind = op.get("target_kind") or (FILE if op.get("target_hash") else ABSENT)
    return Version(kind, op.get("target_hash"), op.get("target_mode"))


_UNDOS = itertools.count(1)


class Undone:
    """What undoing one journaled swap did: `restored` (the old content is back), `untouched`
    (the swap had not happened), or `left` (the path moved on since: left as found). `notes` name
    any file kept beside the path so that nothing is lost."""

    __slots__ = ("notes", "path", "result")

    def __init__(self, path: str, result: str, notes: list[str] | None = None) -> None:
        self.path = path
        self.result = result
        self.notes = notes or []


def drop_tmp(fs: Pinned, op: dict[str, Any], target: Version, notes: list[str]) -> None:
    """Delete a swap's temporary file. Journals since the aside name was added: it holds only what
    rewind-ls wrote (perhaps cut short by a crash), so it goes. Older journals used the temporary
    name as the aside too: deleted only when it holds what rewind-ls wrote."""
    tmp = op["tmp"]
    if "aside" not in op:
        drop_if_ours(fs, tmp, target, notes)
        return
    try:
        fs.unlink(tmp)
    except FileNotFoundError:
        pass


def drop_if_ours(fs: Pinned, full: str, target: Version, notes: list[str]) -> None:
    """Delete a temporary/aside file only when it holds what rewind-ls wrote (kept in the store)."""
    if not fs.exists(full):
        return
    if target.kind == FILE and fs.held(full) == target:
        fs.unlink(full)
    else:
        notes.append(f"kept {full}: it holds content rewind-ls did not write")


def drop_backup(fs: Pinned, store: Store | None, backup: str, notes: list[str]) -> None:
    """A backup no longer needed on disk: deleted only when its content is in the store."""
    if not fs.exists(backup):
        return
    # Whole, whatever its size: a restore point stores a file over the cap too (`hold_too_large`).
    held = fs.read(backup, whole=True)[0]
    if held.kind == FILE and held.hash and store is not None and store.has_blob(held.hash):
        fs.unlink(backup)
    else:
        notes.append(f"kept {backup}: the content found there before the restore")


def _take_back(
    fs: Pinned, store: Store | None, op: dict[str, Any], target: Version, backup: str | None
) -> Undone:
    """Compare-and-swap undo of one written path: move what `full` holds aside, check it is what
    rewind-ls wrote, then put the backup (or nothing) in its place. Content that differs is moved
    back unharmed and the path is left alone."""
    full, aside, path = op["full"], op.get("aside", op["tmp"]), op["path"]
    notes: list[str] = []
    if fs.exists(aside):  # a file kept above: never renamed over
        aside = f"{aside}.{os.urandom(4).hex()}"
    index = next(_UNDOS)
    fs.rename(full, aside)
    _fault("undo-aside", index)  # crash tests: a recovery killed with the path moved aside
    if fs.held(aside) != target:
        if not fs.place(aside, full):
            notes.append(f"kept {aside}: the content found at {path}")
        if backup is not None:
            drop_backup(fs, store, backup, notes)
        return Undone(path, "left", notes)
    if backup is not None and not fs.place(backup, full):
        # Something appeared at the path in the gap: it wins; the old content stays at the backup.
        notes.append(f"kept {backup}: {path} was created again meanwhile")
        drop_if_ours(fs, aside, target, notes)
        return Undone(path, "left", notes)
    _fault("undo-put-back", index)  # ... killed with the old content back, the aside file not gone
    drop_if_ours(fs, aside, target, notes)
    return Undone(path, "restored", notes)


def _resume_take_back(
    fs: Pinned, op: dict[str, Any], target: Version, notes: list[str]
) -> Undone | None:
    """A recovery killed inside `_take_back` left what the path held at the aside name. With the
    path empty: what rewind-ls wrote is finished off (the old content put back), anything else is
    put back where it was. With the path filled again: the aside file is deleted if it holds what
    rewind-ls wrote, else kept and named. None: carry on with `undo_swap`'s other cases."""
    full, backup, path, aside = op["full"], op["backup"], op["path"], op.get("aside")
    if not aside or not fs.exists(aside):
        return None
    if fs.exists(full):
        drop_if_ours(fs, aside, target, notes)
        return None
    if fs.held(aside) != target:
        if not fs.place(aside, full):
            notes.append(f"kept {aside}: the content found at {path}")
        return None
    if fs.exists(backup):
        if not fs.place(backup, full):
            return None  # created again meanwhile: the cases below keep both
    elif not op.get("expected_absent"):
        return None
    fs.unlink(aside)
    return Undone(path, "restored", notes)


def undo_swap(fs: Pinned, store: Store | None, op: dict[str, Any]) -> Undone:
    """Put one path back as it was before a swap, inferring from the files how far the swap got:
    live (a failed restore) or after a crash (recovery, even a recovery killed midway: see
    `_resume_take_back`). Never overwrites content rewind-ls did not write."""
    full, tmp, backup, path = op["full"], op["tmp"], op["backup"], op["path"]
    target = op_target(op)
    notes: list[str] = []
    resumed = _resume_take_back(fs, op, target, notes)
    if resumed is not None:
        return resumed
    if fs.exists(tmp):
        if fs.exists(full) or not fs.exists(backup):
            drop_tmp(fs, op, target, notes)
        elif fs.place(backup, full):
            # Killed between moving the old file aside and moving the new one in.
            drop_tmp(fs, op, target, notes)
            return Undone(path, "restored", notes)
    if not fs.exists(backup):
        if op.get("expected_absent") and target.kind == FILE and fs.exists(full):
            return _take_back(fs, store, op, target, None)  # a file this restore created
        return Undone(path, "untouched", notes)
    if fs.exists(full):
        if fs.same_inode(full, backup):
            fs.unlink(backup)  # a recovery killed after putting the backup back
            return Undone(path, "restored", notes)
        if target.kind != FILE:
            drop_backup(fs, store, backup, notes)
            return Undone(path, "left", notes)  # created again since the restore deleted it
        undone = _take_back(fs, store, op, target, backup)
        undone.notes[:0] = notes
        return undone
    if target.kind == FILE:
        drop_backup(fs, store, backup, notes)
        return Undone(path, "left", notes)  # the restored file was deleted since
    if fs.place(backup, full):
        return Undone(path, "restored", notes)
    return Undone(path, "left", [*notes, f"kept {backup}"])


def undo_op(fs: Pinned, store: Store | None, op: dict[str, Any]) -> Undone:
    """`undo_swap`, with an OS error reported as the file left where it is (and why)."""
    try:
        return undo_swap(fs, store, op)
    except OSError as exc:
        return Undone(op["path"], "left", [f"{exc.filename or op['path']}: {exc.strerror}"])
    except RewindError as exc:
        return Undone(op["path"], "left", [str(exc)])


def rollback(
    fs: Pinned,
    ops: Sequence[dict[str, Any]],
    created_dirs: Sequence[str] = (),
    store: Store | None = None,
) -> list[Undone]:
    """Undo swapped files using the journal (compare-and-swap, see `undo_swap`); returns the
    paths that could not be put back or keep a file beside them."""
    problems: list[Undone] = []
    for op in reversed(ops):
        undone = undo_op(fs, store, op)
        if undone.result == "left" or undone.notes:
            problems.append(undone)
    remove_dirs(fs, created_dirs)
    return problems


def remove_dirs(fs: Pinned, dirs: Sequence[str]) -> None:
    """Remove the folders a restore created, deepest first, where they are empty."""
    for d in sorted(dirs, key=len, reverse=True):
        try:
            fd, name = fs.at(d)
            os.rmdir(name, dir_fd=fd)
        except (OSError, RewindError):
            pass


def problem_text(problems: Sequence[Undone]) -> str:
    return "; ".join(
        f"{u.path}: "
        + ("changed meanwhile, left as found" if u.result == "left" else "put back")
        + (f" ({', '.join(u.notes)})" if u.notes else "")
        for u in problems
    )
