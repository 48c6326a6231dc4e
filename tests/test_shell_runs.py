"""Issue #24: a turn's shell runs end by every road, and what two sessions' overlapping shell
commands changed is shared, never credited silently to one of them. Through the real hook process
with Claude Code 2.1.197's payloads; tests/agents/test_shell_runs_real.py drives the binary."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import uuid
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest

from rewind_ls.core.capture import shell_runs
from rewind_ls.core.store import Store
from tests.conftest import Cli
from tests.support.agent import FakeClaude
from tests.support.git import git
from tests.support.listing import outside_paths


def files_of(cli: Cli, session: str) -> list[list[str]]:
    """Per turn of `session`, its paths (with ' shared' when marked shared)."""
    listing = cli.json("turns", "--session", session)
    return [
        sorted(f["path"] + (" shared" if f["source"] == "shared" else "") for f in t["files"])
        for s in listing["sessions"]
        for t in s["turns"]
    ]


def external_paths(cli: Cli) -> list[str]:
    return outside_paths(cli.json("turns", "--all"))


def bash_pre(agent: FakeClaude, command: str, timeout_ms: int | None = None) -> str:
    tid = "toolu_" + uuid.uuid4().hex[:12]
    tool_input: dict[str, Any] = {"command": command}
    if timeout_ms is not None:
        tool_input["timeout"] = timeout_ms
    agent.hook("PreToolUse", tool_name="Bash", tool_input=tool_input, tool_use_id=tid)
    return tid


def bash_post(agent: FakeClaude, tid: str, event: str = "PostToolUse") -> None:
    agent.hook(event, tool_name="Bash", tool_input={"command": "x"}, tool_use_id=tid)


def interrupt_line(agent: FakeClaude) -> None:
    """What Claude Code writes when the person presses Esc during a tool (and no hook fires)."""
    stamp = datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    line = {
        "type": "user",
        "uuid": str(uuid.uuid4()),
        "sessionId": agent.session_id,
        "cwd": str(agent.workspace),
        "timestamp": stamp,
        "message": {
            "role": "user",
            "content": [{"type": "text", "text": "[Request interrupted by user for tool use]"}],
        },
        "interruptedMessageId": "msg_1",
    }
    with agent.transcript.open("a", encoding="utf-8") as f:
        f.write(json.dumps(line) + "\n")


def test_interrupt_line_ends_the_turn_and_the_hand_fix_is_the_persons(
    agent: FakeClaude, cli: Cli, ws: Path
) -> None:
    """Item 1: Esc during a Bash fires no hook; the transcript's interrupt line ends the turn, so
    the person's fix before the next prompt is external and `rewind 1` leaves it alone."""
    (ws / "notes.txt").write_text("original\n")
    agent.hook("SessionStart", source="startup")
    agent.hook("UserPromptSubmit", prompt="build", prompt_id="p1")
    bash_pre(agent, "make")
    (ws / "built.txt").write_text("half built\n")  # the command's output before Esc
    interrupt_line(agent)
    time.sleep(1.3)  # the person reads the screen, then fixes something by hand
    (ws / "notes.txt").write_text("fixed by hand\n")
    agent.hook("UserPromptSubmit", prompt="go on", prompt_id="p2")
    agent.hook("Stop")
    assert files_of(cli, agent.session_id) == [["built.txt"], []]
    assert external_paths(cli) == ["notes.txt"]
    cli("rewind", "1", "--session", agent.session_id, "--yes")
    assert not (ws / "built.txt").exists()
    assert (ws / "notes.txt").read_text() == "fixed by hand\n"


def test_failed_bash_ends_its_run_so_another_sessions_file_is_its_own(
    agent: FakeClaude, cli: Cli, ws: Path, home: Path
) -> None:
    """Item 4: a Bash that exits non-zero fires PostToolUseFailure only; its run ends there, so
    a second session's shell file is that session's and A's rewind does not delete it."""
    other = FakeClaude(ws, home)
    (ws / "seed.txt").write_text("seed\n")
    agent.hook("SessionStart", source="startup")
    other.hook("SessionStart", source="startup")
    agent.hook("UserPromptSubmit", prompt="test", prompt_id="a1")
    tid = bash_pre(agent, "pytest")
    (ws / "report.txt").write_text("3 failed\n")
    bash_post(agent, tid, "PostToolUseFailure")
    other.hook("UserPromptSubmit", prompt="generate", prompt_id="b1")
    other.shell("echo generated > gen.txt")
    other.hook("Stop")
    agent.hook("Stop")
    assert files_of(cli, agent.session_id) == [["report.txt"]]
    assert files_of(cli, other.session_id) == [["gen.txt"]]
    cli("rewind", "1", "--session", agent.session_id, "--yes")
    assert (ws / "gen.txt").read_text() == "generated\n"
    assert not (ws / "report.txt").exists()


