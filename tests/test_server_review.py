"""Review in the editor through the real server: code actions that revert one hunk of a turn (three
hunks, a later turn's edit elsewhere kept), hover naming the line's author, `rewind/blame` and
`rewind/turnHunks`. Every check compares the buffer's and the disk's bytes."""

from __future__ import annotations

import ast
import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types

from tests.support.agent import FakeClaude
from tests.support.lsp_client import start, uri_of
from tests.test_server import CLIENTS, Session, execute, record, until

BASE = "".join(f"line {i}\n" for i in range(1, 31))
TURN1 = BASE.replace("line 2\n", "TWO\n").replace("line 15\n", "FIFTEEN\n")
TURN1 = TURN1.replace("line 28\n", "X28\n")
TURN2 = TURN1.replace("line 8\n", "EIGHT\n")


@pytest.fixture(params=CLIENTS)
async def lsp(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Session]:
    ws = tmp_path / "ws"
    ws.mkdir()
    home = tmp_path / "home"
    agent = FakeClaude(ws, home)
    caps, _, closed = str(request.param).partition("+")
    client, editor = await start(
        ws, home, caps=caps, init_options={"closedFiles": closed} if closed else None
    )
    session = Session(ws, home, client, editor, agent)
    try:
        yield session
    finally:
        await client.shutdown_session()


async def _two_turns(s: Session) -> Path:
    f = s.ws / "f.txt"
    f.write_text(BASE)
    await record(s, "make the numbers words", {"f.txt": TURN1})
    await record(s, "and eight", {"f.txt": TURN2})
    s.editor.open(f)
    return f


async def actions(s: Session, path: Path, line: int, end: int | None = None) -> list[Any]:
    result = await asyncio.wait_for(
        s.client.text_document_code_action_async(
            types.CodeActionParams(
                text_document=types.TextDocumentIdentifier(uri=uri_of(path)),
                range=types.Range(
                    types.Position(line, 0), types.Position(line if end is None else end, 3)
                ),
                context=types.CodeActionContext(diagnostics=[]),
            )
        ),
        30,
    )
    return list(result or [])


async def hover(s: Session, path: Path, line: int) -> str | None:
    result = await asyncio.wait_for(
        s.client.text_document_hover_async(
            types.HoverParams(
                text_document=types.TextDocumentIdentifier(uri=uri_of(path)),
                position=types.Position(line, 1),
            )
        ),
        30,
    )
    if result is None:
        return None
    contents = result.contents
    return str(getattr(contents, "value", contents))


def command_of(action: Any) -> tuple[str, list[Any]]:
    """The command a code action runs. lsprotocol's client-side hook reads any object with a
    `command` key as a Command, so a CodeAction carrying a command arrives with its command
    object printed into the title's neighbour field: read it back from there."""
    command = action.command
    if isinstance(command, str):
        data = ast.literal_eval(command)
        return data["command"], list(data.get("arguments") or [])
    return command.command, list(command.arguments or [])


async def run_action(s: Session, action: Any, answer: str) -> None:
    name, arguments = command_of(action)
    asked = len(s.client.questions)
    s.client.answers.append(answer)
    result = await execute(s.client, name, arguments)
    assert result["status"] == "asking", result
    await until(lambda: len(s.client.questions) > asked)


async def test_code_action_reverts_one_hunk_then_undo(lsp: Session) -> None:
    f = await _two_turns(lsp)
    found = await actions(lsp, f, 14)  # "FIFTEEN", hunk 2 of turn 1
    titles = [a.title for a in found]
    assert titles == [
        "Revert this change (turn 1: make the numbers words)",
        "Revert turn 1 in this file",
    ]
    await run_action(lsp, found[0], "Revert")
    question = lsp.client.questions[-1].message
    assert "revert turn 1, hunk 2 of 3 in f.txt" in question
    assert "-FIFTEEN" in question and "+line 15" in question  # the preview of the merge
    want = TURN2.replace("FIFTEEN\n", "line 15\n")
    await until(lambda: lsp.editor.text(f) == want)
    assert f.read_text() == TURN2  # the buffer carries it; the disk changes when it is saved
    lsp.editor.save(f)
    await until(lambda: f.read_bytes() == want.encode())
    # The restore point brings the hunk back.
    undone = await execute(lsp.client, "rewind.undo", [])
    assert undone["status"] == "asking"
    lsp.client.answers.append("Undo")
    await until(lambda: lsp.editor.text(f) == TURN2)
    lsp.editor.save(f)
    await until(lambda: f.read_bytes() == TURN2.encode())


