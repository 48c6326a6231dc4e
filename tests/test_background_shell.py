"""Background shell jobs (`core.capture.background_shell`): a Bash left running in the background
keeps its writes in the turn that started it while its process lives. Through the real hook
process with Claude Code 2.1.332's payload (`tool_response.backgroundTaskId`) and a real job
process; tests/agents/test_claude_background_bash_real.py drives the binary."""

from __future__ import annotations

import os
import subprocess
import threading
import time
import uuid
from pathlib import Path

import pytest

from rewind_ls.core.capture import background_end, background_shell
from rewind_ls.core.capture.background_shell import Job
from rewind_ls.core.model import BACKGROUND_SHELL
from rewind_ls.core.store import Store
from tests.conftest import Cli
from tests.support.agent import FakeClaude
from tests.support.listing import outside_paths
from tests.support.waiting import wait_for

JOB = "for i in $(seq 1 600); do [ -f stop.flag ] && break; echo tick >> job.log; sleep 0.1; done"


def lines(path: Path) -> int:
    return len(path.read_text().splitlines()) if path.exists() else 0


def agent_files(cli: Cli, agent: FakeClaude) -> list[dict[str, str]]:
    listing = cli.json("turns", "--session", agent.session_id)
    return [{f["path"]: f["source"] for f in t["files"]} for t in listing["sessions"][0]["turns"]]


def outside_files(cli: Cli) -> list[str]:
    return outside_paths(cli.json("turns", "--all"))


def start_job(agent: FakeClaude, ws: Path) -> subprocess.Popen[bytes]:
    """Turn 1 runs `JOB` in the background, as Claude Code 2.1.332 does: its shell is the
    agent's child (here: this test process, the hook's parent) and PostToolUse names its task."""
    agent.hook("UserPromptSubmit", prompt="start the job")
    tid = "toolu_" + uuid.uuid4().hex[:12]
    tool_input = {"command": JOB, "run_in_background": True}
    agent.hook("PreToolUse", tool_name="Bash", tool_input=tool_input, tool_use_id=tid)
    job = subprocess.Popen(["bash", "-c", f"eval '{JOB}'"], cwd=ws)
    wait_for(lambda: lines(ws / "job.log") >= 1, "the job's first tick")
    agent.hook(
        "PostToolUse",
        tool_name="Bash",
        tool_input=tool_input,
        tool_use_id=tid,
        tool_response={"stdout": "", "stderr": "", "backgroundTaskId": "bgjob1"},
    )
    agent.hook("Stop", stop_hook_active=False)
    return job


def stop_job(ws: Path, job: subprocess.Popen[bytes]) -> None:
    (ws / "stop.flag").write_text("")
    job.wait(30)


@pytest.fixture
def ignore_flag(ws: Path) -> None:
    (ws / ".gitignore").write_text("*.flag\n")
    (ws / "notes.txt").write_text("original\n")


