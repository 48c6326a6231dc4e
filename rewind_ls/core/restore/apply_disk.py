"""Applying a plan to disk, all or nothing.

Steps: record a restore point (content now + content to write), write every new content to a temporary
file beside its target, check each target still holds what the plan expected (compare-and-swap), move
each old file aside to a backup name and the new one into place, then mark the restore point applied
and drop the backups. Any failure rolls back what was swapped. A process killed midway leaves a
`pending` restore point whose journal names every temporary and backup file: `recover()` (run by every
CLI command and the server at start) puts the workspace back as it was before the restore.
"""

from __future__ import annotations

import errno
import hashlib
import itertools
import json
import os
import stat
from collections.abc import Collection, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from rewind_ls.core.capture.recorder import REWIND_SESSION, read_current
from rewind_ls.core.errors import ConflictError, OutsideWorkspace, RewindError
from rewind_ls.core.fs import config
from rewind_ls.core.fs.disk_sync import (
    can_flush_many,
    flush_files,
    fsync_file,
    lock,
    parallel_map,
    process_alive,
    rename_noreplace,
)
from rewind_ls.core.fs.faults import FAULT as _FAULT
from rewind_ls.core.fs.faults import fault as _fault
from rewind_ls.core.fs.paths import check_relative, is_below, safe_target
from rewind_ls.core.model import ABSENT_VERSION, RestoreMode
from rewind_ls.core.restore.plan import REVERT, PathPlan, Plan
from rewind_ls.core.restore.point import (
    PENDING,
    ROLLED_BACK,
    finish_restore_point,
    open_restore_point,
    update_journal,
)
from rewind_ls.core.store import (
    ABSENT,
    FILE,
    OTHER,
    Store,
    Version,
    digest,
    too_large,
)


class Outcome:
    def __init__(
        self,
        status: str,
        message: str,
        plan: Plan,
        items: Sequence[PathPlan] = (),
        point: str | None = None,
        failed: Sequence[str] = (),
    ) -> None:
        self.status = status
        self.message = message
        self.plan = plan
        self.items = list(items)
        self.point = point
        self.failed = list(failed)


def _pause(stage: str, index: int) -> None:
    """Race tests: `REWIND_LS_FAULT=before-aside:N` (after the last check, before path N is moved
    aside), `before-link:N` (after it was moved aside and checked, before the new file goes in) or
    `before-discard:1` (restore applied, backups not yet dropped) creates the file named by
    `REWIND_LS_FAULT_MARK`, then sleeps `REWIND_LS_FAULT_PAUSE` seconds (default 0.5), holding the
    window open for a racing writer."""
    if _FAULT and f"{stage}:{index}" == _FAULT:
        import time

        mark = os.environ.get("REWIND_LS_FAULT_MARK")
        if mark:
            with open(mark, "w"):
                pass
        time.sleep(float(os.environ.get("REWIND_LS_FAULT_PAUSE", "0.5")))


def select(plan: Plan, force: bool, skip_conflicts: bool) -> list[PathPlan]:
    """The paths to write. Raises ConflictError (nothing written) when a conflict is not resolved by
    the caller's choice: `force` overwrites paths changed behind rewind-ls' back, `skip_conflicts`
    leaves every conflicting path alone. A revert whose merge does not apply writes nothing at all."""
    conflicts = plan.conflicts
    merge = [p for p in conflicts if p.conflict is not None and p.conflict.kind == "merge"]
    if plan.mode == REVERT and merge:
        number = plan.turn.number
        raise ConflictError(
            "revert refused, nothing written: "
            + "; ".join(p.conflict.message for p in merge if p.conflict)
            + f" (`revert {number} --merge` writes it with conflict markers to resolve; "
            f"`rewind {number} --path FILE` rewinds that file instead)",
            [p.path for p in merge],
        )
    blocking = [
        p for p in conflicts if p.conflict is not None and not (force and p.conflict.forcible)
    ]
    if blocking and not skip_conflicts:
        hint = "--force to overwrite, --skip-conflicts to restore the rest"
        raise ConflictError(
            f"{len(blocking)} conflict(s), nothing written ({hint}):\n  "
            + "\n  ".join(p.conflict.message for p in blocking if p.conflict),
            [p.path for p in blocking],
        )
    return [
        p
        for p in plan.paths
        if p.will_write and (p.conflict is None or (force and p.conflict.forcible))
    ]


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


# A name this long or longer gets a hashed temporary/backup/aside name: the longest form,
# `.<name>.rewind-<8 hex>.aside.<8 hex>`, adds 32 bytes, and a file system's names stop at 255.
_LONG_NAME = 255 - 40


