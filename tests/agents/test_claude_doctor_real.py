"""`rewind-ls doctor` against what the real Claude Code binary (2.1.332, offline) does with the
hooks it installed: `disableAllHooks` in the project's per-person settings turns them all off (the
Write happens, no hook fires, nothing is recorded), and doctor fails saying which file does it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.fake_anthropic import FakeAnthropic, text, tool_use
from tests.support.real_claude import RealClaude, claude_binary

pytestmark = pytest.mark.agent


def test_disable_all_hooks_is_a_doctor_failure(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    with FakeAnthropic() as api:
        claude = RealClaude(claude_binary(), api, tmp_path, project)
        claude.install_hooks()
        claude.allow("Write")
        assert json.loads(claude.rewind_ls("doctor", "--json").stdout)["ok"]
        local = project / ".claude" / "settings.local.json"
        local.write_text(json.dumps({**json.loads(local.read_text()), "disableAllHooks": True}))
        api.add(
            [tool_use("Write", {"file_path": str(project / "a.txt"), "content": "x\n"})],
            [text("ok")],
        )
        claude.run("write a")

    assert (project / "a.txt").read_text() == "x\n"
    assert claude.rewind_ls("turns", "--all", ok=False).returncode != 0  # nothing recorded
    report = json.loads(claude.rewind_ls("doctor", "--json", ok=False).stdout)
    off = [c for c in report["checks"] if c["name"] == "claude code hooks" and not c["ok"]]
    assert not report["ok"] and len(off) == 1, report
    assert f"{local} sets disableAllHooks: true" in off[0]["detail"], off
