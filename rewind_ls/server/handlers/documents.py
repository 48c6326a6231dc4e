"""Saves: the content before a save is kept (`willSaveWaitUntil`, never delaying the save) and the
save is recorded as the person's change (`didSave`)."""

from __future__ import annotations

import asyncio
import logging

from lsprotocol import types

from rewind_ls.server.lsp import RewindServer, feature

log = logging.getLogger("rewind_ls.server")


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
    try:
        if await ls.call(ls.service.did_save, params.text_document.uri):
            ls.notify_turns(["editor"], "saved")
    except Exception:
        log.exception("recording a save failed")
