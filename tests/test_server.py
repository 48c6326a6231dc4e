"""The real language server over stdio, driven with the recorded capabilities of real clients.

The test editor (tests/support/lsp_client.py) applies workspace/applyEdit to its buffers and to real
files with its own position math; every check compares bytes on disk or buffer text.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException

from tests.support.agent import FakeClaude
from tests.support.lsp_client import Editor, start, uri_of
from tests.support.wire import check_response

# "+edit": closed files travel in the WorkspaceEdit (closedFiles: "edit") instead of being written by
# the server (the default).
CLIENTS = ["visual_studio_code", "neovim", "neovim@v0.7.0", "visual_studio_code+edit"]


def _get(obj: Any, key: str) -> Any:
    """Results arrive as pygls' generic objects: attribute access with the camelCase names."""
    return obj[key] if isinstance(obj, dict) else getattr(obj, key)


async def request(client: Any, method: str, params: dict[str, Any]) -> Any:
    return await asyncio.wait_for(client.protocol.send_request_async(method, params), 30)


def as_dict(obj: Any) -> Any:
    if isinstance(obj, tuple) and hasattr(obj, "_asdict"):
        return {k: as_dict(v) for k, v in obj._asdict().items()}
    if isinstance(obj, (list, tuple)):
        return [as_dict(v) for v in obj]
    return obj


class Session:
    def __init__(
        self, ws: Path, home: Path, client: Any, editor: Editor, agent: FakeClaude
    ) -> None:
        self.ws = ws
        self.home = home
        self.client = client
        self.editor = editor
        self.agent = agent

    async def call(self, method: str, params: dict[str, Any] | None = None) -> Any:
        result = as_dict(await request(self.client, method, params or {}))
        if method.startswith("rewind/"):
            check_response(method, result)  # every answer is exactly its protocol shape
        return result

    async def turn_ids(self) -> list[str]:
        listing = await self.call("rewind/listTurns", {"sessionId": self.agent.session_id})
        return [t["id"] for t in listing["sessions"][0]["turns"]]


@pytest.fixture(params=CLIENTS)
async def lsp(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Session]:
    ws = tmp_path / "ws"
    ws.mkdir()
    home = tmp_path / "home"
    agent = FakeClaude(ws, home)
    caps, _, closed = str(request.param).partition("+")
    options = {"closedFiles": closed} if closed else None
    client, editor = await start(ws, home, caps=caps, init_options=options)
    session = Session(ws, home, client, editor, agent)
    try:
        yield session
    finally:
        await client.shutdown_session()


async def record(s: Session, prompt: str, edits: dict[str, Any]) -> None:
    await asyncio.get_running_loop().run_in_executor(None, s.agent.turn, prompt, edits)


async def test_rewind_open_closed_created_deleted_bytes(lsp: Session) -> None:
    ws = lsp.ws
    crlf = "first\r\nsecond \U0001f600 emoji\r\nno newline at end"
    (ws / "open.txt").write_bytes(crlf.encode())
    (ws / "closed.txt").write_bytes("caf\u00e9\n".encode())
    (ws / "gone.txt").write_bytes(b"i will be deleted\n")
    (ws / "bin.dat").write_bytes(bytes(range(256)))
    await record(
        lsp,
        "one",
        {
            "open.txt": "first\r\nsecond \U0001f600 changed\r\nno newline at end".encode(),
            "closed.txt": b"changed\n",
            "made.txt": b"created by the agent\n",
            "gone.txt": None,
            "bin.dat": b"\x00binary changed",
        },
    )
    await record(
        lsp, "two", {"open.txt": "first\r\nsecond \U0001f600 twice\r\nno newline at end".encode()}
    )
    lsp.editor.open(ws / "open.txt")
    t1, _ = await lsp.turn_ids()
    preview = await lsp.call("rewind/preview", {"turnId": t1})
    assert preview["conflicts"] == 0
    assert {f["path"]: f["action"] for f in preview["files"]} == {
        "open.txt": "modify",
        "closed.txt": "modify",
        "made.txt": "delete",
        "gone.txt": "create",
        "bin.dat": "modify",
    }
    result = await lsp.call("rewind/restore", {"turnId": t1})
    assert result["status"] == "applied", result
    assert "bin.dat" in result["writtenByServer"]
    assert lsp.editor.text(ws / "open.txt") == crlf  # the buffer, byte for byte
    lsp.editor.save(ws / "open.txt")
    assert (ws / "open.txt").read_bytes() == crlf.encode()
    assert (ws / "closed.txt").read_bytes() == "caf\u00e9\n".encode()
    assert (ws / "gone.txt").read_bytes() == b"i will be deleted\n"
    assert not (ws / "made.txt").exists()
    assert (ws / "bin.dat").read_bytes() == bytes(range(256))
    undo = await lsp.call("rewind/undo", {})
    assert undo["status"] == "applied", undo
    assert (ws / "made.txt").read_bytes() == b"created by the agent\n"
    assert (ws / "bin.dat").read_bytes() == b"\x00binary changed"
    assert "twice" in lsp.editor.text(ws / "open.txt")


