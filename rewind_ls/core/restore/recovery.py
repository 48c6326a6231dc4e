"""Recovery: restores a killed process left `pending`, finished or rolled back before anything else
is recorded (every CLI command and the server at start, the agent's hook). An editor restore whose
text part the client had applied is finished (rolled forward); any other is rolled back, itself
recorded as a restore point first so `rewind-ls undo` brings back what the recovery found."""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from typing import Any

from rewind_ls.core.capture.recorder import REWIND_SESSION, read_current
from rewind_ls.core.errors import ConflictError, RewindError
from rewind_ls.core.fs.disk_sync import process_alive
from rewind_ls.core.fs.paths import check_relative, safe_target
from rewind_ls.core.model import ABSENT_VERSION, RestoreMode
from rewind_ls.core.restore.pinned import Pinned, swap_names
from rewind_ls.core.restore.plan import PathPlan, Plan
from rewind_ls.core.restore.point import (
    PENDING,
    ROLLED_BACK,
    finish_restore_point,
    open_restore_point,
)
from rewind_ls.core.restore.rollback import (
    drop_backup,
    drop_tmp,
    op_target,
    remove_dirs,
    undo_op,
)
from rewind_ls.core.restore.swap import (
    BACKUPS_GONE,
    Reached,
    discard_backups,
    mark_backups_gone,
    remove_emptied_dirs,
    remove_emptied_for,
    restore_lock,
    swap_one,
)
from rewind_ls.core.store import ABSENT, FILE, OTHER, Store, Version


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
    handled = _discard_leftover_backups(store)
    if not store.turns_in_state(REWIND_SESSION, PENDING):
        return handled
    with restore_lock(store, blocking=wait) as mine:
        if not mine:
            return handled  # a live restore holds the lock: it is not abandoned
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
    target = op_target(op)
    aside = op.get("aside")
    if aside and not fs.exists(full) and fs.exists(aside):
        full = aside  # a recovery killed with the path moved aside: it holds the path's content
    try:
        old, old_data = fs.read(backup) if fs.exists(backup) else (ABSENT_VERSION, None)
        now, now_data = fs.read(full)
    except (RewindError, OSError):
        return None
    if now.kind == OTHER:
        return None
    if fs.exists(backup):
        ours = now == target or (now.kind == ABSENT and (target.kind == ABSENT or fs.exists(tmp)))
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
        undone = undo_op(fs, store, op)
        notes.extend(undone.notes)
        if undone.result == "restored":
            seen = forecast.get(op["path"])
            version = seen[2] if seen is not None else fs.held(op["full"])
            try:
                st = fs.lstat(op["full"])
            except (OSError, RewindError):
                st = None
            restored[op["path"]] = (version, st)
        elif undone.result == "left":
            left.append(op["path"])
    remove_dirs(fs, journal.get("created_dirs", []))
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
                st = fs.lstat(op["full"]) if target.kind == FILE else None
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
    kept = discard_backups(ops, fs)
    remove_emptied_for(
        store.root, [path for path, (version, _) in reached.items() if version.kind == ABSENT]
    )
    if ops and not kept:
        mark_backups_gone(store, point)  # last: see swap.BACKUPS_GONE
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
            tmp, backup, aside = swap_names(full)
            ops.append({"path": path, "full": full, "tmp": tmp, "backup": backup, "aside": aside})
            have.add(path)
    return ops


def _finish_one(
    fs: Pinned, store: Store, op: dict[str, Any], before: Version, target: Version
) -> bool:
    """Bring one server-written path of an interrupted editor restore to `target`, only from the
    content it held when the restore began. False when it holds something else (left alone)."""
    full, tmp, backup = op["full"], op["tmp"], op["backup"]
    held = fs.held(full)
    if held == target:
        drop_tmp(fs, op, target, [])
        return True
    midway = not fs.exists(full) and fs.exists(backup) and fs.held(backup) == before
    if held != before and not midway:
        return False  # the agent or the person wrote here after the crash: theirs wins
    if target.kind == FILE:
        assert target.hash is not None
        fs.makedirs(os.path.dirname(full), [])
        if fs.exists(tmp):
            drop_tmp(fs, op, target, [])
        if fs.exists(tmp):
            return False  # a file we did not write sits at our temporary name: keep it
        fs.write_tmp(tmp, store.get_blob(target.hash), target.mode)
    if midway:
        return target.kind != FILE or fs.place(tmp, full)
    try:
        swap_one(fs, op, before, target)
    except ConflictError:
        drop_tmp(fs, op, target, [])
        return False
    fs.fsync_dir(os.path.dirname(full))
    return True


def current_matches(root: str, path: str, version: Version) -> bool:
    """Whether `path` holds `version` now (content and executable bit)."""
    return read_current(root, path)[0] == version


def _discard_leftover_backups(store: Store) -> list[str]:
    """A process killed after marking its restore applied may leave its last steps undone:
    backup files behind (deleted when their content is in the store, kept otherwise) and the
    folders its deletions emptied (removed: a kill between its two steps leaves no backup to
    say so). Then the journal is marked, so the next command does not look again. Returns a
    line per restore whose backups were found in the project (doctor and every command say it)."""
    points = [(p, json.loads(info) if info else {}) for p, info in store.recent_restore_journals(5)]
    points = [(p, j) for p, j in points if not j.get(BACKUPS_GONE)]
    if not any(j.get("ops") for _, j in points):
        return []
    with restore_lock(store, blocking=False) as mine:
        if not mine:
            return []  # a live restore is taking its own last steps
        return _finish_leftovers(store, points)


def finish_leftovers(store: Store) -> list[str]:
    """`_discard_leftover_backups` for a caller that holds the restore lock already (a restore
    about to start: a killed restore whose last steps another command could not take, its lock
    held by the dying process at that moment, is finished before anything else is swapped)."""
    points = [(p, json.loads(info) if info else {}) for p, info in store.recent_restore_journals(5)]
    points = [(p, j) for p, j in points if not j.get(BACKUPS_GONE) and j.get("ops")]
    return _finish_leftovers(store, points) if points else []


def _finish_leftovers(store: Store, points: list[tuple[str, dict[str, Any]]]) -> list[str]:
    lines: list[str] = []
    with Pinned(store.root) as fs:
        for point, journal in points:
            ops = _checked_ops(store.root, journal)[0]
            kept: list[str] = []
            found = 0
            for op in ops:
                try:
                    if fs.exists(op["backup"]):
                        found += 1
                        drop_backup(fs, store, op["backup"], kept)
                except (OSError, RewindError) as e:
                    kept.append(f"{op['backup']}: {e}")
            remove_emptied_dirs(ops)
            if ops and not kept:
                mark_backups_gone(store, point)
            if found:
                note = f"; {'; '.join(kept)}" if kept else ""
                lines.append(
                    f"restore {point}: finished (applied; {found - len(kept)} backup file(s) it "
                    f"left in the project removed){note}"
                )
    return lines
