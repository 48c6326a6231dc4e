"""The pygls glue: receives LSP messages, validates `rewind/*` params with the protocol models, runs
the work on the store's worker thread (`Service`), and talks back to the client.

Nothing here decides what a restore means; that is the core's job (`rewind_ls.core.restore.flow`,
`rewind_ls.core.restore.plan`), with `service.py` for the editor's side (routing each path, the edit).
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
import threading
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, NamedTuple, TypeVar

import attrs
from lsprotocol import types
from pydantic import BaseModel, ValidationError
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams, JsonRpcServerError
from pygls.io_ import StdoutWriter
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol

from rewind_ls import __version__
from rewind_ls.core.errors import BadInput, BadPath, ConflictError, RewindError, UnknownTurn
from rewind_ls.core.restore.planner import restore_label
from rewind_ls.server import codelens, framing
from rewind_ls.server import protocol as proto
from rewind_ls.server.routing import ClientEditSupport
from rewind_ls.server.service import EditorRestore, PendingRestore, Service
from rewind_ls.server.workspace_view import OpenDoc

log = logging.getLogger("rewind_ls.server")

T = TypeVar("T")
M = TypeVar("M", bound=BaseModel)

# JSON-RPC error codes of rewind-ls (the server-error range).
UNKNOWN_TURN = -32001
BAD_PATH = -32002
CONFLICT = -32003
REWIND_ERROR = -32000

PROGRESS_THRESHOLD = 5  # files: restores larger than this report $/progress
VERIFY_SECONDS = 5.0  # how long to wait for the client's document updates after applyEdit
POLL_SECONDS = 0.5  # how often the store is checked for turns recorded by other processes


@attrs.define
class RawRequest:
    id: Any
    method: str
    jsonrpc: str
    params: Any = None


@attrs.define
class RawNotification:
    method: str
    jsonrpc: str
    params: Any = None


class RewindProtocol(LanguageServerProtocol):
    """`rewind/*` params arrive as plain JSON (dicts) so the pydantic models can validate them."""

    def get_message_type(self, method: str) -> type[Any] | None:  # type: ignore[override]
        if method.startswith("rewind/"):
            return RawNotification if method == "rewind/didChangeTurns" else RawRequest
        return super().get_message_type(method)


class RewindServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__("rewind-ls", __version__, protocol_cls=RewindProtocol)
        self.worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="rewind-store")
        self.service: Service | None = None
        self.support = ClientEditSupport()
        self.lens_refresh = False
        self.progress_ok = False
        self.show_document = False
        # rewind/didChangeTurns is ours, not LSP: sent only to a client that asked for it.
        self.turn_notifications = False
        # Work that outlives its request: restores waiting for the person's answer to their preview.
        self.asks: set[asyncio.Task[None]] = set()
        self.poller: asyncio.Task[None] | None = None
        # Set once `initialized` has opened the store (or failed to): requests that arrive earlier
        # wait for it instead of failing with "no workspace yet".
        self.ready = asyncio.Event()

    async def call(self, fn: Callable[..., T], *args: Any) -> T:
        return await asyncio.get_running_loop().run_in_executor(self.worker, fn, *args)

    async def wait_ready(self, seconds: float = 60.0) -> None:
        try:
            await asyncio.wait_for(self.ready.wait(), seconds)
        except asyncio.TimeoutError:
            pass

    def svc(self) -> Service:
        if self.service is None:
            raise _server_error("rewind-ls: the server has no workspace yet", REWIND_ERROR)
        return self.service

    def docs(self) -> dict[str, OpenDoc]:
        return {
            uri: OpenDoc(uri, doc.source, doc.version)
            for uri, doc in self.workspace.text_documents.items()
        }

    def background(self, work: Awaitable[None]) -> None:
        task = asyncio.ensure_future(work)
        self.asks.add(task)
        task.add_done_callback(self.asks.discard)

    def start_io(self, stdin: Any = None, stdout: Any = None) -> None:
        """pygls' stdio loop, with our reader: every malformed message gets a JSON-RPC error."""
        self._stop_event = threading.Event()
        self.protocol.set_writer(StdoutWriter(stdout or sys.stdout.buffer))
        try:
            asyncio.run(framing.run(self._stop_event, stdin or sys.stdin.buffer, self.protocol))
        except BrokenPipeError:
            log.error("the client closed the connection")
        except (KeyboardInterrupt, SystemExit):
            pass
        finally:
            self.shutdown()  # type: ignore[no-untyped-call]

    def notify_turns(self, session_ids: list[str], reason: str) -> None:
        if self.turn_notifications:
            self.protocol.notify(
                "rewind/didChangeTurns",
                proto.DidChangeTurnsParams(session_ids=session_ids, reason=reason).model_dump(
                    mode="json", by_alias=True
                ),
            )
        if self.lens_refresh:
            self.workspace_code_lens_refresh(None)


