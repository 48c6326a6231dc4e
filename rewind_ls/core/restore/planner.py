"""The planner of one restore: the request's mode, turn and paths -> its `Plan` (the per-mode
planners of `plan.py`, named by `restore_label`), and, once the person has chosen how conflicts go,
the paths to write (`select`). Every applier (the disk, the editor) writes what `select` chose; a
restore runs it once, before anything happens (`flow.RestoreFlow.start`)."""

from __future__ import annotations

from rewind_ls.core.capture.recorder import REWIND_SESSION
from rewind_ls.core.errors import ConflictError, RewindError
from rewind_ls.core.model import ConflictKind, RestoreMode, Scope, Turn
from rewind_ls.core.restore.hunks import hunk_label, plan_revert_hunks, turn_file
from rewind_ls.core.restore.plan import (
    REVERT,
    REWIND,
    UNDO,
    PathPlan,
    Plan,
    Reader,
    plan_revert,
    plan_rewind,
    plan_undo,
    restrict,
)
from rewind_ls.core.restore.version_plan import find_version, plan_version
from rewind_ls.core.store import Store


def restore_label(mode: str, turn: Turn, scope: str = Scope.CODE) -> str:
    """The name of a rewind or revert (an undo names itself after the restore it undoes)."""
    if turn.session_id == REWIND_SESSION:
        # A restore point is not a turn: going back to it undoes the restore it was taken before
        # (its number is internal and would read like one of the agent's turns).
        return f"undo of: {turn.prompt}"
    if mode == REVERT:
        return f"revert turn {turn.number}"
    return f"rewind to turn {turn.number} ({scope})"


def plan_restore(
    store: Store,
    mode: str,
    turn: Turn | None,
    reader: Reader,
    paths: list[str] | None = None,
    scope: str = Scope.CODE,
    hunks: list[int] | None = None,
    merge: bool = False,
    version: str | None = None,
) -> Plan:
    """The plan of a restore: `turn` is None for an undo; `paths` (workspace-relative) limits it;
    `hunks` (a revert of one path) reverts only those hunks of the turn's change to it; `merge`: a
    revert writes overlapping changes with conflict markers (`plan_revert`); `version` (mode
    version): the hash the one path goes back to (`version_plan`)."""
    if hunks is not None:
        if mode != REVERT or turn is None or paths is None or len(paths) != 1:
            raise RewindError("hunks: only a revert of one turn in one path reverts hunks")
        return plan_hunks(store, turn, reader, {paths[0]: hunks})
    if mode == UNDO:
        return plan_undo(store, reader)
    if mode == RestoreMode.VERSION:
        if paths is None or len(paths) != 1 or version is None:
            raise RewindError("version: one path and one version are needed")
        return plan_version(store, find_version(store, paths[0], version), paths[0], reader)
    if turn is None:
        raise RewindError(f"{mode}: a turn is needed")
    label = restore_label(mode, turn, scope)
    if mode == REWIND:
        return plan_rewind(store, turn, reader, paths, label=label)
    if mode != REVERT:
        raise RewindError(f"unknown restore mode {mode!r} (rewind, revert or undo)")
    plan = plan_revert(store, turn, reader, label=label, markers=merge)
    return restrict(plan, paths) if paths is not None else plan


def plan_hunks(
    store: Store, turn: Turn, reader: Reader, selection: dict[str, list[int] | None]
) -> Plan:
    """A revert of only some hunks of `turn` (per path: hunk indexes, or None for the whole path),
    named after them: "revert turn N, hunk 2 of 3 in PATH"."""
    label = f"revert turn {turn.number}, chosen hunks"
    if len(selection) == 1:
        ((path, indexes),) = selection.items()
        tf = turn_file(store, turn, path) if indexes is not None else None
        if indexes is None:
            label = f"revert turn {turn.number} in {path}"
        elif tf is not None:
            label = hunk_label(turn, path, indexes, len(tf.hunks))
    return plan_revert_hunks(store, turn, reader, selection, label)


def select(plan: Plan, force: bool, skip_conflicts: bool) -> list[PathPlan]:
    """The paths to write. Raises ConflictError (nothing written) when a conflict is not resolved by
    the caller's choice: `force` overwrites paths changed behind rewind-ls' back, `skip_conflicts`
    leaves every conflicting path alone. A revert whose merge does not apply writes nothing at all."""
    conflicts = plan.conflicts
    merge = [
        p for p in conflicts if p.conflict is not None and p.conflict.kind == ConflictKind.MERGE
    ]
    if plan.mode == REVERT and merge:
        number = plan.turn.number
        raise ConflictError(
            "revert refused, nothing written: "
            + "; ".join(p.conflict.message for p in merge if p.conflict),
            [p.path for p in merge],
            f" (`revert {number} --merge` writes it with conflict markers to resolve; "
            f"`rewind {number} --path FILE` rewinds that file instead)",
        )
    blocking = [
        p for p in conflicts if p.conflict is not None and not (force and p.conflict.forcible)
    ]
    if blocking and not skip_conflicts:
        raise ConflictError(
            f"{len(blocking)} conflict(s), nothing written:\n  "
            + "\n  ".join(p.conflict.message for p in blocking if p.conflict),
            [p.path for p in blocking],
            "\n(--force to overwrite, --skip-conflicts to restore the rest)",
        )
    return [
        p
        for p in plan.paths
        if p.will_write and (p.conflict is None or (force and p.conflict.forcible))
    ]
