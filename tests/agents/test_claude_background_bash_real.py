"""A background Bash (`run_in_background: true`) with the real Claude Code 2.1.332 offline: a job
that ticks into a log across three turns while the person edits another file between them. The
job's log is the turn's that started it ("background"), the person's edits theirs, the later
turns' edits their own; rewinds and undo are byte-exact around the job's log.

What 2.1.332 gives (seen with a logging hook on every event): the Bash's `PostToolUse` carries
`tool_response.backgroundTaskId`; each `Stop` lists `background_tasks` (id, type "shell", status,
command); the job runs as the claude process's child `bash -c ... eval '<command>' ...`; when it
ends, Claude sends a `<task-notification>` user message (a `UserPromptSubmit` of its own, with the
task id and the Bash's tool_use_id). `TaskCreated`/`TaskCompleted` do not fire for it."""

from __future__ import annotations

import json
import select
import time
from pathlib import Path
from typing import Any

import pytest

from tests.support.fake_anthropic import FakeAnthropic, text, tool_use
from tests.support.listing import outside_paths
from tests.support.real_claude import LiveSession, RealClaude, claude_binary
from tests.support.waiting import wait_for

pytestmark = pytest.mark.agent

# Bounded (at most 300 ticks, 0.3 s apart), stops on the flag file.
TICK = (
    "for i in $(seq 1 300); do [ -f stop.flag ] && break; echo tick $i >> job.log; sleep 0.3; done"
)


def listing(claude: RealClaude) -> dict[str, Any]:
    out: dict[str, Any] = json.loads(claude.rewind_ls("turns", "--all", "--json").stdout)
    return out


def agent_turns(claude: RealClaude) -> list[dict[str, Any]]:
    (session,) = [s for s in listing(claude)["sessions"] if s["kind"] == "agent"]
    turns: list[dict[str, Any]] = session["turns"]
    return sorted(turns, key=lambda t: t["number"])


def ended(claude: RealClaude, count: int) -> bool:
    """The session has `count` turns or more, all closed (its Stop hooks ran)."""
    sessions = [s for s in listing(claude)["sessions"] if s["kind"] == "agent"]
    turns = sessions[0]["turns"] if sessions else []
    return len(turns) >= count and all(t["endedAt"] for t in turns)


def ticks(project: Path) -> int:
    log = project / "job.log"
    return len(log.read_text().splitlines()) if log.exists() else 0


def next_result(live: LiveSession, timeout: float = 120) -> dict[str, Any]:
    """The binary's next `result` line (a turn it ran on its own: the task notification's)."""
    assert live.proc.stdout is not None
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        ready, _, _ = select.select([live.proc.stdout], [], [], 1.0)
        if not ready:
            continue
        line = live.proc.stdout.readline()
        if not line:
            break
        event: dict[str, Any] = json.loads(line)
        if event.get("type") == "result":
            return event
    raise AssertionError("no result line after the job ended")


def files_of(turn: dict[str, Any]) -> dict[str, str]:
    return {f["path"]: f["source"] for f in turn["files"]}


def snapshot(project: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(project)): p.read_bytes()
        for p in sorted(project.rglob("*"))
        if p.is_file() and ".claude" not in p.parts
    }


