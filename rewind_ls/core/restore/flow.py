"""One restore, whoever applies it: the CLI writes the plan to disk, the language server sends its
text part to the editor and writes the rest itself. Both go through here for what a restore means:

1. `plan_restore`: the planner for the mode (rewind / revert / undo), the restore's label, the plan
   (optionally limited to some paths);
2. `RestoreFlow.fork_first`: for a conversation scope, the conversation is forked before any code is
   written; unresolved conflicts refuse first, so nothing at all happens;
3. the code part: `RestoreFlow.apply_to_disk` (the CLI), or the editor's edit followed by
   `finish_editor_restore` (the server writes the files a text edit cannot carry);
4. `RestoreFlow.code_failed` / `code_refused`: code that could not be restored drops the fork.
   Code and conversation move together or not at all (`--scope both`).

Labels (one vocabulary for the CLI and the editor, shown in listings as the restore point's name):
"rewind to turn N (SCOPE)", "revert turn N", "undo of: <the label undone>" (also for a rewind or revert
given a restore point: its number is not a turn's).

Nothing here knows of LSP or argparse.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from rewind_ls.core.capture.recorder import REWIND_SESSION
from rewind_ls.core.errors import ConflictError, RewindError
from rewind_ls.core.fs.faults import fault as _fault
from rewind_ls.core.model import Turn
from rewind_ls.core.restore.apply_disk import (
    Outcome,
    apply_to_disk,
    discard_backups,
    remove_emptied_for,
    select,
    swap,
)
from rewind_ls.core.restore.editor_traces import mark_unsaved_elsewhere
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
from rewind_ls.core.restore.point import ROLLED_BACK, finish_restore_point, update_journal
from rewind_ls.core.store import ABSENT, Store, Version

CODE = "code"
CONVERSATION = "conversation"
BOTH = "both"
SCOPES = (CODE, CONVERSATION, BOTH)


def restore_label(mode: str, turn: Turn, scope: str = CODE) -> str:
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
    scope: str = CODE,
    hunks: list[int] | None = None,
    merge: bool = False,
) -> Plan:
    """The plan of a restore: `turn` is None for an undo; `paths` (workspace-relative) limits it;
    `hunks` (a revert of one path) reverts only those hunks of the turn's change to it; `merge`: a
    revert writes overlapping changes with conflict markers (`plan_revert`)."""
    if hunks is not None:
        if mode != REVERT or turn is None or paths is None or len(paths) != 1:
            raise RewindError("hunks: only a revert of one turn in one path reverts hunks")
        return plan_hunks(store, turn, reader, {paths[0]: hunks})
    if mode == UNDO:
        return plan_undo(store, reader)
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
    from rewind_ls.core.restore.hunks import hunk_label, plan_revert_hunks, turn_file

    label = f"revert turn {turn.number}, chosen hunks"
    if len(selection) == 1:
        ((path, indexes),) = selection.items()
        tf = turn_file(store, turn, path) if indexes is not None else None
        if indexes is None:
            label = f"revert turn {turn.number} in {path}"
        elif tf is not None:
            label = hunk_label(turn, path, indexes, len(tf.hunks))
    return plan_revert_hunks(store, turn, reader, selection, label)


def _note_unsaved_buffers(store: Store, plan: Plan) -> None:
    """An undo on disk of a restore that ran over unsaved editor buffers cannot give them back as
    unsaved text (the editor's own undo can): it says so for each such file."""
    from rewind_ls.core.restore.point import saved_disk

    under = saved_disk(store, plan.turn.id)
    for pp in plan.paths:
        if pp.path in under and pp.will_write:
            plan.notes.append(
                f"{pp.path}: held unsaved text in the editor when the restore ran; this undo writes "
                "that text to disk (the editor's Undo Last Rewind keeps it unsaved over the saved "
                "bytes instead)"
            )


def _with_note(exc: RewindError, note: str) -> RewindError:
    """`exc` (a RewindError or ConflictError) again, with `note` appended to its message."""
    if isinstance(exc, ConflictError):
        return ConflictError(f"{exc}{note}", exc.paths)
    try:
        return type(exc)(f"{exc}{note}")
    except TypeError:  # a kind whose constructor takes other arguments (BadPath, UnknownTurn)
        return RewindError(f"{exc}{note}")


class RestoreFlow:
    """The order of one restore of code and/or conversation, and its all-or-nothing rule. The
    caller runs the code part between `fork_first` and `code_failed`/`code_refused`."""

    def __init__(
        self,
        store: Store,
        mode: str,
        turn: Turn | None,
        scope: str = CODE,
        force: bool = False,
        skip_conflicts: bool = False,
    ) -> None:
        if scope not in SCOPES:
            raise RewindError(f"scope must be code, conversation or both, not {scope!r}")
        self.store = store
        self.mode = mode
        self.turn = turn
        self.scope = scope
        self.force = force
        self.skip_conflicts = skip_conflicts
        self.code = scope in (CODE, BOTH)
        # An undo restores code only: its "turn" is a restore point, which has no conversation.
        self.conversation = scope in (CONVERSATION, BOTH) and mode != UNDO and turn is not None
        self.fork: Any = None  # the conversation fork (`transcript.Fork`), once made
        self.merge = False  # revert --merge: conflicts written with markers

    def plan(
        self, reader: Reader, paths: list[str] | None = None, hunks: list[int] | None = None
    ) -> Plan:
        plan = plan_restore(
            self.store, self.mode, self.turn, reader, paths, self.scope, hunks, merge=self.merge
        )
        # The CLI sees no editor's buffers: an unsaved one another editor left a trace of is a
        # conflict (the server does the same, skipping the files its own client has open).
        mark_unsaved_elsewhere(plan, self.store.root)
        if plan.mode == UNDO:
            _note_unsaved_buffers(self.store, plan)
        return plan

    def fork_first(self, plan: Plan | None) -> None:
        """Fork the conversation (when the scope asks for it) before any code is written: a fork
        that fails leaves the code untouched. Conflicts that would refuse the code part refuse
        before the fork is made."""
        if not self.conversation or self.turn is None:
            return
        from rewind_ls.core.conversation.fork import fork_turn

        if self.code and plan is not None:
            select(plan, self.force, self.skip_conflicts)
        try:
            self.fork = fork_turn(self.store, self.turn)
        except RewindError as exc:
            if not self.code:
                raise
            raise RewindError(f"{exc}; code not restored either (--scope both)") from exc

    def code_failed(self, exc: BaseException) -> BaseException:
        """The code part raised `exc`: drop the fork; returns the error to raise (`exc` itself, or
        a RewindError saying the fork was removed)."""
        if self.fork is None:
            return exc
        self.drop_fork()
        if isinstance(exc, RewindError):
            return _with_note(exc, "; the conversation fork was removed (--scope both)")
        return exc

    def code_refused(self) -> bool:
        """The code part was not applied (the editor refused the edit): drop the fork too.
        Returns whether there was a fork to drop."""
        if self.fork is None:
            return False
        self.drop_fork()
        return True

    def drop_fork(self) -> None:
        if self.fork is None:
            return
        try:
            if self.fork.path:  # (no file: the first turn has nothing before it to fork)
                os.unlink(self.fork.path)
        except FileNotFoundError:
            pass
        self.fork = None

    def apply_to_disk(self, plan: Plan | None) -> Outcome | None:
        """The whole restore written to disk (the CLI): the fork first, then the code all or
        nothing, the fork dropped if the code fails. None when the scope has no code part."""
        self.fork_first(plan)
        if not self.code or plan is None:
            return None
        try:
            return apply_to_disk(self.store, plan, self.force, self.skip_conflicts)
        except BaseException as exc:
            error = self.code_failed(exc)
            if error is exc:
                raise
            raise error from exc


def finish_editor_restore(
    store: Store,
    point: str,
    items: Sequence[PathPlan],
    by_edit: Sequence[str],
    by_server: Sequence[PathPlan],
    disk_expected: dict[str, Version],
    applied: bool,
    missing: Sequence[str],
) -> tuple[str, list[str], list[str]]:
    """After the editor answered a restore's edit: write the paths it could not carry (`by_server`,
    journaled like the CLI's restore), record the outcome in restore point `point`. Returns
    (status "applied" / "partial" / "failed", failed paths, paths the server wrote)."""
    if not applied:
        store.set_turn_state(point, ROLLED_BACK)
        return "failed", sorted(by_edit), []
    written: list[str] = []
    failed = list(missing)
    reached: dict[str, tuple[Version, os.stat_result | None]] = {}
    ops: list[dict[str, Any]] = []
    server_items = [p for p in by_server if p.path not in missing]
    if server_items:
        # From here on the client holds the text part: a server killed while writing its own
        # part is finished by the next start's recovery (rolled forward, not back).
        update_journal(
            store,
            point,
            editApplied=True,
            failed=sorted(missing),
            serverPaths=[p.path for p in server_items],
        )
        _fault("before-server-writes", 1)
        try:
            got, ops = swap(store, point, server_items, disk_expected)
            reached.update(got)
            written = [p.path for p in server_items]
        except RewindError:
            failed.extend(p.path for p in server_items)
    for pp in items:
        if pp.path in by_edit and pp.path not in failed and pp.path not in reached:
            reached[pp.path] = (pp.target, None)
    state = finish_restore_point(store, point, reached, sorted(set(failed)))
    discard_backups(ops)
    remove_emptied_for(
        store.root, [p for p, (version, _) in reached.items() if version.kind == ABSENT]
    )
    return ("applied" if state == "applied" else "partial"), sorted(set(failed)), written
