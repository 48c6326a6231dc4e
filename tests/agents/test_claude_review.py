"""`rewind-ls blame` after a real Claude Code 2.1.332 session (offline, the scripted Messages API on
loopback): three turns (Write, Write, a Bash `sed`) and the person's edit between prompts; every
line of the file is credited to the right turn, the shell command, or the outside change."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from tests.support.fake_anthropic import FakeAnthropic, text, tool_use
from tests.support.real_claude import RealClaude, claude_binary

pytestmark = pytest.mark.agent


def test_blame_after_a_real_session(tmp_path: Path) -> None:
    binary = claude_binary()
    project = tmp_path / "proj"
    with FakeAnthropic() as api:
        claude = RealClaude(binary, api, tmp_path, project)
        claude.install_hooks()
        claude.allow("Write", "Bash")
        f = str(project / "f.txt")
        api.add(
            [tool_use("Write", {"file_path": f, "content": "one\nb\nc\nd\ne\n"})],
            [text("turn one done")],
            [tool_use("Write", {"file_path": f, "content": "one\nTWO\nc\nD-person\ne\n"})],
            [text("turn two done")],
            [tool_use("Bash", {"command": "sed -i 's/^e$/E-sed/' f.txt"})],
            [text("turn three done")],
        )
        with claude.session() as live:
            sid = live.prompt("turn one: write f.txt")["session_id"]
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                listing = json.loads(claude.rewind_ls("turns", "--session", sid, "--json").stdout)
                if listing["sessions"][0]["turns"][0]["endedAt"]:
                    break
                time.sleep(0.1)
            (project / "f.txt").write_text("one\nb\nc\nD-person\ne\n")  # the person
            # The agent's second Write keeps the person's line (it read the file first).
            live.prompt("turn two: line two")
            live.prompt("turn three: run sed")
        assert (project / "f.txt").read_text() == "one\nTWO\nc\nD-person\nE-sed\n"
        out = json.loads(claude.rewind_ls("blame", "f.txt", "--json").stdout)
        who = {
            i: (r["source"], r["number"]) for r in out["runs"] for i in range(r["start"], r["end"])
        }
        assert who[0] == ("agent", 1) and who[1] == ("agent", 2) and who[2] == ("agent", 1)
        assert who[3][0] == "outside", who
        assert who[4] == ("shell", 3), who
        text_out = claude.rewind_ls("blame", "f.txt").stdout
        assert "turn three: run sed" in text_out and "t3 shell" in text_out
        assert not api.script and not api.unscripted, (api.script, api.unscripted)