def test_overlapping_shell_runs_are_shared_and_rewinds_conflict(
    agent: FakeClaude, cli: Cli, ws: Path, home: Path
) -> None:
    """Item 2: B runs a whole turn with a Bash inside A's long Bash: B's file could be either
    command's. Both turns hold it as shared; rewinding or reverting either is a conflict naming
    the other, never a silent delete."""
    other = FakeClaude(ws, home)
    (ws / "seed.txt").write_text("seed\n")
    agent.hook("SessionStart", source="startup")
    other.hook("SessionStart", source="startup")
    agent.hook("UserPromptSubmit", prompt="long build", prompt_id="a1")
    tid = bash_pre(agent, "sleep 10; make")
    other.hook("UserPromptSubmit", prompt="generate", prompt_id="b1")
    other.shell("echo generated > gen.txt")
    other.hook("Stop")
    (ws / "build.out").write_text("built\n")  # A's command, after B's turn ended
    bash_post(agent, tid)
    agent.hook("Stop")
    assert files_of(cli, agent.session_id) == [["build.out", "gen.txt shared"]]
    assert files_of(cli, other.session_id) == [["gen.txt shared"]]
    text = cli("turns", "--session", other.session_id).stdout
    assert f"gen.txt (shared with {agent.session_id[:8]})" in text
    for session, partner in ((agent, other), (other, agent)):
        proc = cli("rewind", "1", "--session", session.session_id, "--yes", ok=False)
        assert proc.returncode == 3, proc.stdout + proc.stderr
        assert (
            f"shared with turn #1 of session {partner.session_id[:8]}" in proc.stdout + proc.stderr
        )
        proc = cli("revert", "1", "--session", other.session_id, "--yes", ok=False)
        assert proc.returncode == 3, proc.stdout + proc.stderr
    assert (ws / "gen.txt").read_text() == "generated\n"
    assert (ws / "build.out").read_text() == "built\n"