def _names(full: str) -> tuple[str, str, str]:
    """The temporary (new content), backup (old content) and aside (what an undo moves out of the
    way) names of one path. The temporary name only ever holds what `_write_tmp` wrote, whole or in
    part, so a recovery may always delete it; the aside name can hold the person's content. A long
    name is replaced by a hash of it, so every legal name has names that fit beside it."""
    directory, name = os.path.split(full)
    if len(os.fsencode(name)) > _LONG_NAME:
        name = hashlib.sha256(os.fsencode(name)).hexdigest()[:32]
    tag = os.urandom(4).hex()
    return (
        os.path.join(directory, f".{name}.rewind-{tag}.tmp"),
        os.path.join(directory, f".{name}.rewind-{tag}.bak"),
        os.path.join(directory, f".{name}.rewind-{tag}.aside"),
    )


_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


class Pinned:
    """The workspace's folders as a restore found them: each opened once, by walking from the root
    one name at a time without following links (O_NOFOLLOW), and every move, write and delete made
    relative to that descriptor (renameat, unlinkat, openat). A folder swapped for a link after it
    was opened cannot redirect a move elsewhere; `check` refuses a folder that no longer sits at its
    path (moved out of the workspace, or replaced) just before each swap. Paths outside the root,
    or not in normal form (a journal's, say), are refused."""

    def __init__(self, root: str) -> None:
        self.root = os.path.realpath(root)
        self._fds: dict[str, int] = {}

    def __enter__(self) -> Pinned:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        for fd in self._fds.values():
            os.close(fd)
        self._fds.clear()

    def rel(self, full: str) -> str:
        return os.path.relpath(full, self.root).replace(os.sep, "/")

    def folder(self, directory: str, created: list[str] | None = None) -> int:
        """The descriptor of `directory` (absolute, inside the root); missing folders are made
        (and appended to `created`) when `created` is given, else FileNotFoundError."""
        fd = self._fds.get(directory)
        if fd is not None:
            return fd
        if directory == self.root:
            fd = os.open(self.root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        else:
            if not is_below(directory, self.root) or os.path.normpath(directory) != directory:
                raise OutsideWorkspace(directory, self.root, "not a folder of the workspace")
            parent, name = os.path.split(directory)
            parent_fd = self.folder(parent, created)
            try:
                fd = os.open(name, _DIR_FLAGS, dir_fd=parent_fd)
            except FileNotFoundError:
                if created is None:
                    raise
                os.mkdir(name, 0o755, dir_fd=parent_fd)
                created.append(directory)
                fd = os.open(name, _DIR_FLAGS, dir_fd=parent_fd)
            except OSError as exc:
                if exc.errno not in (errno.ELOOP, errno.ENOTDIR):
                    raise
                rel = self.rel(directory)
                raise ConflictError(
                    f"{rel}: a link or a file now where a folder was; left as found", [rel]
                ) from None
        kept = self._fds.setdefault(directory, fd)  # two threads may open one folder at once
        if kept != fd:
            os.close(fd)
        return kept

    def at(self, full: str) -> tuple[int, str]:
        """(descriptor of the folder, name) of the absolute path `full`."""
        directory, name = os.path.split(full)
        if not name or name in (".", ".."):
            raise OutsideWorkspace(full, self.root, "not a file name of the workspace")
        return self.folder(directory), name

    def check(self, full: str) -> None:
        """ConflictError when the folder of `full`, as pinned, is no longer at its path inside the
        workspace (moved away, or a link put in its place since it was checked)."""
        directory = os.path.dirname(full)
        if directory == self.root:
            return
        pinned = os.fstat(self.folder(directory))
        try:
            here = os.stat(directory) if os.path.realpath(directory) == directory else None
        except OSError:
            here = None
        if here is None or (here.st_dev, here.st_ino) != (pinned.st_dev, pinned.st_ino):
            rel = self.rel(directory)
            raise ConflictError(
                f"{rel}: this folder was moved or replaced during the restore; left as found",
                [self.rel(full)],
            )


def _lstat(fs: Pinned, full: str) -> os.stat_result | None:
    """What the name `full` is now (not following a link); None when it or its folder is gone."""
    try:
        fd, name = fs.at(full)
        return os.stat(name, dir_fd=fd, follow_symlinks=False)
    except (FileNotFoundError, NotADirectoryError):
        return None


def _exists(fs: Pinned, full: str) -> bool:
    return _lstat(fs, full) is not None


def _rename(fs: Pinned, src: str, dst: str) -> None:
    sfd, sname = fs.at(src)
    dfd, dname = fs.at(dst)
    os.rename(sname, dname, src_dir_fd=sfd, dst_dir_fd=dfd)


def _unlink(fs: Pinned, full: str) -> None:
    fd, name = fs.at(full)
    os.unlink(name, dir_fd=fd)


def _fsync_dir(fs: Pinned, directory: str) -> None:
    try:
        fsync_file(fs.folder(directory))
    except (OSError, RewindError):
        pass


def _write_tmp(
    fs: Pinned, tmp: str, data: bytes, mode: int | None, sync: bool = True, index: int = 0
) -> None:
    """Write a temporary file; `sync=False` leaves the flush to `flush_files` (one for many)."""
    dir_fd, name = fs.at(tmp)
    fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600, dir_fd=dir_fd)
    try:
        view = memoryview(data)
        half = len(view) // 2
        view = view[os.write(fd, view[:half]) :] if half else view
        _fault("tmp-half-written", index)  # crash tests: a temporary file cut short
        while view:
            view = view[os.write(fd, view) :]
        os.fchmod(fd, mode if mode is not None else 0o644)
        if sync:
            fsync_file(fd)
    finally:
        os.close(fd)