async def test_scope_both_of_the_first_turn_writes_no_empty_fork(lsp: Session) -> None:
    """Issue #24 item 7: nothing comes before a session's first prompt, so `--scope both` of turn
    1 restores the code and says to start a new conversation; it writes no 0-byte session file
    and does not claim a fork."""
    lsp.agent.turn("first", {"a.txt": "a\n"})
    (t1,) = await lsp.turn_ids()
    result = await lsp.call("rewind/restore", {"turnId": t1, "scope": "both"})
    assert result["status"] == "applied", result
    assert not (lsp.ws / "a.txt").exists()
    assert "nothing comes before it to fork" in result["message"], result["message"]
    assert "conversation forked" not in result["message"]
    assert result["conversation"]["sessionId"] == ""
    assert sorted(lsp.agent.transcript.parent.iterdir()) == [lsp.agent.transcript]


async def test_revert_keeps_later_turn(lsp: Session) -> None:
    ws = lsp.ws
    base = "".join(f"{i}\n" for i in range(12))
    (ws / "m.txt").write_text(base)
    await record(lsp, "top", {"m.txt": base.replace("1\n", "ONE\n", 1)})
    await record(lsp, "bottom", {"m.txt": (ws / "m.txt").read_text().replace("10\n", "TEN\n")})
    lsp.editor.open(ws / "m.txt")
    t1, _ = await lsp.turn_ids()
    result = await lsp.call("rewind/restore", {"turnId": t1, "mode": "revert"})
    assert result["status"] == "applied"
    text = lsp.editor.text(ws / "m.txt")
    assert "ONE" not in text and "TEN" in text


async def test_unsaved_buffer_is_a_conflict_not_overwritten(lsp: Session) -> None:
    ws = lsp.ws
    (ws / "a.txt").write_text("a0\n")
    (ws / "b.txt").write_text("b0\n")
    await record(lsp, "one", {"a.txt": "a1\n", "b.txt": "b1\n"})
    lsp.editor.open(ws / "a.txt")
    lsp.editor.type(ws / "a.txt", "a1 and my unsaved work\n")
    t1 = (await lsp.turn_ids())[0]
    preview = await lsp.call("rewind/preview", {"turnId": t1})
    conflicts = {f["path"]: f["conflict"]["kind"] for f in preview["files"] if f["conflict"]}
    assert conflicts == {"a.txt": "modified-outside"}
    with pytest.raises(JsonRpcException) as err:
        await lsp.call("rewind/restore", {"turnId": t1})
    assert err.value.code == -32003 and "a.txt" in err.value.message
    assert lsp.editor.text(ws / "a.txt") == "a1 and my unsaved work\n"
    assert (ws / "b.txt").read_text() == "b1\n"  # nothing written
    result = await lsp.call("rewind/restore", {"turnId": t1, "skipConflicts": True})
    assert result["status"] == "applied"
    assert lsp.editor.text(ws / "a.txt") == "a1 and my unsaved work\n"
    assert (ws / "b.txt").read_text() == "b0\n"
    forced = await lsp.call("rewind/restore", {"turnId": t1, "force": True})
    assert forced["status"] == "applied"
    assert lsp.editor.text(ws / "a.txt") == "a0\n"
    await lsp.call("rewind/undo", {})
    assert lsp.editor.text(ws / "a.txt") == "a1 and my unsaved work\n"  # the person's text is back