server = RewindServer()


# --- errors and params --------------------------------------------------------------------------


def _server_error(message: str, code: int, data: Any = None) -> JsonRpcException:
    error: JsonRpcException = JsonRpcServerError(message, code, data)  # type: ignore[no-untyped-call]
    return error


def to_rpc_error(exc: Exception) -> JsonRpcException:
    if isinstance(exc, JsonRpcException):
        return exc
    if isinstance(exc, UnknownTurn):
        return _server_error(str(exc), UNKNOWN_TURN)
    if isinstance(exc, BadPath):
        return _server_error(str(exc), BAD_PATH, {"path": exc.path})
    if isinstance(exc, ConflictError):
        return _server_error(str(exc), CONFLICT, {"status": "conflict", "paths": exc.paths})
    if isinstance(exc, BadInput):
        return JsonRpcInvalidParams(str(exc))
    if isinstance(exc, RewindError):
        return _server_error(str(exc), REWIND_ERROR)
    log.exception("internal error")
    return _server_error(f"rewind-ls internal error: {type(exc).__name__}: {exc}", REWIND_ERROR)


def parse(model: type[M], params: Any, method: str) -> M:
    if params is None:
        params = {}
    if not isinstance(params, dict):
        raise JsonRpcInvalidParams(
            f"{method}: params must be an object, got {type(params).__name__}"
        )
    try:
        return model.model_validate(params)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or '(params)'}: {err['msg']}"
            for err in exc.errors()
        )
        raise JsonRpcInvalidParams(f"{method}: {problems}") from None


def dump(model: BaseModel) -> dict[str, Any]:
    return model.model_dump(mode="json", by_alias=True)


def guarded(
    method: str,
) -> Callable[[Callable[..., Awaitable[Any]]], Callable[..., Awaitable[Any]]]:
    """Register a `rewind/*` request whose failures become clear JSON-RPC errors."""

    def wrap(fn: Callable[..., Awaitable[Any]]) -> Callable[..., Awaitable[Any]]:
        async def handler(ls: RewindServer, params: Any) -> Any:
            try:
                await ls.wait_ready()
                return await fn(ls, params)
            except Exception as exc:
                raise to_rpc_error(exc) from None

        handler.__name__ = fn.__name__
        server.feature(method)(handler)
        return fn

    return wrap


# --- lifecycle ----------------------------------------------------------------------------------


@server.feature(types.INITIALIZE)
def on_initialize(ls: RewindServer, params: types.InitializeParams) -> None:
    caps = params.capabilities
    ws_edit = caps.workspace.workspace_edit if caps.workspace else None
    ops = (
        [str(getattr(o, "value", o)) for o in (ws_edit.resource_operations or [])]
        if ws_edit
        else []
    )
    options = (
        params.initialization_options if isinstance(params.initialization_options, dict) else {}
    )
    # Default "server": files that are not open are written by the server. lsp-mode 8 and eglot 1.9
    # could not apply a TextDocumentEdit to a closed file (nor create one) safely.
    closed = options.get("closedFiles", "server")
    if closed not in ("edit", "server"):
        ls.window_show_message(
            types.ShowMessageParams(
                type=types.MessageType.Warning,
                message=f"rewind-ls: initializationOptions.closedFiles must be 'edit' or 'server', "
                f"not {closed!r}; using 'server'",
            )
        )
        closed = "server"
    experimental = caps.experimental if isinstance(caps.experimental, dict) else {}
    ls.turn_notifications = (
        options.get("didChangeTurns") is True or experimental.get("rewindDidChangeTurns") is True
    )
    ls.support = ClientEditSupport(
        document_changes=bool(ws_edit and ws_edit.document_changes),
        create="create" in ops,
        delete="delete" in ops,
        closed_files=closed,
        restore_unsaved=options.get("restoreUnsaved") is True,
    )
    lens = caps.workspace.code_lens if caps.workspace else None
    ls.lens_refresh = bool(lens and lens.refresh_support)
    ls.progress_ok = bool(caps.window and caps.window.work_done_progress)
    ls.show_document = bool(
        caps.window and caps.window.show_document and caps.window.show_document.support
    )