def _missing_dirs(directory: str) -> list[str]:
    """The folders that do not exist yet on the way to `directory`, outermost first."""
    missing = []
    probe = directory
    while not os.path.isdir(probe):
        missing.append(probe)
        probe = os.path.dirname(probe)
    return list(reversed(missing))


def _makedirs(fs: Pinned, directory: str, created: list[str]) -> None:
    fs.folder(directory, created)


# Link-based moves: os.link never replaces an existing name, so a file that appears at the
# destination in the meantime (someone's work) is never overwritten. Filesystems without hard links
# fall back to a rename checked just before (a narrower window, not none).
_NO_LINK = {errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EXDEV, errno.EMLINK, errno.ENOSYS}


def _place(fs: Pinned, src: str, dst: str) -> bool:
    """Move `src` to `dst` unless `dst` exists. False (and `src` left where it is) when it does."""
    sfd, sname = fs.at(src)
    dfd, dname = fs.at(dst)
    moved = rename_noreplace(sname, dname, src_dir_fd=sfd, dst_dir_fd=dfd)
    if moved is not None:
        return moved
    try:
        os.link(sname, dname, src_dir_fd=sfd, dst_dir_fd=dfd, follow_symlinks=False)
    except FileExistsError:
        return False
    except OSError as exc:
        if exc.errno not in _NO_LINK:
            raise
        if _exists(fs, dst):
            return False
        os.rename(sname, dname, src_dir_fd=sfd, dst_dir_fd=dfd)  # no hard links here
        return True
    os.unlink(sname, dir_fd=sfd)
    return True


def _read(fs: Pinned, full: str) -> tuple[Version, bytes | None]:
    """What the absolute path `full` holds now, read through its pinned folder without following
    a link: kind `other` for a link, folder or anything else; `absent` when it or its folder is
    gone."""
    try:
        dir_fd, name = fs.at(full)
        fd = os.open(name, _READ_FLAGS, dir_fd=dir_fd)
    except (FileNotFoundError, NotADirectoryError):
        return ABSENT_VERSION, None
    except (OSError, RewindError):
        return Version(OTHER), None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return Version(OTHER), None
        if st.st_size > config.max_file_bytes():
            return too_large(st), None
        chunks = []
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
        data = b"".join(chunks)
    except OSError:
        return Version(OTHER), None
    finally:
        os.close(fd)
    return Version(FILE, digest(data), stat.S_IMODE(st.st_mode), len(data)), data


def _held(fs: Pinned, full: str) -> Version:
    """What the absolute path `full` holds now; kind `other` for a link, folder or anything else."""
    return _read(fs, full)[0]


def _same_inode(fs: Pinned, a: str, b: str) -> bool:
    sa, sb = _lstat(fs, a), _lstat(fs, b)
    if sa is None or sb is None:
        return False
    return (sa.st_dev, sa.st_ino) == (sb.st_dev, sb.st_ino)


def _sig(fs: Pinned, full: str) -> list[int] | None:
    try:
        st = _lstat(fs, full)
    except (OSError, RewindError):
        return None
    if st is None:
        return None
    return [st.st_size, st.st_mtime_ns, st.st_ino]


def _op_target(op: dict[str, Any]) -> Version:
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


def _drop_tmp(fs: Pinned, op: dict[str, Any], target: Version, notes: list[str]) -> None:
    """Delete a swap's temporary file. Journals since the aside name was added: it holds only what
    rewind-ls wrote (perhaps cut short by a crash), so it goes. Older journals used the temporary
    name as the aside too: deleted only when it holds what rewind-ls wrote."""
    tmp = op["tmp"]
    if "aside" not in op:
        _drop_if_ours(fs, tmp, target, notes)
        return
    try:
        _unlink(fs, tmp)
    except FileNotFoundError:
        pass


