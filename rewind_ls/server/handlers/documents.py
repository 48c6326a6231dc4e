"""Saves: the content before a save is kept (`willSaveWaitUntil`, never delaying the save) and the
save is recorded as the person's change (`didSave`). Every change of the open buffers (open, edit,
save, close) also refreshes, after a short pause, the list of unsaved buffers other processes
read before they restore (`Service.publish_unsaved`)."""

from __future__ import annotations

import asyncio
import logging

from lsprotocol import types

from rewind_ls.server.lsp import RewindServer, feature

log = logging.getLogger("rewind_ls.server")

# The pause after the last buffer change before the unsaved list is written again (typing is many
# changes a second; the list is read by restores started by other processes).
UNSAVED_PAUSE = 0.2


def buffers_changed(ls: RewindServer) -> None:
    """Write the unsaved list again once the buffers are still for `UNSAVED_PAUSE` seconds."""
    pending = ls.unsaved_task
    if pending is not None and not pending.done():
        pending.cancel()

    async def publish() -> None:
        await asyncio.sleep(UNSAVED_PAUSE)
        if ls.service is None:
            return
        try:
            await ls.call(ls.service.publish_unsaved, ls.docs())
        except Exception:
            log.exception("listing the unsaved buffers failed")

    ls.unsaved_task = asyncio.ensure_future(publish())


@feature(types.TEXT_DOCUMENT_DID_OPEN)
def did_open(ls: RewindServer, params: types.DidOpenTextDocumentParams) -> None:
    buffers_changed(ls)


@feature(types.TEXT_DOCUMENT_DID_CHANGE)
def did_change(ls: RewindServer, params: types.DidChangeTextDocumentParams) -> None:
    buffers_changed(ls)


@feature(types.TEXT_DOCUMENT_DID_CLOSE)
def did_close(ls: RewindServer, params: types.DidCloseTextDocumentParams) -> None:
    buffers_changed(ls)


@feature(types.TEXT_DOCUMENT_WILL_SAVE_WAIT_UNTIL)
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


@feature(types.TEXT_DOCUMENT_DID_SAVE, types.SaveOptions(include_text=False))
async def did_save(ls: RewindServer, params: types.DidSaveTextDocumentParams) -> None:
    if ls.service is None:
        return
    buffers_changed(ls)
    try:
        if await ls.call(ls.service.did_save, params.text_document.uri):
            ls.notify_turns(["editor"], "saved")
    except Exception:
        log.exception("recording a save failed")