async def test_client_rejects_edit_nothing_changes(lsp: Session) -> None:
    ws = lsp.ws
    (ws / "a.txt").write_text("a0\n")
    (ws / "bin.dat").write_bytes(b"\x00old")
    await record(lsp, "one", {"a.txt": "a1\n", "bin.dat": b"\x00new"})
    lsp.editor.open(ws / "a.txt")
    lsp.editor.reject = True
    t1 = (await lsp.turn_ids())[0]
    result = await lsp.call("rewind/restore", {"turnId": t1})
    assert result["status"] == "failed"
    assert (ws / "bin.dat").read_bytes() == b"\x00new"  # the server wrote nothing either
    assert lsp.editor.text(ws / "a.txt") == "a1\n"
    lsp.editor.reject = False
    with pytest.raises(JsonRpcException) as err:
        await lsp.call("rewind/undo", {})  # the failed restore is not something to undo
    assert "nothing to undo" in err.value.message


async def test_partial_application_is_reported(lsp: Session) -> None:
    """Neovim can skip a stale edit yet answer applied=true: the server must notice."""
    ws = lsp.ws
    (ws / "a.txt").write_text("a0\n")
    (ws / "b.txt").write_text("b0\n")
    await record(lsp, "one", {"a.txt": "a1\n", "b.txt": "b1\n"})
    lsp.editor.open(ws / "a.txt")
    lsp.editor.open(ws / "b.txt")
    real_apply = lsp.editor.apply

    def skip_b(params: types.ApplyWorkspaceEditParams) -> types.ApplyWorkspaceEditResult:
        edit = params.edit
        if edit.document_changes:
            edit.document_changes = [
                c
                for c in edit.document_changes
                if not (
                    isinstance(c, types.TextDocumentEdit) and c.text_document.uri.endswith("b.txt")
                )
            ]
        if edit.changes:
            edit.changes = {u: e for u, e in edit.changes.items() if not u.endswith("b.txt")}
        real_apply(params)
        return types.ApplyWorkspaceEditResult(applied=True)

    lsp.editor.apply = skip_b  # type: ignore[method-assign]
    t1 = (await lsp.turn_ids())[0]
    started = time.monotonic()
    result = await lsp.call("rewind/restore", {"turnId": t1})
    assert time.monotonic() - started < 25
    assert result["status"] == "partial"
    assert result["failed"] == ["b.txt"]
    assert lsp.editor.text(ws / "a.txt") == "a0\n"


async def test_saves_are_recorded(lsp: Session) -> None:
    ws = lsp.ws
    (ws / "s.txt").write_text("s0\n")
    await record(lsp, "one", {"s.txt": "s1\n"})
    lsp.editor.open(ws / "s.txt")
    lsp.editor.type(ws / "s.txt", "s1 saved by me\n")
    sync = lsp.client.init_result.capabilities.text_document_sync  # what the server advertised
    if getattr(sync, "will_save_wait_until", False):
        started = time.monotonic()
        answer = await request(
            lsp.client,
            types.TEXT_DOCUMENT_WILL_SAVE_WAIT_UNTIL,
            types.WillSaveTextDocumentParams(
                types.TextDocumentIdentifier(uri=uri_of(ws / "s.txt")),
                types.TextDocumentSaveReason.Manual,
            ),
        )
        assert list(answer or []) == []
        assert time.monotonic() - started < 1.0  # inside Neovim's 1 s and VS Code's 1.5 s budgets
    # Clients without willSaveWaitUntil (Neovim 0.7/0.8) still get the save recorded from didSave.
    (ws / "s.txt").write_text("s1 saved by me\n")
    lsp.client.text_document_did_save(
        types.DidSaveTextDocumentParams(types.TextDocumentIdentifier(uri=uri_of(ws / "s.txt")))
    )
    for _ in range(100):
        listing = await lsp.call("rewind/listTurns", {})
        editor = [s for s in listing["sessions"] if s["kind"] == "editor"]
        if editor and editor[0]["turns"]:
            break
        await asyncio.sleep(0.05)
    files = editor[0]["turns"][0]["files"]
    assert [(f["path"], f["change"], f["source"]) for f in files] == [("s.txt", "modified", "save")]
    # Rewinding the agent's turn now collides with the person's saved work: a conflict.
    t1 = (await lsp.turn_ids())[0]
    preview = await lsp.call("rewind/preview", {"turnId": t1})
    assert preview["files"][0]["conflict"]["kind"] == "other-session"


