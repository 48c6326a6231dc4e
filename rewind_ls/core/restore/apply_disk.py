"""Applying a plan to disk, all or nothing (the CLI's applier).

Steps: record a restore point (content now + content to write), then `swap.swap`: write every new
content to a temporary file beside its target, check each target still holds what the plan expected
(compare-and-swap), move each old file aside to a backup name and the new one into place; then mark
the restore point applied and drop the backups. Any failure rolls back what was swapped. A process
killed midway leaves a `pending` restore point whose journal names every temporary and backup file:
`recovery.recover()` (run by every CLI command and the server at start) puts the workspace back as it
was before the restore.
"""

from __future__ import annotations

from collections.abc import Sequence

from rewind_ls.core.fs.faults import fault
from rewind_ls.core.model import RestoreStatus
from rewind_ls.core.restore.plan import PathPlan, Plan
from rewind_ls.core.restore.point import ROLLED_BACK, finish_restore_point, open_restore_point
from rewind_ls.core.restore.recovery import finish_leftovers
from rewind_ls.core.restore.swap import (
    discard_backups,
    mark_backups_gone,
    pause,
    remove_emptied_dirs,
    restore_lock,
    swap,
)
from rewind_ls.core.store import Store


class Outcome:
    """How a restore on disk ended: its status, the line saying so, the restore point written."""

    def __init__(
        self,
        status: RestoreStatus,
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


def apply_to_disk(store: Store, plan: Plan, items: Sequence[PathPlan]) -> Outcome:
    """Write `items` (the paths `planner.select` chose of `plan`) to disk, all or nothing."""
    if not items:
        skipped = len(plan.conflicts)
        note = f" ({skipped} conflicting path(s) left alone)" if skipped else ""
        return Outcome(
            RestoreStatus.NOTHING_TO_DO,
            f"nothing to restore: every path already matches{note}",
            plan,
        )
    with restore_lock(store):
        # A restore killed after it was applied whose backups no command could drop yet (its
        # lock was still held when the next command recovered): finished first, under the lock.
        earlier = finish_leftovers(store)
        outcome = _swap_all(store, plan, items)
    if earlier:
        outcome.message += f"; finished an interrupted {'; '.join(earlier)}"
    return outcome


def _swap_all(store: Store, plan: Plan, items: Sequence[PathPlan]) -> Outcome:
    point = open_restore_point(store, plan, items, {"ops": [], "applier": "disk"})
    try:
        reached, ops = swap(store, point, items)
    except BaseException:
        store.set_turn_state(point, ROLLED_BACK)
        raise
    finish_restore_point(store, point, reached)
    pause("before-discard", 1)
    kept = discard_backups(ops)
    fault("after-discard", 1)  # crash tests: backups gone, emptied folders still there
    chosen = {p.path for p in items}
    remove_emptied_dirs(ops, keep={p.path for p in plan.conflicts if p.path not in chosen})
    if ops and not kept:
        mark_backups_gone(store, point)
    left = [p.path for p in plan.conflicts if p.path not in chosen]
    note = f"; {len(left)} conflicting path(s) left alone: {', '.join(left)}" if left else ""
    if kept:
        note += (
            "; kept the old content of these files beside them (written to during the restore,"
            f" or too large for the store): {', '.join(kept)}"
        )
    return Outcome(
        RestoreStatus.APPLIED, f"restored {len(items)} file(s){note}", plan, items, point
    )
