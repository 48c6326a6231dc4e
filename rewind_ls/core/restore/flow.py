"""One restore, whoever applies it: the CLI writes the plan to disk, the language server sends its
text part to the editor and writes the rest itself. Both go through here for what a restore means,
given one `RestoreRequest`:

1. `RestoreFlow.plan`: the planner for the mode (`planner.plan_restore`: rewind / revert / undo), the
   restore's label, the plan (optionally limited to some paths);
2. `RestoreFlow.start`: the paths to write, chosen once (`planner.select`: unresolved conflicts
   refuse here, so nothing at all happens), then, for a conversation scope, the conversation forked
   before any code is written;
3. the code part: `RestoreFlow.apply_to_disk` (the CLI), or the editor's edit followed by
   `finish_editor_restore` (the server writes the files a text edit cannot carry);
4. `RestoreFlow.code_failed` / `code_refused`: code that could not be restored drops the fork.
   Code and conversation move together or not at all (`--scope both`).

The conversation layer sits above this one: the caller hands the flow its forker (`Forker`,
`conversation.fork.fork_turn`).

Labels (one vocabulary for the CLI and the editor, shown in listings as the restore point's name):
"rewind to turn N (SCOPE)", "revert turn N", "undo of: <the label undone>" (also for a rewind or revert
given a restore point: its number is not a turn's); asked by someone else (`RestoreRequest.by`):
"<label> (by WHO)", and "undo by WHO of: <the label undone>".

Nothing here knows of LSP or argparse.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Collection, Sequence
from typing import Any, NamedTuple

from rewind_ls.core.errors import ConflictError, RewindError
from rewind_ls.core.fs.faults import fault as _fault
from rewind_ls.core.model import RestoreStatus, Scope, Turn, TurnState
from rewind_ls.core.restore.apply_disk import Outcome, apply_to_disk
from rewind_ls.core.restore.editor_traces import mark_unsaved_elsewhere
from rewind_ls.core.restore.plan import UNDO, PathPlan, Plan, Reader
from rewind_ls.core.restore.planner import plan_restore, select
from rewind_ls.core.restore.point import (
    ROLLED_BACK,
    finish_restore_point,
    saved_disk,
    update_journal,
)
from rewind_ls.core.restore.request import RestoreRequest
from rewind_ls.core.restore.swap import (
    discard_backups,
    mark_backups_gone,
    remove_emptied_for,
    swap,
)
from rewind_ls.core.store import ABSENT, Store, Version

# Forks the conversation of a turn before it (`conversation.fork.fork_turn`): returns the fork
# (an object with `path`, the new conversation's file, "" when there is none), or raises RewindError.
Forker = Callable[[Store, Turn], Any]

SCOPES = tuple(Scope)


def scope_of(value: str) -> Scope:
    """`value` as a Scope; RewindError naming the choices otherwise."""
    if value not in SCOPES:
        raise RewindError(f"scope must be code, conversation or both, not {value!r}")
    return Scope(value)


def _note_unsaved_buffers(store: Store, plan: Plan) -> None:
    """An undo on disk of a restore that ran over unsaved editor buffers cannot give them back as
    unsaved text (the editor's own undo can): it says so for each such file."""
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
        return ConflictError(f"{exc}{note}", exc.paths, exc.cli_hint)
    try:
        return type(exc)(f"{exc}{note}")
    except TypeError:  # a kind whose constructor takes other arguments (BadPath, UnknownTurn)
        return RewindError(f"{exc}{note}")


class RestoreFlow:
    """The order of one restore of code and/or conversation (`request`, of `turn`: None for an
    undo), and its all-or-nothing rule. The caller runs the code part between `start` and
    `code_failed`/`code_refused`. `forker`: how to fork the conversation (needed when the scope has
    a conversation part)."""

    def __init__(
        self,
        store: Store,
        request: RestoreRequest,
        turn: Turn | None,
        forker: Forker | None = None,
    ) -> None:
        self.store = store
        self.request = request._replace(scope=scope_of(request.scope))
        self.turn = turn
        self.forker = forker
        self.code = self.request.code
        # An undo restores code only: its "turn" is a restore point, which has no conversation.
        self.conversation = self.request.conversation and turn is not None
        if self.conversation and forker is None:
            raise RewindError(f"scope {self.request.scope}: no conversation forker given")
        self.fork: Any = None  # the conversation fork (`transcript.Fork`), once made

    def plan(self, reader: Reader) -> Plan:
        r = self.request
        plan = plan_restore(
            self.store,
            r.mode,
            self.turn,
            reader,
            r.paths,
            r.scope,
            r.hunks,
            merge=r.merge,
            version=r.version,
        )
        # The CLI sees no editor's buffers: an unsaved one another editor left a trace of is a
        # conflict (the server does the same, skipping the files its own client has open).
        mark_unsaved_elsewhere(plan, self.store.root, store_dir=self.store.path)
        if r.by:
            # The restore point's name, shown in `turns` and the editors: who made it. An undo's
            # label already ends with the undone restore's own "(by ...)": say who undid it first.
            undone = plan.label.removeprefix("undo of: ")
            plan.label = (
                f"undo by {r.by} of: {undone}"
                if undone != plan.label
                else f"{plan.label} (by {r.by})"
            )
        if plan.mode == UNDO:
            _note_unsaved_buffers(self.store, plan)
        return plan

    def start(self, plan: Plan | None) -> list[PathPlan]:
        """The paths to write, chosen once (`select`, with the request's force / skip choice), then
        the conversation forked when the scope asks for it, before any code is written: conflicts
        that would refuse the code part refuse before the fork is made, and a fork that fails
        leaves the code untouched."""
        items: list[PathPlan] = []
        if self.code and plan is not None:
            items = select(plan, self.request.force, self.request.skip_conflicts)
        if not self.conversation or self.turn is None:
            return items
        assert self.forker is not None
        try:
            self.fork = self.forker(self.store, self.turn)
        except RewindError as exc:
            if not self.code:
                raise
            raise RewindError(
                f"{exc}; code not restored either (code and conversation go together)"
            ) from exc
        return items

    def code_failed(self, exc: BaseException) -> BaseException:
        """The code part raised `exc`: drop the fork; returns the error to raise (`exc` itself, or
        a RewindError saying the fork was removed)."""
        if self.fork is None:
            return exc
        self.drop_fork()
        if isinstance(exc, RewindError):
            return _with_note(
                exc, "; the conversation fork was removed (code and conversation go together)"
            )
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
        """The whole restore written to disk (the CLI): the paths chosen and the fork made
        (`start`), then the code all or nothing, the fork dropped if the code fails. None when the
        scope has no code part."""
        items = self.start(plan)
        if not self.code or plan is None:
            return None
        try:
            return apply_to_disk(self.store, plan, items)
        except BaseException as exc:
            error = self.code_failed(exc)
            if error is exc:
                raise
            raise error from exc


class EditorPart(NamedTuple):
    """The editor's side of one restore as the server routed it: restore point `point`, the paths
    the restore reaches (`items`), those the client's edit carries (`by_edit`), those the server
    writes itself (`by_server`), and what the disk held under each (`disk_expected`: the server
    plans against buffers, but swaps files)."""

    point: str
    items: Sequence[PathPlan]
    by_edit: Collection[str]
    by_server: Sequence[PathPlan]
    disk_expected: dict[str, Version]


def finish_editor_restore(
    store: Store, part: EditorPart, applied: bool, missing: Sequence[str]
) -> tuple[RestoreStatus, list[str], list[str]]:
    """After the editor answered a restore's edit (`applied`; `missing`: paths of the text part
    that do not hold their planned content): write the paths it could not carry (`by_server`,
    journaled like the CLI's restore), record the outcome in the restore point. Returns (status
    applied / partial / failed, failed paths, paths the server wrote)."""
    point = part.point
    if not applied:
        store.set_turn_state(point, ROLLED_BACK)
        return RestoreStatus.FAILED, sorted(part.by_edit), []
    written: list[str] = []
    failed = list(missing)
    reached: dict[str, tuple[Version, os.stat_result | None]] = {}
    ops: list[dict[str, Any]] = []
    server_items = [p for p in part.by_server if p.path not in missing]
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
            got, ops = swap(store, point, server_items, part.disk_expected)
            reached.update(got)
            written = [p.path for p in server_items]
        except RewindError:
            failed.extend(p.path for p in server_items)
    for pp in part.items:
        if pp.path in part.by_edit and pp.path not in failed and pp.path not in reached:
            reached[pp.path] = (pp.target, None)
    state = finish_restore_point(store, point, reached, sorted(set(failed)))
    kept = discard_backups(ops)
    remove_emptied_for(
        store.root, [p for p, (version, _) in reached.items() if version.kind == ABSENT]
    )
    if ops and not kept:
        mark_backups_gone(store, point)  # last: see swap.BACKUPS_GONE
    status = RestoreStatus.APPLIED if state == TurnState.APPLIED else RestoreStatus.PARTIAL
    return status, sorted(set(failed)), written