async def test_code_lens_on_transcript_and_timeline(lsp: Session) -> None:
    await record(lsp, "first prompt", {"a.txt": "1\n"})
    await record(lsp, "second prompt", {"a.txt": "2\n"})
    transcript = lsp.agent.transcript
    uri = lsp.editor.open(transcript)
    lenses = await request(
        lsp.client,
        types.TEXT_DOCUMENT_CODE_LENS,
        types.CodeLensParams(types.TextDocumentIdentifier(uri=uri)),
    )
    lines = transcript.read_text().splitlines()
    prompt_lines = [i for i, line in enumerate(lines) if json.loads(line)["type"] == "user"]
    assert sorted({lens.range.start.line for lens in lenses}) == prompt_lines
    assert [lens.command.title for lens in lenses[:3]] == ["Rewind to here", "Revert turn", "Diff"]
    rewind_lens = next(lens for lens in lenses if lens.command.title == "Rewind to here")

    async def click(lens: Any, answer: str) -> Any:
        lsp.client.answers.append(answer)
        asked = len(lsp.client.questions)
        result = await asyncio.wait_for(
            lsp.client.workspace_execute_command_async(
                types.ExecuteCommandParams(
                    command=lens.command.command, arguments=lens.command.arguments
                )
            ),
            30,
        )
        # The command answers at once with the preview; the question follows.
        assert _get(result, "status") == "asking"
        await until(lambda: len(lsp.client.questions) > asked)
        return result

    # Cancel: the preview is shown, nothing is written.
    await click(rewind_lens, "Cancel")
    question = lsp.client.questions[-1]
    assert "a.txt" in question.message and "delete" in question.message
    assert [a.title for a in question.actions] == ["Rewind", "Cancel"]
    await until(lambda: any("cancelled" in m.message for m in lsp.client.messages))
    assert (lsp.ws / "a.txt").read_text() == "2\n"
    # Rewind: written after the answer.
    await click(rewind_lens, "Rewind")
    await until(lambda: not (lsp.ws / "a.txt").exists())  # before turn 1 a.txt did not exist
    await until(lambda: any("restored" in m.message for m in lsp.client.messages))

    timeline = await lsp.call("rewind/timeline", {})
    text = timeline["text"]
    assert "Turn 1 · " in text and "first prompt" in text and "<!--" not in text
    assert "Restore point " in text and "before rewind to turn 1" in text
    tpath = Path(timeline["uri"][len("file://") :])
    assert tpath.parent == lsp.ws.resolve() and not tpath.exists()  # in the workspace, not on disk
    lsp.editor.open(tpath, text)
    tl = await request(
        lsp.client,
        types.TEXT_DOCUMENT_CODE_LENS,
        types.CodeLensParams(types.TextDocumentIdentifier(uri=uri_of(tpath))),
    )
    lines = text.splitlines()
    by_line: dict[str, list[str]] = {}
    for lens in tl:
        by_line.setdefault(lines[lens.range.start.line].strip(), []).append(lens.command.title)
    turn_lines = [k for k in by_line if k.startswith("Turn ")]
    point_lines = [k for k in by_line if k.startswith("Restore point")]
    assert len(turn_lines) == 2 and len(point_lines) == 1
    assert all(by_line[k] == ["Rewind to here", "Revert turn", "Diff"] for k in turn_lines)
    assert by_line[point_lines[0]] == ["Undo this restore", "Diff"]
    diff_lens = next(lens for lens in tl if lens.command.title == "Diff")
    shown = await asyncio.wait_for(
        lsp.client.workspace_execute_command_async(
            types.ExecuteCommandParams(command="rewind.diff", arguments=diff_lens.command.arguments)
        ),
        30,
    )
    assert "diff rewind-ls" in _get(shown, "text")
    # "Undo this restore" on the restore point: asked as an undo named after the restore (a restore
    # point is not a turn), and it brings back what the rewind replaced, not the rewind again.
    point_lens = next(lens for lens in tl if lens.command.title == "Undo this restore")
    await click(point_lens, "Undo")
    question = lsp.client.questions[-1]
    assert "undo of: rewind to turn 1" in question.message, question.message
    assert [a.title for a in question.actions] == ["Undo", "Cancel"]
    await until(lambda: (lsp.ws / "a.txt").exists())
    assert (lsp.ws / "a.txt").read_text() == "2\n"


async def until(pred: Any, seconds: float = 15.0) -> None:
    for _ in range(int(seconds / 0.05)):
        if pred():
            return
        await asyncio.sleep(0.05)
    raise AssertionError("timed out waiting")


