"""A restore in the editor, the service's side: plan against buffers (`plan`), preview, then
`start_restore` (the paths chosen and the conversation forked first when asked, `RestoreFlow.start`;
`prepare`: route each path, record the restore point, build the WorkspaceEdit) -> the client applies the edit (the restore driver) ->
`edit_reached` / `finish` (the server's disk part, the outcome) -> `end_restore` (the result, in the
protocol's shape)."""

from __future__ import annotations

import os
from typing import Any

from rewind_ls.core.capture.recorder import read_current
from rewind_ls.core.conversation.fork import (
    conversation_source,
    fork_fields,
    fork_message,
    fork_turn,
)
from rewind_ls.core.errors import RewindError
from rewind_ls.core.history.versions import last_on_disk
from rewind_ls.core.model import Action, ConflictKind, RestoreStatus, Scope, Turn
from rewind_ls.core.restore.editor_traces import mark_unsaved_elsewhere
from rewind_ls.core.restore.flow import EditorPart, RestoreFlow, finish_editor_restore
from rewind_ls.core.restore.plan import UNDO, Conflict, PathPlan, Plan
from rewind_ls.core.restore.planner import plan_restore
from rewind_ls.core.restore.point import open_restore_point, saved_disk
from rewind_ls.core.restore.preview import Preview, build_preview
from rewind_ls.core.restore.request import RestoreRequest
from rewind_ls.core.store import ABSENT, FILE, Version
from rewind_ls.core.text.merge import diffstat
from rewind_ls.server import routing
from rewind_ls.server.edits import (
    UTF8_BOM,
    create_file,
    decode_text,
    delete_file,
    minimal_edit,
    text_document_edit,
)
from rewind_ls.server.routing import EDIT_BUFFER, ClientEditSupport, PathFacts, route
from rewind_ls.server.service.base import ServiceBase
from rewind_ls.server.workspace_view import OpenDoc, buffer_reader, open_docs_by_path


class PendingRestore:
    """A restore whose edit is out with the client."""

    def __init__(
        self,
        plan: Plan,
        items: list[PathPlan],
        point: str,
        edit: dict[str, Any] | None,
        by_edit: dict[str, str],
        by_server: list[PathPlan],
        disk_expected: dict[str, Version],
        staged: list[PathPlan] | None = None,
        unsaved: list[dict[str, Any]] | None = None,
    ) -> None:
        self.plan = plan
        self.items = items
        self.point = point
        self.edit = edit
        self.by_edit = by_edit  # path -> expected text after the edit
        self.by_server = by_server
        self.disk_expected = disk_expected
        # What the edit and the server's writes reach: `items`, except that a buffer whose unsaved
        # text an undo brings back first reaches its last saved content (disk and buffer), and the
        # client then puts the unsaved text back (`unsaved`: path, uri, WorkspaceEdit).
        self.staged = staged if staged is not None else items
        self.unsaved = unsaved or []


class EditorRestore:
    """One restore asked for by the editor, between its steps: `Service.start_restore` (plan,
    fork, restore point, edit) -> the client applies `pending.edit` -> `Service.finish` ->
    `Service.end_restore` (the result, in the protocol's shape)."""

    def __init__(self, request: RestoreRequest, support: ClientEditSupport) -> None:
        self.request = request
        self.support = support
        self.flow: RestoreFlow | None = None
        self.pending: PendingRestore | None = None
        self.messages: list[str] = []
        self.result: dict[str, Any] = {
            "status": RestoreStatus.NOTHING_TO_DO,
            "message": "",
            "edit": None,
            "restorePointId": None,
            "files": [],
            "writtenByServer": [],
            "failed": [],
            "conversation": None,
            "prompt": None,
            "unsaved": [],
        }


def _outcome_message(status: RestoreStatus, failed: list[str], count: int, reason: str) -> str:
    if status == RestoreStatus.FAILED:
        return (
            f"the editor did not apply the restore ({reason or 'no reason given'}); nothing changed"
        )
    if status == RestoreStatus.PARTIAL:
        return (
            f"partial restore: {', '.join(failed)} did not reach the planned content; "
            "undo brings back what was there"
        )
    return f"restored {count} file(s)"


def _kind(version: Version, text: str | None) -> str:
    if version.kind == ABSENT:
        return routing.ABSENT
    return routing.TEXT if text is not None else routing.NOT_TEXT


