"""Turns and the timeline: `rewind/listTurns`, `rewind/timeline`, `rewind/fileAt`,
`rewind/listFolder`, the recording
requests of an agent that lives in the editor (`rewind/beginTurn`, `rewind/recordEdit`,
`rewind/endTurn`), and the `rewind.diff` command."""

from __future__ import annotations

import logging
from typing import Any

from lsprotocol import types

from rewind_ls.protocol.contents import (
    FileAtParams,
    ListFolderParams,
    TimelinePageParams,
    TimelineParams,
)
from rewind_ls.protocol.history import FileVersionsParams
from rewind_ls.protocol.recording import BeginTurnParams, EndTurnParams, RecordEditParams
from rewind_ls.protocol.turns import ListTurnsParams
from rewind_ls.server.handlers.args import turn_arg
from rewind_ls.server.lsp import RewindServer, Wire, command, request, to_rpc_error

log = logging.getLogger("rewind_ls.server")

DIFF_MESSAGE_CHARS = 8000  # a diff shown as a message (client without showDocument) is cut here


@request("rewind/listTurns")
async def list_turns(ls: RewindServer, p: ListTurnsParams) -> Any:
    # The service made the wire form itself, each turn validated once when it was first listed.
    return Wire(await ls.call(ls.svc().list_turns, p.session_id, p.limit, p.before, p.turn_id))


@request("rewind/fileAt")
async def file_at(ls: RewindServer, p: FileAtParams) -> Any:
    return await ls.call(ls.svc().file_at, p.turn_id, p.uri, p.side)


@request("rewind/fileVersions")
async def file_versions(ls: RewindServer, p: FileVersionsParams) -> Any:
    return await ls.call(ls.svc().file_versions, p.uri)


@request("rewind/listFolder")
async def list_folder(ls: RewindServer, p: ListFolderParams) -> Any:
    return await ls.call(ls.svc().list_folder, p.turn_id, p.uri, p.side, p.recursive)


@request("rewind/timeline")
async def timeline(ls: RewindServer, p: TimelineParams) -> Any:
    return await ls.call(ls.svc().timeline, p.session_id, p.limit)


@request("rewind/timelinePage")
async def timeline_page(ls: RewindServer, p: TimelinePageParams) -> Any:
    return await ls.call(ls.svc().timeline_page, p.session_id, p.all, p.nonce)


@request("rewind/beginTurn")
async def begin_turn(ls: RewindServer, p: BeginTurnParams) -> Any:
    info = await ls.call(ls.svc().begin_turn, p.session_id, p.prompt, p.agent)
    ls.notify_turns([p.session_id], "recorded")
    return info


@request("rewind/recordEdit")
async def record_edit(ls: RewindServer, p: RecordEditParams) -> Any:
    return await ls.call(ls.svc().record_edit, p.session_id, p.uri, p.phase, p.text)


@request("rewind/endTurn")
async def end_turn(ls: RewindServer, p: EndTurnParams) -> Any:
    info = await ls.call(ls.svc().end_turn, p.session_id)
    ls.notify_turns([p.session_id], "recorded")
    return info


@command("rewind.diff")
async def cmd_diff(ls: RewindServer, *args: Any) -> dict[str, Any]:
    turn = turn_arg("rewind.diff", args, "[turn, uri?]")
    uri = args[1] if len(args) > 1 and isinstance(args[1], str) else None
    await ls.wait_ready()
    try:
        doc_uri, text = await ls.call(ls.svc().diff_document, turn, uri)
    except Exception as exc:
        raise to_rpc_error(exc) from None
    if ls.show_document:
        # Not awaited: the command answers now, whatever the client does with the document.
        ls.background(show_document(ls, doc_uri))
    else:
        cut = text if len(text) <= DIFF_MESSAGE_CHARS else text[:DIFF_MESSAGE_CHARS] + "\n[cut]\n"
        ls.window_show_message(types.ShowMessageParams(type=types.MessageType.Info, message=cut))
    return {"uri": doc_uri, "text": text}


async def show_document(ls: RewindServer, uri: str) -> None:
    try:
        await ls.window_show_document_async(types.ShowDocumentParams(uri=uri, take_focus=True))
    except Exception as exc:
        log.info("client could not show %s: %s", uri, exc)