def _drop_if_ours(fs: Pinned, full: str, target: Version, notes: list[str]) -> None:
    """Delete a temporary/aside file only when it holds what rewind-ls wrote (kept in the store)."""
    if not _exists(fs, full):
        return
    if target.kind == FILE and _held(fs, full) == target:
        _unlink(fs, full)
    else:
        notes.append(f"kept {full}: it holds content rewind-ls did not write")


def _drop_backup(fs: Pinned, store: Store | None, backup: str, notes: list[str]) -> None:
    """A backup no longer needed on disk: deleted only when its content is in the store."""
    if not _exists(fs, backup):
        return
    held = _held(fs, backup)
    if held.kind == FILE and held.hash and store is not None and store.has_blob(held.hash):
        _unlink(fs, backup)
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
    if _exists(fs, aside):  # a file kept above: never renamed over
        aside = f"{aside}.{os.urandom(4).hex()}"
    index = next(_UNDOS)
    _rename(fs, full, aside)
    _fault("undo-aside", index)  # crash tests: a recovery killed with the path moved aside
    if _held(fs, aside) != target:
        if not _place(fs, aside, full):
            notes.append(f"kept {aside}: the content found at {path}")
        if backup is not None:
            _drop_backup(fs, store, backup, notes)
        return Undone(path, "left", notes)
    if backup is not None and not _place(fs, backup, full):
        # Something appeared at the path in the gap: it wins; the old content stays at the backup.
        notes.append(f"kept {backup}: {path} was created again meanwhile")
        _drop_if_ours(fs, aside, target, notes)
        return Undone(path, "left", notes)
    _fault("undo-put-back", index)  # ... killed with the old content back, the aside file not gone
    _drop_if_ours(fs, aside, target, notes)
    return Undone(path, "restored", notes)


def _resume_take_back(
    fs: Pinned, op: dict[str, Any], target: Version, notes: list[str]
) -> Undone | None:
    """A recovery killed inside `_take_back` left what the path held at the aside name. With the
    path empty: what rewind-ls wrote is finished off (the old content put back), anything else is
    put back where it was. With the path filled again: the aside file is deleted if it holds what
    rewind-ls wrote, else kept and named. None: carry on with `undo_swap`'s other cases."""
    full, backup, path, aside = op["full"], op["backup"], op["path"], op.get("aside")
    if not aside or not _exists(fs, aside):
        return None
    if _exists(fs, full):
        _drop_if_ours(fs, aside, target, notes)
        return None
    if _held(fs, aside) != target:
        if not _place(fs, aside, full):
            notes.append(f"kept {aside}: the content found at {path}")
        return None
    if _exists(fs, backup):
        if not _place(fs, backup, full):
            return None  # created again meanwhile: the cases below keep both
    elif not op.get("expected_absent"):
        return None
    _unlink(fs, aside)
    return Undone(path, "restored", notes)


def undo_swap(fs: Pinned, store: Store | None, op: dict[str, Any]) -> Undone:
    """Put one path back as it was before a swap, inferring from the files how far the swap got:
    live (a failed restore) or after a crash (recovery, even a recovery killed midway: see
    `_resume_take_back`). Never overwrites content rewind-ls did not write."""
    full, tmp, backup, path = op["full"], op["tmp"], op["backup"], op["path"]
    target = _op_target(op)
    notes: list[str] = []
    resumed = _resume_take_back(fs, op, target, notes)
    if resumed is not None:
        return resumed
    if _exists(fs, tmp):
        if _exists(fs, full) or not _exists(fs, backup):
            _drop_tmp(fs, op, target, notes)
        elif _place(fs, backup, full):
            # Killed between moving the old file aside and moving the new one in.
            _drop_tmp(fs, op, target, notes)
            return Undone(path, "restored", notes)
    if not _exists(fs, backup):
        if op.get("expected_absent") and target.kind == FILE and _exists(fs, full):
            return _take_back(fs, store, op, target, None)  # a file this restore created
        return Undone(path, "untouched", notes)
    if _exists(fs, full):
        if _same_inode(fs, full, backup):
            _unlink(fs, backup)  # a recovery killed after putting the backup back
            return Undone(path, "restored", notes)
        if target.kind != FILE:
            _drop_backup(fs, store, backup, notes)
            return Undone(path, "left", notes)  # created again since the restore deleted it
        undone = _take_back(fs, store, op, target, backup)
        undone.notes[:0] = notes
        return undone
    if target.kind == FILE:
        _drop_backup(fs, store, backup, notes)
        return Undone(path, "left", notes)  # the restored file was deleted since
    if _place(fs, backup, full):
        return Undone(path, "restored", notes)
    return Undone(path, "left", [*notes, f"kept {backup}"])


def _undo_op(fs: Pinned, store: Store | None, op: dict[str, Any]) -> Undone:
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
        undone = _undo_op(fs, store, op)
        if undone.result == "left" or undone.notes:
            problems.append(undone)
    _remove_dirs(fs, created_dirs)
    return problems


