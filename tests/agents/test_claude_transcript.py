"""When the hooks do not fire, the transcript is followed: the real Claude Code binary (pinned), run
offline against the scripted API stand-in, with NO hooks, with every hook, and with only some hook
events installed. Turns and edit-tool changes are rebuilt from its transcript (by `rewind-ls import
claude-code` and by the running language server, asked over LSP), never twice, and rewind and undo
give the bytes back exactly.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from tests.support.fake_anthropic import FakeAnthropic, text, tool_use
from tests.support.lsp_client import start
from tests.support.real_claude import NOTEBOOK, RealClaude, claude_binary
from tests.test_server import as_dict, request

pytestmark = pytest.mark.agent

OLD = "one\ntwo\nthree\n"


@pytest.fixture(scope="module")
def binary() -> Path:
    return claude_binary()


def session(binary: Path, api: FakeAnthropic, tmp_path: Path) -> RealClaude:
    claude = RealClaude(binary, api, tmp_path, tmp_path / "proj")
    claude.allow("Write", "Edit", "Read", "NotebookEdit", "Agent", "Bash")
    (claude.project / "old.txt").write_text(OLD)
    (claude.project / "nb.ipynb").write_text(NOTEBOOK)
    return claude


def two_turns(claude: RealClaude, api: FakeAnthropic) -> tuple[str, dict[str, bytes]]:
    """Turn 1: Write (new file), Read + Edit, NotebookEdit. Turn 2: a subagent's Write and an Edit
    of a file turn 1 created. Returns the session id and the files' bytes after each turn."""
    p = str(claude.project)
    api.add(
        [
            tool_use("Read", {"file_path": p + "/old.txt"}),
            tool_use("Read", {"file_path": p + "/nb.ipynb"}),
        ],
        [
            tool_use("Write", {"file_path": p + "/a.txt", "content": "alpha\n"}),
            tool_use("Edit", {"file_path": p + "/old.txt", "old_string": "two", "new_string": "2"}),
        ],
        [
            tool_use(
                "NotebookEdit",
                {"notebook_path": p + "/nb.ipynb", "cell_id": "c1", "new_source": "x = 2\n"},
            )
        ],
        [text("turn one done")],
    )
    sid = claude.run("turn one: files")["session_id"]
    after1 = snapshot(claude.project)
    # Claude Code 2.1.332 runs the Agent call in the background: the subagent's requests come at
    # the same time as the main loop's, so they get their own replies (its task names s.txt).
    subagent = [
        [tool_use("Write", {"file_path": p + "/s.txt", "content": "sub\n"})],
        [text("subagent done")],
    ]

    def respond(body: dict[str, Any]) -> Any:
        first = json.dumps((body.get("messages") or [{}])[0])
        if body.get("tools") and "write s.txt" in first and subagent:
            return subagent.pop(0)
        return None

    api.responder = respond
    api.add(
        [
            tool_use(
                "Agent",
                {"description": "e", "prompt": "write s.txt", "subagent_type": "general-purpose"},
            )
        ],
        [tool_use("Read", {"file_path": p + "/a.txt"})],
        [tool_use("Edit", {"file_path": p + "/a.txt", "old_string": "alpha", "new_string": "A"})],
        [text("turn two done")],
    )
    claude.run("turn two: subagent", resume=sid)
    assert (claude.project / "s.txt").read_text() == "sub\n"
    assert (claude.project / "a.txt").read_text() == "A\n"
    return sid, after1


def shell_turn(claude: RealClaude, api: FakeAnthropic, sid: str) -> None:
    """Turn 3: a Bash command writes sh.txt (nothing in the transcript says what it wrote)."""
    api.add(
        [tool_use("Bash", {"command": "printf 'from the shell\\n' > sh.txt"})],
        [text("turn three done")],
    )
    claude.run("turn three: shell", resume=sid)


def snapshot(folder: Path) -> dict[str, bytes]:
    return {
        str(f.relative_to(folder)): f.read_bytes()
        for f in sorted(folder.rglob("*"))
        if f.is_file() and ".claude" not in f.parts
    }


def turns_of(claude: RealClaude, sid: str) -> list[dict[str, Any]]:
    listing = json.loads(claude.rewind_ls("turns", "--session", sid, "--json").stdout)
    assert len(listing["sessions"]) == 1, listing
    turns: list[dict[str, Any]] = listing["sessions"][0]["turns"]
    return turns


