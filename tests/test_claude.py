"""Claude Code support without the binary. The hook process driven with the payload shapes Claude
Code 2.1.197 sends: what the real binary cannot be made to show on demand (a filesystem-root cwd, a
broken hook command, damaged transcript lines, a session without CLAUDE_PROJECT_DIR), and fast checks
of what tests/agents/test_claude_real.py shows with the binary (compaction inside a turn, the
subagent in the turn's notice). And small parts of rebuilding turns from the transcript
(core/agents/claude/events.py, recorder.py; tests/agents/test_claude_transcript.py runs the binary)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest

from rewind_ls.core.agents.claude import transcript
from rewind_ls.core.agents.claude.events import TranscriptParser, apply_edit, apply_patch
from rewind_ls.core.agents.claude.recorder import TranscriptRecorder
from rewind_ls.core.store import Store
from tests.conftest import Cli
from tests.support.agent import FakeClaude, run_hook, run_hook_twice


def test_compaction_inside_a_turn_stays_in_the_turn(agent: FakeClaude, cli: Cli, ws: Path) -> None:
    """Problem 8: SessionStart source=compact inside an open turn keeps the turn's changes."""
    agent.hook("SessionStart", source="startup")
    agent.hook("UserPromptSubmit", prompt="long task", prompt_id="p1")
    (ws / "made_by_shell.txt").write_text("x\n")  # a shell edit not yet scanned
    agent.hook("SessionStart", source="compact")
    agent.hook("Stop")
    listing = cli.json("turns", "--all")
    by_kind = {s["kind"]: s for s in listing["sessions"]}
    assert [f["path"] for f in by_kind["agent"]["turns"][0]["files"]] == ["made_by_shell.txt"]
    assert "external" not in by_kind or not any(
        f["path"] == "made_by_shell.txt" for t in by_kind["external"]["turns"] for f in t["files"]
    )


def test_stop_prints_a_system_message(agent: FakeClaude, ws: Path) -> None:
    """#16: after a turn that changed files the hook's stdout carries `systemMessage`."""
    agent.hook("UserPromptSubmit", prompt="write", prompt_id="p1")
    agent.hook("PreToolUse", tool_name="Write", tool_input={"file_path": str(ws / "a.txt")})
    (ws / "a.txt").write_text("a\n")
    agent.hook(
        "PostToolUse",
        tool_name="Write",
        tool_input={"file_path": str(ws / "a.txt")},
        agent_id="ag1",
        agent_type="general-purpose",
    )
    out = json.loads(agent.hook("Stop").stdout)
    assert out == {
        "systemMessage": "rewind-ls: turn 1 (subagent: general-purpose) recorded, 1 file; "
        "to go back: rewind-ls rewind 1"
    }
    text = subprocess.run(
        [sys.executable, "-m", "rewind_ls", "turns"],
        cwd=ws,
        env={**os.environ, **agent.env},
        capture_output=True,
        text=True,
    ).stdout
    assert "(subagent: general-purpose)" in text
    from rewind_ls.core.store import Store

    with Store.open(str(ws), home=str(agent.home)) as store:
        info = json.loads(store.turns(agent.session_id)[0].info)
    assert info["agentIds"] == ["ag1"] and info["promptId"] == "p1"
    agent.env["REWIND_LS_NOTIFY"] = "0"
    agent.hook("UserPromptSubmit", prompt="again", prompt_id="p2")
    (ws / "a.txt").write_text("b\n")
    agent.hook("PostToolUse", tool_name="Bash", tool_input={"command": "x"})
    assert agent.hook("Stop").stdout == b""


def test_notebook_edit_hooks_record_the_notebook(agent: FakeClaude, ws: Path) -> None:
    """NotebookEdit's hooks as 2.1.197 sends them and 2.1.332 still does once the model loaded the
    (now deferred) tool with ToolSearch, `effort` added (seen with a logging hook): the notebook's
    before and after are the edit tool's, recorded by the hooks, not left to the turn's scan."""
    from rewind_ls.core.store import Store

    nb = ws / "nb.ipynb"
    old, new = '{"cells": [{"id": "c1", "source": ["x = 1\\n"]}]}', '{"cells": [{"id": "c1"}]}\n'
    nb.write_text(old)
    agent.hook("UserPromptSubmit", prompt="edit the notebook", prompt_id="p1", effort="medium")
    tool_input = {"notebook_path": str(nb), "cell_id": "c1", "new_source": "x = 2\n"}
    call = {"tool_name": "NotebookEdit", "tool_input": tool_input, "tool_use_id": "t1"}
    agent.hook("PreToolUse", **call, effort="medium")
    nb.write_text(new)
    response = {"notebook_path": str(nb), "original_file": old, "updated_file": new}
    agent.hook("PostToolUse", **call, tool_response=response, duration_ms=3, effort="medium")
    agent.hook("Stop", stop_hook_active=False)
    with Store.open(str(ws), home=str(agent.home)) as store:
        [turn] = store.turns(agent.session_id)
        change = store.change(turn.id, "nb.ipynb")
        assert change is not None and change.source == "tool", change
        assert change.after is not None and change.before.hash is not None
        sides = store.get_blob(change.before.hash), store.get_blob(change.after.hash)
    assert sides == (old.encode(), new.encode())


