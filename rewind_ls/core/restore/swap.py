"""Swapping a restore's files into place, all or nothing: the journal of every temporary and backup
name (in the restore point, before any exists), every new content written and made durable, every
path checked, then each path swapped (old file aside, checked again, new file linked in). A failure
puts back what was swapped (`rollback.py`); after success the backups go (`discard_backups`) and
the folders the restore emptied (`remove_emptied_dirs`)."""

from __future__ import annotations

import os
from collections.abc import Collection, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from rewind_ls.core.errors import ConflictError, RewindError
from rewind_ls.core.fs import faults
from rewind_ls.core.fs.disk_sync import can_flush_many, flush_files, lock, parallel_map
from rewind_ls.core.fs.faults import fault as _fault
from rewind_ls.core.fs.paths import is_below, safe_targets
from rewind_ls.core.model import ABSENT, FILE, Version
from rewind_ls.core.restore.pinned import Pinned, missing_dirs, swap_names
from rewind_ls.core.restore.plan import PathPlan
from rewind_ls.core.restore.point import update_journal
from rewind_ls.core.restore.rollback import Undone, problem_text, rollback
from rewind_ls.core.store import Store


def pause(stage: str, index: int) -> None:
    """Race tests: `REWIND_LS_FAULT=before-aside:N` (after the last check, before path N is moved
    aside), `before-link:N` (after it was moved aside and checked, before the new file goes in) or
    `before-discard:1` (restore applied, backups not yet dropped) creates the file named by
    `REWIND_LS_FAULT_MARK`, then sleeps `REWIND_LS_FAULT_PAUSE` seconds (default 0.5), holding the
    window open for a racing writer."""
    if faults.armed(stage, index):  # read at call time: a fork server's child re-reads it
        import time

        mark = os.environ.get("REWIND_LS_FAULT_MARK")
        if mark:
            with open(mark, "w"):
                pass
        time.sleep(float(os.environ.get("REWIND_LS_FAULT_PAUSE", "0.5")))


@contextmanager
def restore_lock(store: Store, blocking: bool = True) -> Iterator[bool]:
    """One restore at a time per workspace, across processes."""
    fd = os.open(os.path.join(store.path, "restore.lock"), os.O_RDWR | os.O_CREAT, 0o600)
    try:
        try:
            lock(fd, blocking=blocking)
        except BlockingIOError:
            yield False
            return
        yield True
    finally:
        os.close(fd)


Reached = dict[str, tuple[Version, "os.stat_result | None"]]


def swap(
    store: Store,
    point: str,
    items: Sequence[PathPlan],
    disk_expected: dict[str, Version] | None = None,
) -> tuple[Reached, list[dict[str, Any]]]:
    """Write `items` to disk all or nothing, journaled in restore point `point`. Returns what each
    path now holds and the journal entries; the caller marks the point applied, then calls
    `discard_backups` (in that order: until the point is applied, the backups are the way back).
    On failure everything swapped is put back and the error is raised. `disk_expected` overrides
    the content expected on disk (the server plans against buffers, but swaps files)."""
    ops = _journal(store, point, items)
    expected = [(disk_expected or {}).get(pp.path, pp.current) for pp in items]
    created_dirs: list[str] = []
    with Pinned(store.root) as fs:
        try:
            _write_all(fs, ops, items, created_dirs)
            _check_all(fs, ops, expected)
            for index, (op, pp, want) in enumerate(zip(ops, items, expected, strict=True), 1):
                pause("before-aside", index)
                swap_one(fs, op, want, pp.target, index)
                _fault("after-swap", index)
            for d in {os.path.dirname(op["full"]) for op in ops}:
                fs.fsync_dir(d)
        except BaseException as exc:
            _fail(exc, rollback(fs, ops, created_dirs, store), point)
            raise
        reached: Reached = {}
        for op, pp in zip(ops, items, strict=True):
            try:
                st = fs.lstat(op["full"]) if pp.target.kind == FILE else None
            except (OSError, RewindError):
                st = None
            reached[pp.path] = (pp.target, st)
    return reached, ops