def _path_facts(
    pp: PathPlan, doc: OpenDoc | None, disk: Version, disk_data: bytes | None
) -> tuple[PathFacts, str | None, str]:
    """What `routing.route` needs of one path; with the target text and the text an edit starts
    from (the buffer, or the file on disk)."""
    target_text = decode_text(pp.target_data) if pp.target_data is not None else None
    disk_text = decode_text(disk_data) if disk_data is not None else None
    facts = PathFacts(
        target=_kind(pp.target, target_text),
        disk=_kind(disk, disk_text),
        open=doc is not None,
        buffer_is_target=doc is not None and doc.text == target_text,
        mode_changes=pp.target.kind == FILE
        and disk.kind == FILE
        and (pp.target.mode or 0) & 0o111 != (disk.mode or 0) & 0o111,
        # A text edit cannot add or remove a UTF-8 BOM (it is not part of the text).
        bom_changes=pp.target_data is not None
        and pp.target_data.startswith(UTF8_BOM)
        != (disk_data is not None and disk_data.startswith(UTF8_BOM)),
    )
    base = doc.text if doc is not None else (disk_text or "")
    return facts, target_text, base


def _edit_parts(
    kind: str,
    uri: str,
    version: int | None,
    base: str,
    target: str | None,
    support: ClientEditSupport,
) -> list[dict[str, Any]]:
    """The WorkspaceEdit parts of one routed path (none when the text already matches)."""
    if kind == routing.DELETE:
        return [delete_file(uri)]
    parts = [create_file(uri)] if kind == routing.CREATE_EDIT else []
    edit = minimal_edit(base, target or "", support.encoding)
    if edit is not None:
        parts.append(text_document_edit(uri, version, edit))
    return parts


def _workspace_edit(changes: list[dict[str, Any]], document_changes: bool) -> dict[str, Any] | None:
    """The WorkspaceEdit JSON: `documentChanges`, or `changes` by URI for a client without them."""
    if not changes:
        return None
    if document_changes:
        return {"documentChanges": changes}
    flat: dict[str, list[dict[str, Any]]] = {}
    for c in changes:
        flat.setdefault(c["textDocument"]["uri"], []).extend(c["edits"])
    return {"changes": flat}


