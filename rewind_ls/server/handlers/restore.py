"""Restores: `rewind/preview`, `rewind/restore`, `rewind/undo`, `rewind/summarize`, and the
`rewind.rewind` / `rewind.revert` / `rewind.undo` commands (preview, ask, restore on the answer).
The talking with the client is the restore driver's (`restore_driver.py`)."""

from __future__ import annotations

import asyncio
from typing import Any

from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams

from rewind_ls.core.model import RestoreMode, RestoreStatus, Scope
from rewind_ls.core.restore.flow import SCOPES
from rewind_ls.core.restore.request import RestoreRequest
from rewind_ls.protocol.restore import PreviewParams, RestoreParams, SummarizeParams, UndoParams
from rewind_ls.server import restore_driver as driver
from rewind_ls.server.handlers.args import turn_arg
from rewind_ls.server.lsp import RewindServer, command, request, to_rpc_error


@request("rewind/preview")
async def preview(ls: RewindServer, p: PreviewParams) -> Any:
    asked = RestoreRequest(
        RestoreMode(p.mode), p.turn_id, Scope(p.scope), p.paths, p.hunks, version=p.version
    )
    return await driver.preview(ls, asked)


@request("rewind/restore")
async def restore(ls: RewindServer, p: RestoreParams) -> Any:
    asked = RestoreRequest(
        RestoreMode(p.mode),
        p.turn_id,
        Scope(p.scope),
        p.paths,
        p.hunks,
        p.merge,
        p.force,
        p.skip_conflicts,
        p.apply,
        p.version,
    )
    return await driver.run_restore(ls, asked)


@request("rewind/undo")
async def undo(ls: RewindServer, p: UndoParams) -> Any:
    asked = RestoreRequest(
        RestoreMode.UNDO, force=p.force, skip_conflicts=p.skip_conflicts, apply=p.apply
    )
    return await driver.run_restore(ls, asked)


@request("rewind/summarize")
async def summarize(ls: RewindServer, p: SummarizeParams) -> Any:
    svc = ls.svc()
    turn = await ls.call(svc.turn, p.turn_id)
    source = await ls.call(svc.summarize_source, turn)
    # The summarizer may run for minutes (REWIND_LS_SUMMARIZER_TIMEOUT): on its own thread, not
    # the store's worker, so saves and other requests go on meanwhile.
    summary = await asyncio.to_thread(source.run, p.direction, p.instructions)
    conversation = await ls.call(svc.adopt_summary, source, summary)
    what = "from" if p.direction == "from" else "up to"
    return {
        "status": RestoreStatus.APPLIED,
        "message": f"conversation summarized {what} turn {turn.number}: "
        f"{conversation['resume_command']}",
        "direction": p.direction,
        "conversation": conversation,
        "prompt": turn.prompt,
    }


@command("rewind.rewind")
async def cmd_rewind(ls: RewindServer, *args: Any) -> dict[str, Any]:
    turn = turn_arg("rewind.rewind", args, "[turn, scope?, options?]")
    scope = args[1] if len(args) > 1 and args[1] else Scope.CODE
    if scope not in SCOPES:
        raise JsonRpcInvalidParams(
            f"rewind.rewind: scope must be code, conversation or both, not {scope!r}"
        )
    opts = args[2] if len(args) > 2 else None
    asked = RestoreRequest(RestoreMode.REWIND, turn, Scope(scope))
    return await driver.command_restore(ls, asked, opts)


@command("rewind.revert")
async def cmd_revert(ls: RewindServer, *args: Any) -> dict[str, Any]:
    turn = turn_arg("rewind.revert", args, "[turn, options?]")
    opts = args[1] if len(args) > 1 else None
    return await driver.command_restore(ls, RestoreRequest(RestoreMode.REVERT, turn), opts)


@command("rewind.restoreVersion")
async def cmd_restore_version(ls: RewindServer, *args: Any) -> dict[str, Any]:
    """[uri, hash, options?]: the file back to one recorded version (local history), asked first."""
    if len(args) < 2 or not isinstance(args[0], str) or not isinstance(args[1], str):
        raise JsonRpcInvalidParams("rewind.restoreVersion: arguments are [uri, hash, options?]")
    await ls.wait_ready()
    try:
        turn_id, full = await ls.call(ls.svc().find_version, args[0], args[1])
    except Exception as exc:
        err = to_rpc_error(exc)
        ls.say(types.MessageType.Error, err.message)
        raise err from None
    opts = args[2] if len(args) > 2 else None
    asked = RestoreRequest(RestoreMode.VERSION, turn_id, paths=[args[0]], version=full)
    return await driver.command_restore(ls, asked, opts)


@command("rewind.undo")
async def cmd_undo(ls: RewindServer, *args: Any) -> dict[str, Any]:
    opts = args[0] if args else None
    return await driver.command_restore(ls, RestoreRequest(RestoreMode.UNDO), opts)