@server.feature(types.INITIALIZED)
async def on_initialized(ls: RewindServer, params: types.InitializedParams) -> None:
    folders = ls.workspace.folders
    root = next(iter(folders.values())).uri if folders else ls.workspace.root_uri
    try:
        await _open_workspace(ls, root)
    finally:
        ls.ready.set()


async def _open_workspace(ls: RewindServer, root: str | None) -> None:
    if not root:
        ls.window_show_message(
            types.ShowMessageParams(
                type=types.MessageType.Warning,
                message="rewind-ls: no workspace folder was given; open a folder to use rewind",
            )
        )
        return
    from rewind_ls.core.fs.paths import find_workspace_root, from_uri

    path = find_workspace_root(from_uri(root))
    # The negotiated encoding may be an enum member or the client's plain string.
    encoding = ls.workspace.position_encoding or "utf-16"
    ls.support.encoding = str(getattr(encoding, "value", encoding))
    try:
        ls.service = await ls.call(Service, path)
    except RewindError as exc:
        ls.window_show_message(
            types.ShowMessageParams(type=types.MessageType.Error, message=f"rewind-ls: {exc}")
        )
        return
    log.info("workspace %s (store %s)", path, ls.service.store.path)
    ls.poller = asyncio.ensure_future(poll(ls))


async def poll(ls: RewindServer) -> None:
    """Turns recorded by other processes (the agent's hooks) reach clients without a restart."""
    while True:
        await asyncio.sleep(POLL_SECONDS)
        try:
            changed = await ls.call(ls.svc().changed_sessions)
        except Exception:
            log.exception("polling the store failed")
            continue
        if changed:
            ls.notify_turns(changed, "recorded")
            for line in await ls.call(ls.svc().hook_warnings):
                ls.window_log_message(
                    types.LogMessageParams(type=types.MessageType.Warning, message=line)
                )


@server.feature(types.SHUTDOWN)
def on_shutdown(ls: RewindServer, params: Any) -> None:
    if ls.poller is not None:
        ls.poller.cancel()


# --- saves --------------------------------------------------------------------------------------


@server.feature(types.TEXT_DOCUMENT_WILL_SAVE_WAIT_UNTIL)
async def will_save_wait_until(
    ls: RewindServer, params: types.WillSaveTextDocumentParams
) -> list[types.TextEdit]:
    """Answer [] at once: record the pre-save content only if that takes well under the budget."""
    if ls.service is not None:
        job = asyncio.ensure_future(ls.call(ls.service.will_save, params.text_document.uri))
        try:
            await asyncio.wait_for(asyncio.shield(job), 0.3)
        except asyncio.TimeoutError:
            log.warning(
                "willSave recording of %s is slow; not delaying the save", params.text_document.uri
            )
        except Exception:
            log.exception("willSave recording failed")
    return []


@server.feature(types.TEXT_DOCUMENT_DID_SAVE, types.SaveOptions(include_text=False))
async def did_save(ls: RewindServer, params: types.DidSaveTextDocumentParams) -> None:
    if ls.service is None:
        return
    try:
        if await ls.call(ls.service.did_save, params.text_document.uri):
            ls.notify_turns(["editor"], "saved")
    except Exception:
        log.exception("recording a save failed")


# --- code lens ----------------------------------------------------------------------------------


@server.feature(types.TEXT_DOCUMENT_CODE_LENS)
async def code_lens(ls: RewindServer, params: types.CodeLensParams) -> list[types.CodeLens]:
    if ls.service is None:
        return []
    uri = params.text_document.uri
    doc = ls.workspace.text_documents.get(uri)
    if doc is None:
        return []
    try:
        lenses = await ls.call(codelens.lenses_for, ls.service, uri, doc.source)
    except Exception:
        log.exception("code lens failed for %s", uri)
        return []
    return [
        types.CodeLens(
            range=types.Range(types.Position(line, 0), types.Position(line, 0)),
            command=types.Command(title=title, command=command, arguments=args),
        )
        for line, title, command, args in lenses
    ]


