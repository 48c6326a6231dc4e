"""#16: the line rewind-ls' Stop hook prints (`systemMessage`) shows in the real interactive UI."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.fake_anthropic import FakeAnthropic, text, tool_use
from tests.support.real_claude import RealClaude, claude_binary

pytestmark = pytest.mark.agent


def test_turn_notice_shows_in_the_interactive_ui(tmp_path: Path) -> None:
    with FakeAnthropic() as api:
        claude = RealClaude(claude_binary(), api, tmp_path, tmp_path / "proj")
        claude.install_hooks()
        claude.allow("Write")
        api.add(
            [tool_use("Write", {"file_path": str(claude.project / "a.txt"), "content": "a\n"})],
            [text("all done")],
        )
        wanted = "rewind-ls: turn 1 recorded, 1 file; to go back: rewind-ls rewind 1"
        screen = claude.interactive("write a file", until=wanted)
        # The UI wraps and pads lines: compare with whitespace collapsed.
        assert wanted in " ".join(screen.split()), screen[-2000:]
        assert (claude.project / "a.txt").read_text() == "a\n"