async def test_an_undo_asked_while_the_revert_is_with_the_editor_undoes_that_revert(
    lsp: Session,
) -> None:
    """The editor is still applying the revert's edit when the person asks for an undo: the undo
    waits for the revert to end and offers to undo it (it used to find no restore point yet:
    "nothing to undo", or the restore point before it)."""
    f = await _two_turns(lsp)
    found = await actions(lsp, f, 14)
    held = asyncio.Event()
    lsp.client.applying = held  # type: ignore[attr-defined]
    await run_action(lsp, found[0], "Revert")
    await asyncio.sleep(0.5)  # the revert's workspace/applyEdit is now with the editor, held
    assert lsp.editor.text(f) == TURN2
    undo = asyncio.ensure_future(execute(lsp.client, "rewind.undo", []))
    await asyncio.sleep(0.5)
    assert not undo.done(), undo.result()  # it waits for the revert
    held.set()
    undone = await undo
    assert undone["status"] == "asking", undone
    want = TURN2.replace("FIFTEEN\n", "line 15\n")
    await until(lambda: lsp.editor.text(f) == want)
    lsp.client.applying = None  # type: ignore[attr-defined]
    lsp.client.answers.append("Undo")
    await until(lambda: lsp.editor.text(f) == TURN2)  # the undo was the revert's


async def test_no_action_for_a_hunk_edited_since(lsp: Session) -> None:
    f = await _two_turns(lsp)
    # The person edits hunk 1's line in the buffer (unsaved): its revert would be refused.
    lsp.editor.type(f, TURN2.replace("TWO\n", "TWO, and more\n"))
    found = await actions(lsp, f, 1)
    assert [a.title for a in found if a.title.startswith("Revert this change")] == []
    # Hunk 3 is untouched: offered.
    found = await actions(lsp, f, 27)
    assert found[0].title == "Revert this change (turn 1: make the numbers words)"
    text = await hover(lsp, f, 1)
    assert text is not None and "not recorded yet" in text
    # Reverting the whole turn in this file would discard the edit too: not offered either.
    assert not [a for a in await actions(lsp, f, 27) if "in this file" in a.title]


@pytest.mark.parametrize("lsp", ["visual_studio_code"], indirect=True)
async def test_hover_names_turn_and_hunk_state(lsp: Session) -> None:
    f = await _two_turns(lsp)
    text = await hover(lsp, f, 7)
    assert text is not None and "turn 2" in text and "and eight" in text
    text = await hover(lsp, f, 6)  # "line 7": nobody changed it
    assert text is not None and "before rewind-ls recorded" in text
    # Turn 2's EIGHT is 7 lines from hunk 2 (FIFTEEN): more than the context, so it is intact.
    text = await hover(lsp, f, 14)
    assert text is not None and "turn 1" in text and "hunk 2 of 3" in text
    assert "unchanged since" in text


@pytest.mark.parametrize("lsp", ["visual_studio_code"], indirect=True)
async def test_blame_and_turn_hunks_requests(lsp: Session) -> None:
    f = await _two_turns(lsp)
    blame = await lsp.call("rewind/blame", {"uri": uri_of(f)})
    by_line = {}
    for run in blame["runs"]:
        for line in range(run["start"], run["end"]):
            by_line[line] = (run["source"], run["number"])
    assert blame["lineCount"] == 30
    assert by_line[1] == ("agent", 1) and by_line[7] == ("agent", 2)
    assert by_line[0] == ("original", None)
    t1, _ = await lsp.turn_ids()
    hunks = await lsp.call("rewind/turnHunks", {"turnId": t1})
    (item,) = hunks["files"]
    assert [(h["start"], h["status"], h["added"]) for h in item["hunks"]] == [
        (1, "intact", ["TWO\n"]),
        (14, "intact", ["FIFTEEN\n"]),
        (27, "intact", ["X28\n"]),
    ]


@pytest.mark.parametrize("lsp", ["visual_studio_code"], indirect=True)
async def test_restore_request_reverts_hunks(lsp: Session) -> None:
    f = await _two_turns(lsp)
    t1, _ = await lsp.turn_ids()
    result = await lsp.call(
        "rewind/restore", {"turnId": t1, "mode": "revert", "paths": ["f.txt"], "hunks": [0, 2]}
    )
    assert result["status"] == "applied", result
    assert lsp.editor.text(f) == TURN2.replace("TWO\n", "line 2\n").replace("X28\n", "line 28\n")