# --- rewind/* requests ----------------------------------------------------------------------------


@guarded("rewind/listTurns")
async def list_turns(ls: RewindServer, params: Any) -> dict[str, Any]:
    p = parse(proto.ListTurnsParams, params, "rewind/listTurns")
    return dump(
        proto.ListTurnsResult.model_validate(
            await ls.call(ls.svc().list_turns, p.session_id, p.limit, p.before, p.turn_id)
        )
    )


@guarded("rewind/preview")
async def preview(ls: RewindServer, params: Any) -> dict[str, Any]:
    p = parse(proto.PreviewParams, params, "rewind/preview")
    svc = ls.svc()
    if p.mode == "undo":
        # The undo is a rewind to the latest restore point: previewed as one (named "undo of: ...").
        turn = await ls.call(svc.undo_point)
        plan_mode, turn_id = "rewind", turn.id
    elif p.turn_id is None:
        raise JsonRpcInvalidParams(f"rewind/preview: turnId is needed for mode {p.mode!r}")
    else:
        turn = await ls.call(svc.turn, p.turn_id)
        plan_mode, turn_id = p.mode, p.turn_id
    result: dict[str, Any] = {
        "turn": await ls.call(svc.turn_info, turn),
        "mode": p.mode,
        "scope": p.scope,
        "files": [],
        "conflicts": 0,
        "conversation": None,
    }
    if p.scope in ("code", "both"):
        plan = await ls.call(
            svc.plan,
            plan_mode,
            turn_id,
            ls.docs(),
            p.paths,
            p.scope,
            p.hunks,
            ls.support.restore_unsaved,
        )
        files = await ls.call(svc.preview, plan)
        result["files"] = files
        result["conflicts"] = sum(1 for f in files if f["conflict"])
    if p.scope in ("conversation", "both"):
        result["conversation"] = await ls.call(svc.conversation_preview, turn)
    return dump(proto.PreviewResult.model_validate(result))


@guarded("rewind/restore")
async def restore(ls: RewindServer, params: Any) -> dict[str, Any]:
    p = parse(proto.RestoreParams, params, "rewind/restore")
    return await run_restore(
        ls,
        p.mode,
        p.turn_id,
        p.scope,
        p.paths,
        p.force,
        p.skip_conflicts,
        p.apply,
        p.hunks,
        p.merge,
    )


@guarded("rewind/undo")
async def undo(ls: RewindServer, params: Any) -> dict[str, Any]:
    p = parse(proto.UndoParams, params, "rewind/undo")
    return await run_restore(ls, "undo", None, "code", None, p.force, p.skip_conflicts, p.apply)


async def run_restore(
    ls: RewindServer,
    mode: str,
    turn_id: str | None,
    scope: str,
    paths: list[str] | None,
    force: bool,
    skip_conflicts: bool,
    apply: bool,
    hunks: list[int] | None = None,
    merge: bool = False,
) -> dict[str, Any]:
    """A restore: the service plans it and forks the conversation (`Service.start_restore`), the
    client applies the edit, the service writes the rest and says what happened. `merge`: a
    revert writes overlapping changes with conflict markers."""
    svc = ls.svc()
    job = EditorRestore(mode, turn_id, scope, paths, ls.support, force, skip_conflicts, hunks)
    job.merge = merge
    await ls.call(svc.start_restore, job, ls.docs())
    outcome = None
    if job.pending is not None:
        try:
            outcome = await apply_pending(ls, job.pending, apply)
        except BaseException as exc:
            error = await ls.call(svc.code_failed, job, exc)
            if error is exc:
                raise
            raise error from exc
    result = await ls.call(svc.end_restore, job, outcome)
    if result["status"] in ("partial", "failed"):
        _say(ls, types.MessageType.Warning, result["message"])
    if result["status"] != "nothing-to-do":
        ls.notify_turns(["rewind"], "restored")
    return dump(proto.RestoreResult.model_validate(result))