def _problem_text(problems: Sequence[Undone]) -> str:
    return "; ".join(
        f"{u.path}: "
        + ("changed meanwhile, left as found" if u.result == "left" else "put back")
        + (f" ({', '.join(u.notes)})" if u.notes else "")
        for u in problems
    )


def apply_to_disk(
    store: Store, plan: Plan, force: bool = False, skip_conflicts: bool = False
) -> Outcome:
    items = select(plan, force, skip_conflicts)
    if not items:
        skipped = len(plan.conflicts)
        note = f" ({skipped} conflicting path(s) left alone)" if skipped else ""
        return Outcome(
            "nothing-to-do", f"nothing to restore: every path already matches{note}", plan
        )
    with restore_lock(store):
        return _swap_all(store, plan, items)


def _swap_all(store: Store, plan: Plan, items: list[PathPlan]) -> Outcome:
    point = open_restore_point(store, plan, items, {"ops": [], "applier": "disk"})
    try:
        reached, ops = swap(store, point, items)
    except BaseException:
        store.set_turn_state(point, ROLLED_BACK)
        raise
    finish_restore_point(store, point, reached)
    _pause("before-discard", 1)
    kept = discard_backups(ops)
    chosen = {p.path for p in items}
    remove_emptied_dirs(ops, keep={p.path for p in plan.conflicts if p.path not in chosen})
    left = [p.path for p in plan.conflicts if p.path not in chosen]
    note = f"; {len(left)} conflicting path(s) left alone: {', '.join(left)}" if left else ""
    if kept:
        note += (
            "; kept the old content of these files beside them (written to during the restore,"
            f" or too large for the store): {', '.join(kept)}"
        )
    return Outcome("applied", f"restored {len(items)} file(s){note}", plan, items, point)


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
                _pause("before-aside", index)
                _swap_one(fs, op, want, pp.target, index)
                _fault("after-swap", index)
            for d in {os.path.dirname(op["full"]) for op in ops}:
                _fsync_dir(fs, d)
        except BaseException as exc:
            _fail(exc, rollback(fs, ops, created_dirs, store), point)
            raise
        reached: Reached = {}
        for op, pp in zip(ops, items, strict=True):
            try:
                st = _lstat(fs, op["full"]) if pp.target.kind == FILE else None
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
    for pp in items:
        full = safe_target(store.root, pp.path)
        tmp, backup, aside = _names(full)
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
            }
        )
        if pp.target.kind == FILE:
            planned_dirs.update(dict.fromkeys(_missing_dirs(os.path.dirname(full))))
    update_journal(store, point, ops=ops, created_dirs=list(planned_dirs))
    return ops


# Up to this many files, each temporary file is fsynced; beyond, one syncfs flushes them all.
_SYNC_EACH_MAX = 16


def _write_all(
    fs: Pinned, ops: list[dict[str, Any]], items: Sequence[PathPlan], created_dirs: list[str]
) -> None:
    """Every new content in its temporary file, durable before any file is moved."""
    sync_each = len(items) <= _SYNC_EACH_MAX or not can_flush_many()
    for index, (op, pp) in enumerate(zip(ops, items, strict=True), 1):
        if pp.target.kind == FILE:
            assert pp.target_data is not None
            _makedirs(fs, os.path.dirname(op["full"]), created_dirs)
            _write_tmp(fs, op["tmp"], pp.target_data, pp.target.mode, sync_each, index)
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
    held = parallel_map(lambda op: _held(fs, op["full"]), ops)
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
        extra = f"; {_problem_text(problems)}" if problems else ""
        raise ConflictError(f"{exc}{extra}", [*exc.paths, *(u.path for u in lost)]) from exc
    if problems:
        raise RewindError(
            f"restore failed ({exc}); {_problem_text(problems)}; the content before the "
            f"restore is in restore point {point}"
        ) from exc
    if isinstance(exc, OSError) and not isinstance(exc, RewindError):
        raise RewindError(
            f"{getattr(exc, 'filename', '') or 'restore'}: {exc.strerror or exc}; nothing changed"
        ) from exc


