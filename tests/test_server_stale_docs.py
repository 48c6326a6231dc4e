"""Documents an editor keeps open after their file is gone (issue 36, item 1).

VS Code keeps the documents a multi-diff editor showed, and those of files a restore deleted, open
(`didOpen`, no `didClose`). Such a document is evidence of what the editor holds, never of what is
on disk: a deleted file with a leftover clean document is still deleted, and an undo that brings
the file back must recreate it on disk. A document the person typed into after the file went is
unsaved text, and is never overwritten unasked.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.support.agent import FakeClaude
from tests.support.lsp_client import start
from tests.test_server import Session, record

CONFIG = b"[tool]\nname = 'demo'\n"


@pytest.fixture(params=["visual_studio_code", "neovim", "visual_studio_code+edit"])
async def lsp(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Session]:
    ws = tmp_path / "ws"
    ws.mkdir()
    home = tmp_path / "home"
    agent = FakeClaude(ws, home)
    caps, _, closed = str(request.param).partition("+")
    options = {"closedFiles": closed} if closed else None
    client, editor = await start(ws, home, caps=caps, init_options=options)
    editor.keep_deleted = True  # like VS Code: a DeleteFile leaves the document open
    session = Session(ws, home, client, editor, agent)
    try:
        yield session
    finally:
        await session.client.shutdown_session()  # a test may have restarted the server


async def _two_turns(lsp: Session) -> tuple[str, str]:
    ws = lsp.ws
    (ws / "app.py").write_text("print('v0')\n")
    await record(lsp, "one", {"app.py": b"print('v1')\n"})
    await record(lsp, "two", {"config.toml": CONFIG, "app.py": b"print('v2')\n"})
    t1, t2 = await lsp.turn_ids()
    return t1, t2


async def test_undo_recreates_a_file_whose_stale_document_is_still_open(lsp: Session) -> None:
    ws = lsp.ws
    _, t2 = await _two_turns(lsp)
    lsp.editor.open(ws / "config.toml")  # shown by "Review Turn": opened, never closed
    rewind = await lsp.call("rewind/restore", {"turnId": t2})
    assert rewind["status"] == "applied", rewind
    assert not (ws / "config.toml").exists()
    assert (ws / "app.py").read_text() == "print('v1')\n"
    assert lsp.editor.text(ws / "config.toml") == CONFIG.decode()  # the leftover document

    preview = await lsp.call("rewind/preview", {"turnId": None, "mode": "undo"})
    actions = {f["path"]: f["action"] for f in preview["files"]}
    assert actions.get("config.toml") == "create", preview

    undo = await lsp.call("rewind/undo", {})
    assert undo["status"] == "applied", undo
    assert (ws / "config.toml").read_bytes() == CONFIG
    assert (ws / "app.py").read_text() == "print('v2')\n"
    assert lsp.editor.text(ws / "config.toml") == CONFIG.decode()


async def test_undo_after_a_server_restart_recreates_it_too(lsp: Session, tmp_path: Path) -> None:
    """The editor reopens its documents in a new server: the leftover arrives as a didOpen of a
    file that does not exist."""
    ws = lsp.ws
    _, t2 = await _two_turns(lsp)
    lsp.editor.open(ws / "config.toml")
    rewind = await lsp.call("rewind/restore", {"turnId": t2})
    assert rewind["status"] == "applied", rewind
    await lsp.client.shutdown_session()
    client, editor = await start(ws, lsp.home)
    editor.keep_deleted = True
    lsp.client, lsp.editor = client, editor
    editor.open(ws / "config.toml", CONFIG.decode())
    undo = await lsp.call("rewind/undo", {})
    assert undo["status"] == "applied", undo
    assert (ws / "config.toml").read_bytes() == CONFIG


async def test_text_typed_into_a_deleted_files_document_is_not_overwritten(lsp: Session) -> None:
    ws = lsp.ws
    _, t2 = await _two_turns(lsp)
    lsp.editor.open(ws / "config.toml")
    rewind = await lsp.call("rewind/restore", {"turnId": t2})
    assert rewind["status"] == "applied", rewind
    lsp.editor.type(ws / "config.toml", "[tool]\nname = 'mine'\n")  # unsaved, over no file
    preview = await lsp.call("rewind/preview", {"turnId": None, "mode": "undo"})
    conflicts = {f["path"]: f["conflict"] for f in preview["files"] if f.get("conflict")}
    assert "config.toml" in conflicts, preview


async def test_a_conflict_on_an_unsaved_buffer_says_so(lsp: Session) -> None:
    """Issue 36 item 12: the client's buffer differs from the disk, so the server knows it is
    unsaved: the conflict says that, not "an unsaved buffer, or an edit it did not record"."""
    ws = lsp.ws
    t1, _ = await _two_turns(lsp)
    lsp.editor.open(ws / "app.py")
    lsp.editor.type(ws / "app.py", "print('mine')\n")
    preview = await lsp.call("rewind/preview", {"turnId": t1})
    (conflict,) = [f["conflict"] for f in preview["files"] if f["path"] == "app.py"]
    assert conflict["message"] == (
        "app.py: unsaved changes in the editor, which the restore would replace"
    ), conflict