async def execute(client: Any, command: str, arguments: list[Any], seconds: float = 30) -> Any:
    return await asyncio.wait_for(
        client.workspace_execute_command_async(
            types.ExecuteCommandParams(command=command, arguments=arguments)
        ),
        seconds,
    )


async def test_command_answers_while_the_person_reads_the_preview(tmp_path: Path) -> None:
    """The person takes their time: every restore command (a turn number, as an int or a string)
    is answered before they answer its question (eglot gives up on a request after 10 s), and
    nothing is written until they do."""
    ws, home = tmp_path / "ws", tmp_path / "home"
    ws.mkdir()
    agent = FakeClaude(ws, home)
    (ws / "a.txt").write_text("a0\n")
    await asyncio.get_running_loop().run_in_executor(None, agent.turn, "one", {"a.txt": "a1\n"})
    await asyncio.get_running_loop().run_in_executor(None, agent.turn, "two", {"a.txt": "a2\n"})
    client, _ = await start(ws, home, caps="emacs")
    try:
        for command, args, answer, after in [
            ("rewind.rewind", [1], "Rewind", "a0\n"),
            ("rewind.undo", [], "Undo", "a2\n"),
            ("rewind.revert", ["2"], "Revert", "a1\n"),
        ]:
            client.thinking = asyncio.Event()
            asked = len(client.questions)
            # Answered while the person has not answered yet (a held request times out here).
            result = await execute(client, command, args, seconds=10)
            assert _get(result, "status") == "asking" and "a.txt" in _get(result, "message")
            await until(lambda asked=asked: len(client.questions) > asked)
            await asyncio.sleep(0.3)
            assert (ws / "a.txt").read_text() != after, f"{command} wrote before the answer"
            client.answers.append(answer)
            client.thinking.set()
            await until(lambda after=after: (ws / "a.txt").read_text() == after)
    finally:
        if client.thinking is not None:
            client.thinking.set()  # a server that waited for the answer gets it, and can stop
        await asyncio.wait_for(client.shutdown_session(), 30)


async def test_generic_client_is_sent_only_what_it_advertised(tmp_path: Path) -> None:
    """pytest-lsp's recorded eglot capabilities (Emacs 29.1): documentChanges, but no create/delete
    operations, no showDocument, no code lens refresh, no rewind/didChangeTurns. A restore that
    deletes and creates files, a diff and a turn from another process send none of those; a VS Code
    client that advertises them (and opts in to the notification) gets each, so the checks can fail."""
    ws, home = tmp_path / "ws", tmp_path / "home"
    ws.mkdir()
    agent = FakeClaude(ws, home)
    (ws / "a.txt").write_text("a0\n")
    (ws / "b.txt").write_text("b0\n")
    (ws / "gone.txt").write_text("g0\n")
    loop = asyncio.get_running_loop()
    edits = {"a.txt": "a1\n", "b.txt": "b1\n", "new.txt": "n1\n", "gone.txt": None}
    await loop.run_in_executor(None, agent.turn, "one", edits)
    generic, editor = await start(ws, home, caps="emacs")
    full, _ = await start(ws, home, init_options={"didChangeTurns": True})
    try:
        editor.open(ws / "a.txt")
        generic.answers.append("Rewind")
        assert _get(await execute(generic, "rewind.rewind", ["1"]), "status") == "asking"
        await until(lambda: any("restored" in m.message for m in generic.messages))
        assert editor.text(ws / "a.txt") == "a0\n"
        assert (ws / "gone.txt").read_text() == "g0\n" and not (ws / "new.txt").exists()
        assert (ws / "b.txt").read_text() == "b0\n"
        # The edit carried the open document only (closedFiles "server", the default): the server
        # wrote the closed, created and deleted files itself.
        [edit] = editor.edits
        changes = edit.document_changes or []
        assert [c.text_document.uri for c in changes] == [uri_of(ws / "a.txt")], changes
        diff = await execute(generic, "rewind.diff", ["1"])
        await until(lambda: any("+n1" in m.message for m in generic.messages))
        assert "+n1" in _get(diff, "text")
        await execute(full, "rewind.diff", ["1"])
        await loop.run_in_executor(None, agent.turn, "two", {"a.txt": "a2\n"})
        await until(lambda: bool(full.turn_notes) and bool(full.lens_refreshes))
        await until(lambda: bool(full.shown_documents))
        await asyncio.sleep(3 * 0.5)  # three polls of the generic client's server
        assert generic.shown_documents == [] and generic.lens_refreshes == []
        assert generic.turn_notes == []
    finally:
        await generic.shutdown_session()
        await full.shutdown_session()
    log = (home / "server.log").read_text()
    assert "Traceback" not in log and "Invalid Params" not in log