def _swap_one(
    fs: Pinned, op: dict[str, Any], expected: Version, target: Version, index: int = 0
) -> None:
    """Swap one path, closing the window after the last check: the old file is renamed aside
    first, then what it held at that instant is compared with what the plan expected (a write that
    landed after the check is caught here and put back), and the new file is linked in only if
    nothing appeared at the path meanwhile."""
    full, tmp, backup, path = op["full"], op["tmp"], op["backup"], op["path"]
    fs.check(full)
    if _exists(fs, full):
        _rename(fs, full, backup)
        if _held(fs, backup) != expected:
            where = "" if _place(fs, backup, full) else f"; what it held is kept at {backup}"
            raise ConflictError(
                f"{path}: changed at the moment of the swap; left as found{where}", [path]
            )
        op["backup_sig"] = _sig(fs, backup)
        op["keep_backup"] = expected.kind != FILE  # too large to be in the store: keep on disk
    elif expected.kind != ABSENT:
        raise ConflictError(f"{path}: deleted at the moment of the swap; left as found", [path])
    _pause("before-link", index)
    if target.kind == FILE:
        fs.check(full)
    if target.kind == FILE and not _place(fs, tmp, full):
        raise ConflictError(f"{path}: created at the moment of the swap; left as found", [path])


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
    sig = _sig(fs, backup)
    if sig is None:
        return None
    if op.get("keep_backup") or sig != op.get("backup_sig", sig):
        return backup
    try:
        _unlink(fs, backup)
    except (FileNotFoundError, RewindError):
        pass
    return None


def recover(store: Store, wait: bool = False, own_live: bool = False) -> list[str]:
    """Finish or roll back restores that a killed process left pending, before anything else is
    recorded. Returns one line per restore handled, naming the paths left alone.

    Rolling back is a compare-and-swap like every restore: a path is put back only while it holds
    what the interrupted restore wrote; a path whose content moved on since the crash (the agent or
    the person kept working) is left as found and reported. The roll back is itself recorded as a
    restore point first, so `rewind-ls undo` brings back the state it found. `wait`: wait for a live
    restore to finish instead of leaving its point alone (the agent's hook, which must not record a
    half-swapped workspace). `own_live`: a restore journalled by this process is its own restore in
    flight (a language server settling before it records), not one a dead process left."""
    _discard_leftover_backups(store)
    if not store.turns_in_state(REWIND_SESSION, PENDING):
        return []
    handled: list[str] = []
    with restore_lock(store, blocking=wait) as mine:
        if not mine:
            return []  # a live restore holds the lock: it is not abandoned
        for point, info in store.turns_in_state(REWIND_SESSION, PENDING):
            journal = json.loads(info) if info else {}
            if _owner_alive(journal, own_live):
                continue  # an editor restore its language server is still carrying out
            if journal.get("applier") == "editor" and journal.get("editApplied"):
                # The editor applied the text part, then the server died writing its own part:
                # rolling back would leave the restore half done, so finish it instead.
                left = _roll_forward(store, point, journal)
                note = (
                    f"; left as found (changed since the crash): {', '.join(left)}" if left else ""
                )
                handled.append(f"restore {point}: finished (the editor had applied its part){note}")
            elif journal.get("applier") == "recovery":
                # A recovery killed midway: the interrupted restore it was rolling back is still
                # pending and is handled again (its files say how far the recovery got).
                store.set_turn_state(point, ROLLED_BACK)
            else:
                handled.append(_recover_disk(store, point, journal))
    return handled


def settle(store: Store) -> list[str]:
    """`recover` for a long-running process (the language server) before it records anything: a
    restore another process left pending is finished or rolled back first, so a half-swapped
    workspace is never recorded as changes; its own restore in flight is left alone. Costs one
    query when nothing is pending."""
    if not store.turns_in_state(REWIND_SESSION, PENDING):
        return []
    return recover(store, wait=True, own_live=True)


def _owner_alive(journal: dict[str, Any], own_live: bool = False) -> bool:
    pid = journal.get("pid")
    if not isinstance(pid, int) or pid <= 0:
        return False
    if pid == os.getpid():
        return own_live
    return process_alive(pid)


def _foresee(
    fs: Pinned, op: dict[str, Any]
) -> tuple[Version, bytes | None, Version, bytes | None] | None:
    """(content at the path now, its bytes, content the roll back puts there, its bytes) for a path
    the roll back of `op` would change, else None. Only a forecast for the restore point: each
    move is checked again when it is made."""
    full, tmp, backup = op["full"], op["tmp"], op["backup"]
    target = _op_target(op)
    aside = op.get("aside")
    if aside and not _exists(fs, full) and _exists(fs, aside):
        full = aside  # a recovery killed with the path moved aside: it holds the path's content
    try:
        old, old_data = _read(fs, backup) if _exists(fs, backup) else (ABSENT_VERSION, None)
        now, now_data = _read(fs, full)
    except (RewindError, OSError):
        return None
    if now.kind == OTHER:
        return None
    if _exists(fs, backup):
        ours = now == target or (now.kind == ABSENT and (target.kind == ABSENT or _exists(fs, tmp)))
    else:
        ours = bool(op.get("expected_absent")) and target.kind == FILE and now == target
    if not ours or old.kind not in (FILE, ABSENT) or now == old:
        return None
    return now, now_data, old, old_data