def files_of(turns: list[dict[str, Any]]) -> list[dict[str, str]]:
    return [{f["path"]: f["change"] for f in t["files"]} for t in turns]


EXPECTED = [
    {"a.txt": "created", "old.txt": "modified", "nb.ipynb": "modified"},
    {"s.txt": "created", "a.txt": "modified"},
]


@pytest.mark.parametrize("baseline_first", [False, True], ids=["no-store", "baseline-after-edit"])
def test_no_hooks_import_then_rewind_and_undo(
    binary: Path, tmp_path: Path, baseline_first: bool
) -> None:
    with FakeAnthropic() as api:
        claude = session(binary, api, tmp_path)
        start_bytes = snapshot(claude.project)
        sid, after1 = two_turns(claude, api)
        end_bytes = snapshot(claude.project)
        assert not claude.rewind_home.exists(), "no hook should have run"
        # The person edits old.txt after the session, before the import: the import's "after" is
        # what the Edit tool wrote (from the transcript), not today's disk, so a rewind of turn 1
        # sees the person's edit as a conflict instead of overwriting it.
        (claude.project / "old.txt").write_bytes(b"the person's own edit\n")
        if baseline_first:
            # The store's baseline is taken after the edit (a hooked session of another agent,
            # `scan`): it saw the person's content, which must not hide the edit from a rewind.
            claude.rewind_ls("scan")

        out = claude.rewind_ls("import", "claude-code").stdout
        assert "2 turn(s), 5 change(s)" in out, out
        assert "shell side effects" in out
        turns = turns_of(claude, sid)
        assert [t["prompt"] for t in turns] == ["turn one: files", "turn two: subagent"]
        assert files_of(turns) == EXPECTED
        assert turns[1]["subagents"] == ["general-purpose"]
        assert all("reconstructed from the agent's transcript" in t["reconstructed"] for t in turns)
        assert all("shell side effects" in t["reconstructed"] for t in turns)

        dry = json.loads(
            claude.rewind_ls("rewind", "1", "--dry-run", "--json", ok=False).stdout or "{}"
        )
        conflicts = {f["path"] for f in dry.get("files", []) if f.get("conflict")}
        assert conflicts == {"old.txt"}, dry
        (claude.project / "old.txt").write_bytes(end_bytes["old.txt"])  # the person undoes it

        # Importing again records nothing twice.
        again = claude.rewind_ls("import", "claude-code", str(claude.transcript(sid))).stdout
        assert "nothing new" in again, again
        assert files_of(turns_of(claude, sid)) == EXPECTED

        # The preview says the turn was reconstructed; rewind and undo are byte-exact.
        dry = json.loads(claude.rewind_ls("rewind", "2", "--dry-run", "--json").stdout)
        assert any("reconstructed" in n for n in dry["notes"]), dry
        claude.rewind_ls("rewind", "2", "--yes")
        assert snapshot(claude.project) == after1
        claude.rewind_ls("undo", "--yes")
        assert snapshot(claude.project) == end_bytes
        claude.rewind_ls("rewind", "1", "--yes")
        assert snapshot(claude.project) == start_bytes
        claude.rewind_ls("undo", "--yes")
        assert snapshot(claude.project) == end_bytes


async def listed(client: Any, sid: str, count: int, seconds: float = 20.0) -> list[Any]:
    """The session's turns once the server lists `count` of them with their files settled."""
    deadline = asyncio.get_running_loop().time() + seconds
    turns: list[Any] = []
    while asyncio.get_running_loop().time() < deadline:
        listing = as_dict(await request(client, "rewind/listTurns", {"sessionId": sid}))
        sessions = [s for s in listing["sessions"] if s["id"] == sid]
        turns = sessions[0]["turns"] if sessions else []
        if len(turns) >= count and all(t["endedAt"] for t in turns[:count]):
            return turns
        await asyncio.sleep(0.2)
    raise AssertionError(f"the server listed {turns}")