def _journal(store: Store, point: str, items: Sequence[PathPlan]) -> list[dict[str, Any]]:
    """The journal entry of every path, recorded in the restore point. It names every temporary
    and backup file, and every folder the restore will create, before any of them exists: a process
    killed at any later instant leaves nothing unnamed."""
    ops: list[dict[str, Any]] = []
    planned_dirs: dict[str, None] = {}
    for pp, full in zip(items, safe_targets(store.root, [pp.path for pp in items]), strict=True):
        tmp, backup, aside = swap_names(full)
        ops.append(
            {
                "path": pp.path,
                "full": full,
                "tmp": tmp,
                "backup": backup,
                "aside": aside,
                "expected_absent": pp.current.kind == ABSENT,
                "target_kind": pp.target.kind,
                "target_hash": pp.target.hash,
                "target_mode": pp.target.mode,
                # Over the size cap, yet in the restore point (`point.hold_too_large`).
                "held_hash": pp.held.hash if pp.held is not None else None,
            }
        )
        if pp.target.kind == FILE:
            planned_dirs.update(dict.fromkeys(missing_dirs(os.path.dirname(full))))
    update_journal(store, point, ops=ops, created_dirs=list(planned_dirs))
    return ops


# Up to this many files, each temporary file is fsynced; beyond, one syncfs flushes them all.
_SYNC_EACH_MAX = 16


def _write_all(
    fs: Pinned, ops: list[dict[str, Any]], items: Sequence[PathPlan], created_dirs: list[str]
) -> None:
    """Every new content in its temporary file, durable before any file is moved. The folders are
    made here, in order (each one journaled as created); the files are written in a few threads
    (creating thousands of files waits on the file system more than on Python)."""
    sync_each = len(items) <= _SYNC_EACH_MAX or not can_flush_many()
    writes: list[tuple[int, dict[str, Any], PathPlan]] = []
    for index, (op, pp) in enumerate(zip(ops, items, strict=True), 1):
        if pp.target.kind == FILE:
            assert pp.target_data is not None
            fs.makedirs(os.path.dirname(op["full"]), created_dirs)
            writes.append((index, op, pp))

    def write(job: tuple[int, dict[str, Any], PathPlan]) -> None:
        index, op, pp = job
        assert pp.target_data is not None
        fs.write_tmp(op["tmp"], pp.target_data, pp.target.mode, sync_each, index)

    for _ in parallel_map(write, writes):
        pass
    if not sync_each:
        flush_files({os.path.dirname(op["tmp"]) for op in ops if op["target_kind"] == FILE})


def _check_all(fs: Pinned, ops: Sequence[dict[str, Any]], expected: list[Version]) -> None:
    """Every path still holds what the plan expected (read in a few threads: a large restore reads
    thousands of files). Each is checked again at its swap; this catches a change before any file
    is moved. Every folder is pinned first, in this thread."""
    for directory in {os.path.dirname(op["full"]) for op in ops}:
        try:
            fs.folder(directory)
        except FileNotFoundError:
            pass
    held = parallel_map(lambda op: fs.held(op["full"]), ops)
    for op, now, want in zip(ops, held, expected, strict=True):
        if not now == want:
            raise ConflictError(
                f"{op['path']}: changed while the restore was being prepared; nothing written",
                [op["path"]],
            )


def _fail(exc: BaseException, problems: list[Undone], point: str) -> None:
    """Raise the error a failed swap reports, once `problems` (what the roll back could not put
    back) are known; returns when `exc` itself is the right one to raise."""
    lost = [u for u in problems if u.result == "left"]
    if isinstance(exc, ConflictError):
        extra = f"; {problem_text(problems)}" if problems else ""
        raise ConflictError(
            f"{exc}{extra}", [*exc.paths, *(u.path for u in lost)], exc.cli_hint
        ) from exc
    if problems:
        raise RewindError(
            f"restore failed ({exc}); {problem_text(problems)}; the content before the "
            f"restore is in restore point {point}"
        ) from exc
    if isinstance(exc, OSError) and not isinstance(exc, RewindError):
        raise RewindError(
            f"{getattr(exc, 'filename', '') or 'restore'}: {exc.strerror or exc}; nothing changed"
        ) from exc