def test_filesystem_root_is_refused(home: Path) -> None:
    """`/` is never a workspace: the hook says what to do and records nothing."""
    env = {"REWIND_LS_HOME": str(home), "CLAUDE_CONFIG_DIR": str(home / "claude")}
    payload = {
        "hook_event_name": "UserPromptSubmit",
        "session_id": "s-root",
        "cwd": "/",
        "prompt": "hi",
    }
    env_no_project = {k: v for k, v in os.environ.items() if k != "CLAUDE_PROJECT_DIR"}
    proc = subprocess.run(
        [sys.executable, "-m", "rewind_ls", "hook", "claude-code"],
        input=json.dumps(payload).encode(),
        env={**env_no_project, **env},
        capture_output=True,
    )
    assert proc.returncode == 0
    assert b"filesystem root" in proc.stderr and b"project folder" in proc.stderr
    assert not (home / "workspaces").exists()


def test_cd_keeps_the_session_workspace_without_project_dir(
    agent: FakeClaude, cli: Cli, ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Problem 1 without CLAUDE_PROJECT_DIR: the session's first root is remembered."""
    monkeypatch.delenv("CLAUDE_PROJECT_DIR", raising=False)
    agent.hook("UserPromptSubmit", prompt="cd", prompt_id="p1")
    (ws / "sub").mkdir()
    sub = {"cwd": str(ws / "sub")}
    proc = run_hook(
        {
            **agent._base("PreToolUse"),
            **sub,
            "tool_name": "Write",
            "tool_input": {"file_path": str(ws / "top.txt")},
        },
        agent.env,
    )
    (ws / "top.txt").write_text("t\n")
    run_hook(
        {
            **agent._base("PostToolUse"),
            **sub,
            "tool_name": "Write",
            "tool_input": {"file_path": str(ws / "top.txt")},
        },
        agent.env,
    )
    run_hook({**agent._base("Stop"), **sub}, agent.env)
    assert proc.stderr == b""
    turns = cli.json("turns")["sessions"][0]["turns"]
    assert [f["path"] for f in turns[0]["files"]] == ["top.txt"]
    assert len(list((agent.home / "workspaces").iterdir())) == 1


def test_doctor_runs_the_hook_command(cli: Cli, ws: Path) -> None:
    """A hook command that cannot run fails doctor: a missing program, and the issue's case, a
    bare `rewind-ls` that only the (activated) virtualenv puts on PATH, which the agent, started
    elsewhere, answers with 127."""
    cli("install", "claude-code", "--command", "/nonexistent/rewind-ls hook claude-code")
    report = cli.json("doctor", ok=False)
    hooks = [c for c in report["checks"] if c["name"] == "claude code hooks"]
    assert not report["ok"] and not hooks[0]["ok"] and "exited 127" in hooks[0]["detail"]

    venv_bin = str(Path(sys.executable).parent)
    assert (Path(venv_bin) / "rewind-ls").exists()
    cli.env["PATH"] = venv_bin + os.pathsep + "/usr/bin:/bin"  # as in an activated virtualenv
    cli.env["VIRTUAL_ENV"] = str(Path(venv_bin).parent)
    cli("install", "claude-code", "--command", "rewind-ls hook claude-code")
    found = subprocess.run(
        ["/bin/sh", "-c", "command -v rewind-ls"], env=cli.env, text=True, capture_output=True
    )
    assert found.stdout.strip() == os.path.join(venv_bin, "rewind-ls")  # runs in this shell
    report = cli.json("doctor", ok=False)
    hooks = [c for c in report["checks"] if c["name"] == "claude code hooks"]
    assert not hooks[0]["ok"] and "exited 127" in hooks[0]["detail"], hooks
    cli("install", "claude-code")  # default: the absolute entry point
    command = json.loads((ws / ".claude" / "settings.json").read_text())["hooks"]["Stop"][0][
        "hooks"
    ][0]["command"]
    assert os.path.isabs(command.split()[0]) and command.endswith("hook claude-code")
    report = cli.json("doctor")
    assert all(c["ok"] for c in report["checks"] if c["name"] == "claude code hooks")


def test_fork_survives_bad_lines_and_leaves_nothing_on_failure(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """#11 item 6: a lone surrogate or a broken line is no crash; a failed fork leaves no file."""
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(home / "claude"))
    folder = home / "claude" / "projects" / "-ws"
    folder.mkdir(parents=True)
    lines = [
        '{"type":"user","uuid":"u1","parentUuid":null,"sessionId":"s","promptId":"p1",'
        '"message":{"role":"user","content":"first \\ud800 half"},"cwd":"/ws"}',
        "{not json",
        '{"type":"assistant","uuid":"a1","parentUuid":"u1","sessionId":"s",'
        '"message":{"role":"assistant","content":[{"type":"text","text":"ok"}]}}',
        '{"type":"user","uuid":"u2","parentUuid":"a1","sessionId":"s","promptId":"p2",'
        '"message":{"role":"user","content":"second"}}',
    ]
    path = folder / "s.jsonl"
    path.write_bytes(("\n".join(lines) + "\n").encode())
    fork = transcript.fork(str(path), "second", 0.0, "p2")
    assert not Path(fork.path).exists()  # staged until the store adopts it (fork_turn)
    fork.staged.publish()
    written = Path(fork.path).read_text().splitlines()
    assert [json.loads(x)["uuid"] for x in written] == ["u1", "a1"]
    assert "\\ud800" in written[0]  # kept, escaped as in the original
    assert fork.resume_command == f"cd /ws && claude --resume {fork.session_id}"

    def boom(line: dict[str, object]) -> bytes:
        raise OSError("disk full")

    monkeypatch.setattr(transcript, "_dump", boom)
    before = sorted(p.name for p in folder.iterdir())
    with pytest.raises(OSError):
        transcript.fork(str(path), "second", 0.0, "p2")
    assert sorted(p.name for p in folder.iterdir()) == before


def test_edit_reconstruction() -> None:
    assert apply_edit("a two two\n", "two", "2", False) == "a 2 two\n"
    assert apply_edit("a two two\n", "two", "2", True) == "a 2 2\n"
    assert apply_edit("abc", "zzz", "y", False) is None
    patch = [
        {
            "oldStart": 1,
            "oldLines": 2,
            "newStart": 1,
            "newLines": 2,
            "lines": [" one", "-two", "+TWO"],
        }
    ]
    assert apply_patch("one\ntwo\nthree\n", patch) == "one\nTWO\nthree\n"
    assert apply_patch("one\nsomething else\n", patch) is None


def test_turn_end_without_timestamp_closes_the_turn_read_in_the_same_poll(tmp_path: Path) -> None:
    """Claude Code writes `last-prompt` without a timestamp. Read in one poll with its prompt, it
    must still close that turn (not sort first, close nothing, and leave the turn open), and the
    turn's end time is the time of the line before it (never 1970)."""
    root = tmp_path / "ws"
    root.mkdir()
    (root / "a.txt").write_text("one\n")
    store = Store.open(str(root), home=str(tmp_path / "home"), create=True)
    parser = TranscriptParser(str(tmp_path / "t.jsonl"))
    lines = [
        {
            "type": "user",
            "sessionId": "s1",
            "promptId": "p1",
            "timestamp": "2026-11-23T10:00:00.000Z",
            "message": {"role": "user", "content": "first"},
        },
        {"type": "last-prompt", "sessionId": "s1", "lastPrompt": "first"},
        {
            "type": "user",
            "sessionId": "s1",
            "promptId": "p2",
            "timestamp": "2026-11-23T10:00:05.000Z",
            "message": {"role": "user", "content": "second"},
        },
        {"type": "last-prompt", "sessionId": "s1", "lastPrompt": "second"},
    ]
    events = [ev for line in lines for ev in parser.feed(line)]
    rec = TranscriptRecorder(store, live=False)
    rec.record(events)
    turns = store.turns("s1")
    assert [t.prompt for t in turns] == ["first", "second"]
    assert [t.ended_at for t in turns] == [
        datetime(2026, 11, 23, 10, 0, 0, tzinfo=UTC).timestamp(),
        datetime(2026, 11, 23, 10, 0, 5, tzinfo=UTC).timestamp(),
    ]
    assert store.session("s1").open_turn is None


def test_a_last_prompt_line_ends_the_turn_only_where_the_conversation_rests() -> None:
    """`last-prompt` is also the binary's checkpoint every 32 KiB (inside a turn on 2.1.332,
    `tests/agents/test_claude_turn_end.py`): it ends the turn when the leaf it names is the
    model's last reply or a line written after the turn (the Stop hooks' summary), not when it
    names a tool call, a result, or a line not yet read (still queued for the file)."""
    sid, stamp = "s1", "2026-11-23T10:00:00.000Z"

    def line(uid: str, kind: str, **more: object) -> dict[str, object]:
        return {"type": kind, "uuid": uid, "sessionId": sid, "timestamp": stamp, **more}

    def reply(uid: str, stop: str, *blocks: dict[str, object]) -> dict[str, object]:
        return line(uid, "assistant", message={"stop_reason": stop, "content": list(blocks)})

    def checkpoint(leaf: str | None) -> dict[str, object]:
        found = {"type": "last-prompt", "sessionId": sid}
        return found if leaf is None else {**found, "leafUuid": leaf}

    call = {"type": "tool_use", "id": "t1", "name": "Bash", "input": {}}
    result = {"type": "tool_result", "tool_use_id": "t1", "content": "ok"}
    lines = [
        line("u1", "user", promptId="p1", message={"role": "user", "content": "go"}),
        checkpoint("u2"),  # names a line not read yet
        reply("u2", "tool_use", {"type": "text", "text": "running"}, call),
        checkpoint("u2"),  # a tool call waiting for its result
        line("u3", "user", promptId="p1", message={"role": "user", "content": [result]}),
        checkpoint("u3"),  # a result waiting for the model
        line("h0", "attachment", parentUuid="u3"),
        checkpoint("h0"),  # a PostToolUse hook's output under it
        reply("u4", "end_turn", {"type": "text", "text": "done"}),
        checkpoint("u4"),  # the model's last reply
        line("h1", "attachment", parentUuid="u4"),
        checkpoint("h1"),  # a Stop hook's output under the last reply (2.1.197's exit)
        line("u5", "system", subtype="stop_hook_summary"),
        checkpoint("u5"),  # the Stop hooks ran
        line("u6", "system", subtype="compact_boundary"),
        checkpoint("u6"),  # a compaction: the turn may go on
        checkpoint(None),  # no leaf (older binaries, exit): the end
    ]
    parser = TranscriptParser("t.jsonl")
    ends = [i for i, ln in enumerate(lines) for ev in parser.feed(ln) if type(ev).__name__ == "End"]
    assert ends == [9, 11, 13, 16]


@pytest.mark.parametrize("commit", [1, 2, 3, 4, 5])
def test_a_prompt_hook_killed_after_claiming_its_prompt_id_keeps_the_prompt_when_run_again(
    agent: FakeClaude, cli: Cli, ws: Path, commit: int
) -> None:
    """The prompt hook claims `prompt_id`, then opens the turn, in two transactions. Killed
    between them (here at each of its commits), the hook run again (the hook server's client does
    when its child died) opens the turn with the prompt instead of taking the claim for the
    transcript's."""
    agent.hook("SessionStart", source="startup")
    payload = {**agent._base("UserPromptSubmit"), "prompt": "keep me", "prompt_id": "p-1"}
    killed = run_hook(payload, {**agent.env, "REWIND_LS_FAULT": f"after-commit:{commit}"})
    assert killed.returncode in (0, 137)
    again = run_hook(payload, agent.env)
    assert again.returncode == 0 and not again.stderr, again.stderr
    agent.write("a.txt", "x\n")
    agent.hook("Stop")
    turns = cli.json("turns", "--session", agent.session_id)["sessions"][0]["turns"]
    assert [t["prompt"] for t in turns] == ["keep me"], turns


@pytest.mark.parametrize("stage", ["before-commit:1", "after-commit:1"])
def test_the_hook_before_an_edit_commits_once_with_its_tool_claim(
    agent: FakeClaude, ws: Path, stage: str
) -> None:
    """A PreToolUse in an open turn writes the file's before, the session's activity and the tool
    call's claim in one transaction: killed just before it commits, none of it is stored; just
    after, all of it is, and nothing is left for a second commit (it took five: a kill between
    them left a before without its claim, or a claim without the file's content)."""
    (ws / "a.txt").write_text("old\n")
    agent.hook("SessionStart", source="startup")
    agent.hook("UserPromptSubmit", prompt="edit a", prompt_id="p-1")
    tool_input = {"file_path": str(ws / "a.txt"), "content": "new\n"}
    payload = {
        **agent._base("PreToolUse"),
        "tool_name": "Write",
        "tool_input": tool_input,
        "tool_use_id": "toolu_once",
    }
    with Store.open(str(ws), home=str(agent.home)) as store:
        turn = store.session(agent.session_id).open_turn
        seq = store.seq_now()
    killed = run_hook(payload, {**agent.env, "REWIND_LS_FAULT": stage})
    assert killed.returncode == 137, (killed.returncode, killed.stderr)
    with Store.open(str(ws), home=str(agent.home)) as store:
        change = store.change(turn, "a.txt")
        claim = store.event(agent.session_id, "tool", "toolu_once")
        if stage.startswith("before"):
            assert change is None and claim is None and store.seq_now() == seq
        else:
            assert change is not None and change.before.hash is not None
            assert store.get_blob(change.before.hash) == b"old\n"
            assert claim is not None and claim.turn_id == turn
    # Its second commit would be the first of this run: a hook that commits once never reaches it.
    once = run_hook(payload, {**agent.env, "REWIND_LS_FAULT": "after-commit:2"})
    assert once.returncode == 0 and not once.stderr, once.stderr


def test_an_edit_reported_only_after_it_ran_outside_a_prompt_is_the_tools(
    agent: FakeClaude, ws: Path
) -> None:
    """A PostToolUse with no turn open and no PreToolUse before it (the hook installed mid-edit):
    the scan that opens the turn finds the file changed, and the edit takes that change back from
    it, so it is the tool's, once, from the old content; not a change made outside the agent."""
    (ws / "a.txt").write_text("old\n")
    agent.hook("SessionStart", source="startup")
    (ws / "a.txt").write_text("new\n")
    tool_input = {"file_path": str(ws / "a.txt"), "content": "new\n"}
    agent.hook("PostToolUse", tool_name="Write", tool_input=tool_input, tool_use_id="toolu_x")
    with Store.open(str(ws), home=str(agent.home)) as store:
        turn = store.session(agent.session_id).open_turn
        history = store.path_history("a.txt")
        assert [(c.turn_id, c.session_id) for c in history] == [(turn, agent.session_id)]
        change = history[0]
        assert change.before.hash is not None and change.after is not None
        assert store.get_blob(change.before.hash) == b"old\n"
        assert change.after.hash is not None and store.get_blob(change.after.hash) == b"new\n"


def _hook_twice(agent: FakeClaude, event: str, **fields: object) -> None:
    run_hook_twice({**agent._base(event), **fields}, agent.env)


@pytest.mark.parametrize("server", ["hook server", "in-process"])
def test_every_hook_delivered_twice_records_each_event_once(
    agent: FakeClaude, cli: Cli, ws: Path, server: str
) -> None:
    """Issue #38 item 2: two installs hook the same agent, so every event comes twice, at the
    same moment. Each prompt is one turn (none empty), each file is in its turn, and `rewind 2`
    goes back to the start of the second prompt, not before the first. Through the hook server
    (two of its children at once) and in two hook processes."""
    if server == "in-process":
        agent.env["REWIND_LS_HOOK_SERVER"] = "0"
    (ws / "seed.txt").write_text("seed\n")
    _hook_twice(agent, "SessionStart", source="startup")
    for n in range(1, 6):
        _hook_twice(agent, "UserPromptSubmit", prompt=f"prompt {n}", prompt_id=f"p{n}")
        tid = f"toolu_bash{n}"
        bash = {"command": f"echo {n} > shell{n}.txt"}
        _hook_twice(agent, "PreToolUse", tool_name="Bash", tool_input=bash, tool_use_id=tid)
        (ws / f"shell{n}.txt").write_text(f"{n}\n")
        _hook_twice(agent, "PostToolUse", tool_name="Bash", tool_input=bash, tool_use_id=tid)
        path = ws / f"edit{n}.txt"
        write = {"file_path": str(path), "content": f"{n}\n"}
        wid = f"toolu_write{n}"
        _hook_twice(agent, "PreToolUse", tool_name="Write", tool_input=write, tool_use_id=wid)
        path.write_text(f"{n}\n")
        _hook_twice(agent, "PostToolUse", tool_name="Write", tool_input=write, tool_use_id=wid)
        _hook_twice(agent, "Stop", stop_hook_active=False)
    listing = cli.json("turns", "--session", agent.session_id)
    turns = listing["sessions"][0]["turns"]
    assert [t["prompt"] for t in turns] == [f"prompt {n}" for n in range(1, 6)]
    assert [sorted(f["path"] for f in t["files"]) for t in turns] == [
        [f"edit{n}.txt", f"shell{n}.txt"] for n in range(1, 6)
    ]
    cli("rewind", "2", "--session", agent.session_id, "--yes")
    assert sorted(p.name for p in ws.iterdir()) == ["edit1.txt", "seed.txt", "shell1.txt"]


def test_install_local_writes_the_per_person_settings_file(ws: Path, cli: Cli) -> None:
    """Issue 36 item 11: `install claude-code --local` writes `.claude/settings.local.json` (not
    committed: the hook command names this machine's paths), leaves `settings.json` alone, and
    doctor finds the hooks there."""
    out = cli("install", "claude-code", "--local").stdout
    local = ws / ".claude" / "settings.local.json"
    assert out.startswith(f"{local}: "), out
    assert not (ws / ".claude" / "settings.json").exists()
    command = json.loads(local.read_text())["hooks"]["Stop"][0]["hooks"][0]["command"]
    assert command.endswith("hook claude-code")
    report = cli.json("doctor")
    hooks = [c for c in report["checks"] if c["name"] == "claude code hooks"]
    assert hooks and all(c["ok"] for c in hooks), hooks
    refused = cli("install", "codex", "--local", ok=False)
    assert refused.returncode != 0 and "per-person" in refused.stderr, refused.stderr


def test_background_subagent_and_notification_hooks(agent: FakeClaude, cli: Cli, ws: Path) -> None:
    """2.1.332's payloads (tests/agents/test_claude_background_real.py runs the binary): the
    SubagentStart of prompt p1 maps the agent to turn 1; its Write after the person's prompt p2
    (its payload then carries p2) goes to turn 1 as background; the notification opens no turn
    and its answer's edit goes to turn 1. A notification naming a task nobody started (an install
    without SubagentStart) goes to the session's latest turn, never a made-up one."""
    agent.hook("UserPromptSubmit", prompt="one", prompt_id="p1")
    agent.hook("SubagentStart", prompt_id="p1", agent_id="ag1", agent_type="general-purpose")
    agent.hook("Stop")
    agent.hook("UserPromptSubmit", prompt="two", prompt_id="p2")
    sub = {"prompt_id": "p2", "agent_id": "ag1", "agent_type": "general-purpose"}
    write = {"tool_name": "Write", "tool_input": {"file_path": str(ws / "bg.txt")}}
    agent.hook("PreToolUse", **write, **sub, tool_use_id="t1")
    (ws / "bg.txt").write_text("bg\n")
    agent.hook("PostToolUse", **write, **sub, tool_use_id="t1")
    agent.hook("Stop")
    note = "<task-notification>\n<task-id>{}</task-id>\n<status>completed</status>\n</task-notification>"
    agent.hook("UserPromptSubmit", prompt=note.format("ag1"), prompt_id="p3")
    answer = {"tool_name": "Write", "tool_input": {"file_path": str(ws / "answer.txt")}}
    agent.hook("PreToolUse", **answer, prompt_id="p3", tool_use_id="t2")
    (ws / "answer.txt").write_text("answer\n")
    agent.hook("PostToolUse", **answer, prompt_id="p3", tool_use_id="t2")
    agent.hook("Stop")
    agent.hook("UserPromptSubmit", prompt=note.format("unknown"), prompt_id="p4")
    late = {"tool_name": "Write", "tool_input": {"file_path": str(ws / "late.txt")}}
    agent.hook("PreToolUse", **late, prompt_id="p4", tool_use_id="t3")
    (ws / "late.txt").write_text("late\n")
    agent.hook("PostToolUse", **late, prompt_id="p4", tool_use_id="t3")
    agent.hook("Stop")
    turns = cli.json("turns")["sessions"][0]["turns"]
    files = {t["prompt"]: {f["path"]: f["source"] for f in t["files"]} for t in turns}
    background = "background-agent"
    assert files == {
        "one": {"bg.txt": background, "answer.txt": background},
        "two": {"late.txt": background},  # the latest turn when the task is not known
    }
    assert next(t for t in turns if t["prompt"] == "one")["subagents"] == ["general-purpose"]