async def apply_pending(ls: RewindServer, pending: PendingRestore, apply: bool) -> dict[str, Any]:
    """Send the restore's edit to the client, wait until its documents show it, and let the
    service write the rest (`Service.finish`)."""
    svc = ls.svc()
    if pending.edit is not None and not apply:
        # The caller applies the edit itself; the restore point is recorded as not applied.
        await ls.call(svc.finish, pending, False, [])
        return {
            "status": "planned",
            "failed": [],
            "written": [],
            "message": "edit returned, not applied (apply: false)",
        }
    token = await _progress_begin(ls, pending)
    try:
        applied, reason = True, ""
        if pending.edit is not None:
            applied, reason = await _send_edit(ls, pending)
        if token:
            ls.work_done_progress.report(
                token, types.WorkDoneProgressReport(message="verifying", percentage=60)
            )
        missing = await _wait_for_edit(ls, pending) if applied else []
        outcome: dict[str, Any] = await ls.call(svc.finish, pending, applied, missing, reason)
    finally:
        if token:
            ls.work_done_progress.end(token, types.WorkDoneProgressEnd(message="done"))
    return outcome


async def _progress_begin(ls: RewindServer, pending: PendingRestore) -> str | None:
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


async def _send_edit(ls: RewindServer, pending: PendingRestore) -> tuple[bool, str]:
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


async def _wait_for_edit(ls: RewindServer, pending: PendingRestore) -> list[str]:
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


@guarded("rewind/summarize")
async def summarize(ls: RewindServer, params: Any) -> dict[str, Any]:
    p = parse(proto.SummarizeParams, params, "rewind/summarize")
    svc = ls.svc()
    turn = await ls.call(svc.turn, p.turn_id)
    source = await ls.call(svc.summarize_source, turn)
    # The summarizer may run for minutes (REWIND_LS_SUMMARIZER_TIMEOUT): on its own thread, not
    # the store's worker, so saves and other requests go on meanwhile.
    summary = await asyncio.to_thread(source.run, p.direction, p.instructions)
    conversation = await ls.call(svc.adopt_summary, source, summary)
    what = "from" if p.direction == "from" else "up to"
    result = {
        "status": "applied",
        "message": f"conversation summarized {what} turn {turn.number}: "
        f"{conversation['resume_command']}",
        "direction": p.direction,
        "conversation": conversation,
        "prompt": turn.prompt,
    }
    return dump(proto.SummarizeResult.model_validate(result))


@guarded("rewind/fileAt")
async def file_at(ls: RewindServer, params: Any) -> dict[str, Any]:
    p = parse(proto.FileAtParams, params, "rewind/fileAt")
    return dump(
        proto.FileAtResult.model_validate(await ls.call(ls.svc().file_at, p.turn_id, p.uri, p.side))
    )


@guarded("rewind/timeline")
async def timeline(ls: RewindServer, params: Any) -> dict[str, Any]:
    p = parse(proto.TimelineParams, params, "rewind/timeline")
    result = await ls.call(ls.svc().timeline, p.session_id, p.limit)
    return dump(proto.TimelineResult.model_validate(result))


@guarded("rewind/beginTurn")
async def begin_turn(ls: RewindServer, params: Any) -> dict[str, Any]:
    p = parse(proto.BeginTurnParams, params, "rewind/beginTurn")
    info = await ls.call(ls.svc().begin_turn, p.session_id, p.prompt, p.agent)
    ls.notify_turns([p.session_id], "recorded")
    return dump(proto.TurnInfo.model_validate(info))


@guarded("rewind/recordEdit")
async def record_edit(ls: RewindServer, params: Any) -> dict[str, Any]:
    p = parse(proto.RecordEditParams, params, "rewind/recordEdit")
    result = await ls.call(ls.svc().record_edit, p.session_id, p.uri, p.phase, p.text)
    return dump(proto.RecordEditResult.model_validate(result))


@guarded("rewind/endTurn")
async def end_turn(ls: RewindServer, params: Any) -> dict[str, Any]:
    p = parse(proto.EndTurnParams, params, "rewind/endTurn")
    info = await ls.call(ls.svc().end_turn, p.session_id)
    ls.notify_turns([p.session_id], "recorded")
    return dump(proto.TurnInfo.model_validate(info))


# --- workspace/executeCommand (code lenses, generic clients) ------------------------------------


def _options(value: Any) -> proto.RestoreOptions:
    if value is None:
        return proto.RestoreOptions()
    return parse(proto.RestoreOptions, value, "command options")


VERBS = {"rewind": "Rewind", "revert": "Revert", "undo": "Undo"}
CANCEL = "Cancel"
PREVIEW_LINES = 30  # files listed in the question; the rest are counted
ASK_AFTER_SECONDS = 0.2  # between a command's answer and its question


