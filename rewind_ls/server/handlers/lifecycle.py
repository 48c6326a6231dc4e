"""Lifecycle: `initialize` (what the client advertised decides what is sent), `initialized` (the
store opens; requests that came earlier wait for it), the poll for turns other processes record,
and `shutdown`."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from lsprotocol import types

from rewind_ls.core.errors import RewindError
from rewind_ls.server.lsp import RewindServer, feature
from rewind_ls.server.routing import ClientEditSupport
from rewind_ls.server.service import Service

log = logging.getLogger("rewind_ls.server")

POLL_SECONDS = 0.5  # how often the store is checked for turns recorded by other processes


@feature(types.INITIALIZE)
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


@feature(types.INITIALIZED)
async def on_initialized(ls: RewindServer, params: types.InitializedParams) -> None:
    folders = ls.workspace.folders
    root = next(iter(folders.values())).uri if folders else ls.workspace.root_uri
    try:
        await open_workspace(ls, root)
    finally:
        ls.ready.set()


async def open_workspace(ls: RewindServer, root: str | None) -> None:
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
            # Local history: the person's work something else overwrote, said once.
            try:
                notices = await ls.call(ls.svc().overwritten_notices)
            except Exception:
                log.exception("looking for overwritten versions failed")
                notices = []
            for line in notices:
                ls.say(types.MessageType.Warning, line)
            for line in await ls.call(ls.svc().hook_warnings):
                ls.window_log_message(
                    types.LogMessageParams(type=types.MessageType.Warning, message=line)
                )


@feature(types.SHUTDOWN)
def on_shutdown(ls: RewindServer, params: Any) -> None:
    if ls.poller is not None:
        ls.poller.cancel()
    if ls.unsaved_task is not None:
        ls.unsaved_task.cancel()
    if ls.service is not None:
        try:
            ls.service.forget_unsaved()  # no buffer of this server is anyone's concern now
        except OSError:
            pass


# --- saves --------------------------------------------------------------------------------------