def _hook_from_a_dying_parent(agent: FakeClaude, payload: dict[str, Any]) -> None:
    """Run one hook whose parent process (the "agent") exits right after: a killed agent."""
    script = (
        "import subprocess, sys; "
        "p = subprocess.run([sys.executable, '-m', 'rewind_ls', 'hook', 'claude-code'], "
        "input=sys.stdin.buffer.read()); sys.exit(p.returncode)"
    )
    proc = subprocess.run(
        [sys.executable, "-c", script],
        input=json.dumps(payload).encode(),
        env={**os.environ, **agent.env},
        capture_output=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr.decode()


def test_agent_killed_during_bash_its_changes_are_shared_with_the_person(
    agent: FakeClaude, cli: Cli, ws: Path
) -> None:
    """Item 1 (the agent killed during its Bash: no hook ever comes): once its process is gone,
    the run is over; what changed since cannot be told apart between the command and the person,
    so it is shared with the external session, and the resumed session's next prompt does not
    take the person's later edits into the killed turn."""
    (ws / "notes.txt").write_text("original\n")
    agent.hook("SessionStart", source="startup")
    agent.hook("UserPromptSubmit", prompt="build", prompt_id="p1")
    _hook_from_a_dying_parent(
        agent,
        {
            **agent._base("PreToolUse"),
            "tool_name": "Bash",
            "tool_input": {"command": "make"},
            "tool_use_id": "toolu_killed",
        },
    )
    (ws / "built.txt").write_text("half built\n")
    (ws / "notes.txt").write_text("fixed by hand\n")
    cli("scan")
    assert files_of(cli, agent.session_id) == [["built.txt shared", "notes.txt shared"]]
    (ws / "later.txt").write_text("the person, later\n")
    agent.hook("SessionStart", source="resume")
    agent.hook("UserPromptSubmit", prompt="again", prompt_id="p2")
    agent.hook("Stop")
    assert files_of(cli, agent.session_id) == [["built.txt shared", "notes.txt shared"], []]
    assert "later.txt" in external_paths(cli)
    proc = cli("rewind", "1", "--session", agent.session_id, "--yes", ok=False)
    assert proc.returncode == 3, proc.stdout + proc.stderr
    assert (ws / "notes.txt").read_text() == "fixed by hand\n"


def test_a_run_past_its_deadline_is_over(
    agent: FakeClaude, cli: Cli, ws: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Item 1 (the short expiry): a Bash whose limit passed with no hook no longer holds back
    another session's changes, and its turn ends at that deadline: later changes are external."""
    other = FakeClaude(ws, home)
    (ws / "seed.txt").write_text("seed\n")
    agent.hook("SessionStart", source="startup")
    agent.hook("UserPromptSubmit", prompt="build", prompt_id="p1")
    bash_pre(agent, "make", timeout_ms=1000)
    monkeypatch.setenv("REWIND_LS_HOME", str(home))
    with Store.open(str(ws)) as store:
        (run,) = shell_runs.session_runs(store, agent.session_id)
        assert run.deadline_ns - run.start_ns == 1_000_000_000 + shell_runs.SLACK_NS
        # As if the limit and its slack had passed (the test does not wait 31 s).
        old = shell_runs.Run(
            run.session_id,
            run.run_id,
            run.start_ns - 40 * 10**9,
            time.time_ns() - 5 * 10**9,
            run.agent,
        )
        store.set_meta(f"{shell_runs.SHELL_RUN}{run.session_id} {run.run_id}", old.encode())
    time.sleep(1.2)
    (ws / "notes.txt").write_text("by hand\n")
    other.hook("UserPromptSubmit", prompt="other", prompt_id="b1")
    other.shell("echo mine > b.txt")
    other.hook("Stop")
    assert files_of(cli, other.session_id) == [["b.txt"]]
    assert files_of(cli, agent.session_id) == [[]]
    assert "notes.txt" in external_paths(cli)


def test_the_servers_follower_ends_a_hook_turn_at_the_interrupt_line(
    ws: Path, home: Path, cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Item 1, with the language server running: its transcript follower reads the interrupt
    line and closes the hook's turn at that moment; the hand fix made later is external."""
    from rewind_ls.core.agents.claude.follower import TranscriptFollower, project_slug

    monkeypatch.setenv("REWIND_LS_HOME", str(home))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(home / "claude"))
    agent = FakeClaude(
        ws, home, transcript_dir=home / "claude" / "projects" / project_slug(str(ws))
    )
    (ws / "notes.txt").write_text("original\n")
    agent.hook("SessionStart", source="startup")
    agent.hook("UserPromptSubmit", prompt="build", prompt_id="p1")
    bash_pre(agent, "make")
    (ws / "built.txt").write_text("half built\n")
    with Store.open(str(ws)) as store:
        follower = TranscriptFollower(store)
        follower.poll()
        interrupt_line(agent)
        time.sleep(1.3)
        (ws / "notes.txt").write_text("fixed by hand\n")
        follower.poll()
        session = store.session(agent.session_id)
        assert session is not None and session.open_turn is None
    assert files_of(cli, agent.session_id) == [["built.txt"]]
    assert external_paths(cli) == ["notes.txt"]


def test_doctor_warns_of_hooks_from_two_installs(cli: Cli, ws: Path, home: Path) -> None:
    """Item 7: two different rewind-ls installs (project settings and user settings) both hook
    every event: doctor names both and how to keep one; one install (in both files) passes."""
    cli.env["HOME"] = str(home)
    cli.env["CLAUDE_CONFIG_DIR"] = str(home / "claude")
    cli("install", "claude-code")
    report = cli.json("doctor")
    assert not [c for c in report["checks"] if c["name"].endswith("installed once")]
    cli(
        "install",
        "claude-code",
        "--user",
        "--command",
        f"{sys.executable} -m rewind_ls hook claude-code",
    )
    report = cli.json("doctor", ok=False)
    (check,) = [c for c in report["checks"] if c["name"] == "claude code hooks installed once"]
    assert not check["ok"] and "recorded twice" in check["detail"]
    assert "rewind-ls install claude-code --uninstall --user" in check["detail"]
    assert str(home / "claude" / "settings.json") in check["detail"]


def test_turns_names_the_other_live_session(
    agent: FakeClaude, cli: Cli, ws: Path, home: Path
) -> None:
    """Item 7: `turns` lists the latest session and says another live one exists, and how to
    see it."""
    other = FakeClaude(ws, home)
    agent.turn("first", {"a.txt": "a\n"})
    other.turn("second", {"b.txt": "b\n"})
    out = cli("turns").stdout
    assert f"session {other.session_id}" in out
    assert f"also active here: session {agent.session_id[:8]}" in out
    assert f"rewind-ls turns --session {agent.session_id[:8]}" in out


def test_folder_renamed_and_moved_in_are_put_back_exactly(
    agent: FakeClaude, cli: Cli, ws: Path, tmp_path: Path
) -> None:
    """Item 3: `mv dir1 dir2` keeps the files' ctimes; the walk pairs inodes, so the move is a
    deletion and a creation, and a folder moved in from outside is created: rewind leaves the
    tree exactly as before (no second copy, no stray folder contents)."""
    (ws / "dir1" / "sub").mkdir(parents=True)
    (ws / "dir1" / "a.txt").write_text("a\n")
    (ws / "dir1" / "sub" / "b.txt").write_text("b\n")
    outside = tmp_path / "outside" / "lib"
    outside.mkdir(parents=True)
    (outside / "c.py").write_text("c\n")
    agent.hook("SessionStart", source="startup")
    time.sleep(1.1)  # the files' ctimes are well before the turn
    agent.turn("move")  # (no edits: the shell below)
    agent.hook("UserPromptSubmit", prompt="rename", prompt_id="p2")
    agent.shell(f"mv dir1 dir2 && mv '{outside}' lib")
    agent.hook("Stop")
    assert files_of(cli, agent.session_id)[-1] == [
        "dir1/a.txt",
        "dir1/sub/b.txt",
        "dir2/a.txt",
        "dir2/sub/b.txt",
        "lib/c.py",
    ]
    cli("rewind", "2", "--session", agent.session_id, "--yes")
    left = sorted(str(p.relative_to(ws)) for p in ws.rglob("*") if p.is_file())
    assert left == ["dir1/a.txt", "dir1/sub/b.txt"]


def test_links_made_by_the_shell_are_named_until_removed(
    agent: FakeClaude, cli: Cli, ws: Path
) -> None:
    """Item 5: a link created or re-pointed by a shell command is not recorded (a rewind leaves
    it), so `turns`, the rewind preview and `doctor` name it, at every later scan, until it is
    gone; a link that was there before recording began is not named."""
    (ws / "old-link").symlink_to("elsewhere")
    (ws / "target.txt").write_text("t\n")
    time.sleep(2.2)  # the old link's ctime is well before the baseline scan (and its slack)
    agent.hook("SessionStart", source="startup")
    agent.turn("warm up")
    agent.hook("UserPromptSubmit", prompt="link", prompt_id="p2")
    agent.shell("ln -s target.txt new-link && echo x > made.txt")
    agent.hook("Stop")
    agent.turn("another turn", {"other.txt": "o\n"})  # a later scan: still named
    listing = cli.json("turns")
    (named,) = [u for u in listing["unrecorded"] if u.startswith("new-link:")]
    assert "-> target.txt" in named and "a rewind leaves it" in named
    assert not [u for u in listing["unrecorded"] if u.startswith("old-link")]
    assert "new-link: a symbolic link" in cli("turns").stderr + cli("turns").stdout
    preview = cli("rewind", "2", "--session", agent.session_id, "--dry-run")
    assert "new-link: a symbolic link" in preview.stdout + preview.stderr
    doctor = cli.json("doctor", ok=False)
    (check,) = [c for c in doctor["checks"] if c["name"] == "unrecorded files"]
    assert "new-link" in check["detail"]
    (ws / "new-link").unlink()
    agent.turn("after removing it")
    assert not [u for u in cli.json("turns")["unrecorded"] if u.startswith("new-link")]


def test_resumed_fork_rewinds_an_inherited_turn_without_a_false_conflict(
    agent: FakeClaude, cli: Cli, ws: Path, home: Path
) -> None:
    """Item 6: `rewind 2 --scope both` undid the original's turns 2-3 on disk and forked the
    conversation before turn 2; in the resumed fork, rewinding inherited turn 1 must not report
    the original's turn 2 (which the fork does not contain, and which that rewind already undid)
    as another session's work. Without the `--scope both` restore it still is a conflict."""
    agent.turn("first", {"a.txt": "1\n"})
    agent.turn("second", {"a.txt": "2\n"})
    agent.turn("third", {"b.txt": "b\n"})
    fork = cli.json("rewind", "2", "--scope", "both", "--yes")["conversation"]["sessionId"]
    assert (ws / "a.txt").read_text() == "1\n" and not (ws / "b.txt").exists()
    resumed = FakeClaude(ws, home, session_id=fork)
    resumed.hook("SessionStart", source="resume")
    resumed.turn("second, again", {"c.txt": "c\n"})
    plan = cli("rewind", "1", "--session", fork, "--dry-run", ok=False)
    assert plan.returncode == 0, plan.stdout + plan.stderr
    assert "conflict" not in plan.stdout
    cli("rewind", "1", "--session", fork, "--yes")
    assert not (ws / "a.txt").exists() and not (ws / "c.txt").exists()


def test_a_conversation_only_fork_still_conflicts_with_the_originals_later_turns(
    agent: FakeClaude, cli: Cli, ws: Path, home: Path
) -> None:
    """Item 6, the other side: a `--scope conversation` fork leaves the original's later turns on
    disk; rewinding the fork's inherited turn would discard them: a conflict, as before."""
    agent.turn("first", {"a.txt": "1\n"})
    agent.turn("second", {"a.txt": "2\n"})
    fork = cli.json("rewind", "2", "--scope", "conversation", "--yes")["conversation"]["sessionId"]
    resumed = FakeClaude(ws, home, session_id=fork)
    resumed.hook("SessionStart", source="resume")
    resumed.turn("second, again", {"c.txt": "c\n"})
    plan = cli("rewind", "1", "--session", fork, "--dry-run", ok=False)
    assert plan.returncode == 3 and "conflict (other-session): a.txt" in plan.stdout


def test_a_deletion_after_the_interrupt_is_shared_not_the_turns(
    agent: FakeClaude, cli: Cli, ws: Path
) -> None:
    """Item 1: a deleted file has no time; after Esc it could be the stopped command's or the
    person's deletion, so it is shared with the external session: `rewind 1` stops on a conflict
    instead of silently bringing back a file the person may have deleted."""
    (ws / "old.txt").write_text("old\n")
    agent.hook("SessionStart", source="startup")
    agent.hook("UserPromptSubmit", prompt="clean", prompt_id="p1")
    bash_pre(agent, "make clean")
    (ws / "built.txt").write_text("half built\n")
    interrupt_line(agent)
    time.sleep(1.3)
    (ws / "old.txt").unlink()  # the person, after the interrupt (or the command, before it)
    agent.hook("UserPromptSubmit", prompt="go on", prompt_id="p2")
    agent.hook("Stop")
    assert files_of(cli, agent.session_id) == [["built.txt", "old.txt shared"], []]
    proc = cli("rewind", "1", "--session", agent.session_id, "--yes", ok=False)
    assert proc.returncode == 3 and "old.txt: shared with" in proc.stdout, proc.stdout
    assert not (ws / "old.txt").exists()


@pytest.mark.parametrize("watch", ["0", "1"], ids=["walk", "watcher"])
def test_worktree_inside_the_workspace_is_another_checkout(
    agent: FakeClaude, cli: Cli, ws: Path, watch: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue #38 item 1: `git worktree add` inside the project (where `claude -w` puts
    `.claude/worktrees/NAME`): what is written there during the main session's Bash is not the
    main turn's, and rewinding that turn leaves the worktree as it is (`git status` clean)."""
    monkeypatch.setenv("REWIND_LS_WATCH", watch)
    agent.env["REWIND_LS_WATCH"] = watch
    cli.env["REWIND_LS_WATCH"] = watch
    (ws / "main.txt").write_text("v1\n")
    git(ws, "init", "-q", "-b", "main")
    git(ws, "add", "main.txt")
    git(ws, "commit", "-qm", "init")
    agent.hook("SessionStart", source="startup")
    agent.turn("warm up", {"seed.txt": "seed\n"})  # the baseline (and the watcher's mark)
    agent.hook("UserPromptSubmit", prompt="work in a worktree", prompt_id="p2")
    tid = bash_pre(agent, "git worktree add .claude/worktrees/nest")
    git(ws, "worktree", "add", "-q", ".claude/worktrees/nest")
    nest = ws / ".claude" / "worktrees" / "nest"
    (nest / "a.txt").write_text("in the worktree\n")
    (nest / "main.txt").write_text("changed in the worktree\n")
    (ws / "main.txt").write_text("v2\n")
    bash_post(agent, tid)
    agent.hook("Stop")
    assert files_of(cli, agent.session_id) == [["seed.txt"], ["main.txt"]]
    # A later change in the worktree is not the workspace's either (the watcher journals it).
    (nest / "a.txt").write_text("edited again\n")
    cli("scan")
    assert external_paths(cli) == []
    cli("rewind", "2", "--session", agent.session_id, "--yes")
    assert (ws / "main.txt").read_text() == "v1\n"
    assert (nest / "a.txt").read_text() == "edited again\n"
    assert (nest / "main.txt").read_text() == "changed in the worktree\n"
    assert git(nest, "status", "--porcelain") == " M main.txt\n?? a.txt\n"


def test_a_bash_ended_by_no_event_of_its_own_shares_what_changed(
    agent: FakeClaude, cli: Cli, ws: Path
) -> None:
    """Issue #38 item 5: a Bash whose PostToolUse never comes and whose transcript says nothing
    (none written here), ended only by the next prompt. What changed since it started cannot be
    told apart between the command and the person (their fix in between), so it is shared with
    the external session: rewinding the turn is a conflict, never a silent revert of the fix."""
    (ws / "notes.txt").write_text("original\n")
    agent.hook("SessionStart", source="startup")
    agent.hook("UserPromptSubmit", prompt="build", prompt_id="p1")
    bash_pre(agent, "make")
    (ws / "built.txt").write_text("half built\n")
    time.sleep(1.3)
    (ws / "notes.txt").write_text("fixed by hand\n")
    agent.hook("UserPromptSubmit", prompt="go on", prompt_id="p2")
    agent.hook("Stop")
    assert not agent.transcript.exists()
    assert files_of(cli, agent.session_id) == [["built.txt shared", "notes.txt shared"], []]
    proc = cli("rewind", "1", "--session", agent.session_id, "--yes", ok=False)
    assert proc.returncode == 3, proc.stdout + proc.stderr
    assert "notes.txt: shared with a change made outside agent turns" in proc.stdout + proc.stderr
    assert (ws / "notes.txt").read_text() == "fixed by hand\n"


def test_a_file_written_before_the_other_command_started_is_not_shared(
    agent: FakeClaude, cli: Cli, ws: Path, home: Path
) -> None:
    """Issue #38 item 6: A's Bash writes x.txt, then B's Bash starts (a moment later, within the
    2 s the clocks are given for coarse timestamps) and writes y.txt while A's still runs. B's
    command could not have written x.txt: it is A's alone; y.txt could be either's: shared."""
    other = FakeClaude(ws, home)
    (ws / "seed.txt").write_text("seed\n")
    agent.hook("SessionStart", source="startup")
    other.hook("SessionStart", source="startup")
    agent.hook("UserPromptSubmit", prompt="long build", prompt_id="a1")
    tid = bash_pre(agent, "make")
    (ws / "x.txt").write_text("A's output\n")
    time.sleep(0.3)
    other.hook("UserPromptSubmit", prompt="generate", prompt_id="b1")
    tid_b = bash_pre(other, "gen")
    (ws / "y.txt").write_text("either's\n")
    bash_post(other, tid_b)
    other.hook("Stop")
    bash_post(agent, tid)
    agent.hook("Stop")
    assert files_of(cli, other.session_id) == [["y.txt shared"]]
    assert files_of(cli, agent.session_id) == [["x.txt", "y.txt shared"]]


def test_an_edit_tool_writing_in_a_nested_worktree_is_not_this_workspaces(
    agent: FakeClaude, cli: Cli, ws: Path
) -> None:
    """Issue #38 item 1: a subagent in worktree isolation (its hooks carry the main project) writes
    into `.claude/worktrees/NAME`: not recorded in the outer workspace, and no error either."""
    from tests.support.agent import run_hook

    (ws / "main.txt").write_text("v1\n")
    git(ws, "init", "-q", "-b", "main")
    git(ws, "add", "main.txt")
    git(ws, "commit", "-qm", "init")
    git(ws, "worktree", "add", "-q", ".claude/worktrees/sub")
    agent.hook("SessionStart", source="startup")
    agent.hook("UserPromptSubmit", prompt="delegate", prompt_id="p1")
    target = ws / ".claude" / "worktrees" / "sub" / "b.txt"
    tool = {"tool_name": "Write", "tool_input": {"file_path": str(target), "content": "b\n"}}
    for event in ("PreToolUse", "PostToolUse"):
        if event == "PostToolUse":
            target.write_text("b\n")
        proc = run_hook(
            {**agent._base(event), **tool, "tool_use_id": "toolu_sub", "agent_type": "worker"},
            agent.env,
        )
        assert proc.returncode == 0 and not proc.stderr, proc.stderr
    agent.write("main.txt", "v2\n")
    agent.hook("Stop")
    assert files_of(cli, agent.session_id) == [["main.txt"]]