class RestoreWork(ServiceBase):
    def undo_point(self) -> Turn:
        """The restore point an undo goes back to (the latest applied one)."""
        from rewind_ls.core.restore.plan import latest_restore_point

        return latest_restore_point(self.store)

    # --- planning ------------------------------------------------------------------------------

    def plan(
        self, request: RestoreRequest, docs: dict[str, OpenDoc], unsaved: bool = False
    ) -> Plan:
        """The code part of `request`, against the open buffers. `unsaved`: the client can put a
        buffer's unsaved text back after saving (an undo then brings back the disk's last saved
        bytes under it, `_attach_saved`)."""
        by_path = open_docs_by_path(self.root, docs)
        reader = buffer_reader(self.root, by_path, lambda rel: last_on_disk(self.store, rel))
        r = request
        turn = self.turn(r.turn_id) if r.turn_id is not None and r.mode != UNDO else None
        rels = [self.rel_of(p) for p in r.paths] if r.paths else None
        plan = plan_restore(
            self.store,
            r.mode,
            turn,
            reader,
            rels,
            r.scope,
            r.hunks,
            merge=r.merge,
            version=r.version,
        )
        # Buffers this client has open are read above; another editor's unsaved ones by its traces.
        mark_unsaved_elsewhere(plan, self.root, by_path.keys(), self.store.path)
        self._name_unsaved(plan, by_path)
        if unsaved and plan.mode == UNDO:
            self._attach_saved(plan)
        return plan

    def _name_unsaved(self, plan: Plan, by_path: dict[str, OpenDoc]) -> None:
        """A conflict on a file whose open buffer differs from its disk: the client knows the buffer
        is unsaved, so the conflict says that instead of guessing ("an unsaved buffer, or an edit it
        did not record")."""
        for pp in plan.paths:
            conflict = pp.conflict
            doc = by_path.get(pp.path)
            if conflict is None or doc is None or conflict.kind != ConflictKind.MODIFIED_OUTSIDE:
                continue
            _, data, _ = read_current(self.root, pp.path)
            if data is not None and decode_text(data) == doc.text:
                continue  # the buffer is saved: the change is on disk, unrecorded
            pp.conflict = Conflict(
                conflict.kind,
                f"{pp.path}: unsaved changes in the editor, which the restore would replace",
                conflict.hunks,
            )

    def _attach_saved(self, plan: Plan) -> None:
        """An undo of a restore that ran over unsaved buffers: each such path gets the disk content
        it had under the buffer (`PathPlan.saved`), so the undo returns both. The disk must hold
        what the restore wrote or that saved content; anything else is a save made since, which
        the undo would overwrite: a conflict."""
        under = saved_disk(self.store, plan.turn.id)
        for pp in plan.paths:
            version = under.get(pp.path)
            if version is None or version.kind != FILE or version.hash is None:
                continue
            if pp.conflict is not None or pp.target.kind != FILE or pp.target_data is None:
                continue
            try:
                data = self.store.get_blob(version.hash)
            except RewindError:
                continue  # the buffer's text alone is still brought back (and saved)
            disk, disk_data, _ = read_current(self.root, pp.path)
            change = self.store.change(plan.turn.id, pp.path)
            wrote = change.after if change is not None else None
            if not disk.same_content(version) and not (
                wrote is not None and disk.same_content(wrote)
            ):
                pp.conflict = Conflict(
                    ConflictKind.MODIFIED_OUTSIDE,
                    f"{pp.path}: saved since the restore (the disk holds neither what the restore "
                    "wrote nor the content saved before it); the undo would overwrite that save",
                )
                if pp.action == Action.UNCHANGED:
                    pp.action = Action.MODIFY
                continue
            pp.saved, pp.saved_data = version, data
            if pp.action == Action.UNCHANGED and not disk.same_content(version):
                # The buffer already holds its unsaved text again (the editor's own undo): only
                # the disk goes back.
                pp.action = Action.MODIFY
                pp.added, pp.removed = diffstat(disk_data or b"", data)

    def preview(
        self, request: RestoreRequest, turn: Turn | None, docs: dict[str, OpenDoc], unsaved: bool
    ) -> Preview:
        """What `request` (of `turn`) would do, for `rewind/preview` and the restore commands'
        question: the code part planned against the buffers, whether the conversation can be
        forked (`core.restore.preview`, the CLI's builder too)."""
        plan = self.plan(request, docs, unsaved) if Scope(request.scope).code else None
        return build_preview(self.store, request, turn, plan, conversation_source, self.uri)

    def summarize_source(self, turn: Turn) -> Any:
        from rewind_ls.core.conversation.summarize import Source

        return Source(self.store, turn)

    def adopt_summary(self, source: Any, result: Any) -> dict[str, Any]:
        source.adopt(self.store, result)
        return fork_fields(result)

    # --- restoring -----------------------------------------------------------------------------

    def prepare(
        self,
        plan: Plan,
        items: list[PathPlan],
        docs: dict[str, OpenDoc],
        support: ClientEditSupport,
    ) -> PendingRestore | None:
        """Route each path chosen (`items`) to the edit or the server (`routing.route`), record the
        restore point, build the WorkspaceEdit. None: nothing to do."""
        if not items:
            return None
        by_path = open_docs_by_path(self.root, docs)
        changes: list[dict[str, Any]] = []
        by_edit: dict[str, str] = {}
        by_server: list[PathPlan] = []
        disk_expected: dict[str, Version] = {}
        under: dict[str, tuple[Version, bytes | None]] = {}
        staged: list[PathPlan] = []
        unsaved: list[dict[str, Any]] = []
        for item in items:
            disk, disk_data, _ = read_current(self.root, item.path)
            disk_expected[item.path] = disk
            doc = by_path.get(item.path)
            if doc is not None and disk.kind == FILE and not disk.same_content(item.current):
                under[item.path] = (disk, disk_data)  # an unsaved buffer: an undo needs both
            pp = self._stage_unsaved(item, support, unsaved)
            staged.append(pp)
            facts, target_text, base_text = _path_facts(pp, doc, disk, disk_data)
            way = route(facts, support)
            if way.server:
                by_server.append(pp)
            if way.verify:
                by_edit[pp.path] = target_text or ""
            if way.edit is not None:
                version = doc.version if way.edit == EDIT_BUFFER and doc is not None else None
                changes.extend(
                    _edit_parts(
                        way.edit, self.uri(pp.path), version, base_text, target_text, support
                    )
                )
        # The pid tells other processes' recovery that this restore is live, not abandoned.
        point = open_restore_point(
            self.store, plan, items, {"applier": "editor", "pid": os.getpid()}, under
        )
        edit = _workspace_edit(changes, support.document_changes)
        return PendingRestore(
            plan, items, point, edit, by_edit, by_server, disk_expected, staged, unsaved
        )

    def _stage_unsaved(
        self, pp: PathPlan, support: ClientEditSupport, unsaved: list[dict[str, Any]]
    ) -> PathPlan:
        """A path whose undo brings back an unsaved buffer over its last saved bytes: the restore
        writes the saved bytes (buffer and disk, which the client saves), and `unsaved` gets the
        edit from them to the unsaved text, which the client applies after saving, unsaved."""
        if pp.saved is None or pp.saved_data is None or not support.restore_unsaved:
            return pp
        saved_text = decode_text(pp.saved_data)
        text = decode_text(pp.target_data) if pp.target_data is not None else None
        if saved_text is None or text is None:
            return pp
        staged = PathPlan(pp.path, pp.current, pp.current_data)
        staged.set_target(pp.saved, pp.saved_data)
        uri = self.uri(pp.path)
        edit = minimal_edit(saved_text, text, support.encoding)
        parts = [text_document_edit(uri, None, edit)] if edit is not None else []
        unsaved.append(
            {"path": pp.path, "uri": uri, "edit": _workspace_edit(parts, support.document_changes)}
        )
        return staged

    def edit_reached(self, pending: PendingRestore, docs: dict[str, OpenDoc]) -> list[str]:
        """Paths of the text part that do not (yet) hold their planned content."""
        by_path = open_docs_by_path(self.root, docs)
        plans = {p.path: p for p in pending.staged}
        missing = []
        for path, text in pending.by_edit.items():
            doc = by_path.get(path)
            pp = plans[path]
            if pp.target.kind == ABSENT:
                if os.path.lexists(os.path.join(self.root, *path.split("/"))):
                    missing.append(path)
                continue
            if doc is not None and doc.text == text:
                continue
            version, _, _ = read_current(self.root, path)
            if version.same_content(pp.target):
                continue
            missing.append(path)
        return missing

    def finish(
        self, pending: PendingRestore, applied: bool, missing: list[str], reason: str = ""
    ) -> dict[str, Any]:
        """After the client answered: write the server's part, record the outcome."""
        part = EditorPart(
            pending.point,
            pending.staged,
            list(pending.by_edit),
            pending.by_server,
            pending.disk_expected,
        )
        status, failed, written = finish_editor_restore(self.store, part, applied, missing)
        return {
            "status": status,
            "failed": failed,
            "written": written,
            "message": _outcome_message(status, failed, len(pending.items), reason),
        }

    def start_restore(self, job: EditorRestore, docs: dict[str, OpenDoc]) -> None:
        """Plan the code part, fork the conversation first when asked, prepare the edit: up to the
        point where the client applies the edit (`job.pending`). Conflicts refuse before the fork;
        code that cannot be prepared drops it."""
        request = job.request
        turn = self.turn(request.turn_id) if request.turn_id else None
        flow = RestoreFlow(self.store, request, turn, fork_turn)
        job.flow = flow
        plan = None
        if flow.code:
            plan = self.plan(request, docs, job.support.restore_unsaved)
            job.result["files"] = build_preview(self.store, request, turn, plan, uri=self.uri).files
        items = flow.start(plan)
        if plan is None:
            return
        try:
            job.pending = self.prepare(plan, items, docs, job.support)
        except BaseException as exc:
            error = flow.code_failed(exc)
            if error is exc:
                raise
            raise error from exc
        if job.pending is None:
            job.messages.append("nothing to restore: every path already matches")
            return
        job.result["restorePointId"] = job.pending.point
        job.result["edit"] = job.pending.edit
        job.result["unsaved"] = job.pending.unsaved

    def code_failed(self, job: EditorRestore, exc: BaseException) -> BaseException:
        """The code part raised after the edit went out: the fork is dropped (both or neither)."""
        return job.flow.code_failed(exc) if job.flow is not None else exc

    def end_restore(self, job: EditorRestore, outcome: dict[str, Any] | None) -> dict[str, Any]:
        """The restore's result, once the client's part is done (`outcome` of `finish`)."""
        result = job.result
        if outcome is not None:
            result.update(
                status=outcome["status"],
                failed=outcome["failed"],
                writtenByServer=outcome["written"],
            )
            job.messages.append(str(outcome["message"]))
            back = [u["path"] for u in result["unsaved"] if u["path"] not in outcome["failed"]]
            if outcome["status"] != RestoreStatus.FAILED and back:
                job.messages.append(
                    f"your unsaved edits in {', '.join(back)} are back, not saved (the disk holds "
                    "what was saved before)"
                )
            if (
                outcome["status"] == RestoreStatus.FAILED
                and job.flow is not None
                and job.flow.code_refused()
            ):
                job.messages.append(
                    "conversation not forked either (code and conversation go together)"
                )
        fork = job.flow.fork if job.flow is not None else None
        if fork is not None and job.flow is not None and job.flow.turn is not None:
            result["conversation"] = fork_fields(fork)
            result["prompt"] = job.flow.turn.prompt
            if result["status"] == RestoreStatus.NOTHING_TO_DO:
                result["status"] = RestoreStatus.APPLIED
            job.messages.append(fork_message(fork, job.flow.turn.number))
        result["message"] = "; ".join(job.messages)
        return result
