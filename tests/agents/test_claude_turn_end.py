"""Where a turn ends, as the pinned Claude Code binary's transcript says it, when no hook fires.

The binary writes a `last-prompt` line (the conversation's leaf) when it exits and also each time
32 KiB were appended to the transcript since the last one; 2.1.332 appends that much inside the
first turn of each process (its `prompt_snapshot` attachments), so a `last-prompt` line lands in
the middle of a turn. Read as the turn's end, it closed the turn early and the language server's
transcript follower gave what the turn's shell command wrote afterwards to no one's turn.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from tests.agents.test_claude_transcript import listed
from tests.support.fake_anthropic import FakeAnthropic, text, tool_use
from tests.support.lsp_client import start
from tests.support.real_claude import RealClaude, claude_binary

pytestmark = pytest.mark.agent


async def test_a_checkpoint_inside_a_turn_does_not_end_it(tmp_path: Path) -> None:
    loop = asyncio.get_running_loop()
    with FakeAnthropic() as api:
        claude = RealClaude(claude_binary(), api, tmp_path, tmp_path / "proj")
        claude.allow("Write", "Bash")
        p = str(claude.project)
        # The first Write adds 80 KiB to the transcript (its call and its result) on top of the
        # binary's own first-request lines; the shell command writes well after it (beyond the
        # follower's one-second slack for file times), then an edit tool writes once more.
        api.add(
            [tool_use("Write", {"file_path": p + "/a.txt", "content": "a" * 40_000 + "\n"})],
            [tool_use("Bash", {"command": "sleep 2.5 && printf 'shell\\n' > sh.txt"})],
            [tool_use("Write", {"file_path": p + "/c.txt", "content": "c\n"})],
            [text("done")],
        )
        client, _ = await start(claude.project, claude.rewind_home, claude_config=claude.config)
        try:
            sid = (await loop.run_in_executor(None, claude.run, "one turn"))["session_id"]
            turns = await listed(client, sid, 1)
            files = {f["path"]: f["change"] for f in turns[0]["files"]}
        finally:
            await client.shutdown_session()

        # What the binary wrote: a `last-prompt` line before the shell command's result (when
        # exactly depends on when it flushes its queue: in the first tool round, or while the
        # command runs), inside the turn.
        lines = [json.loads(x) for x in claude.transcript(sid).read_text().splitlines()]
        call = next(
            b["id"]
            for ln in lines
            if ln.get("type") == "assistant"
            for b in ln["message"]["content"]
            if b.get("type") == "tool_use" and "sleep 2.5" in json.dumps(b)
        )
        result = next(
            i
            for i, ln in enumerate(lines)
            if call in json.dumps(ln.get("message")) and ln.get("type") == "user"
        )
        assert any(ln.get("type") == "last-prompt" for ln in lines[:result]), (
            "the binary no longer writes a last-prompt line inside the turn"
        )
        assert [t["prompt"] for t in turns] == ["one turn"]
        assert files == {"a.txt": "created", "sh.txt": "created", "c.txt": "created"}, turns
        listing = json.loads(claude.rewind_ls("turns", "--all", "--json").stdout)
        assert [s["id"] for s in listing["sessions"]] == [sid], listing  # nothing external