async def test_bad_hunk_command_arguments_are_errors(tmp_path: Path) -> None:
    ws, home = tmp_path / "ws", tmp_path / "home"
    ws.mkdir()
    FakeClaude(ws, home)
    client, _ = await start(ws, home)
    try:
        for args in ([], ["1"], ["1", uri_of(ws / "f.txt")], ["1", uri_of(ws / "f.txt"), -1]):
            with pytest.raises(Exception, match="arguments are"):
                await execute(client, "rewind.revertHunk", args)
    finally:
        await client.shutdown_session()


@pytest.mark.parametrize("lsp", ["visual_studio_code"], indirect=True)
async def test_hover_and_blame_name_every_author(lsp: Session) -> None:
    """Three agent turns, a shell command in a turn (the real hook's scan) and the person's save
    through the server: hover and `rewind-ls blame` name the right one for every line."""
    import json
    import subprocess
    import sys

    ws, agent = lsp.ws, lsp.agent
    f = ws / "f.txt"
    f.write_text("".join(f"l{i}\n" for i in range(1, 9)))
    loop = asyncio.get_running_loop()

    def change(line: int, text: str) -> str:
        lines = f.read_text().splitlines(True)
        lines[line - 1] = text + "\n"
        return "".join(lines)

    await record(lsp, "first turn", {"f.txt": change(1, "ONE")})
    await record(lsp, "second turn", {"f.txt": change(3, "THREE")})

    def shell_turn() -> None:
        agent.hook("UserPromptSubmit", prompt="run a sed")
        agent.shell("sed -i 's/^l5$/FIVE-sed/' f.txt")
        agent.hook("Stop", stop_hook_active=False)

    await loop.run_in_executor(None, shell_turn)
    lsp.editor.open(f)
    saved = change(6, "SIX-saved")
    lsp.editor.type(f, saved)
    # The save as an editor does it: willSaveWaitUntil answered, the write, didSave.
    doc = types.TextDocumentIdentifier(uri=uri_of(f))
    await asyncio.wait_for(
        lsp.client.protocol.send_request_async(
            types.TEXT_DOCUMENT_WILL_SAVE_WAIT_UNTIL,
            types.WillSaveTextDocumentParams(doc, types.TextDocumentSaveReason.Manual),
        ),
        30,
    )
    f.write_text(saved)
    lsp.client.text_document_did_save(types.DidSaveTextDocumentParams(doc))

    async def save_recorded() -> bool:
        listing = await lsp.call("rewind/listTurns", {})
        return any(s["kind"] == "editor" and s["turns"] for s in listing["sessions"])

    for _ in range(200):  # didSave is recorded on the server's thread
        if await save_recorded():
            break
        await asyncio.sleep(0.05)
    assert await save_recorded()
    await record(lsp, "fourth turn", {"f.txt": change(8, "EIGHT")})
    lsp.editor.type(f, f.read_text())  # the buffer follows the disk, as an editor reloads it
    expected = {
        0: ("turn 1", "first turn"),
        1: ("before rewind-ls", None),
        2: ("turn 2", "second turn"),
        3: ("before rewind-ls", None),
        4: ("turn 3", "run a sed"),
        5: ("your save", None),
        6: ("before rewind-ls", None),
        7: ("turn 4", "fourth turn"),
    }
    for line, (who, prompt) in expected.items():
        text = await hover(lsp, f, line)
        assert text is not None and who in text, (line, text)
        if prompt:
            assert prompt in text, (line, text)
    assert "shell command" in str(await hover(lsp, f, 4))
    proc = subprocess.run(
        [sys.executable, "-m", "rewind_ls", "blame", "f.txt", "--json"],
        cwd=ws,
        env={**__import__("os").environ, "REWIND_LS_HOME": str(lsp.home)},
        capture_output=True,
        text=True,
        check=True,
    )
    runs = json.loads(proc.stdout)["runs"]
    by_line = {i: (r["source"], r["number"]) for r in runs for i in range(r["start"], r["end"])}
    assert by_line == {
        0: ("agent", 1),
        1: ("original", None),
        2: ("agent", 2),
        3: ("original", None),
        4: ("shell", 3),
        5: ("save", by_line[5][1]),
        6: ("original", None),
        7: ("agent", 4),
    }
