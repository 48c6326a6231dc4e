"""Applying a plan to disk, all or nothing.

Steps: record a restore point (content now + content to write), write every new content to a temporary
file beside its target, check each target still holds what the plan expected (compare-and-swap), move
each old file aside to a backup name and the new one into place, then mark the restore point applied
and drop the backups. Any failure rolls back what was swapped. A process killed midway leaves a
`pending` restore point whose journal names every temporary and backup file: `recover()` (run by every
CLI command and the server at start) puts the workspace back as it was before the restore.
"""

from __future__ import annotations

import fcntl
import json
import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from rewind_ls.core.capture import REWIND_SESSION, read_current
from rewind_ls.core.errors import ConflictError, RewindError
from rewind_ls.core.paths import safe_target
from rewind_ls.core.plan import REVERT, PathPlan, Plan
from rewind_ls.core.restore_point import (
    PENDING,
    ROLLED_BACK,
    finish_restore_point,
    open_restore_point,
    update_journal,
)
from rewind_ls.core.store import ABSENT, FILE, Store, Version

# Test hook for crash-safety tests: `REWIND_LS_FAULT=after-swap:2` kills the process (os._exit) just
# after the second file is swapped into place; `before-server-writes:1` kills the language server
# after the client applied a restore's edit, before the server writes the files an edit cannot
# carry (see also the store's `before-commit:N` / `after-commit:N`). Never set in normal use.
_FAULT = os.environ.get("REWIND_LS_FAULT", "")


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


def _fault(stage: str, index: int) -> None:
    if _FAULT and f"{stage}:{index}" == _FAULT:
        os._exit(137)