_Forecast = dict[str, tuple[Version, bytes | None, Version, bytes | None]]


def _open_recovery(store: Store, point: str, forecast: _Forecast) -> str | None:
    """A restore point for the roll back of `point` (so `rewind-ls undo` brings back what the
    roll back found), when it changes any path."""
    if not forecast:
        return None
    turn = store.turn(point)
    assert turn is not None
    plan = Plan(RestoreMode.RECOVER, turn, f"recovery of an interrupted restore ({turn.prompt})")
    items = []
    for path, (now, now_data, old, old_data) in forecast.items():
        pp = PathPlan(path, now, now_data)
        pp.set_target(old, old_data)
        items.append(pp)
    return open_restore_point(
        store, plan, items, {"applier": "recovery", "recovers": point, "ops": []}
    )


def _remove_dirs(fs: Pinned, dirs: Sequence[str]) -> None:
    """Remove the folders a restore created, deepest first, where they are empty."""
    for d in sorted(dirs, key=len, reverse=True):
        try:
            fd, name = fs.at(d)
            os.rmdir(name, dir_fd=fd)
        except (OSError, RewindError):
            pass


def _checked_ops(root: str, journal: dict[str, Any]) -> tuple[list[dict[str, Any]], list[str]]:
    """The journal's entries whose names are where a restore of this workspace puts them, and
    the paths of the others. A journal is a file in the store: one edited or damaged could name
    any file on the machine, so a recovery acts only on entries that a restore of `root` would
    have written (the path workspace-relative and safe, `full` that path under the root, every
    temporary, backup and aside name a dot-name beside it)."""
    root = os.path.realpath(root)
    good: list[dict[str, Any]] = []
    bad: list[str] = []
    ops = journal.get("ops", [])
    for op in ops if isinstance(ops, list) else []:
        try:
            ok = _op_ok(root, op)
        except (TypeError, KeyError, AttributeError, RewindError):
            ok = False
        if ok:
            good.append(op)
        else:
            bad.append(str(op.get("path", "?")) if isinstance(op, dict) else "?")
    return good, bad


def _op_ok(root: str, op: dict[str, Any]) -> bool:
    path = op["path"]
    check_relative(path)
    full = os.path.join(root, *path.split("/"))
    if op["full"] != full:
        return False
    directory = os.path.dirname(full)
    for key in ("tmp", "backup", "aside"):
        name = op.get(key)
        if name is None and key == "aside":
            continue
        if not isinstance(name, str) or os.path.dirname(name) != directory:
            return False
        base = os.path.basename(name)
        if not base.startswith(".") or ".rewind-" not in base:
            return False
    return True


def _refused_text(refused: Sequence[str]) -> str:
    return (
        f"; refused {len(refused)} journal entr(ies) naming files outside the workspace or "
        f"not a restore's own: {', '.join(refused)}"
        if refused
        else ""
    )


def _recover_disk(store: Store, point: str, journal: dict[str, Any]) -> str:
    with Pinned(store.root) as fs:
        return _recover_pinned(fs, store, point, journal)


def _recover_pinned(fs: Pinned, store: Store, point: str, journal: dict[str, Any]) -> str:
    ops, refused = _checked_ops(store.root, journal)
    forecast = {op["path"]: f for op in ops if (f := _foresee(fs, op)) is not None}
    recovery = _open_recovery(store, point, forecast)
    restored: Reached = {}
    left: list[str] = []
    notes: list[str] = []
    for op in reversed(ops):
        undone = _undo_op(fs, store, op)
        notes.extend(undone.notes)
        if undone.result == "restored":
            seen = forecast.get(op["path"])
            version = seen[2] if seen is not None else _held(fs, op["full"])
            try:
                st = _lstat(fs, op["full"])
            except (OSError, RewindError):
                st = None
            restored[op["path"]] = (version, st)
        elif undone.result == "left":
            left.append(op["path"])
    _remove_dirs(fs, journal.get("created_dirs", []))
    if recovery is not None:
        missed = [p for p in forecast if p not in restored]
        finish_restore_point(
            store, recovery, {p: r for p, r in restored.items() if p in forecast}, missed
        )
    with store.transaction():
        # Paths put back hold what rewind-ls knew before the restore again.
        for path, (version, st) in restored.items():
            if path not in forecast:
                store.set_known(path, version, st)
        store.set_turn_state(point, ROLLED_BACK)
    line = f"restore {point}: put back {len(restored)} path(s)"
    if left:
        line += f"; left alone, changed since the interruption: {', '.join(left)}"
    if notes:
        line += f"; {'; '.join(notes)}"
    line += _refused_text(refused)
    if recovery is not None:
        line += " (undo: rewind-ls undo)"
    return line