def swap_one(
    fs: Pinned, op: dict[str, Any], expected: Version, target: Version, index: int = 0
) -> None:
    """Swap one path, closing the window after the last check: the old file is renamed aside
    first, then what it held at that instant is compared with what the plan expected (a write that
    landed after the check is caught here and put back), and the new file is linked in only if
    nothing appeared at the path meanwhile."""
    full, tmp, backup, path = op["full"], op["tmp"], op["backup"], op["path"]
    fs.check(full)
    if fs.exists(full):
        fs.rename(full, backup)
        if fs.held(backup) != expected:
            where = "" if fs.place(backup, full) else f"; what it held is kept at {backup}"
            raise ConflictError(
                f"{path}: changed at the moment of the swap; left as found{where}", [path]
            )
        op["backup_sig"] = fs.sig(backup)
        # Content the store does not hold stays on disk; a file over the cap that the restore
        # point stored goes like any backup, once what was moved aside is that very content.
        op["keep_backup"] = expected.kind != FILE and not _held_whole(fs, op, backup)
    elif expected.kind != ABSENT:
        raise ConflictError(f"{path}: deleted at the moment of the swap; left as found", [path])
    pause("before-link", index)
    if target.kind == FILE:
        fs.check(full)
    if target.kind == FILE and not fs.place(tmp, full):
        raise ConflictError(f"{path}: created at the moment of the swap; left as found", [path])


def _held_whole(fs: Pinned, op: dict[str, Any], backup: str) -> bool:
    """Whether the restore point holds what `backup` holds, byte for byte (a file over the size
    cap, stored by `point.hold_too_large`): hashed whole again, after it was moved aside."""
    held = op.get("held_hash")
    return bool(held) and fs.read(backup, whole=True)[0].hash == held


def discard_backups(ops: Sequence[dict[str, Any]], fs: Pinned | None = None) -> list[str]:
    """Delete the backups of an applied restore. A backup written to after it was checked (a
    process that held the old file open kept writing into it) or whose content is not in the store
    is kept; returns those file names (deleted in a few threads: a large restore has thousands)."""
    if not ops:
        return []
    if fs is None:
        with Pinned(_root_of(ops[0])) as own:
            return discard_backups(ops, own)
    for directory in {os.path.dirname(op["backup"]) for op in ops}:
        try:
            fs.folder(directory)
        except (OSError, RewindError):
            pass
    return [b for b in parallel_map(lambda op: _discard_backup(fs, op), ops) if b is not None]


# A journal's mark that its restore finished: every backup it names is gone (none was kept) and
# the folders it emptied are removed. The recoveries every command starts with skip such a
# journal instead of looking for thousands of backups again. Written last: a process killed
# before it leaves a journal that recovery checks as before.
BACKUPS_GONE = "backups_gone"


def mark_backups_gone(store: Store, point: str) -> None:
    update_journal(store, point, **{BACKUPS_GONE: True})


def remove_emptied_dirs(ops: Sequence[dict[str, Any]], keep: Collection[str] = ()) -> list[str]:
    """After an applied restore (backups gone): the folders its deletions left empty are removed,
    deepest first up to the workspace root, so a rewind of a turn that created `sub/deeper/new.txt`
    leaves no `sub/deeper/`. A folder holding anything at all (a kept backup too) stays, and so
    does one named in `keep` (a conflict the person chose to leave alone). Returns the
    workspace-relative folders removed."""
    deleted = [op for op in ops if op.get("target_kind") == ABSENT]
    if not deleted:
        return []
    removed: list[str] = []
    with Pinned(_root_of(deleted[0])) as fs:
        folders = {os.path.dirname(op["full"]) for op in deleted}
        for directory in sorted(folders, key=len, reverse=True):
            while directory != fs.root and is_below(directory, fs.root):
                if fs.rel(directory) in keep:
                    break
                try:
                    fd, name = fs.at(directory)
                    os.rmdir(name, dir_fd=fd)
                except (OSError, RewindError):
                    break
                removed.append(fs.rel(directory))
                directory = os.path.dirname(directory)
    return removed


def remove_emptied_for(root: str, deleted: Sequence[str]) -> list[str]:
    """`remove_emptied_dirs` for workspace-relative paths a restore deleted (the editor deletes
    some of them itself, with no journal entry here)."""
    real = os.path.realpath(root)
    return remove_emptied_dirs(
        [
            {"path": p, "full": os.path.join(real, *p.split("/")), "target_kind": ABSENT}
            for p in deleted
        ]
    )


def _root_of(op: dict[str, Any]) -> str:
    """The workspace root a journal entry's absolute path was made from."""
    full, path = op["full"], op["path"]
    return str(full[: len(full) - len(path) - 1]) or os.sep


def _discard_backup(fs: Pinned, op: dict[str, Any]) -> str | None:
    """Delete one backup (see `discard_backups`); its name when it is kept."""
    backup: str = op["backup"]
    sig = fs.sig(backup)
    if sig is None:
        return None
    if op.get("keep_backup") or sig != op.get("backup_sig", sig):
        return backup
    try:
        fs.unlink(backup)
    except (FileNotFoundError, RewindError):
        pass
    return None