@pytest.mark.usefixtures("ignore_flag")
def test_the_jobs_writes_stay_its_turns_until_it_ends(
    agent: FakeClaude, cli: Cli, ws: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Between turns the job's log is turn 1's (background) and the person's edit theirs; the
    next turn's own command cannot be told apart from the job on the log (shared); once the job
    ended, a change of its log is someone else's again."""
    monkeypatch.setenv("REWIND_LS_HOME", str(home))
    cli("scan")
    job = start_job(agent, ws)
    try:
        ticks = lines(ws / "job.log")
        wait_for(lambda: lines(ws / "job.log") >= ticks + 3, "ticks after turn 1")
        (ws / "notes.txt").write_text("by hand\n")
        agent.hook("UserPromptSubmit", prompt="turn two")  # its opening scan
        assert agent_files(cli, agent)[0] == {"job.log": BACKGROUND_SHELL}
        assert outside_files(cli) == ["notes.txt"]
        # Turn 2's own command runs while the job ticks: either could have written the log.
        agent.shell("sleep 0.5; echo two > two.txt")
        turn2 = agent_files(cli, agent)[1]
        assert turn2["two.txt"] == "scan"
        assert turn2["job.log"] == "shared", turn2
        agent.hook("Stop", stop_hook_active=False)
    finally:
        stop_job(ws, job)
    with Store.open(str(ws)) as store:
        (registered,) = background_shell.jobs(store)
        wait_for(lambda: os.path.exists(registered.end_file(store.path)), "the job's end")
    time.sleep(0.1)  # the person, a moment after the job's end
    final = (ws / "job.log").read_bytes()
    (ws / "job.log").write_bytes(final + b"the person, after the job\n")
    agent.hook("UserPromptSubmit", prompt="turn three")
    assert "job.log" in outside_files(cli)
    assert "job.log" not in agent_files(cli, agent)[2]
    agent.hook("Stop", stop_hook_active=False)
    with Store.open(str(ws)) as store:
        assert background_shell.jobs(store) == []  # forgotten by the scans after its end


@pytest.mark.usefixtures("ignore_flag")
def test_rewind_of_the_later_turn_keeps_the_jobs_log(agent: FakeClaude, cli: Cli, ws: Path) -> None:
    """Turn 2 (an edit tool) while the job ticks: rewinding it leaves the log whole; rewinding
    turn 1 removes the log and keeps the person's edit; undo brings every byte back."""
    cli("scan")
    job = start_job(agent, ws)
    try:
        ticks = lines(ws / "job.log")
        wait_for(lambda: lines(ws / "job.log") >= ticks + 3, "ticks after turn 1")
        (ws / "notes.txt").write_text("by hand\n")
        agent.turn("turn two", {"two.txt": "two\n"})
        wait_for(lambda: lines(ws / "job.log") >= ticks + 6, "ticks after turn 2")
    finally:
        stop_job(ws, job)
    agent.turn("turn three", {})
    files = agent_files(cli, agent)
    assert files[0] == {"job.log": BACKGROUND_SHELL} and files[1] == {"two.txt": "tool"}, files
    log = (ws / "job.log").read_bytes()
    cli("rewind", "2", "--session", agent.session_id, "--yes")
    assert not (ws / "two.txt").exists() and (ws / "job.log").read_bytes() == log
    cli("undo", "--yes")
    cli("rewind", "1", "--session", agent.session_id, "--yes")
    assert not (ws / "job.log").exists() and not (ws / "two.txt").exists()
    assert (ws / "notes.txt").read_text() == "by hand\n"
    cli("undo", "--yes")
    assert (ws / "job.log").read_bytes() == log and (ws / "two.txt").read_text() == "two\n"
    blame = cli("blame", "job.log").stdout
    assert "t1 background" in blame and "outside" not in blame


def test_verdict() -> None:
    """Whose change of a job's file: the job's while it runs; shared while the scanning
    session's command ran too, or when its end is unknown; no longer the job's after its end."""
    job = Job("s", "t", "turn", 0, "1:1")
    assert job.verdict(5_000_000_000, None) == "job"
    assert job.verdict(None, None) == "job"  # deleted while it runs
    assert job.verdict(5_000_000_001, 5_000_000_000) == "shared"
    assert job.verdict(4_000_000_001, 5_000_000_000) == "job"  # well before that command
    job.end_ns = 6_000_000_001
    assert job.verdict(5_000_000_001, None) == "job"
    assert job.verdict(7_000_000_001, None) is None
    assert job.verdict(None, None) == "shared"  # a deletion has no time
    job.sure = False
    assert job.verdict(5_000_000_001, None) == "shared"
    assert job.verdict(7_000_000_001, None) is None


def test_the_jobs_process_and_the_files_it_holds_open(ws: Path) -> None:
    command = "exec 3>>held.log; for i in 1 2; do sleep 30; done"
    proc = subprocess.Popen(["bash", "-c", f"eval '{command}'"], cwd=ws)
    try:
        me = f"{os.getpid()}:"
        wait_for(lambda: background_shell.job_process(me, command, set()), "the job's process")
        found = background_shell.job_process(me, command, set())
        assert found is not None and found.startswith(f"{proc.pid}:")
        assert background_shell.job_process(me, command, {found}) is None
        assert background_shell.job_process(me, "something else", set()) is None
        wait_for(lambda: background_shell.open_for_write(str(ws), found), "the held log")
        assert background_shell.open_for_write(str(ws), found) == {"held.log"}
    finally:
        proc.kill()
        proc.wait()


def test_a_command_with_quotes_is_found_as_the_shell_quotes_it(ws: Path) -> None:
    """Claude Code 2.1.332 quotes the command for `eval`, a quote as `'"'"'` (seen in `ps`)."""
    command = "echo 'a b' \"c\" >> q.log; sleep 30"
    quoted = "'" + command.replace("'", "'\"'\"'") + "'"
    proc = subprocess.Popen(["bash", "-c", f"eval {quoted}"], cwd=ws)
    try:
        me = f"{os.getpid()}:"
        wait_for(lambda: background_shell.job_process(me, command, set()), "the job's process")
        assert str(background_shell.job_process(me, command, set())).startswith(f"{proc.pid}:")
    finally:
        proc.kill()
        proc.wait()


def test_the_end_watcher_writes_when_the_process_exits(tmp_path: Path) -> None:
    proc = subprocess.Popen(["sleep", "30"])
    stat = background_shell.shell_runs.proc_stat(proc.pid)
    assert stat is not None
    end_file = tmp_path / "ends" / "s.t"
    watcher = threading.Thread(
        target=background_end.main, args=([str(end_file), f"{proc.pid}:{stat[2]}"],)
    )
    watcher.start()
    time.sleep(0.3)
    assert not end_file.exists()
    killed = time.time_ns()
    proc.kill()
    proc.wait()
    watcher.join(10)
    ns, sure = end_file.read_text().split()
    assert sure == "sure" and killed <= int(ns) <= time.time_ns()


@pytest.mark.usefixtures("ignore_flag")
def test_the_timeline_page_colours_the_jobs_log_as_background(
    agent: FakeClaude, cli: Cli, ws: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The activity grid (`timeline --html`, VS Code's timeline view) says "background" for the
    job's log in turn 1, as `turns` and `blame` do, not "agent"."""
    from rewind_ls.core.history.activity import activity
    from rewind_ls.core.history.activity_page import grid_json

    monkeypatch.setenv("REWIND_LS_HOME", str(home))  # the store the hooks write, opened here
    cli("scan")
    job = start_job(agent, ws)
    try:
        ticks = lines(ws / "job.log")
        wait_for(lambda: lines(ws / "job.log") >= ticks + 3, "ticks after turn 1")
        agent.hook("UserPromptSubmit", prompt="turn two")  # its opening scan records them
        agent.hook("Stop", stop_hook_active=False)
    finally:
        stop_job(ws, job)
    with Store.open(str(ws)) as store:
        data = grid_json(activity(store, agent.session_id))
    who = {data["paths"][c[0]]: data["who"][c[2]] for c in data["cells"]}  # type: ignore[index]
    assert who == {"job.log": "background"}, data
    assert data["whoLabels"][data["who"].index("background")].startswith("background")  # type: ignore[index,attr-defined]