async def test_no_hooks_server_follows_transcript(binary: Path, tmp_path: Path) -> None:
    loop = asyncio.get_running_loop()
    with FakeAnthropic() as api:
        claude = session(binary, api, tmp_path)
        start_bytes = snapshot(claude.project)
        client, _ = await start(claude.project, claude.rewind_home, claude_config=claude.config)
        try:
            sid, after1 = await loop.run_in_executor(None, two_turns, claude, api)
            end_bytes = snapshot(claude.project)
            turns = await listed(client, sid, 2)
            assert [t["prompt"] for t in turns] == ["turn one: files", "turn two: subagent"]
            assert [{f["path"]: f["change"] for f in t["files"]} for t in turns] == EXPECTED
            assert all(t["reconstructed"] for t in turns)
            assert "shell side effects" not in turns[1]["reconstructed"]  # scanned live
            # The client's log (VS Code's output channel) says the hooks are not firing.
            for _ in range(50):
                if any("hooks are not firing" in m.message for m in client.log_messages):
                    break
                await asyncio.sleep(0.1)
            assert any("transcript is being followed" in m.message for m in client.log_messages)

            preview = as_dict(await request(client, "rewind/preview", {"turnId": turns[0]["id"]}))
            assert "reconstructed" in json.dumps(preview), preview
            result = as_dict(await request(client, "rewind/restore", {"turnId": turns[0]["id"]}))
            assert result["status"] == "applied", result
            assert snapshot(claude.project) == start_bytes
            result = as_dict(await request(client, "rewind/undo", {}))
            assert result["status"] == "applied", result
            assert snapshot(claude.project) == end_bytes
            assert after1["a.txt"] == b"alpha\n"

            # Turn 3 writes a file from the shell (no edit tool, nothing in the transcript says
            # what it wrote): the scan at the turn's end, seen in the transcript, records it in
            # turn 3, and rewinding turn 3 removes it.
            await loop.run_in_executor(None, shell_turn, claude, api, sid)
            assert (claude.project / "sh.txt").read_bytes() == b"from the shell\n"
            turns = await listed(client, sid, 3)
            assert {f["path"]: f["change"] for f in turns[2]["files"]} == {"sh.txt": "created"}
            result = as_dict(await request(client, "rewind/restore", {"turnId": turns[2]["id"]}))
            assert result["status"] == "applied", result
            assert snapshot(claude.project) == end_bytes
        finally:
            await client.shutdown_session()
        # The CLI finds nothing the server did not already record.
        assert "nothing new" in claude.rewind_ls("import", "claude-code").stdout
        recorded = turns_of(claude, sid)
        assert len(recorded) == 3
        assert recorded[1]["subagents"] == ["general-purpose"]  # read from the subagent's file


async def test_hooks_and_server_no_duplicates(binary: Path, tmp_path: Path) -> None:
    loop = asyncio.get_running_loop()
    with FakeAnthropic() as api:
        claude = session(binary, api, tmp_path)
        claude.install_hooks()
        start_bytes = snapshot(claude.project)
        client, _ = await start(claude.project, claude.rewind_home, claude_config=claude.config)
        try:
            sid, _after1 = await loop.run_in_executor(None, two_turns, claude, api)
            turns = await listed(client, sid, 2)
            await asyncio.sleep(1.5)  # several polls more: the follower has read everything
            turns = await listed(client, sid, 2)
            assert len(turns) == 2, turns
            assert [{f["path"]: f["change"] for f in t["files"]} for t in turns] == EXPECTED
            assert not any(t["reconstructed"] for t in turns)  # the hooks recorded them
            assert not any("not firing" in m.message for m in client.log_messages)
        finally:
            await client.shutdown_session()
        assert "nothing new" in claude.rewind_ls("import", "claude-code").stdout
        doctor = json.loads(claude.rewind_ls("doctor", "--json").stdout)
        follow = [c for c in doctor["checks"] if c["name"] == "claude code transcripts"]
        assert follow and all(c["ok"] for c in follow), follow
        claude.rewind_ls("rewind", "1", "--yes")
        assert snapshot(claude.project) == start_bytes