async def test_did_change_turns_after_hook_in_another_process(lsp: Session) -> None:
    """rewind/didChangeTurns is not LSP: only a client that opted in gets it."""
    opted, _ = await start(lsp.ws, lsp.home, init_options={"didChangeTurns": True})
    try:
        await record(lsp, "from another process", {"x.txt": "x\n"})
        await until(lambda: bool(opted.turn_notes))
        await asyncio.sleep(3 * 0.5)  # three polls of the other server
        assert lsp.client.turn_notes == [], "sent to a client that did not ask for it"
        listing = await lsp.call("rewind/listTurns", {})
        assert any(
            t["prompt"] == "from another process" for s in listing["sessions"] for t in s["turns"]
        )
    finally:
        await opted.shutdown_session()


async def test_file_at(lsp: Session) -> None:
    (lsp.ws / "f.txt").write_text("before\n")
    await record(lsp, "one", {"f.txt": "after\n"})
    t1 = (await lsp.turn_ids())[0]
    uri = uri_of(lsp.ws / "f.txt")
    assert (await lsp.call("rewind/fileAt", {"turnId": t1, "uri": uri, "side": "before"}))[
        "text"
    ] == "before\n"
    assert (await lsp.call("rewind/fileAt", {"turnId": t1, "uri": uri, "side": "after"}))[
        "text"
    ] == "after\n"


async def test_bad_params_and_errors_keep_server_alive(lsp: Session) -> None:
    await record(lsp, "one", {"a.txt": "1\n"})
    t1 = (await lsp.turn_ids())[0]
    cases: list[tuple[str, Any, int, str]] = [
        ("rewind/preview", {}, -32602, "turnId"),
        ("rewind/preview", {"turnId": 5}, -32602, "turnId"),
        ("rewind/preview", {"turnId": t1, "scope": "everything"}, -32602, "scope"),
        ("rewind/restore", {"turnId": t1, "bogus": True}, -32602, "bogus"),
        ("rewind/listTurns", [1, 2], -32602, "params"),
        (
            "rewind/fileAt",
            {"turnId": t1, "uri": "https://example.com/x", "side": "before"},
            -32002,
            "not a file: URI",
        ),
        (
            "rewind/fileAt",
            {"turnId": t1, "uri": "file:///etc/passwd"},
            -32002,
            "outside the workspace",
        ),
        ("rewind/preview", {"turnId": "tnope"}, -32001, "no turn with that id"),
        ("rewind/listTurns", {"sessionId": "nope"}, -32001, "no session"),
    ]
    for method, params, code, text in cases:
        with pytest.raises(JsonRpcException) as err:
            await request(lsp.client, method, params)
        assert err.value.code == code, (method, params, err.value)
        assert text in err.value.message, (method, err.value.message)
    assert (await lsp.turn_ids()) == [t1]  # still serving


