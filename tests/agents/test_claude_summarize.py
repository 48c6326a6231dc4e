"""Summarize from / up to a turn (issue #15) with the real Claude Code binary against the scripted
API stand-in: the default summarizer is the real `claude -p` talking to the stand-in; the new
session is resumed with the real binary and the conversation it sends to the model is checked."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from tests.agents.test_claude_real import prompt_request, resume_fork
from tests.support.fake_anthropic import FakeAnthropic, Reply, text, tool_use
from tests.support.real_claude import RealClaude, claude_binary

pytestmark = pytest.mark.agent

SUMMARY_UP_TO = "SUMMARY-OF-TURN-ONE: two files were written."


def summarizer_reply(body: dict[str, Any]) -> Reply | None:
    """The default summarizer's request (no tools, our summarizing prompt) gets a scripted
    summary; everything else goes to the script."""
    if not body.get("tools") and "Summarize the conversation" in json.dumps(body["messages"]):
        return [text(SUMMARY_UP_TO)]
    return None


def session_files(claude: RealClaude) -> set[str]:
    """Every file in Claude Code's projects folders (sessions, temporaries)."""
    return {str(p) for p in (claude.config / "projects").rglob("*") if p.is_file()}


def summarize(claude: RealClaude, *args: str, ok: bool = True, **env: str) -> Any:
    """`rewind-ls summarize ...` with the binary's environment (so the default `claude -p` reaches
    the stand-in) and the pinned binary on PATH as `claude`."""
    import subprocess

    from tests.support.real_claude import rewind_ls_command

    proc = subprocess.run(
        [*rewind_ls_command(), "summarize", *args],
        cwd=claude.project,
        env={
            **claude.env,
            "PATH": f"{claude.binary.parent}:{claude.env['PATH']}",
            **env,
        },
        capture_output=True,
        text=True,
        timeout=120,
    )
    if ok:
        assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc


def test_summarize_from_and_up_to(tmp_path: Path) -> None:
    binary = claude_binary()
    project = tmp_path / "proj"
    with FakeAnthropic(responder=summarizer_reply) as api:
        claude = RealClaude(binary, api, tmp_path, project)
        claude.install_hooks()
        claude.allow("Write", "Bash")
        p = str(project)
        # Turn 1: two tools in one message (parallel results).
        api.add(
            [
                text("writing one-a and one-b"),
                tool_use("Write", {"file_path": p + "/one-a.txt", "content": "ONE-A\n"}),
                tool_use("Write", {"file_path": p + "/one-b.txt", "content": "ONE-B\n"}),
            ],
            [text("turn one reply MARK1")],
        )
        sid = claude.run("turn one prompt MARK1")["session_id"]
        # Turn 2: a Bash tool whose result is checked verbatim later.
        api.add(
            [tool_use("Bash", {"command": "echo BASH-RESULT-MARK2"})],
            [text("turn two reply MARK2")],
        )
        claude.run("turn two prompt MARK2", resume=sid)
        api.add([text("turn three reply MARK3")])
        claude.run("turn three prompt MARK3", resume=sid)
        original = claude.transcript(sid).read_bytes()

        # Up to turn 2, default summarizer (the real `claude -p` asking the stand-in).
        before = len(api.requests)
        up = json.loads(summarize(claude, "2", "--up-to", "--session", sid, "--json").stdout)
        conv = up["conversation"]
        asked = [r for r in api.requests[before:] if not r.get("tools")]
        assert len(asked) == 1, "the summarizer made no request, or more than one"
        sent = json.dumps(asked[0]["messages"])
        assert "MARK1" in sent and "ONE-A" in sent and "MARK2" not in sent
        api.add([text("after up-to reply")])
        resume_fork(claude, conv, "after up-to prompt", tmp_path)
        messages, k = prompt_request(api, "after up-to prompt")
        dumped = json.dumps(messages[:k])
        print(json.dumps(messages, indent=1))
        assert claude.transcript(sid).read_bytes() == original