class Choice(NamedTuple):
    """What one answer to the restore question runs."""

    force: bool = False
    skip: bool = False
    merge: bool = False  # a revert with conflict markers
    rewind_paths: list[str] | None = None  # "rewind that file instead": a rewind of these paths


def _question(
    label: str,
    verb: str,
    files: list[dict[str, Any]],
    conversation: dict[str, Any] | None,
    options: proto.RestoreOptions,
    detail: list[str] | None = None,
    mode: str = "rewind",
    number: int | None = None,
) -> tuple[str, dict[str, Choice]]:
    """The preview as a question, and its choices: title -> what it runs. `detail`: lines shown
    after the files (the merge of a hunk's revert). A revert whose changes overlap later edits
    offers only what can work: conflict markers, or rewinding those files (never an overwrite,
    which a revert refuses)."""
    changing = [f for f in files if f["action"] != "unchanged" or f["conflict"]]
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
    merge = [f for f in conflicts if f["conflict"]["kind"] == "merge"]
    if mode == "revert" and merge and not options.merge:
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


async def _command_restore(
    ls: RewindServer,
    mode: str,
    turn_ref: str | None,
    scope: str,
    opts: Any,
    paths: list[str] | None = None,
    hunks: list[int] | None = None,
) -> dict[str, Any]:
    """A restore from a lens or a command: preview it, ask the person (window/showMessageRequest),
    and answer the command at once. The restore runs when the answer comes; its outcome is a
    message. No request stays open while the person thinks (eglot gives up after 10 s)."""
    await ls.wait_ready()
    try:
        options = _options(opts)
        svc = ls.svc()
        turn = await ls.call(svc.turn, turn_ref) if turn_ref is not None else None
        turn_id = turn.id if turn is not None else None
        files: list[dict[str, Any]] = []
        conversation = None
        label = restore_label(mode, turn, scope) if turn is not None else mode
        verb = VERBS[mode]
        detail: list[str] = []
        if scope in ("code", "both"):
            plan = await ls.call(
                svc.plan, mode, turn_id, ls.docs(), paths, scope, hunks, ls.support.restore_unsaved
            )
            files = await ls.call(svc.preview, plan)
            label = plan.label or label
            if hunks is not None:
                from rewind_ls.server.review import merge_preview

                detail = merge_preview(plan)  # a hunk's revert shows the lines it changes
            # Rewinding to a restore point ("Undo this restore") is an undo: asked as one.
            verb = VERBS.get(plan.mode.value, verb)
        if scope in ("conversation", "both") and turn is not None:
            conversation = await ls.call(svc.conversation_preview, turn)
    except Exception as exc:
        err = to_rpc_error(exc)
        _say(ls, types.MessageType.Error, err.message)
        raise err from None
    if turn is not None and scope != "code":
        label = f"{label}: {' '.join(str(turn.prompt).split())[:80]!r}"
    nothing = not any(f["action"] != "unchanged" or f["conflict"] for f in files)
    if (scope == "code" and nothing) or (scope == "conversation" and not conversation):
        message = f"{label}: nothing to restore, every file already matches"
        _say(ls, types.MessageType.Info, message)
        return {"status": "nothing-to-do", "message": message, "files": files}
    number = turn.number if turn is not None else None
    question, choices = _question(label, verb, files, conversation, options, detail, mode, number)
    ls.background(
        _ask_then_restore(ls, mode, turn_id, scope, question, choices, options.apply, paths, hunks)
    )
    return {"status": "asking", "message": question, "files": files}


def _say(ls: RewindServer, kind: types.MessageType, message: str) -> None:
    ls.window_show_message(types.ShowMessageParams(type=kind, message=f"rewind-ls: {message}"))


