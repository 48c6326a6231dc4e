"""The restore driver: runs a restore with the client, for the `rewind/*` requests and for the
commands (lenses, code actions). The service plans and records (`Service.start_restore`,
`finish`, `end_restore`); this module does the talking: the preview (`preview`), the question a
command asks with `window/showMessageRequest` (`command_restore`, answered at once; the restore
runs on the answer), `workspace/applyEdit` and the wait for the client's documents, the disk part
through the service, `$/progress` for large restores, and the outcome as a message.

Every restore arrives here as one `RestoreRequest` (built by the handlers from the request's params
or the command's arguments) and goes to the service as is. Nothing here decides what a restore
means; that is the core's job (`rewind_ls.core.restore.flow`, `.planner`, `.preview`: the same
preview the CLI shows), with `service/restore.py` for the editor's side (routing each path, the edit).
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any, NamedTuple

from lsprotocol import types
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams

from rewind_ls.core.model import Action, ConflictKind, RestoreMode, RestoreStatus, Scope
from rewind_ls.core.restore.request import RestoreRequest
from rewind_ls.protocol.restore import RestoreOptions, RestoreResult
from rewind_ls.server.lsp import RewindServer, parse, to_rpc_error
from rewind_ls.server.service import EditorRestore, PendingRestore

log = logging.getLogger("rewind_ls.server")

PROGRESS_THRESHOLD = 5  # files: restores larger than this report $/progress
VERIFY_SECONDS = 5.0  # how long to wait for the client's document updates after applyEdit


# --- the request path: rewind/preview, rewind/restore, rewind/undo ------------------------------


async def preview(ls: RewindServer, request: RestoreRequest) -> dict[str, Any]:
    """What a restore would do (the `rewind/preview` result's data): nothing is written."""
    svc = ls.svc()
    await ls.restores_ended()
    if request.mode == RestoreMode.UNDO:
        # The undo is a rewind to the latest restore point: previewed as one (named "undo of: ...").
        turn = await ls.call(svc.undo_point)
        planned = request._replace(mode=RestoreMode.REWIND, turn_id=turn.id)
    elif request.turn_id is None:
        raise JsonRpcInvalidParams(
            f"rewind/preview: turnId is needed for mode {str(request.mode)!r}"
        )
    else:
        turn = await ls.call(svc.turn, request.turn_id)
        planned = request
    info = await ls.call(svc.turn_info, turn)
    shown = await ls.call(svc.preview, planned, turn, ls.docs(), ls.support.restore_unsaved)
    return {
        "turn": info,
        "mode": request.mode,
        "scope": request.scope,
        "files": shown.files,
        "conflicts": shown.conflicts,
        "conversation": shown.conversation,
    }


async def run_restore(ls: RewindServer, request: RestoreRequest) -> RestoreResult:
    """A restore: the service plans it and forks the conversation (`Service.start_restore`), the
    client applies the edit, the service writes the rest and says what happened. One at a time
    (`ls.restoring`)."""
    if ls.restoring.locked():
        ls.say(types.MessageType.Info, "rewind-ls: waiting for the restore in progress to end")
    async with ls.restoring:
        return await _run_restore(ls, request)


async def _run_restore(ls: RewindServer, request: RestoreRequest) -> RestoreResult:
    svc = ls.svc()
    job = EditorRestore(request, ls.support)
    await ls.call(svc.start_restore, job, ls.docs())
    outcome = None
    if job.pending is not None:
        try:
            outcome = await apply_pending(ls, job.pending, request.apply)
        except BaseException as exc:
            error = await ls.call(svc.code_failed, job, exc)
            if error is exc:
                raise
            raise error from exc
    result = await ls.call(svc.end_restore, job, outcome)
    if result["status"] in (RestoreStatus.PARTIAL, RestoreStatus.FAILED):
        ls.say(types.MessageType.Warning, result["message"])
    if result["status"] != RestoreStatus.NOTHING_TO_DO:
        ls.notify_turns(["rewind"], "restored")
    return RestoreResult.model_validate(result)


async def apply_pending(ls: RewindServer, pending: PendingRestore, apply: bool) -> dict[str, Any]:
    """Send the restore's edit to the client, wait until its documents show it, and let the
    service write the rest (`Service.finish`)."""
    svc = ls.svc()
    if pending.edit is not None and not apply:
        # The caller applies the edit itself; the restore point is recorded as not applied.
        await ls.call(svc.finish, pending, False, [])
        return {
            "status": RestoreStatus.PLANNED,
            "failed": [],
            "written": [],
            "message": "edit returned, not applied (apply: false)",
        }
    token = await progress_begin(ls, pending)
    try:
        applied, reason = True, ""
        if pending.edit is not None:
            applied, reason = await send_edit(ls, pending)
        if token:
            ls.work_done_progress.report(
                token, types.WorkDoneProgressReport(message="verifying", percentage=60)
            )
        missing = await wait_for_edit(ls, pending) if applied else []
        outcome: dict[str, Any] = await ls.call(svc.finish, pending, applied, missing, reason)
    finally:
        if token:
            ls.work_done_progress.end(token, types.WorkDoneProgressEnd(message="done"))
    return outcome


async def progress_begin(ls: RewindServer, pending: PendingRestore) -> str | None:
    """$/progress for a large restore, when the client supports it."""
    count = len(pending.items)
    if not (ls.progress_ok and count > PROGRESS_THRESHOLD):
        return None
    token = f"rewind-{pending.point}"
    try:
        await ls.work_done_progress.create_async(token)
        ls.work_done_progress.begin(
            token,
            types.WorkDoneProgressBegin(
                title="Rewind", message=f"restoring {count} files", percentage=0
            ),
        )
    except Exception:
        return None
    return token


async def send_edit(ls: RewindServer, pending: PendingRestore) -> tuple[bool, str]:
    """workspace/applyEdit: (applied, the client's reason when it did not)."""
    edit = ls.protocol._converter.structure(pending.edit, types.WorkspaceEdit)
    try:
        answer = await ls.workspace_apply_edit_async(
            types.ApplyWorkspaceEditParams(edit=edit, label=pending.plan.label or "rewind")
        )
    except JsonRpcException as exc:
        # An error answer (eglot's "User cancelled server edit") is a refusal: the restore point
        # is rolled back, not left pending.
        return False, f"{exc.message} ({exc.code})"
    if not answer:
        return False, "no answer"
    return bool(answer.applied), answer.failure_reason or ""


async def wait_for_edit(ls: RewindServer, pending: PendingRestore) -> list[str]:
    """The paths of the edit that do not hold their content yet, after waiting up to
    VERIFY_SECONDS for the client's document updates."""
    if not pending.by_edit:
        return []
    loop = asyncio.get_running_loop()
    deadline = loop.time() + VERIFY_SECONDS
    while True:
        missing: list[str] = await ls.call(ls.svc().edit_reached, pending, ls.docs())
        if not missing or loop.time() > deadline:
            return missing
        await asyncio.sleep(0.05)


# --- the command path: preview, ask, restore on the answer ----------------------------------------


def options_of(value: Any) -> RestoreOptions:
    if value is None:
        return RestoreOptions()
    return parse(RestoreOptions, value, "command options")


VERBS = {"rewind": "Rewind", "revert": "Revert", "undo": "Undo", "version": "Restore"}
CANCEL = "Cancel"
PREVIEW_LINES = 30  # files listed in the question; the rest are counted
ASK_AFTER_SECONDS = 0.2  # between a command's answer and its question


class Choice(NamedTuple):
    """What one answer to the restore question runs."""

    force: bool = False
    skip: bool = False
    merge: bool = False  # a revert with conflict markers
    rewind_paths: list[str] | None = None  # "rewind that file instead": a rewind of these paths


def question_of(
    label: str,
    verb: str,
    files: list[dict[str, Any]],
    conversation: dict[str, Any] | None,
    options: RestoreOptions,
    detail: list[str] | None = None,
    mode: str = RestoreMode.REWIND,
    number: int | None = None,
) -> tuple[str, dict[str, Choice]]:
    """The preview as a question, and its choices: title -> what it runs. `detail`: lines shown
    after the files (the merge of a hunk's revert). A revert whose changes overlap later edits
    offers only what can work: conflict markers, or rewinding those files (never an overwrite,
    which a revert refuses)."""
    changing = [f for f in files if f["action"] != Action.UNCHANGED or f["conflict"]]
    conflicts = [f for f in changing if f["conflict"]]
    lines = [f"rewind-ls: {label}"]
    if changing:
        lines.append(f"{len(changing)} file(s):")
        for f in changing[:PREVIEW_LINES]:
            counts = "" if f["binary"] else f" (+{f['added']} -{f['removed']})"
            lines.append(f"  {f['action']} {f['path']}{counts}")
            if f["conflict"]:
                lines.append(f"    conflict: {f['conflict']['message']}")
        if len(changing) > PREVIEW_LINES:
            lines.append(f"  ... and {len(changing) - PREVIEW_LINES} more")
    lines.extend(detail or [])
    if conversation is not None:
        lines.append(
            "conversation: forked before the prompt (a new session to resume)"
            if conversation["available"]
            else f"conversation: cannot be rewound ({conversation['reason']})"
        )
    lines.append("Nothing is written until you choose; undo brings back what is there now.")
    merge = [f for f in conflicts if f["conflict"]["kind"] == ConflictKind.MERGE]
    if mode == RestoreMode.REVERT and merge and not options.merge:
        names = ", ".join(f["path"] for f in merge)
        which = "that file" if len(merge) == 1 else "those files"
        lines.insert(
            1,
            f"Later edits overlap this turn's changes in {names}: write the revert with conflict "
            f"markers to resolve, or rewind {which} to before turn #{number} (drops the later "
            "edits in it), or cancel.",
        )
        choices = {
            f"{verb} with conflict markers": Choice(merge=True),
            f"Rewind {names if len(merge) == 1 else which} instead": Choice(
                rewind_paths=[f["path"] for f in merge]
            ),
        }
    elif conflicts and not (options.force or options.skip_conflicts):
        lines.insert(1, f"{len(conflicts)} conflict(s): skip them, overwrite them, or cancel.")
        choices = {
            f"{verb}, skip conflicts": Choice(skip=True),
            f"{verb}, overwrite conflicts": Choice(force=True),
        }
    else:
        choices = {verb: Choice(options.force, options.skip_conflicts, options.merge)}
    return "\n".join(lines), choices


async def command_restore(ls: RewindServer, request: RestoreRequest, opts: Any) -> dict[str, Any]:
    """A restore from a lens or a command (`request`, with `opts`: the command's options): preview
    it, ask the person (window/showMessageRequest), and answer the command at once. The restore
    runs when the answer comes; its outcome is a message. No request stays open while the person
    thinks (eglot gives up after 10 s)."""
    await ls.wait_ready()
    mode, scope = request.mode, Scope(request.scope)
    try:
        options = options_of(opts)
        svc = ls.svc()
        await ls.restores_ended()  # an undo right after a revert previews that revert's undo
        turn = await ls.call(svc.turn, request.turn_id) if request.turn_id is not None else None
        request = request._replace(turn_id=turn.id if turn is not None else None)
        request = request._replace(apply=options.apply)
        shown = await ls.call(svc.preview, request, turn, ls.docs(), ls.support.restore_unsaved)
        label = shown.label
        verb = VERBS[mode]
        detail: list[str] = []
        if shown.plan is not None:
            if request.hunks is not None:
                from rewind_ls.server.review import merge_preview

                detail = merge_preview(shown.plan)  # a hunk's revert shows the lines it changes
            # Rewinding to a restore point ("Undo this restore") is an undo: asked as one.
            verb = VERBS.get(shown.plan.mode.value, verb)
    except Exception as exc:
        err = to_rpc_error(exc)
        ls.say(types.MessageType.Error, err.message)
        raise err from None
    files, conversation = shown.files, shown.conversation
    if turn is not None and scope != Scope.CODE:
        label = f"{label}: {' '.join(str(turn.prompt).split())[:80]!r}"
    if (scope == Scope.CODE and shown.nothing) or (
        scope == Scope.CONVERSATION and not conversation
    ):
        message = f"{label}: nothing to restore, every file already matches"
        ls.say(types.MessageType.Info, message)
        return {"status": RestoreStatus.NOTHING_TO_DO, "message": message, "files": files}
    number = turn.number if turn is not None else None
    question, choices = question_of(label, verb, files, conversation, options, detail, mode, number)
    ls.background(ask_then_restore(ls, request, question, choices))
    return {"status": RestoreStatus.ASKING, "message": question, "files": files}


async def ask_then_restore(
    ls: RewindServer, request: RestoreRequest, question: str, choices: dict[str, Choice]
) -> None:
    # The command's answer goes out first, alone: lsp-mode 8 drops the messages that arrive in the
    # same read as the answer to a request it waits for (its response callback throws out of the
    # loop over that read's messages).
    await asyncio.sleep(ASK_AFTER_SECONDS)
    try:
        answer = await ls.window_show_message_request_async(
            types.ShowMessageRequestParams(
                type=types.MessageType.Warning,
                message=question,
                actions=[types.MessageActionItem(t) for t in [*choices, CANCEL]],
            )
        )
    except Exception as exc:
        log.warning("the client did not answer the restore question: %s", exc)
        ls.say(types.MessageType.Warning, f"no answer to the question ({exc}); nothing was written")
        return
    title = getattr(answer, "title", None)
    if title not in choices:
        ls.say(types.MessageType.Info, "cancelled; nothing was written")
        return
    choice = choices[title]
    try:
        if choice.rewind_paths is not None:
            instead = RestoreRequest(
                RestoreMode.REWIND, request.turn_id, paths=choice.rewind_paths, apply=request.apply
            )
            result = await run_restore(ls, instead)
        else:
            chosen = request._replace(
                force=choice.force, skip_conflicts=choice.skip, merge=choice.merge
            )
            result = await run_restore(ls, chosen)
    except Exception as exc:
        ls.say(types.MessageType.Error, to_rpc_error(exc).message)
        return
    status = RestoreStatus(result.status)
    if status in (RestoreStatus.APPLIED, RestoreStatus.NOTHING_TO_DO):
        undo = " (an undo brings back what was there)" if status == RestoreStatus.APPLIED else ""
        ls.say(types.MessageType.Info, f"{result.message}{undo}")
