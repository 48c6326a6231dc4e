"""Crash safety: kill -9 the CLI restore, the hook and the language server at many points.

Afterwards the store opens and is whole (integrity check, every blob decodes to its hash, every
content a checkpoint names is present), every acknowledged checkpoint (a hook process that exited 0)
is there, `rewind-ls doctor --json` reports ok, and the workspace holds exactly one of two states:
untouched by the interrupted restore (A) or fully restored (B), compared over every file's bytes and
mode, every folder and every stray file. Never half.

Kill points:
- `REWIND_LS_FAULT=after-swap:N` (apply_disk) for every N of an 8-file restore;
- `REWIND_LS_FAULT=before-commit:N` / `after-commit:N` (store) for every write transaction of the CLI
  restore and of each kind of hook event, in turn, until the process runs to the end;
- SIGKILL at a random moment: `runs(...)` iterations each for the CLI restore and for the hook
  (CI sizes below, full size `REWIND_RELIABILITY_RUNS=200`);
- the language server, mid-restore: with its applyEdit unanswered, and inside its own file writes.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types

from rewind_ls.core.restore.swap import BACKUPS_GONE
from rewind_ls.core.store import digest
from tests.support.agent import FakeClaude
from tests.support.fault import (
    Tally,
    TreeState,
    check_store_whole,
    cli,
    describe_diff,
    doctor_ok,
    env_for,
    files_only,
    query,
    reset_tree,
    runs,
    tree_state,
)
from tests.support.lsp_client import start

count = Tally("reliability/crash kills survived")


@pytest.fixture(scope="module", autouse=True)
def report_tally() -> Iterator[None]:
    yield
    count.report()


# --- the scenario: two turns, then a rewind to turn 1 that touches 8 paths -----------------------

BEFORE: dict[str, bytes] = {
    "a.txt": b"alpha\n",
    "c.txt": b"deleted by turn 1\n",
    "gone/x.txt": b"in a folder turn 1 removes\n",
    "e.bin": bytes(range(256)) * 4,
    "f.sh": b"#!/bin/sh\necho one\n",
    "crlf.txt": b"one\r\ntwo\r\n",
}
RESTORED_PATHS = 8  # a, b (delete), c (create), crlf, e.bin, f.sh, gone/x.txt (+folder), sub/d.txt


@dataclass
class Scenario:
    ws: Path
    home: Path
    pristine_ws: Path
    pristine_home: Path
    a: TreeState  # after turn 2: what an interrupted restore must leave
    b: TreeState  # after a complete rewind to turn 1
    turn1: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    def reset(self) -> None:
        reset_tree(self.ws, self.pristine_ws)
        reset_tree(self.home, self.pristine_home)

    def state(self) -> TreeState:
        return tree_state(self.ws)


def _turn(agent: FakeClaude, prompt: str, writes: dict[str, bytes], shell: str | None) -> None:
    agent.turns += 1
    agent._transcript_line("user", prompt)
    agent.hook("UserPromptSubmit", prompt=prompt)
    for rel, data in writes.items():
        agent.write(rel, data)
    if shell:
        agent.shell(shell)
    agent._transcript_line("assistant", [{"type": "text", "text": "done"}])
    agent.hook("Stop", stop_hook_active=False)


@pytest.fixture(scope="module")
def scenario(tmp_path_factory: pytest.TempPathFactory) -> Scenario:
    base = tmp_path_factory.mktemp("crash")
    ws, home = base / "ws", base / "home"
    ws.mkdir()
    for rel, data in BEFORE.items():
        (ws / rel).parent.mkdir(parents=True, exist_ok=True)
        (ws / rel).write_bytes(data)
    os.chmod(ws / "f.sh", 0o755)
    agent = FakeClaude(ws, home, session_id="crash-session")
    agent.hook("SessionStart", source="startup")
    _turn(
        agent,
        "turn one",
        {
            "a.txt": b"alpha 1\n",
            "b.txt": b"created by turn 1\n",
            "e.bin": bytes(range(255, -1, -1)) * 4,
            "f.sh": b"#!/bin/sh\necho two\n",
            "sub/d.txt": b"new folder, new file\n",
            "crlf.txt": b"one\r\nTWO\r\n",
        },
        "rm -f c.txt && rm -rf gone",
    )
    _turn(agent, "turn two", {"a.txt": b"alpha 2\n", "b.txt": b"changed by turn 2\n"}, None)
    a = tree_state(ws)
    assert (ws / "f.sh").stat().st_mode & 0o111
    pristine_ws, pristine_home = base / "pristine-ws", base / "pristine-home"
    reset_tree(pristine_ws, ws)
    reset_tree(pristine_home, home)
    # B, measured: a clean rewind to turn 1. It must hold exactly the content before turn 1.
    done = cli(ws, home, "rewind", "1", "--yes", "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["status"] == "applied"
    b = tree_state(ws)
    for rel, data in BEFORE.items():
        assert b[rel][0] == data, rel
    assert b["f.sh"][1] & 0o111
    assert "b.txt" not in b and "sub/d.txt" not in b
    turn1 = query(ws, home, "SELECT id FROM turns WHERE prompt = 'turn one'")[0][0]
    s = Scenario(ws, home, pristine_ws, pristine_home, a, b, turn1)
    s.reset()
    assert s.state() == a
    return s


def _settled(s: Scenario, allowed: tuple[str, ...] = ("A", "B")) -> str:
    """Run the next CLI command (doctor: it recovers, then checks), then name the state."""
    doctor_ok(s.ws, s.home)
    check_store_whole(s.ws, s.home)
    now = s.state()
    for name in allowed:
        if now == getattr(s, name.lower()):
            return name
    raise AssertionError(
        f"workspace is neither {' nor '.join(allowed)} after recovery:\n"
        f"vs A:\n{describe_diff(s.a, now)}\nvs B:\n{describe_diff(s.b, now)}"
    )


def _pending_points(s: Scenario) -> int:
    return len(query(s.ws, s.home, "SELECT id FROM turns WHERE state = 'pending'"))


def _round_trip(s: Scenario) -> None:
    """After a recovered crash the same restore still works, and is undoable."""
    done = cli(s.ws, s.home, "rewind", "1", "--yes")
    assert done.returncode == 0, done.stderr
    assert s.state() == s.b, describe_diff(s.b, s.state())
    undone = cli(s.ws, s.home, "undo", "--yes")
    assert undone.returncode == 0, undone.stderr
    # Folders are not tracked: undo leaves the (now empty) folder the rewind recreated.
    now = files_only(s.state())
    assert now == files_only(s.a), describe_diff(s.a, now)


# --- the CLI restore ------------------------------------------------------------------------------


@pytest.mark.parametrize("n", range(1, RESTORED_PATHS + 1))
def test_cli_restore_killed_after_each_swap(scenario: Scenario, n: int) -> None:
    s = scenario
    s.reset()
    proc = cli(
        s.ws, s.home, "rewind", "1", "--yes", extra_env={"REWIND_LS_FAULT": f"after-swap:{n}"}
    )
    assert proc.returncode == 137, (proc.returncode, proc.stderr)
    assert _pending_points(s) == 1
    assert _settled(s, ("A",)) == "A"
    assert _pending_points(s) == 0
    count("cli after-swap")
    _round_trip(s)


@pytest.mark.parametrize("stage", ["before-commit", "after-commit"])
def test_cli_restore_killed_at_every_commit(scenario: Scenario, stage: str) -> None:
    s = scenario
    seen = {"A": 0, "B": 0}
    for n in range(1, 200):
        s.reset()
        proc = cli(
            s.ws, s.home, "rewind", "1", "--yes", extra_env={"REWIND_LS_FAULT": f"{stage}:{n}"}
        )
        if proc.returncode == 0:
            break  # the restore has fewer transactions than n: every one was tried
        assert proc.returncode == 137, (n, proc.returncode, proc.stderr)
        seen[_settled(s)] += 1
        count(f"cli {stage}")
    else:
        raise AssertionError("the restore never finished")
    assert n > 3 and seen["A"] > 0, seen
    _round_trip(s)


def test_cli_restore_killed_between_its_last_two_steps(scenario: Scenario) -> None:
    """Killed after the restore deleted its backups and before it removed the folders its
    deletions emptied (turn 1's new `sub/`): nothing on disk says so but the journal, and the next
    command finishes the step (it used to look only when a backup was left), then marks the
    journal so later commands do not look again."""
    s = scenario
    s.reset()
    proc = cli(
        s.ws, s.home, "rewind", "1", "--yes", extra_env={"REWIND_LS_FAULT": "after-discard:1"}
    )
    assert proc.returncode == 137, (proc.returncode, proc.stderr)
    assert (s.ws / "sub").is_dir() and not any((s.ws / "sub").iterdir())
    assert _settled(s, ("B",)) == "B"
    (info,) = query(
        s.ws,
        s.home,
        "SELECT info FROM turns WHERE session_id = 'rewind' AND state = 'applied'"
        " ORDER BY seq DESC LIMIT 1",
    )[0]
    assert json.loads(info).get(BACKUPS_GONE) is True, info
    count("cli after-discard")


def _killed_before_discard(s: Scenario) -> None:
    """`rewind-ls rewind 1` SIGKILLed in its own process once every file is restored and the point
    marked applied, before its backups are dropped: a `.rewind-*.bak` beside each file."""
    s.reset()
    mark = s.ws.parent / "before-discard.mark"
    mark.unlink(missing_ok=True)
    extra = {
        "REWIND_LS_HOOK_SERVER": "0",
        "REWIND_LS_FAULT": "before-discard:1",
        "REWIND_LS_FAULT_MARK": str(mark),
        "REWIND_LS_FAULT_PAUSE": "120",
    }
    proc = subprocess.Popen(
        [sys.executable, "-m", "rewind_ls", "rewind", "1", "--yes", "-C", str(s.ws)],
        env=env_for(s.home, **extra),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        stdin=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 120
        while not mark.exists():
            assert proc.poll() is None and time.monotonic() < deadline, "never reached the discard"
            time.sleep(0.02)
    finally:
        proc.kill()
        proc.wait()
    assert [p for p in s.ws.rglob("*") if ".rewind-" in p.name]  # the backups, left behind


def test_cli_restore_killed_before_dropping_its_backups(scenario: Scenario) -> None:
    """Issue #38 item 4: after `_killed_before_discard` the next command removes the backups and
    says so (doctor said "interrupted restores: none"), and the restore is still undoable."""
    s = scenario
    _killed_before_discard(s)
    report = doctor_ok(s.ws, s.home)
    (check,) = [c for c in report["checks"] if c["name"] == "interrupted restores"]
    assert check["detail"].startswith("1 finished or rolled back"), check
    assert "backup file(s) it left in the project removed" in check["detail"], check
    assert s.state() == s.b, describe_diff(s.b, s.state())
    undone = cli(s.ws, s.home, "undo", "--yes")
    assert undone.returncode == 0, undone.stderr
    assert files_only(s.state()) == files_only(s.a), describe_diff(s.a, s.state())
    count("cli killed before discard")


def test_the_next_restore_finishes_a_killed_ones_last_steps(scenario: Scenario) -> None:
    """Issue #38 item 4: the next command's recovery can find the restore lock still held (the
    killed process not yet gone: a client killed, its child a moment later) and leave the
    backups. The `undo` that follows takes the lock itself: it drops them first, and leaves no
    `.rewind-*` file in the project."""
    import fcntl

    from tests.support.fault import store_db

    s = scenario
    _killed_before_discard(s)
    fd = os.open(store_db(s.ws, s.home).parent / "restore.lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # the dying process, still holding it
        undo = subprocess.Popen(
            [sys.executable, "-m", "rewind_ls", "undo", "--yes", "-C", str(s.ws)],
            env=env_for(s.home, REWIND_LS_HOOK_SERVER="0"),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
        )
        time.sleep(1.5)  # its recovery passed the held lock by; its restore waits for it
    finally:
        os.close(fd)
    out, err = undo.communicate(timeout=120)
    assert undo.returncode == 0, err
    assert not [p for p in s.ws.rglob("*") if ".rewind-" in p.name], out
    assert files_only(s.state()) == files_only(s.a), describe_diff(s.a, s.state())
    count("cli killed before discard, then undo")


def test_cli_restore_killed_at_random_moments(scenario: Scenario) -> None:
    """SIGKILL of `rewind-ls rewind` at a random moment (a command always runs in its own process:
    there is no command-line server, issue 37; issue #38 item 4): the next command finds the
    journal and finishes or rolls back, and no `.rewind-*` file stays in the project."""
    s = scenario
    s.reset()
    extra: dict[str, str] = {}
    started = time.monotonic()
    probe = cli(s.ws, s.home, "rewind", "1", "--yes", extra_env=extra)
    assert probe.returncode == 0
    span = time.monotonic() - started
    rng = random.Random(int(os.environ.get("REWIND_RELIABILITY_SEED", "7")))
    seen = {"A": 0, "B": 0}
    for _ in range(runs(6)):
        s.reset()
        proc = subprocess.Popen(
            [sys.executable, "-m", "rewind_ls", "rewind", "1", "--yes", "-C", str(s.ws)],
            env=env_for(s.home, **extra),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
        )
        time.sleep(rng.uniform(0.05, span * 1.1))
        proc.send_signal(signal.SIGKILL)
        _, err = proc.communicate()
        assert proc.returncode in (0, -9), err
        seen[_settled(s)] += 1
        assert not [p for p in s.ws.rglob("*") if ".rewind-" in p.name]
        count("cli random SIGKILL")
    assert sum(seen.values()) == runs(6)


# --- the hook --------------------------------------------------------------------------------------


def _hook_payload(agent: FakeClaude, event: str, **fields: Any) -> bytes:
    return json.dumps({**agent._base(event), **fields}).encode()


def _write_payloads(agent: FakeClaude, rel: str) -> tuple[bytes, bytes]:
    tool_input = {"file_path": str(agent.workspace / rel), "content": "x"}
    tid = "toolu_" + uuid.uuid4().hex[:12]
    pre = _hook_payload(
        agent, "PreToolUse", tool_name="Write", tool_input=tool_input, tool_use_id=tid
    )
    post = _hook_payload(
        agent,
        "PostToolUse",
        tool_name="Write",
        tool_input=tool_input,
        tool_use_id=tid,
        tool_response={"success": True},
    )
    return pre, post


def _run_hook(payload: bytes, env: dict[str, str]) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "rewind_ls", "hook", "claude-code"],
        input=payload,
        env=env,
        capture_output=True,
        timeout=60,
    )


class Acked:
    """What the hooks acknowledged (exit 0): per prompt, per path, the content after the edit."""

    def __init__(self) -> None:
        self.edits: list[tuple[str, str, str]] = []  # (prompt, path, after hash)

    def check(self, ws: Path, home: Path, session: str) -> None:
        rows = query(
            ws,
            home,
            "SELECT t.prompt, c.path, c.after_hash FROM changes c JOIN turns t ON t.id = c.turn_id"
            " WHERE t.session_id = ?",
            session,
        )
        have = set(rows)
        for edit in self.edits:
            assert edit in have, f"acknowledged edit lost: {edit}"
        numbers = [
            r[0]
            for r in query(
                ws, home, "SELECT number FROM turns WHERE session_id = ? ORDER BY seq", session
            )
        ]
        assert numbers == list(range(1, len(numbers) + 1)), numbers


def _acked_edit(
    agent: FakeClaude, env: dict[str, str], acked: Acked, prompt: str, rel: str
) -> None:
    data = f"{prompt}: {rel} {uuid.uuid4().hex}\n".encode()
    pre, post = _write_payloads(agent, rel)
    assert _run_hook(pre, env).returncode == 0
    (agent.workspace / rel).write_bytes(data)
    done = _run_hook(post, env)
    assert done.returncode == 0 and not done.stderr, done.stderr
    acked.edits.append((prompt, rel, digest(data)))


VICTIMS = ("prompt", "pre", "post-large", "bash-post", "stop")


def _victim(agent: FakeClaude, kind: str, i: int) -> bytes:
    if kind == "prompt":
        return _hook_payload(agent, "UserPromptSubmit", prompt=f"victim prompt {i}")
    if kind == "stop":
        return _hook_payload(agent, "Stop", stop_hook_active=False)
    if kind == "bash-post":
        (agent.workspace / f"shell-{i % 4}.txt").write_bytes(os.urandom(64 * 1024))
        return _hook_payload(
            agent,
            "PostToolUse",
            tool_name="Bash",
            tool_input={"command": "true"},
            tool_use_id=f"toolu_b{i}",
            tool_response={"stdout": ""},
        )
    pre, post = _write_payloads(agent, "large.bin")
    if kind == "pre":
        return pre
    (agent.workspace / "large.bin").write_bytes(os.urandom(512 * 1024) + bytes(1024 * 1024))
    return post


def _hook_setup(tmp_path: Path) -> tuple[FakeClaude, dict[str, str]]:
    ws, home = tmp_path / "ws", tmp_path / "home"
    ws.mkdir()
    (ws / "seed.txt").write_text("seed\n")
    agent = FakeClaude(ws, home, session_id="hook-session")
    env = env_for(home)
    assert _run_hook(_hook_payload(agent, "SessionStart", source="startup"), env).returncode == 0
    return agent, env


def test_hook_killed_at_random_moments(tmp_path: Path) -> None:
    agent, env = _hook_setup(tmp_path)
    ws, home = agent.workspace, agent.home
    rng = random.Random(int(os.environ.get("REWIND_RELIABILITY_SEED", "11")))
    acked = Acked()
    for i in range(runs(8)):
        prompt = f"prompt {i}"
        assert (
            _run_hook(_hook_payload(agent, "UserPromptSubmit", prompt=prompt), env).returncode == 0
        )
        _acked_edit(agent, env, acked, prompt, f"f{i % 3}.txt")
        kind = VICTIMS[i % len(VICTIMS)]
        victim = subprocess.Popen(
            [sys.executable, "-m", "rewind_ls", "hook", "claude-code"],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env=env,
        )
        assert victim.stdin is not None
        victim.stdin.write(_victim(agent, kind, i))
        victim.stdin.close()
        time.sleep(rng.uniform(0.02, 0.4))
        victim.send_signal(signal.SIGKILL)
        victim.wait()
        count(f"hook random SIGKILL ({kind})")
        check_store_whole(ws, home)
        acked.check(ws, home, agent.session_id)
        if i % 4 == 3 or i == runs(8) - 1:
            doctor_ok(ws, home)
    # The session goes on after every kill: a last acknowledged turn is recorded whole.
    assert _run_hook(_hook_payload(agent, "UserPromptSubmit", prompt="last"), env).returncode == 0
    _acked_edit(agent, env, acked, "last", "f0.txt")
    assert _run_hook(_hook_payload(agent, "Stop", stop_hook_active=False), env).returncode == 0
    acked.check(ws, home, agent.session_id)
    doctor_ok(ws, home)


@pytest.mark.parametrize("event", ["prompt", "pre", "post", "bash-post", "stop"])
def test_hook_killed_at_every_commit(tmp_path: Path, event: str) -> None:
    """Each kind of hook event, killed before and after each of its commits in turn."""
    agent, env = _hook_setup(tmp_path)
    ws, home = agent.workspace, agent.home
    acked = Acked()
    assert _run_hook(_hook_payload(agent, "UserPromptSubmit", prompt="p0"), env).returncode == 0
    _acked_edit(agent, env, acked, "p0", "kept.txt")
    kills = 0
    for stage in ("before-commit", "after-commit"):
        for n in range(1, 100):
            if event == "post":
                pre, payload = _write_payloads(agent, "target.txt")
                assert _run_hook(pre, env).returncode == 0
                (ws / "target.txt").write_bytes(f"{stage} {n}\n".encode())
            elif event == "pre":
                payload, _ = _write_payloads(agent, f"pre-{stage}-{n}.txt")
            elif event == "bash-post":
                (ws / "shell.txt").write_bytes(f"{stage} {n}\n".encode())
                payload = _victim(agent, "bash-post", n)
            else:
                payload = _victim(agent, event, n)
            proc = _run_hook(payload, {**env, "REWIND_LS_FAULT": f"{stage}:{n}"})
            check_store_whole(ws, home)
            acked.check(ws, home, agent.session_id)
            if proc.returncode == 0:
                break
            assert proc.returncode == 137, proc.stderr
            kills += 1
            count(f"hook {event} {stage}")
            if event == "stop":
                # Reopen a turn for the next kill.
                _run_hook(_hook_payload(agent, "UserPromptSubmit", prompt=f"re {n}"), env)
        else:
            raise AssertionError("the hook never finished")
    assert kills >= 2
    doctor_ok(ws, home)
    # And the session still records.
    assert _run_hook(_hook_payload(agent, "UserPromptSubmit", prompt="after"), env).returncode == 0
    _acked_edit(agent, env, acked, "after", "kept.txt")
    acked.check(ws, home, agent.session_id)


# --- the language server --------------------------------------------------------------------------


def _server_pid(client: Any) -> int:
    pid: int = client._server.pid
    return pid


async def _kill_server(client: Any) -> None:
    os.kill(_server_pid(client), signal.SIGKILL)
    try:
        await asyncio.wait_for(client._server.wait(), 10)
    except Exception:
        pass


@pytest.mark.asyncio
async def test_server_killed_while_client_holds_the_edit(scenario: Scenario) -> None:
    """The client never answers workspace/applyEdit; the server is killed: the disk is untouched,
    and the next CLI command rolls the pending restore point back."""
    s = scenario
    s.reset()
    client, _editor = await start(s.ws, s.home, init_options={"closedFiles": "edit"})
    asked = asyncio.Event()
    never = asyncio.Event()

    async def hang(params: types.ApplyWorkspaceEditParams) -> types.ApplyWorkspaceEditResult:
        asked.set()
        await never.wait()
        return types.ApplyWorkspaceEditResult(applied=False)

    client.protocol.fm.features[types.WORKSPACE_APPLY_EDIT] = hang
    try:
        request = asyncio.ensure_future(
            client.protocol.send_request_async("rewind/restore", {"turnId": s.turn1})
        )
        await asyncio.wait_for(asked.wait(), 20)
        assert _pending_points(s) == 1
        await _kill_server(client)
        request.cancel()
    finally:
        never.set()
        try:
            await asyncio.wait_for(client.stop(), 5)
        except Exception:
            pass
    assert s.state() == s.a, describe_diff(s.a, s.state())
    proc = cli(s.ws, s.home, "turns")
    assert proc.returncode == 0
    assert b"recovered an interrupted restore" in proc.stderr
    assert _pending_points(s) == 0
    assert _settled(s, ("A",)) == "A"
    count("server killed, applyEdit unanswered")
    _round_trip(s)


async def _kill_server_in_its_writes(
    s: Scenario, fault: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A restore through the language server (closed files carried by the client's edit) whose
    server is killed by `fault` while it writes its own part."""
    s.reset()
    monkeypatch.setenv("REWIND_LS_FAULT", fault)
    client, _editor = await start(s.ws, s.home, init_options={"closedFiles": "edit"})
    try:
        request = asyncio.ensure_future(
            client.protocol.send_request_async("rewind/restore", {"turnId": s.turn1})
        )
        await asyncio.wait_for(client._server.wait(), 30)
        request.cancel()
    finally:
        try:
            await asyncio.wait_for(client.stop(), 5)
        except Exception:
            pass
    monkeypatch.delenv("REWIND_LS_FAULT")
    assert client._server.returncode == 137


@pytest.mark.asyncio
@pytest.mark.parametrize("fault", ["before-server-writes:1", "after-swap:1"])
async def test_server_killed_inside_its_own_writes(
    scenario: Scenario, fault: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The editor applied the text part (closed files, on disk); the server dies before or while
    writing the files a text edit cannot carry (here the binary e.bin). Rolling back only the
    server's part would leave the restore half done: recovery finishes it (B)."""
    s = scenario
    await _kill_server_in_its_writes(s, fault, monkeypatch)
    assert _pending_points(s) == 1
    assert _settled(s, ("B",)) == "B"
    assert _pending_points(s) == 0
    state = query(s.ws, s.home, "SELECT state FROM turns WHERE session_id = 'rewind'")
    assert state == [("applied",)], state
    count(f"server killed inside its writes ({fault})")
    # The finished restore is a normal one: undo brings A back.
    undone = cli(s.ws, s.home, "undo", "--yes")
    assert undone.returncode == 0, undone.stderr
    assert files_only(s.state()) == files_only(s.a), describe_diff(s.a, s.state())


@pytest.mark.asyncio
async def test_finishing_an_editor_restore_leaves_work_done_after_the_crash(
    scenario: Scenario, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The editor applied its part, the server died before writing e.bin, then the person wrote
    e.bin: finishing the restore is a compare-and-swap, so their bytes stay and are reported."""
    s = scenario
    await _kill_server_in_its_writes(s, "before-server-writes:1", monkeypatch)
    theirs = b"the person's bytes, written after the crash\n"
    (s.ws / "e.bin").write_bytes(theirs)
    proc = cli(s.ws, s.home, "turns")
    assert proc.returncode == 0, proc.stderr
    assert b"left as found" in proc.stderr and b"e.bin" in proc.stderr, proc.stderr
    assert (s.ws / "e.bin").read_bytes() == theirs
    assert _pending_points(s) == 0
    # Everything else the restore planned was finished.
    want = {k: v for k, v in s.b.items() if k != "e.bin"}
    got = {k: v for k, v in s.state().items() if k != "e.bin"}
    assert files_only(got) == files_only(want), describe_diff(want, got)
    count("editor restore finished around work done after the crash")


# --- a finished restore says its backups are gone -------------------------------------------------


def _journals_marked(s: Scenario) -> list[bool]:
    """Per applied restore point that names backups: whether its journal says they are gone (the
    recovery every command starts with then skips it instead of looking for each backup)."""
    rows = query(
        s.ws,
        s.home,
        "SELECT info FROM turns WHERE session_id = 'rewind' AND state IN ('applied', 'partial')"
        " AND info LIKE '%.bak%' ORDER BY seq",
    )
    return [bool(json.loads(info).get("backups_gone")) for (info,) in rows]


@pytest.mark.asyncio
async def test_a_server_restore_marks_its_backups_gone(scenario: Scenario) -> None:
    """The language server's restore (the client's edit carries the text, the server writes e.bin
    itself) ends like the CLI's: its journal says its backups are gone, so later commands'
    recoveries do not search for them again."""
    s = scenario
    s.reset()
    client, _editor = await start(s.ws, s.home, init_options={"closedFiles": "edit"})
    try:
        result = await asyncio.wait_for(
            client.protocol.send_request_async("rewind/restore", {"turnId": s.turn1}), 60
        )
    finally:
        await client.shutdown_session()
    assert result.status == "applied", result
    assert files_only(s.state()) == files_only(s.b), describe_diff(s.b, s.state())
    assert _journals_marked(s) == [True]


@pytest.mark.asyncio
async def test_a_restore_finished_by_recovery_marks_its_backups_gone(
    scenario: Scenario, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A server killed inside its own writes: the recovery that finishes its restore ends it as a
    restore ends, its journal marked (the backups it left are gone)."""
    s = scenario
    await _kill_server_in_its_writes(s, "after-swap:1", monkeypatch)
    assert _journals_marked(s) == []  # still pending
    assert _settled(s, ("B",)) == "B"
    assert _journals_marked(s) == [True]
