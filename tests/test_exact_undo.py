"""Exact undo over unsaved buffers, through the real server with the test editor: an undo returns
the disk to its last saved bytes and the buffer to its unsaved text, whichever order the person
uses (the editor's own undo first or not). The real-editor versions are in tests/editors/."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcServerError

from tests.support.agent import FakeClaude
from tests.support.lsp_client import Editor, start, uri_of
from tests.test_server import Session, record

SAVED, AGENT1, AGENT2, TYPED = "saved v0\n", "agent v1\n", "agent v2\n", "agent v2\nmine\n"


@pytest.fixture
async def lsp(tmp_path: Path) -> AsyncIterator[Session]:
    ws = tmp_path / "ws"
    ws.mkdir()
    home = tmp_path / "home"
    agent = FakeClaude(ws, home)
    client, editor = await start(ws, home, init_options={"restoreUnsaved": True})
    session = Session(ws, home, client, editor, agent)
    try:
        yield session
    finally:
        await client.shutdown_session()


def _save_restored(editor: Editor, ws: Path, result: dict[str, Any]) -> None:
    """What the first-party clients do after a restore: save the buffers it changed, then put
    back the unsaved texts the result lists, unsaved."""
    for f in result["files"]:
        uri = f["uri"]
        if f["action"] != "delete" and uri in editor.buffers and f["path"] not in result["failed"]:
            editor.save(ws / f["path"])
    for u in result["unsaved"]:
        edit = u["edit"]
        for change in (edit or {}).get("documentChanges", []):
            editor._edit_buffer(
                change["textDocument"]["uri"],
                [
                    types.TextEdit(
                        range=types.Range(
                            start=types.Position(**e["range"]["start"]),
                            end=types.Position(**e["range"]["end"]),
                        ),
                        new_text=e["newText"],
                    )
                    for e in change["edits"]
                ],
            )


async def _rewound(lsp: Session) -> Path:
    """a.txt saved as AGENT2 with the person's unsaved TYPED in its buffer, rewound to turn 1
    (forced over the unsaved edit) and saved as the client does."""
    ws = lsp.ws
    (ws / "a.txt").write_text(SAVED)
    await record(lsp, "one", {"a.txt": AGENT1.encode()})
    await record(lsp, "two", {"a.txt": AGENT2.encode()})
    lsp.editor.open(ws / "a.txt")
    lsp.editor.type(ws / "a.txt", TYPED)
    t1, _ = await lsp.turn_ids()
    result = await lsp.call("rewind/restore", {"turnId": t1, "force": True})
    assert result["status"] == "applied", result
    _save_restored(lsp.editor, ws, result)
    assert (ws / "a.txt").read_text() == SAVED
    assert lsp.editor.text(ws / "a.txt") == SAVED
    return ws


async def test_undo_brings_back_unsaved_text_unsaved_and_the_saved_disk(lsp: Session) -> None:
    ws = await _rewound(lsp)
    undo = await lsp.call("rewind/undo", {})
    assert undo["status"] == "applied", undo
    _save_restored(lsp.editor, ws, undo)
    assert (ws / "a.txt").read_bytes() == AGENT2.encode()  # the disk's last saved bytes
    assert lsp.editor.text(ws / "a.txt") == TYPED  # the buffer's unsaved text
    assert "a.txt" in undo["message"] and "not saved" in undo["message"], undo


async def test_editor_undo_first_then_rewind_undo_returns_the_disk(lsp: Session) -> None:
    ws = await _rewound(lsp)
    lsp.editor.type(ws / "a.txt", TYPED)  # Ctrl+Z / u in the buffer: its unsaved text is back
    undo = await lsp.call("rewind/undo", {})
    assert undo["status"] == "applied", undo
    _save_restored(lsp.editor, ws, undo)
    assert (ws / "a.txt").read_bytes() == AGENT2.encode()
    assert lsp.editor.text(ws / "a.txt") == TYPED


async def test_undo_of_the_undo_is_exact_too(lsp: Session) -> None:
    ws = await _rewound(lsp)
    undo = await lsp.call("rewind/undo", {})
    _save_restored(lsp.editor, ws, undo)
    again = await lsp.call("rewind/undo", {"force": True})
    assert again["status"] == "applied", again
    _save_restored(lsp.editor, ws, again)
    assert (ws / "a.txt").read_text() == SAVED
    assert lsp.editor.text(ws / "a.txt") == SAVED


async def test_a_save_after_the_restore_is_a_conflict_not_overwritten(lsp: Session) -> None:
    ws = await _rewound(lsp)
    lsp.editor.type(ws / "a.txt", TYPED)  # the editor's undo...
    (ws / "a.txt").write_text("saved by another tool\n")  # ...and a write under it
    with pytest.raises(JsonRpcServerError, match=r"a\.txt: saved since the restore"):
        await lsp.call("rewind/undo", {})
    assert (ws / "a.txt").read_text() == "saved by another tool\n"


async def test_gc_keeps_the_saved_disk_content(lsp: Session) -> None:
    ws = await _rewound(lsp)
    from rewind_ls.core.store import Store, gc

    def collect() -> None:
        store = Store.open(str(ws))
        try:
            gc.collect(store, retention_days=10_000)
        finally:
            store.close()

    await asyncio.get_running_loop().run_in_executor(None, collect)
    undo = await lsp.call("rewind/undo", {})
    _save_restored(lsp.editor, ws, undo)
    assert (ws / "a.txt").read_bytes() == AGENT2.encode()
    assert lsp.editor.text(ws / "a.txt") == TYPED


async def test_a_client_without_restore_unsaved_gets_todays_behaviour(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    home = tmp_path / "home"
    agent = FakeClaude(ws, home)
    client, editor = await start(ws, home)
    lsp = Session(ws, home, client, editor, agent)
    try:
        await _rewound(lsp)
        undo = await lsp.call("rewind/undo", {})
        assert undo["unsaved"] == []
        assert editor.text(ws / "a.txt") == TYPED
    finally:
        await client.shutdown_session()
    assert uri_of(ws / "a.txt")


async def test_the_cli_undo_names_the_file_it_cannot_keep_unsaved(lsp: Session) -> None:
    """`rewind-ls undo` has no buffers: it says, per file, that the unsaved text goes to disk."""
    import subprocess
    import sys

    ws = await _rewound(lsp)
    proc = await asyncio.get_running_loop().run_in_executor(
        None,
        lambda: subprocess.run(
            [sys.executable, "-m", "rewind_ls", "undo", "--dry-run"],
            cwd=ws,
            env={**lsp.agent.env},
            capture_output=True,
            text=True,
        ),
    )
    assert "a.txt: held unsaved text in the editor when the restore ran" in proc.stdout, (
        proc.stdout + proc.stderr
    )


async def test_a_conflict_message_names_no_command_line_flag(lsp: Session) -> None:
    """Editors ask Skip / Overwrite / Cancel; the server's words never send the person to flags
    no editor has (issue 36, item 2)."""
    ws = await _rewound(lsp)
    lsp.editor.type(ws / "a.txt", TYPED)
    (ws / "a.txt").write_text("saved by another tool\n")
    with pytest.raises(JsonRpcServerError) as info:
        await lsp.call("rewind/undo", {})
    assert "a.txt" in str(info.value) and "--" not in str(info.value), info.value