def test_background_bash_ticking_across_turns_while_the_person_edits(tmp_path: Path) -> None:
    binary = claude_binary()
    project = tmp_path / "proj"
    with FakeAnthropic() as api:
        claude = RealClaude(binary, api, tmp_path, project)
        (project / ".gitignore").write_text("*.flag\n")
        (project / "notes.txt").write_text("original\n")
        claude.install_hooks()
        claude.allow("Bash", "Write")
        claude.rewind_ls("scan")  # the baseline
        api.add(
            [tool_use("Bash", {"command": TICK, "run_in_background": True, "description": "tick"})],
            [text("the ticker runs")],
            [tool_use("Write", {"file_path": str(project / "two.txt"), "content": "two\n"})],
            [text("wrote two")],
            [tool_use("Write", {"file_path": str(project / "three.txt"), "content": "three\n"})],
            [text("wrote three")],
            [text("the ticker finished")],  # the task notification's turn
        )
        with claude.session() as live:
            live.prompt("start the ticker")
            wait_for(lambda: ended(claude, 1), "turn 1's end")
            at_stop = ticks(project)
            # The job goes on after its turn; the person edits another file meanwhile.
            wait_for(lambda: ticks(project) >= at_stop + 3, "ticks after turn 1")
            (project / "notes.txt").write_text("by hand, between turns 1 and 2\n")
            wait_for(lambda: ticks(project) >= at_stop + 6, "more ticks")
            live.prompt("write two")
            wait_for(lambda: ended(claude, 2), "turn 2's end")
            at_stop = ticks(project)
            (project / "notes.txt").write_text("by hand, between turns 2 and 3\n")
            (project / "hand.txt").write_text("a new file of the person's\n")
            wait_for(lambda: ticks(project) >= at_stop + 4, "ticks after turn 2")
            live.prompt("write three")
            wait_for(lambda: ended(claude, 3), "turn 3's end")
            wait_for(lambda: ticks(project) >= at_stop + 8, "ticks after turn 3")
            (project / "stop.flag").write_text("")
            next_result(live)  # Claude's own exchange for the job's task notification
            wait_for(lambda: ended(claude, 3), "every turn closed after the notification")
        final_ticks = ticks(project)
        assert final_ticks >= 15, final_ticks  # it ticked through all three turns

        turns = agent_turns(claude)
        sid = turns[0]["sessionId"]
        # The person's prompts are 1, 2, 3: no made-up turn for the job's later writes.
        assert [t["prompt"] for t in turns[:3]] == ["start the ticker", "write two", "write three"]
        assert [t["number"] for t in turns[:3]] == [1, 2, 3]
        # Claude's task notification (the job's end) is not a person's prompt: no turn of its own.
        assert len(turns) == 3, [t["prompt"] for t in turns]
        assert files_of(turns[0]) == {"job.log": "background-shell"}
        assert files_of(turns[1]) == {"two.txt": "tool"}
        assert files_of(turns[2]) == {"three.txt": "tool"}
        outside = outside_paths(listing(claude))
        assert "job.log" not in outside and {"notes.txt", "hand.txt"} <= set(outside), outside

        # `blame`: every line of the log is turn 1's background job; the person's line theirs.
        out = json.loads(claude.rewind_ls("blame", "job.log", "--json").stdout)
        assert {(r["source"], r["number"]) for r in out["runs"]} == {("background", 1)}, out
        assert out["runs"][-1]["end"] == final_ticks
        assert "t1 background" in claude.rewind_ls("blame", "job.log").stdout
        notes = json.loads(claude.rewind_ls("blame", "notes.txt", "--json").stdout)
        assert [r["source"] for r in notes["runs"]] == ["outside"], notes
        assert "job.log (background)" in claude.rewind_ls("turns").stdout

        # Rewinding turn 2 takes back turns 2 and 3, never the job's log nor the person's files.
        before = snapshot(project)
        claude.rewind_ls("rewind", "2", "--session", sid, "--yes")
        after = snapshot(project)
        assert "two.txt" not in after and "three.txt" not in after
        assert {k: v for k, v in before.items() if k not in ("two.txt", "three.txt")} == after
        claude.rewind_ls("undo", "--yes")
        assert snapshot(project) == before

        # Rewinding turn 1 takes the job's log with it (its turn's output), keeps the person's.
        claude.rewind_ls("rewind", "1", "--session", sid, "--yes")
        after = snapshot(project)
        assert "job.log" not in after and "two.txt" not in after
        assert after["notes.txt"] == b"by hand, between turns 2 and 3\n"
        assert after["hand.txt"] == before["hand.txt"]
        claude.rewind_ls("undo", "--yes")
        assert snapshot(project) == before


def test_the_next_turns_command_running_while_the_job_writes(tmp_path: Path) -> None:
    """The issue's `t2 shell`: turn 2's own Bash runs while the job ticks into its log. No time
    tells whose the log's change is, so it is shared between turns 1 and 2, never turn 2's alone:
    a rewind of turn 2 (or a revert of either) stops on it instead of cutting the log, and with
    --skip-conflicts takes back only turn 2's own file."""
    binary = claude_binary()
    project = tmp_path / "proj"
    with FakeAnthropic() as api:
        claude = RealClaude(binary, api, tmp_path, project)
        (project / ".gitignore").write_text("*.flag\n")
        claude.install_hooks()
        claude.allow("Bash")
        claude.rewind_ls("scan")
        api.add(
            [tool_use("Bash", {"command": TICK, "run_in_background": True, "description": "tick"})],
            [text("the ticker runs")],
            # Ticks land while it runs (0.3 s apart).
            [tool_use("Bash", {"command": "sleep 1.5; echo two > two.txt"})],
            [text("built two")],
            [text("the ticker finished")],
        )
        with claude.session() as live:
            live.prompt("start the ticker")
            wait_for(lambda: ended(claude, 1), "turn 1's end")
            live.prompt("build two")
            wait_for(lambda: ended(claude, 2), "turn 2's end")
            (project / "stop.flag").write_text("")
            next_result(live)  # the notification's exchange: no turn of its own
            wait_for(lambda: ended(claude, 2), "every turn closed after the notification")
        turns = agent_turns(claude)
        sid = turns[0]["sessionId"]
        assert files_of(turns[0]) == {"job.log": "shared"}, turns[0]
        assert files_of(turns[1]) == {"job.log": "shared", "two.txt": "scan"}, turns[1]
        assert len(turns) == 2, [t["prompt"] for t in turns]

        log = (project / "job.log").read_bytes()
        proc = claude.rewind_ls("rewind", "2", "--session", sid, "--yes", ok=False)
        assert proc.returncode == 3, proc.stdout + proc.stderr
        assert "job.log: shared with turn #1 of this session" in proc.stdout, proc.stdout
        assert (project / "two.txt").exists() and (project / "job.log").read_bytes() == log
        # Reverting either turn would take the job's ticks out of the log: a conflict too (the
        # shared change's, or the merge's when the job's later ticks touch the same lines).
        for number in ("1", "2"):
            proc = claude.rewind_ls("revert", number, "--session", sid, "--yes", ok=False)
            assert proc.returncode == 3, proc.stdout + proc.stderr
            assert "conflict" in proc.stdout and "job.log: " in proc.stdout, proc.stdout
        assert (project / "job.log").read_bytes() == log
        claude.rewind_ls("rewind", "2", "--session", sid, "--skip-conflicts", "--yes")
        assert not (project / "two.txt").exists() and (project / "job.log").read_bytes() == log
        claude.rewind_ls("undo", "--yes")
        assert (project / "two.txt").read_text() == "two\n"