def select(plan: Plan, force: bool, skip_conflicts: bool) -> list[PathPlan]:
    """The paths to write. Raises ConflictError (nothing written) when a conflict is not resolved by
    the caller's choice: `force` overwrites paths changed behind rewind-ls' back, `skip_conflicts`
    leaves every conflicting path alone. A revert whose merge does not apply writes nothing at all."""
    conflicts = plan.conflicts
    merge = [p for p in conflicts if p.conflict is not None and p.conflict.kind == "merge"]
    if plan.mode == REVERT and merge:
        raise ConflictError(
            "revert refused, nothing written: "
            + "; ".join(p.conflict.message for p in merge if p.conflict),
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
            fcntl.flock(fd, fcntl.LOCK_EX | (0 if blocking else fcntl.LOCK_NB))
        except BlockingIOError:
            yield False
            return
        yield True
    finally:
        os.close(fd)


def _names(full: str) -> tuple[str, str]:
    directory, name = os.path.split(full)
    tag = os.urandom(4).hex()
    return (
        os.path.join(directory, f".{name}.rewind-{tag}.tmp"),
        os.path.join(directory, f".{name}.rewind-{tag}.bak"),
    )


def _fsync_dir(directory: str) -> None:
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _write_tmp(tmp: str, data: bytes, mode: int | None) -> None:
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.fsync(fd)
    finally:
        os.close(fd)
    os.chmod(tmp, mode if mode is not None else 0o644)


def _missing_dirs(directory: str) -> list[str]:
    """The folders that do not exist yet on the way to `directory`, outermost first."""
    missing = []
    probe = directory
    while not os.path.isdir(probe):
        missing.append(probe)
        probe = os.path.dirname(probe)
    return list(reversed(missing))


def _makedirs(directory: str, created: list[str]) -> None:
    for d in _missing_dirs(directory):
        os.mkdir(d, 0o755)
        created.append(d)


def rollback(ops: Sequence[dict[str, Any]], created_dirs: Sequence[str] = ()) -> list[str]:
    """Undo swapped files using the journal; returns paths that could not be put back."""
    stuck: list[str] = []
    for op in reversed(ops):
        full, tmp, backup = op["full"], op["tmp"], op["backup"]
        try:
            if os.path.lexists(backup):
                os.replace(backup, full)
            elif op["expected_absent"] and os.path.lexists(full):
                version, _, _ = read_current(os.path.dirname(full), os.path.basename(full))
                if version.hash == op.get("target_hash"):
                    os.unlink(full)
            if os.path.lexists(tmp):
                os.unlink(tmp)
        except OSError:
            stuck.append(op["path"])
    for d in sorted(created_dirs, key=len, reverse=True):
        try:
            os.rmdir(d)
        except OSError:
            pass
    return stuck


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
    discard_backups(ops)
    chosen = {p.path for p in items}
    left = [p.path for p in plan.conflicts if p.path not in chosen]
    note = f"; {len(left)} conflicting path(s) left alone: {', '.join(left)}" if left else ""
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
    root = store.root
    ops: list[dict[str, Any]] = []
    for pp in items:
        full = safe_target(root, pp.path)
        tmp, backup = _names(full)
        ops.append(
            {
                "path": pp.path,
                "full": full,
                "tmp": tmp,
                "backup": backup,
                "expected_absent": pp.current.kind == ABSENT,
                "target_hash": pp.target.hash,
            }
        )
    # The journal names every temporary and backup file, and every folder the restore will create,
    # before any of them exists: a process killed at any later instant leaves nothing unnamed.
    planned_dirs: list[str] = []
    for op, pp in zip(ops, items, strict=True):
        if pp.target.kind == FILE:
            for d in _missing_dirs(os.path.dirname(op["full"])):
                if d not in planned_dirs:
                    planned_dirs.append(d)
    update_journal(store, point, ops=ops, created_dirs=planned_dirs)
    created_dirs: list[str] = []
    try:
        for op, pp in zip(ops, items, strict=True):
            if pp.target.kind == FILE:
                assert pp.target_data is not None
                _makedirs(os.path.dirname(op["full"]), created_dirs)
                _write_tmp(op["tmp"], pp.target_data, pp.target.mode)
        for pp in items:
            now, _, _ = read_current(root, pp.path)
            expected = (disk_expected or {}).get(pp.path, pp.current)
            if not now == expected:
                raise ConflictError(
                    f"{pp.path}: changed while the restore was being prepared; nothing written",
                    [pp.path],
                )
        for index, (op, pp) in enumerate(zip(ops, items, strict=True), 1):
            if os.path.lexists(op["full"]):
                os.rename(op["full"], op["backup"])
            if pp.target.kind == FILE:
                os.rename(op["tmp"], op["full"])
            _fault("after-swap", index)
        for d in {os.path.dirname(op["full"]) for op in ops}:
            _fsync_dir(d)
    except BaseException as exc:
        stuck = rollback(ops, created_dirs)
        if stuck:
            raise RewindError(
                f"restore failed ({exc}) and these paths could not be put back: {', '.join(stuck)}; "
                f"their previous content is in restore point {point}"
            ) from exc
        if isinstance(exc, RewindError):
            raise
        if isinstance(exc, OSError):
            raise RewindError(
                f"{getattr(exc, 'filename', '') or 'restore'}: {exc.strerror or exc}; nothing changed"
            ) from exc
        raise
    reached: Reached = {}
    for op, pp in zip(ops, items, strict=True):
        try:
            st: os.stat_result | None = os.lstat(op["full"]) if pp.target.kind == FILE else None
        except OSError:
            st = None
        reached[pp.path] = (pp.target, st)
    return reached, ops


def discard_backups(ops: Sequence[dict[str, Any]]) -> None:
    for op in ops:
        try:
            os.unlink(op["backup"])
        except FileNotFoundError:
            pass


def recover(store: Store) -> list[str]:
    """Roll back restores that a killed process left pending. Returns the restore point ids handled."""
    rows = store.conn.execute(
        "SELECT id, info FROM turns WHERE session_id = ? AND state = ?", (REWIND_SESSION, PENDING)
    ).fetchall()
    _discard_leftover_backups(store)
    if not rows:
        return []
    handled: list[str] = []
    with restore_lock(store, blocking=False) as mine:
        if not mine:
            return []  # a live restore holds the lock: it is not abandoned
        for point, info in rows:
            journal = json.loads(info) if info else {}
            if journal.get("applier") == "editor" and journal.get("editApplied"):
                # The editor applied the text part, then the server died writing its own part:
                # rolling back would leave the restore half done, so finish it instead.
                _roll_forward(store, point, journal)
            else:
                rollback(journal.get("ops", []), journal.get("created_dirs", []))
                # Paths the interrupted restore had not touched still hold what rewind-ls knew.
                store.set_turn_state(point, ROLLED_BACK)
            handled.append(point)
    return handled


def _roll_forward(store: Store, point: str, journal: dict[str, Any]) -> None:
    """Finish the file writes of an editor restore whose edit the client had applied. Every target
    content is in the store (the restore point holds it), so no temporary file is trusted as is."""
    targets = {row["path"]: row for row in store.changes(point)}
    failed = set(journal.get("failed", []))
    reached: Reached = {}
    ops: list[dict[str, Any]] = list(journal.get("ops", []))
    for path in journal.get("serverPaths", []):
        if path not in {op["path"] for op in ops}:
            try:
                full = safe_target(store.root, path)
            except RewindError:
                failed.add(path)
                continue
            tmp, backup = _names(full)
            ops.append({"path": path, "full": full, "tmp": tmp, "backup": backup})
    for op in ops:
        row = targets.get(op["path"])
        if row is None:
            continue
        full, tmp, backup = op["full"], op["tmp"], op["backup"]
        target = Version(row["after_kind"] or ABSENT, row["after_hash"], row["after_mode"])
        try:
            if target.kind == FILE:
                assert target.hash is not None
                if not current_matches(os.path.dirname(full), os.path.basename(full), target):
                    _makedirs(os.path.dirname(full), [])
                    if os.path.lexists(tmp):
                        os.unlink(tmp)
                    _write_tmp(tmp, store.get_blob(target.hash), target.mode)
                    if os.path.lexists(full) and not os.path.lexists(backup):
                        os.rename(full, backup)
                    os.rename(tmp, full)
                st: os.stat_result | None = os.lstat(full)
            else:
                if os.path.lexists(full) and not os.path.lexists(backup):
                    os.rename(full, backup)
                st = None
            if os.path.lexists(tmp):
                os.unlink(tmp)
            _fsync_dir(os.path.dirname(full))
            reached[op["path"]] = (target, st)
        except (OSError, RewindError):
            failed.add(op["path"])
    for path, row in targets.items():
        if path not in reached and path not in failed:
            # Carried by the edit the client applied.
            reached[path] = (
                Version(row["after_kind"] or ABSENT, row["after_hash"], row["after_mode"]),
                None,
            )
    finish_restore_point(store, point, reached, sorted(failed))
    discard_backups(ops)


def current_matches(root: str, path: str, version: Version) -> bool:
    """Whether `path` holds `version` now (content and executable bit)."""
    return read_current(root, path)[0] == version


def _discard_leftover_backups(store: Store) -> None:
    """A process killed after marking its restore applied may leave backup files behind."""
    rows = store.conn.execute(
        "SELECT info FROM turns WHERE session_id = ? AND state IN ('applied', 'partial')"
        " AND info LIKE '%.bak%' ORDER BY seq DESC LIMIT 5",
        (REWIND_SESSION,),
    ).fetchall()
    for (info,) in rows:
        journal = json.loads(info) if info else {}
        for op in journal.get("ops", []):
            if os.path.lexists(op.get("backup", "")):
                try:
                    os.unlink(op["backup"])
                except OSError:
                    pass