async def test_progress_for_many_files(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    home = tmp_path / "home"
    agent = FakeClaude(ws, home)
    for i in range(8):
        (ws / f"f{i}.txt").write_text(f"{i}\n")
    await asyncio.get_running_loop().run_in_executor(
        None, agent.turn, "many", {f"f{i}.txt": f"changed {i}\n" for i in range(8)}
    )
    client, _ = await start(ws, home)
    try:
        listing = as_dict(await request(client, "rewind/listTurns", {}))
        t1 = listing["sessions"][0]["turns"][0]["id"]
        result = as_dict(await request(client, "rewind/restore", {"turnId": t1}))
        assert result["status"] == "applied"
        assert all((ws / f"f{i}.txt").read_text() == f"{i}\n" for i in range(8))
        assert client.progress_reports, "no $/progress for an 8-file restore"
    finally:
        await client.shutdown_session()


async def test_an_overwritten_version_of_the_persons_is_said_once(lsp: Session) -> None:
    """Local history: a version of the person's replaced by an earlier content (what an agent's
    own restore or `git checkout` does between turns, recorded by another process) is named in
    a warning once, with the command that restores it."""
    from rewind_ls.core.capture.recorder import Recorder
    from rewind_ls.core.store import Store

    (lsp.ws / "a.txt").write_text("one\n")
    await record(lsp, "one", {"b.txt": "b\n"})

    def outside(text: str) -> None:
        (lsp.ws / "a.txt").write_text(text)
        with Store.open(str(lsp.ws), str(lsp.home)) as store:
            Recorder(store).attribute_outside_changes()

    loop = asyncio.get_running_loop()
    await loop.run_in_executor(None, outside, "one\nmine\n")
    await loop.run_in_executor(None, outside, "one\n")  # the old content back: overwritten

    def warnings() -> list[str]:
        return [
            m.message
            for m in lsp.client.messages
            if m.type == types.MessageType.Warning and "overwritten" in m.message
        ]

    await until(lambda: bool(warnings()))
    (line,) = warnings()
    assert line.startswith("rewind-ls: a.txt: your edit of ") and "rewind-ls restore a.txt" in line
    await record(lsp, "two", {"b.txt": "bb\n"})  # more polls that see new turns
    await asyncio.sleep(3 * 0.5)
    assert len(warnings()) == 1, "said twice"


async def test_file_versions_and_restore_version_command(lsp: Session) -> None:
    """Local history in any LSP editor: `rewind/fileVersions` lists a file's versions (each turn's
    and the person's, newest first, with what `rewind/fileAt` shows one by), and the
    `rewind.restoreVersion` command restores one after asking, undoably."""
    from rewind_ls.core.capture.recorder import Recorder
    from rewind_ls.core.store import Store

    (lsp.ws / "a.txt").write_text("one\n")
    await record(lsp, "agent turn", {"a.txt": "agent\n"})

    def by_hand(text: str) -> None:
        (lsp.ws / "a.txt").write_text(text)
        with Store.open(str(lsp.ws), str(lsp.home)) as store:
            Recorder(store).attribute_outside_changes()

    await asyncio.get_running_loop().run_in_executor(None, by_hand, "agent\nmine\n")
    uri = uri_of(lsp.ws / "a.txt")
    listing = await lsp.call("rewind/fileVersions", {"uri": uri})
    versions = listing["versions"]
    assert listing["path"] == "a.txt" and len(versions) == 3
    assert [v["side"] for v in versions] == ["after", "after", "before"]
    shown = set()
    for v in versions:  # each version is shown by rewind/fileAt
        params = {"turnId": v["turnId"], "uri": uri, "side": v["side"]}
        shown.add((await lsp.call("rewind/fileAt", params))["text"])
    assert shown == {"one\n", "agent\n", "agent\nmine\n"}
    agent_version = next(v for v in versions if v["source"] == "agent")
    lsp.client.answers.append("Restore")
    answer = await execute(lsp.client, "rewind.restoreVersion", [uri, agent_version["hash"][:8]])
    assert answer["status"] == "asking", answer
    await until(lambda: (lsp.ws / "a.txt").read_text() == "agent\n")
    assert "a.txt" in lsp.client.questions[-1].message
    undo = await lsp.call("rewind/undo", {})
    assert undo["status"] == "applied" and (lsp.ws / "a.txt").read_text() == "agent\nmine\n"


async def test_preview_and_restore_of_a_version(lsp: Session) -> None:
    """rewind/preview and rewind/restore with mode version: the client-driven restore of one
    recorded version (rewind.nvim's `:Rewind history`)."""
    (lsp.ws / "a.txt").write_text("one\n")
    await record(lsp, "agent turn", {"a.txt": "agent\n"})
    uri = uri_of(lsp.ws / "a.txt")
    versions = (await lsp.call("rewind/fileVersions", {"uri": uri}))["versions"]
    first = versions[-1]
    assert first["source"] == "first seen" and first["hash"]
    lsp.editor.open(lsp.ws / "a.txt")  # an open buffer: the text part goes as an edit
    params = {"turnId": first["turnId"], "mode": "version", "paths": [uri]}
    params["version"] = first["hash"][:6]
    preview = await lsp.call("rewind/preview", params)
    assert [(f["path"], f["action"]) for f in preview["files"]] == [("a.txt", "modify")]
    assert (lsp.ws / "a.txt").read_text() == "agent\n"
    result = await lsp.call("rewind/restore", params)
    assert result["status"] == "applied" and lsp.editor.text(lsp.ws / "a.txt") == "one\n"
    await lsp.call("rewind/undo", {})
    assert lsp.editor.text(lsp.ws / "a.txt") == "agent\n"