async def _ask_then_restore(
    ls: RewindServer,
    mode: str,
    turn_id: str | None,
    scope: str,
    question: str,
    choices: dict[str, Choice],
    apply: bool,
    paths: list[str] | None = None,
    hunks: list[int] | None = None,
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
        _say(
            ls, types.MessageType.Warning, f"no answer to the question ({exc}); nothing was written"
        )
        return
    title = getattr(answer, "title", None)
    if title not in choices:
        _say(ls, types.MessageType.Info, "cancelled; nothing was written")
        return
    choice = choices[title]
    try:
        if choice.rewind_paths is not None:
            result = await run_restore(
                ls, "rewind", turn_id, "code", choice.rewind_paths, False, False, apply
            )
        else:
            result = await run_restore(
                ls,
                mode,
                turn_id,
                scope,
                paths,
                choice.force,
                choice.skip,
                apply,
                hunks,
                choice.merge,
            )
    except Exception as exc:
        _say(ls, types.MessageType.Error, to_rpc_error(exc).message)
        return
    if result["status"] in ("applied", "nothing-to-do"):
        undo = " (rewind.undo brings it back)" if result["status"] == "applied" else ""
        _say(ls, types.MessageType.Info, f"{result['message']}{undo}")


def _turn_arg(command: str, args: tuple[Any, ...], usage: str) -> str:
    """A turn id or number: "t…", "2" or 2."""
    if args and isinstance(args[0], (str, int)) and not isinstance(args[0], bool):
        return str(args[0])
    raise JsonRpcInvalidParams(f"{command}: arguments are {usage} (a turn number or id)")


@server.command("rewind.rewind")
async def cmd_rewind(ls: RewindServer, *args: Any) -> dict[str, Any]:
    turn = _turn_arg("rewind.rewind", args, "[turn, scope?, options?]")
    scope = args[1] if len(args) > 1 and args[1] else "code"
    if scope not in ("code", "conversation", "both"):
        raise JsonRpcInvalidParams(
            f"rewind.rewind: scope must be code, conversation or both, not {scope!r}"
        )
    return await _command_restore(ls, "rewind", turn, scope, args[2] if len(args) > 2 else None)


@server.command("rewind.revert")
async def cmd_revert(ls: RewindServer, *args: Any) -> dict[str, Any]:
    turn = _turn_arg("rewind.revert", args, "[turn, options?]")
    return await _command_restore(ls, "revert", turn, "code", args[1] if len(args) > 1 else None)


@server.command("rewind.undo")
async def cmd_undo(ls: RewindServer, *args: Any) -> dict[str, Any]:
    return await _command_restore(ls, "undo", None, "code", args[0] if args else None)


DIFF_MESSAGE_CHARS = 8000  # a diff shown as a message (client without showDocument) is cut here


@server.command("rewind.diff")
async def cmd_diff(ls: RewindServer, *args: Any) -> dict[str, Any]:
    turn = _turn_arg("rewind.diff", args, "[turn, uri?]")
    uri = args[1] if len(args) > 1 and isinstance(args[1], str) else None
    await ls.wait_ready()
    try:
        doc_uri, text = await ls.call(ls.svc().diff_document, turn, uri)
    except Exception as exc:
        raise to_rpc_error(exc) from None
    if ls.show_document:
        # Not awaited: the command answers now, whatever the client does with the document.
        ls.background(_show_document(ls, doc_uri))
    else:
        cut = text if len(text) <= DIFF_MESSAGE_CHARS else text[:DIFF_MESSAGE_CHARS] + "\n[cut]\n"
        ls.window_show_message(types.ShowMessageParams(type=types.MessageType.Info, message=cut))
    return {"uri": doc_uri, "text": text}


async def _show_document(ls: RewindServer, uri: str) -> None:
    try:
        await ls.window_show_document_async(types.ShowDocumentParams(uri=uri, take_focus=True))
    except Exception as exc:
        log.info("client could not show %s: %s", uri, exc)


# --- review: hover, code actions, rewind/blame, rewind/turnHunks (server/review.py) -------------

REVIEW_KIND = types.CodeActionKind.RefactorRewrite
REVIEW_READY_SECONDS = 10.0  # how long a hover or code action sent during start-up waits


@server.feature(types.TEXT_DOCUMENT_HOVER)
async def hover(ls: RewindServer, params: types.HoverParams) -> types.Hover | None:
    """Who last changed the line under the cursor: turn, agent / your save / shell, time, prompt."""
    await ls.wait_ready(REVIEW_READY_SECONDS)  # a request right after start waits for the store
    if ls.service is None:
        return None
    try:
        text = await ls.call(
            ls.service.hover, params.text_document.uri, params.position.line, ls.docs()
        )
    except Exception:
        log.exception("hover failed for %s", params.text_document.uri)
        return None
    if text is None:
        return None
    return types.Hover(
        contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=text),
        range=types.Range(
            types.Position(params.position.line, 0), types.Position(params.position.line + 1, 0)
        ),
    )