def _roll_forward(store: Store, point: str, journal: dict[str, Any]) -> list[str]:
    with Pinned(store.root) as fs:
        return _roll_forward_pinned(fs, store, point, journal)


def _roll_forward_pinned(
    fs: Pinned, store: Store, point: str, journal: dict[str, Any]
) -> list[str]:
    """Finish the file writes of an editor restore whose edit the client had applied. A compare-
    and-swap like every restore: a path is written only while it still holds what it held when the
    restore began (its `before` in the restore point); a path that already holds the target is
    done; a path that moved on since the crash is left as found and named. Every target content
    is in the store (the restore point holds it), so no temporary file is trusted as is. Returns
    the paths left alone."""
    targets = {row.path: row for row in store.changes(point)}
    failed = set(journal.get("failed", []))
    left: list[str] = []
    reached: Reached = {}
    ops = _server_ops(store, journal, failed)
    for op in ops:
        row = targets.get(op["path"])
        if row is None:
            continue
        target = row.after or ABSENT_VERSION
        before = row.before
        try:
            if _finish_one(fs, store, op, before, target):
                st = _lstat(fs, op["full"]) if target.kind == FILE else None
                reached[op["path"]] = (target, st)
            else:
                failed.add(op["path"])
                left.append(op["path"])
        except (OSError, RewindError):
            failed.add(op["path"])
    for path, row in targets.items():
        if path not in reached and path not in failed:
            # Carried by the edit the client applied.
            reached[path] = (row.after or ABSENT_VERSION, None)
    finish_restore_point(store, point, reached, sorted(failed))
    discard_backups(ops, fs)
    remove_emptied_for(
        store.root, [path for path, (version, _) in reached.items() if version.kind == ABSENT]
    )
    return left


def _server_ops(store: Store, journal: dict[str, Any], failed: set[str]) -> list[dict[str, Any]]:
    """The journal's ops, plus one for each path the server was to write that has none yet (the
    server died before journaling it); a path that is no longer a safe target goes to `failed`,
    as does an entry naming a file a restore of this workspace would not write."""
    ops, refused = _checked_ops(store.root, journal)
    failed.update(refused)
    have = {op["path"] for op in ops}
    for path in journal.get("serverPaths", []):
        if path not in have:
            try:
                full = safe_target(store.root, path)
            except RewindError:
                failed.add(path)
                continue
            tmp, backup, aside = _names(full)
            ops.append({"path": path, "full": full, "tmp": tmp, "backup": backup, "aside": aside})
            have.add(path)
    return ops


def _finish_one(
    fs: Pinned, store: Store, op: dict[str, Any], before: Version, target: Version
) -> bool:
    """Bring one server-written path of an interrupted editor restore to `target`, only from the
    content it held when the restore began. False when it holds something else (left alone)."""
    full, tmp, backup = op["full"], op["tmp"], op["backup"]
    held = _held(fs, full)
    if held == target:
        _drop_tmp(fs, op, target, [])
        return True
    midway = not _exists(fs, full) and _exists(fs, backup) and _held(fs, backup) == before
    if held != before and not midway:
        return False  # the agent or the person wrote here after the crash: theirs wins
    if target.kind == FILE:
        assert target.hash is not None
        _makedirs(fs, os.path.dirname(full), [])
        if _exists(fs, tmp):
            _drop_tmp(fs, op, target, [])
        if _exists(fs, tmp):
            return False  # a file we did not write sits at our temporary name: keep it
        _write_tmp(fs, tmp, store.get_blob(target.hash), target.mode)
    if midway:
        return target.kind != FILE or _place(fs, tmp, full)
    try:
        _swap_one(fs, op, before, target)
    except ConflictError:
        _drop_tmp(fs, op, target, [])
        return False
    _fsync_dir(fs, os.path.dirname(full))
    return True


def current_matches(root: str, path: str, version: Version) -> bool:
    """Whether `path` holds `version` now (content and executable bit)."""
    return read_current(root, path)[0] == version


def _discard_leftover_backups(store: Store) -> None:
    """A process killed after marking its restore applied may leave backup files behind: deleted
    when their content is in the store, kept otherwise."""
    journals = [json.loads(info) if info else {} for info in store.recent_restore_journals(5)]
    if not any(j.get("ops") for j in journals):
        return
    with Pinned(store.root) as fs:
        for journal in journals:
            ops = _checked_ops(store.root, journal)[0]
            left_behind = False
            for op in ops:
                try:
                    if _exists(fs, op["backup"]):
                        left_behind = True
                        _drop_backup(fs, store, op["backup"], [])
                except (OSError, RewindError):
                    pass
            if left_behind:
                # Killed before its last step too: the folders its deletions emptied go now.
                remove_emptied_dirs(ops)
