"""Review: `textDocument/hover` (who last changed the line), `textDocument/codeAction` ("Revert this
change" per hunk, "Revert turn N in this file"), `textDocument/codeLens` (turns in transcripts and
the timeline), `rewind/blame`, `rewind/turnHunks`, and the `rewind.revertHunk` /
`rewind.revertInFile` commands the actions run (they preview and ask like every restore command).
The work is `server/review.py`'s and `server/codelens.py`'s."""

from __future__ import annotations

import logging
from typing import Any

from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams

from rewind_ls.core.model import RestoreMode
from rewind_ls.core.restore.request import RestoreRequest
from rewind_ls.protocol.review import BlameParams, TurnHunksParams
from rewind_ls.server import codelens
from rewind_ls.server import restore_driver as driver
from rewind_ls.server.handlers.args import turn_arg, uri_arg
from rewind_ls.server.lsp import RewindServer, command, feature, request

log = logging.getLogger("rewind_ls.server")

REVIEW_KIND = types.CodeActionKind.RefactorRewrite
REVIEW_READY_SECONDS = 10.0  # how long a hover or code action sent during start-up waits


@feature(types.TEXT_DOCUMENT_HOVER)
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


@feature(types.TEXT_DOCUMENT_CODE_ACTION, types.CodeActionOptions(code_action_kinds=[REVIEW_KIND]))
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


@feature(types.TEXT_DOCUMENT_CODE_LENS)
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


@request("rewind/blame")
async def blame(ls: RewindServer, p: BlameParams) -> Any:
    return await ls.call(ls.svc().blame, p.uri, ls.docs())


@request("rewind/turnHunks")
async def turn_hunks(ls: RewindServer, p: TurnHunksParams) -> Any:
    return await ls.call(ls.svc().turn_hunks, p.turn_id, p.uri, ls.docs())


@command("rewind.revertHunk")
async def cmd_revert_hunk(ls: RewindServer, *args: Any) -> dict[str, Any]:
    usage = "[turn, uri, hunkIndex, options?]"
    turn = turn_arg("rewind.revertHunk", args, usage)
    uri = uri_arg("rewind.revertHunk", args, 1, usage)
    index = args[2] if len(args) > 2 else None
    if not isinstance(index, int) or isinstance(index, bool) or index < 0:
        raise JsonRpcInvalidParams(f"rewind.revertHunk: arguments are {usage} (a 0-based hunk)")
    opts = args[3] if len(args) > 3 else None
    asked = RestoreRequest(RestoreMode.REVERT, turn, paths=[uri], hunks=[index])
    return await driver.command_restore(ls, asked, opts)


@command("rewind.revertInFile")
async def cmd_revert_in_file(ls: RewindServer, *args: Any) -> dict[str, Any]:
    usage = "[turn, uri, options?]"
    turn = turn_arg("rewind.revertInFile", args, usage)
    uri = uri_arg("rewind.revertInFile", args, 1, usage)
    opts = args[2] if len(args) > 2 else None
    asked = RestoreRequest(RestoreMode.REVERT, turn, paths=[uri])
    return await driver.command_restore(ls, asked, opts)