@server.feature(
    types.TEXT_DOCUMENT_CODE_ACTION, types.CodeActionOptions(code_action_kinds=[REVIEW_KIND])
)
async def code_action(
    ls: RewindServer, params: types.CodeActionParams
) -> list[types.CodeAction] | None:
    """ "Revert this change (turn N: prompt)" for each revertable hunk on the selected lines, and
    "Revert turn N in this file"; both run a command that previews and asks, then restores."""
    await ls.wait_ready(REVIEW_READY_SECONDS)
    if ls.service is None:
        return None
    only = params.context.only
    if only and not any(REVIEW_KIND.value.startswith(str(getattr(k, "value", k))) for k in only):
        return None
    first, last = params.range.start.line, params.range.end.line
    if last > first and params.range.end.character == 0:
        last -= 1  # a selection ending at column 0 does not include that line
    try:
        found = await ls.call(
            ls.service.code_actions, params.text_document.uri, first, last, ls.docs()
        )
    except Exception:
        log.exception("code actions failed for %s", params.text_document.uri)
        return None
    return [
        types.CodeAction(
            title=a["title"],
            kind=REVIEW_KIND,
            command=types.Command(title=a["title"], command=a["command"], arguments=a["arguments"]),
        )
        for a in found
    ]


@guarded("rewind/blame")
async def blame(ls: RewindServer, params: Any) -> dict[str, Any]:
    p = parse(proto.BlameParams, params, "rewind/blame")
    return dump(proto.BlameResult.model_validate(await ls.call(ls.svc().blame, p.uri, ls.docs())))


@guarded("rewind/turnHunks")
async def turn_hunks(ls: RewindServer, params: Any) -> dict[str, Any]:
    p = parse(proto.TurnHunksParams, params, "rewind/turnHunks")
    result = await ls.call(ls.svc().turn_hunks, p.turn_id, p.uri, ls.docs())
    return dump(proto.TurnHunksResult.model_validate(result))


def _uri_arg(command: str, args: tuple[Any, ...], at: int, usage: str) -> str:
    if len(args) > at and isinstance(args[at], str) and args[at]:
        return str(args[at])
    raise JsonRpcInvalidParams(f"{command}: arguments are {usage} (the file's URI)")


@server.command("rewind.revertHunk")
async def cmd_revert_hunk(ls: RewindServer, *args: Any) -> dict[str, Any]:
    usage = "[turn, uri, hunkIndex, options?]"
    turn = _turn_arg("rewind.revertHunk", args, usage)
    uri = _uri_arg("rewind.revertHunk", args, 1, usage)
    index = args[2] if len(args) > 2 else None
    if not isinstance(index, int) or isinstance(index, bool) or index < 0:
        raise JsonRpcInvalidParams(f"rewind.revertHunk: arguments are {usage} (a 0-based hunk)")
    opts = args[3] if len(args) > 3 else None
    return await _command_restore(ls, "revert", turn, "code", opts, [uri], [index])


@server.command("rewind.revertInFile")
async def cmd_revert_in_file(ls: RewindServer, *args: Any) -> dict[str, Any]:
    usage = "[turn, uri, options?]"
    turn = _turn_arg("rewind.revertInFile", args, usage)
    uri = _uri_arg("rewind.revertInFile", args, 1, usage)
    opts = args[2] if len(args) > 2 else None
    return await _command_restore(ls, "revert", turn, "code", opts, [uri])


def serve(tcp: str | None = None, log_level: str = "info", log_file: str | None = None) -> int:
    from rewind_ls.core.fs import config

    config.ensure_private_dir(config.home_dir())
    path = log_file or os.path.join(config.home_dir(), "server.log")
    # The log can hold source code (debug level logs every message): owner-only, like the store.
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600))
        os.chmod(path, 0o600)
    except OSError:
        pass
    logging.basicConfig(
        filename=path,
        level=getattr(logging, log_level.upper(), logging.INFO),
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    if tcp:
        host, _, port = tcp.rpartition(":")
        try:
            server.start_tcp(host or "127.0.0.1", int(port))
        except OSError as exc:  # the address cannot be listened on (not this machine's, taken)
            raise BadInput(f"--tcp {tcp}: cannot listen there: {exc.strerror or exc}") from None
    else:
        server.start_io()
    return 0