def test_some_hooks_transcript_fills_gaps(binary: Path, tmp_path: Path) -> None:
    """Only PostToolUse, Stop and SessionStart fire (as in the VS Code extension report
    anthropics/claude-code#92074: no UserPromptSubmit, no PreToolUse)."""
    with FakeAnthropic() as api:
        claude = session(binary, api, tmp_path)
        claude.install_hooks()
        settings = claude.project / ".claude" / "settings.json"
        data = json.loads(settings.read_text())
        for event in ("UserPromptSubmit", "PreToolUse"):
            data["hooks"].pop(event, None)
        settings.write_text(json.dumps(data))
        start_bytes = snapshot(claude.project)
        sid, after1 = two_turns(claude, api)
        end_bytes = snapshot(claude.project)
        hooked = turns_of(claude, sid)
        assert hooked and all(t["prompt"] == "(edits outside a recorded prompt)" for t in hooked)

        report = json.loads(claude.rewind_ls("import", "claude-code", "--json").stdout)
        assert report["turns"] == 0 and report["changes"] == 0, report  # the hooks' turns adopted
        turns = turns_of(claude, sid)
        assert [t["prompt"] for t in turns] == ["turn one: files", "turn two: subagent"]
        assert files_of(turns) == EXPECTED
        doctor = json.loads(claude.rewind_ls("doctor", "--json", ok=False).stdout)
        follow = [c for c in doctor["checks"] if c["name"] == "claude code transcripts"]
        assert follow and not follow[0]["ok"], follow
        assert "not firing" in follow[0]["detail"], follow

        claude.rewind_ls("rewind", "2", "--yes")
        assert snapshot(claude.project) == after1
        claude.rewind_ls("undo", "--yes")
        assert snapshot(claude.project) == end_bytes
        claude.rewind_ls("rewind", "1", "--yes")
        assert snapshot(claude.project) == start_bytes
        claude.rewind_ls("undo", "--yes")
        assert snapshot(claude.project) == end_bytes


async def test_past_session_read_at_server_start(binary: Path, tmp_path: Path) -> None:
    """A session without hooks that ended before the language server started: the server reads it at its start as `import` would, without a scan, since today's
    disk says nothing of that time. The person's edit made after the session is not credited to
    the agent's last turn: reverting that turn keeps it, rewinding over it is a conflict. Then,
    live, a file the person made before the next prompt is the person's, and the file that turn's
    shell command wrote is the turn's. Once the hooks are installed, the doctor does not call them
    broken for the session that ran before them."""
    loop = asyncio.get_running_loop()
    with FakeAnthropic() as api:
        claude = session(binary, api, tmp_path)
        sid, _after1 = two_turns(claude, api)
        assert not claude.rewind_home.exists(), "no hook should have run"
        (claude.project / "old.txt").write_bytes(b"the person's own edit\n")
        client, _ = await start(claude.project, claude.rewind_home, claude_config=claude.config)
        try:
            for _ in range(100):  # the first poll reads the whole session
                listing = as_dict(await request(client, "rewind/listTurns", {}))
                if any(s["id"] == sid for s in listing["sessions"]):
                    break
                await asyncio.sleep(0.2)
            turns = await listed(client, sid, 2)
            assert [{f["path"]: f["change"] for f in t["files"]} for t in turns] == EXPECTED
            assert all("shell side effects" in t["reconstructed"] for t in turns), turns

            # Live: the person makes a file (no hook fires: only the transcript tells), and a
            # while later (beyond a turn's time slack) the agent's next turn writes one from the
            # shell.
            (claude.project / "mine.txt").write_bytes(b"the person's new file\n")
            await asyncio.sleep(1.5)

            await loop.run_in_executor(None, shell_turn, claude, api, sid)
            turns = await listed(client, sid, 3)
            assert {f["path"]: f["change"] for f in turns[2]["files"]} == {"sh.txt": "created"}
        finally:
            await client.shutdown_session()
        claude.install_hooks()  # after all three turns
        listing = json.loads(claude.rewind_ls("turns", "--all", "--json").stdout)
        external = [s for s in listing["sessions"] if s["id"] == "external"]
        assert external and {"mine.txt": "created"} in files_of(external[0]["turns"]), listing

        doctor = json.loads(claude.rewind_ls("doctor", "--json", ok=False).stdout)
        follow = [c for c in doctor["checks"] if c["name"] == "claude code transcripts"]
        assert follow and follow[0]["ok"], follow
        assert "before Claude Code's hooks were installed" in follow[0]["detail"], follow

        claude.rewind_ls("revert", "3", "--yes")
        assert not (claude.project / "sh.txt").exists()
        assert (claude.project / "mine.txt").exists()
        claude.rewind_ls("revert", "2", "--yes")
        assert (claude.project / "old.txt").read_bytes() == b"the person's own edit\n"
        assert (claude.project / "a.txt").read_bytes() == b"alpha\n"
        proc = claude.rewind_ls("rewind", "1", "--yes", ok=False)
        assert proc.returncode == 3 and "old.txt" in proc.stdout + proc.stderr, proc
        assert (claude.project / "old.txt").read_bytes() == b"the person's own edit\n"
