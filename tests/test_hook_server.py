"""The hook server (core/agents/hook_server.py) and its client (core/agents/hook_client.py): hooks
run in a child forked from a server that imported the hook path once, and record exactly what
the in-process hook records; every way the server can fail (absent, killed, stale, slow) ends
with the hook run in-process, once, with its output written once."""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.support.agent import HOOK_ARGV

ROOT = Path(__file__).resolve().parents[1]
PY = sys.executable


def server_env(home: Path, **extra: str) -> dict[str, str]:
    env = {**os.environ, "REWIND_LS_HOME": str(home), "REWIND_LS_HOOK_SERVER_IDLE": "30"}
    env.pop("REWIND_LS_HOOK_SERVER", None)  # conftest turns it off for every other test
    env.update(extra)
    return env


def run_hook(
    env: dict[str, str], payload: dict[str, Any] | bytes, argv: list[str] | None = None
) -> subprocess.CompletedProcess[bytes]:
    data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    return subprocess.run(argv or HOOK_ARGV, input=data, env=env, capture_output=True, timeout=60)


def _in(env: dict[str, str], code: str, package: Path = ROOT) -> str:
    """Run `code` (printing one line) in a process with `env`, importing the `rewind_ls` in
    `package`: the client and server compute their socket's path from both."""
    proc = subprocess.run(
        [PY, "-c", code], env=env, capture_output=True, text=True, timeout=30, cwd=package
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.strip()


def status(env: dict[str, str], package: Path = ROOT) -> dict[str, str] | None:
    out = _in(
        env,
        "import json; from rewind_ls.core.agents.hook_server_status import status; "
        "print(json.dumps(status()))",
        package,
    )
    return json.loads(out)  # type: ignore[no-any-return]


def wait_server(env: dict[str, str], timeout: float = 30.0, package: Path = ROOT) -> int:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        info = status(env, package)
        if info and not info.get("stale"):
            return int(info["pid"])
        time.sleep(0.1)
    raise AssertionError("no hook server came up")


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except (FileNotFoundError, ProcessLookupError):  # gone (ESRCH: between the open and the read)
        return False


def children(pid: int) -> list[int]:
    """The live children of `pid` (not the exited ones the server has not reaped yet)."""
    out = []
    for task in Path(f"/proc/{pid}/task").glob("*/children"):
        out += [int(p) for p in task.read_text().split()]
    return [p for p in out if alive(p)]


def spare_of(env: dict[str, str]) -> int:
    """The server's spare child: forked ahead, it accepts the next connection (and answers
    status requests itself, naming its pid, staying the spare)."""
    info = status(env)
    assert info and info.get("spare"), info
    return int(info["spare"])


def hook_children(env: dict[str, str], server: int) -> list[int]:
    """The server's children that are running a hook (all but its spare)."""
    spare = spare_of(env)
    return [c for c in children(server) if c != spare]


@contextmanager
def server_stopped_after(env: dict[str, str]) -> Iterator[None]:
    try:
        yield
    finally:
        info = status(env)
        if info:
            os.kill(int(info["pid"]), signal.SIGTERM)


def session(
    ws: Path, env: dict[str, str], sid: str, turns: int, argv: list[str] | None = None
) -> list[subprocess.CompletedProcess[bytes]]:
    """A Claude-shaped session (its payloads carry the `prompt_id` and `tool_use_id` Claude Code
    sends, which make a hook run twice record once): each turn writes `f<i>.txt` and edits
    `shared.txt` through PreToolUse / the write / PostToolUse; every hook's result."""
    base = {"session_id": sid, "cwd": str(ws)}
    results = [
        run_hook(env, {**base, "hook_event_name": "SessionStart", "source": "startup"}, argv)
    ]
    for i in range(turns):
        results.append(
            run_hook(
                env,
                {
                    **base,
                    "hook_event_name": "UserPromptSubmit",
                    "prompt": f"turn {i}",
                    "prompt_id": f"p{i}",
                },
                argv,
            )
        )
        for rel in (f"f{i}.txt", "shared.txt"):
            tool = {
                "tool_name": "Write",
                "tool_input": {"file_path": str(ws / rel), "content": "x"},
            }
            tid = {"tool_use_id": f"t{i}{rel}"}
            results.append(
                run_hook(env, {**base, "hook_event_name": "PreToolUse", **tool, **tid}, argv)
            )
            with open(ws / rel, "a") as f:
                f.write(f"turn {i}\n")
            results.append(
                run_hook(env, {**base, "hook_event_name": "PostToolUse", **tool, **tid}, argv)
            )
        results.append(run_hook(env, {**base, "hook_event_name": "Stop"}, argv))
    return results


def recorded(ws: Path, env: dict[str, str]) -> list[tuple[Any, ...]]:
    """Every recorded version of every file of the workspace, as `rewind-ls log` lists them
    (the turn's number, session, source, change, prompt, content hash, mode)."""
    out: list[tuple[Any, ...]] = []
    for rel in sorted(p.name for p in ws.iterdir() if p.is_file()):
        proc = subprocess.run(
            [PY, "-m", "rewind_ls", "log", rel, "--json"],
            cwd=ws,
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert proc.returncode == 0, proc.stderr
        for v in json.loads(proc.stdout)["versions"]:
            keys = ("number", "sessionId", "source", "change", "prompt", "hash", "mode")
            out.append((rel, *(v[k] for k in keys)))
    return out


def test_hooks_run_in_the_server_and_record_what_the_in_process_hook_records(
    tmp_path: Path,
) -> None:
    """The same session through the server and in-process: the same records, the same output;
    and through the server, the hook command (after the first) never imports the hook path."""
    results = {}
    stores = {}
    for mode in ("server", "in-process"):
        ws = tmp_path / mode / "ws"
        ws.mkdir(parents=True)
        (ws / "shared.txt").write_text("start\n")
        env = server_env(tmp_path / mode / "home", REWIND_LS_WATCH="0")
        if mode == "in-process":
            env["REWIND_LS_HOOK_SERVER"] = "0"
        with server_stopped_after(env):
            first = run_hook(
                env, {"session_id": "s", "cwd": str(ws), "hook_event_name": "SessionStart"}
            )
            assert first.returncode == 0, first.stderr
            if mode == "server":
                wait_server(env)
            traced = [HOOK_ARGV[0], "-X", "importtime", *HOOK_ARGV[1:]]
            got = session(ws, env, "s", 3, traced)
            if mode == "server":
                assert status(env) is not None
        outs = []
        for proc in got:
            lines = proc.stderr.decode().splitlines()
            imported = {ln.split("|")[-1].strip() for ln in lines if ln.startswith("import time:")}
            if mode == "server":
                assert "rewind_ls.core.agents.hook_process" not in imported, imported
            else:
                assert "rewind_ls.core.agents.hook_process" in imported
            outs.append(
                (proc.returncode, proc.stdout, [ln for ln in lines if "import time" not in ln])
            )
        results[mode] = outs
        stores[mode] = recorded(ws, env)
    assert results["server"] == results["in-process"]
    assert stores["server"] == stores["in-process"]
    assert len(stores["server"]) >= 3 * 2 + 1


def _probe_server(tmp_path: Path, env: dict[str, str]) -> subprocess.Popen[bytes]:
    """A real hook server whose hook entry point reports the process state it was given."""
    probe = tmp_path / "probe.py"
    probe.write_text(
        "import json, os, sys\n"
        "def run(agent, stdin=None, whole_process=None, start_server=False):\n"
        "    umask = os.umask(0); os.umask(umask)\n"
        "    from rewind_ls.core.capture.shell_runs import hook_parent\n"
        "    sys.stdout.write(json.dumps({'cwd': os.getcwd(), 'umask': umask, 'argv': sys.argv,"
        " 'parent': hook_parent(),"
        " 'env': dict(os.environ), 'stdin': stdin.read().decode(), 'agent': agent}))\n"
        "    sys.stderr.write('to stderr \u00e9\\n')\n"
        "    return 3\n"
    )
    code = (
        f"import sys; sys.path[:0] = [{str(ROOT)!r}, {str(tmp_path)!r}]; "
        "import probe; from rewind_ls.core.agents import hook_process, hook_server; "
        "hook_process.run = probe.run; sys.exit(hook_server.serve())"
    )
    server = subprocess.Popen([PY, "-I", "-S", "-c", code], env=env, start_new_session=True)
    wait_server(env)
    return server


def test_environ_cwd_umask_argv_stdin_reach_the_hook_and_its_output_and_code_come_back(
    tmp_path: Path,
) -> None:
    env = server_env(tmp_path / "home", ONLY_HERE="yes \u00e9")
    server = _probe_server(tmp_path, env)
    try:
        here = tmp_path / "some folder"
        here.mkdir()
        proc = subprocess.run(
            ["sh", "-c", f"umask 027; exec {' '.join(HOOK_ARGV)}"],
            input=b'{"payload": 1}',
            env=env,
            cwd=here,
            capture_output=True,
            timeout=60,
        )
        assert proc.returncode == 3, proc.stderr
        assert proc.stderr.decode() == "to stderr \u00e9\n"
        seen = json.loads(proc.stdout)
        assert seen["cwd"] == str(here)
        assert seen["umask"] == 0o027
        assert (
            seen["parent"] == os.getpid()
        )  # the hook command's parent (sh exec'd it), not the server's
        assert seen["argv"] == HOOK_ARGV[3:]
        assert seen["agent"] == "claude-code"
        assert seen["stdin"] == '{"payload": 1}'
        assert seen["env"]["ONLY_HERE"] == "yes \u00e9"
        assert seen["env"] == {k: v for k, v in env.items()} | {
            k: v for k, v in seen["env"].items() if k in ("PWD", "SHLVL", "_", "OLDPWD")
        }
    finally:
        server.kill()
        server.wait()


def test_the_fault_hook_set_for_one_hook_reaches_it_through_the_server(tmp_path: Path) -> None:
    """`REWIND_LS_FAULT`, read once at import (in the server), is the hook's own."""
    ws = tmp_path / "ws"
    ws.mkdir()
    env = server_env(tmp_path / "home", REWIND_LS_WATCH="0")
    base = {"session_id": "s", "cwd": str(ws)}
    with server_stopped_after(env):
        run_hook(env, {**base, "hook_event_name": "SessionStart"})
        pid = wait_server(env)
        killed = run_hook(
            {**env, "REWIND_LS_FAULT": "before-commit:1"},
            {**base, "hook_event_name": "UserPromptSubmit", "prompt": "p"},
        )
        assert killed.returncode == 137
        ok = run_hook(env, {**base, "hook_event_name": "UserPromptSubmit", "prompt": "q"})
        assert ok.returncode == 0 and not ok.stderr
        assert status(env)["pid"] == str(pid)  # type: ignore[index]


def _imports(proc: subprocess.CompletedProcess[bytes]) -> set[str]:
    lines = proc.stderr.decode().splitlines()
    return {ln.split("|")[-1].strip() for ln in lines if ln.startswith("import time:")}


def _reference(tmp_path: Path, turns: int) -> tuple[list[tuple[Any, ...]], list[Any]]:
    """The records of the session run in-process, and each hook's exit code, stdout, stderr."""
    ws = tmp_path / "reference" / "ws"
    ws.mkdir(parents=True)
    (ws / "shared.txt").write_text("start\n")
    env = server_env(tmp_path / "reference" / "home", REWIND_LS_WATCH="0")
    env["REWIND_LS_HOOK_SERVER"] = "0"
    outputs = [(p.returncode, p.stdout, p.stderr) for p in session(ws, env, "s", turns)]
    assert b"systemMessage" in outputs[-1][1]  # the Stop hook's notice (written once, or lost)
    return recorded(ws, env), outputs


def _holds_listener(pid: int, path: str) -> bool:
    """Whether `pid` holds the server's listening socket at `path`: its spare does (a child
    closes it once it has a connection), the hooks' children do not. (The server binds it through
    its folder's descriptor, `/proc/self/fd/N/NAME`: the kernel lists it by that path.)"""
    name = "/" + os.path.basename(path)
    with open("/proc/net/unix") as f:
        inodes = {ln.split()[6] for ln in f if ln.rstrip().endswith(name)}
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        link = os.readlink(fd)
        if link.startswith("socket:[") and link[8:-1] in inodes:
            return True
    return False


def test_kill_9_of_the_server_and_its_children_at_random_loses_nothing(tmp_path: Path) -> None:
    """While a session's hooks run, the server, a hook's child or the spare waiting for the next
    hook is killed -9 at random: every hook still succeeds (in-process), its message is written
    once, and the workspace's records are those of the session run in-process."""
    turns = 8
    reference, outputs = _reference(tmp_path, turns)
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "shared.txt").write_text("start\n")
    env = server_env(tmp_path / "home", REWIND_LS_WATCH="0")
    lock = _in(env, "from rewind_ls.core.agents.hook_client import socket_path as p; print(p())")
    path, lock = lock, lock + ".lock"
    stop = threading.Event()
    kills = {"server": 0, "child": 0, "spare": 0}
    rng = random.Random(29)
    spares: set[int] = set()  # every spare seen waiting

    def killer() -> None:
        seen_spare: set[int] = set()
        seen_busy: set[int] = set()
        next_server_kill = time.monotonic() + rng.uniform(0.3, 1.5)
        while not stop.is_set():
            time.sleep(0.002)
            try:
                server = int(Path(lock).read_text().strip() or 0)
            except (OSError, ValueError):
                continue
            if not server or not alive(server):
                continue
            if time.monotonic() > next_server_kill:
                victim, kind = server, "server"
                next_server_kill = time.monotonic() + rng.uniform(0.3, 1.5)
            else:
                try:
                    kids = [(c, _holds_listener(c, path)) for c in children(server)]
                except OSError:  # one ended meanwhile
                    continue
                busy = [c for c, waits in kids if not waits and c not in seen_busy]
                seen_busy.update(busy)
                waiting = [c for c, waits in kids if waits and c not in seen_spare]
                seen_spare.update(waiting)
                spares.update(waiting)
                if busy and rng.random() < 0.4:
                    time.sleep(rng.uniform(0.0, 0.01))  # somewhere inside the hook
                    victim, kind = busy[0], "child"
                elif waiting and (not kills["spare"] or rng.random() < 0.2):
                    victim, kind = waiting[0], "spare"  # waiting (or just taking a hook)
                else:
                    continue
            try:
                os.kill(victim, signal.SIGKILL)
                kills[kind] += 1
            except ProcessLookupError:
                pass

    thread = threading.Thread(target=killer, daemon=True)
    with server_stopped_after(env):
        first = run_hook(
            env, {"session_id": "x", "cwd": str(ws), "hook_event_name": "Notification"}
        )
        assert first.returncode == 0
        wait_server(env)
        thread.start()
        try:
            got = session(ws, env, "s", turns)
            bad = []
            # On a quiet machine the session can end before the killer's first server kill
            # (0.3-1.5 s in): hooks go on until each kind was killed at least once (bounded).
            deadline = time.monotonic() + 60
            while len(bad) < turns * 3 or (
                min(kills.values()) == 0 and time.monotonic() < deadline
            ):
                bad.append(run_hook(env, b"not json " + str(len(bad)).encode()))
        finally:
            stop.set()
            thread.join()
    # Each hook succeeds and says what the in-process one said, once. A Stop whose child was
    # killed after it closed the turn but before its reply says nothing (the in-process rerun
    # finds the turn closed), as an in-process hook killed at that instant would.
    assert [(p.returncode, p.stderr) for p in got] == [(code, err) for code, _, err in outputs]
    for p, (_, out, _) in zip(got, outputs, strict=True):
        assert p.stdout in (out, b""), (p.stdout, out)
    for p in bad:  # said once, never twice (a dead child's output is never relayed)
        assert p.returncode == 0 and not p.stdout
        assert p.stderr.decode().count("rewind-ls hook:") == 1, p.stderr
    assert kills["server"] >= 1 and kills["child"] >= 1 and kills["spare"] >= 1, kills
    assert recorded(ws, env) == reference
    # No spare outlives its server (a killed server's would hold the old socket for good; the
    # last server was stopped above).
    deadline = time.monotonic() + 10
    left = [p for p in spares if alive(p)]
    while left and time.monotonic() < deadline:
        time.sleep(0.05)
        left = [p for p in left if alive(p)]
    assert not left, left


def test_killing_the_hook_command_kills_its_child_and_other_hooks_go_on(tmp_path: Path) -> None:
    """The agent kills a hook that takes too long (here: blocked on the store's write lock): its
    child in the server dies with it, having recorded nothing; a hook of another workspace runs
    meanwhile."""
    env = server_env(tmp_path / "home", REWIND_LS_WATCH="0")
    ws, other = tmp_path / "ws", tmp_path / "other"
    ws.mkdir()
    other.mkdir()
    with server_stopped_after(env):
        for folder in (ws, other):
            run_hook(
                env, {"session_id": "s", "cwd": str(folder), "hook_event_name": "SessionStart"}
            )
        server = wait_server(env)
        blocker = sqlite3.connect(_store_of(tmp_path / "home", ws), isolation_level=None)
        blocker.execute("BEGIN IMMEDIATE")
        hook = subprocess.Popen(HOOK_ARGV, stdin=subprocess.PIPE, env=env)
        assert hook.stdin is not None
        payload = {"session_id": "s", "cwd": str(ws), "hook_event_name": "UserPromptSubmit"}
        hook.stdin.write(json.dumps({**payload, "prompt": "blocked"}).encode())
        hook.stdin.close()
        deadline = time.monotonic() + 20
        while not hook_children(env, server) and time.monotonic() < deadline:
            time.sleep(0.02)
        (child,) = hook_children(env, server)
        t = time.monotonic()
        meanwhile = run_hook(
            env,
            {
                "session_id": "s",
                "cwd": str(other),
                "hook_event_name": "UserPromptSubmit",
                "prompt": "o",
            },
        )
        assert meanwhile.returncode == 0 and not meanwhile.stderr
        assert time.monotonic() - t < 20 and hook.poll() is None and alive(child)
        hook.kill()
        hook.wait()
        deadline = time.monotonic() + 10
        while alive(child) and time.monotonic() < deadline:
            time.sleep(0.02)
        assert not alive(child)
        blocker.execute("ROLLBACK")
        blocker.close()
        check = sqlite3.connect(_store_of(tmp_path / "home", ws))
        prompts = [r[0] for r in check.execute("SELECT prompt FROM turns")]
        check.close()
        assert "blocked" not in prompts
        assert alive(server)


def test_a_hook_still_running_does_not_keep_a_new_server_from_starting(tmp_path: Path) -> None:
    """The server dies (kill -9, or its code changed) while a child runs a long hook: the next
    hook starts a new server at once; the child held the server's lock before."""
    env = server_env(tmp_path / "home", REWIND_LS_WATCH="0")
    ws, other = tmp_path / "ws", tmp_path / "other"
    ws.mkdir()
    other.mkdir()
    hook = None
    blocker = None
    try:
        for folder in (ws, other):
            run_hook(
                env, {"session_id": "s", "cwd": str(folder), "hook_event_name": "SessionStart"}
            )
        server = wait_server(env)
        blocker = sqlite3.connect(_store_of(tmp_path / "home", ws), isolation_level=None)
        blocker.execute("BEGIN IMMEDIATE")
        hook = subprocess.Popen(HOOK_ARGV, stdin=subprocess.PIPE, env=env)
        assert hook.stdin is not None
        payload = {"session_id": "s", "cwd": str(ws), "hook_event_name": "UserPromptSubmit"}
        hook.stdin.write(json.dumps({**payload, "prompt": "blocked"}).encode())
        hook.stdin.close()
        deadline = time.monotonic() + 20
        while not hook_children(env, server) and time.monotonic() < deadline:
            time.sleep(0.02)
        (child,) = hook_children(env, server)
        spare = spare_of(env)
        os.kill(server, signal.SIGKILL)
        started = run_hook(
            env, {"session_id": "s", "cwd": str(other), "hook_event_name": "Notification"}
        )
        assert started.returncode == 0 and not started.stderr
        new = wait_server(env, timeout=15)
        assert new != server and alive(child)
        assert not alive(spare)  # the killed server's spare left with it (it held the socket)
        blocker.execute("ROLLBACK")
        assert hook.wait(timeout=30) == 0  # the orphaned child finished its hook and replied
    finally:
        if blocker is not None:
            blocker.close()
        if hook is not None and hook.poll() is None:
            hook.kill()
            hook.wait()
        info = status(env)
        if info:
            os.kill(int(info["pid"]), signal.SIGTERM)


def test_the_spare_of_a_killed_server_leaves_and_the_next_hook_starts_a_server(
    tmp_path: Path,
) -> None:
    """kill -9 of an idle server: its spare (forked ahead, waiting on the socket) leaves at once
    rather than take the next hook with a dead server's state; that hook finds no server, runs
    in-process and starts a new one, which serves the hook after."""
    env = server_env(tmp_path / "home", REWIND_LS_WATCH="0")
    ws = tmp_path / "ws"
    ws.mkdir()
    hook = {"session_id": "s", "cwd": str(ws), "hook_event_name": "Notification"}
    with server_stopped_after(env):
        assert run_hook(env, hook).returncode == 0
        server = wait_server(env)
        spare = spare_of(env)
        os.kill(server, signal.SIGKILL)
        deadline = time.monotonic() + 5
        while alive(spare) and time.monotonic() < deadline:
            time.sleep(0.02)
        assert not alive(spare)
        assert run_hook(env, hook).returncode == 0
        new = wait_server(env, timeout=15)
        assert new != server
        through = run_hook(env, hook, [*HOOK_ARGV[:1], "-X", "importtime", *HOOK_ARGV[1:]])
        assert through.returncode == 0
        assert "rewind_ls.core.agents.hook_process" not in _imports(through)


def _store_of(home: Path, ws: Path) -> str:
    code = (
        "import sys; from rewind_ls.core.store import store_dir_for, DB_NAME; import os; "
        f"print(os.path.join(store_dir_for({str(ws)!r}), DB_NAME))"
    )
    return _in({**os.environ, "REWIND_LS_HOME": str(home)}, code)


def test_a_hook_leaves_the_next_wal_started_for_the_next_one(tmp_path: Path) -> None:
    """After its reply, a child moves the WAL into the database and starts the next WAL with one
    frame (its header written and synced), and leaves both files for the next hook. (Closing its
    connection, the last one, deleted the WAL and the shared memory instead: every hook then
    re-created both and synced the new WAL's header and its folder on the agent's time.)"""
    ws = tmp_path / "ws"
    ws.mkdir()
    home = tmp_path / "home"
    env = server_env(home, REWIND_LS_WATCH="0")
    with server_stopped_after(env):
        start = {"session_id": "s", "cwd": str(ws), "hook_event_name": "SessionStart"}
        assert run_hook(env, start).returncode == 0
        pid = wait_server(env)
        for result in session(ws, env, "s", 2):
            assert result.returncode == 0 and not result.stderr, result.stderr
        deadline = time.monotonic() + 30
        while hook_children(env, pid) and time.monotonic() < deadline:  # done after the reply
            time.sleep(0.02)
        db = Path(_store_of(home, ws))
        wal = Path(f"{db}-wal").read_bytes()  # read before any connection: a close would change it
        assert Path(f"{db}-shm").exists()
    page = int.from_bytes(wal[8:12], "big")
    assert len(wal) == 32 + 24 + page, len(wal)  # the header and one frame
    with sqlite3.connect(db) as conn:  # and the records are all in the database
        assert conn.execute("SELECT count(*) FROM turns WHERE session_id = 's'").fetchone() == (2,)


def test_a_server_whose_code_changed_on_disk_is_refused_and_replaced(tmp_path: Path) -> None:
    """A `git pull` (or an upgrade) under a running server: the server checks its code while the
    child of the next hook runs (not before, which would delay every hook), so that one hook runs
    the code the server had imported, whole, like an in-process hook started just before the
    upgrade; then the old server exits, the hook after runs in-process with the new code and
    starts a new server, which serves the hooks after."""
    package = tmp_path / "install"
    shutil.copytree(
        ROOT / "rewind_ls", package / "rewind_ls", ignore=shutil.ignore_patterns("__pycache__")
    )
    argv = [
        PY,
        "-X",
        "importtime",
        "-I",
        "-S",
        str(package / "rewind_ls" / "__main__.py"),
        "hook",
        "claude-code",
    ]
    ws = tmp_path / "ws"
    ws.mkdir()
    env = server_env(tmp_path / "home", REWIND_LS_WATCH="0")
    base = {"session_id": "s", "cwd": str(ws)}
    try:
        run_hook(env, {**base, "hook_event_name": "SessionStart"}, argv)
        old = wait_server(env, package=package)
        assert status(env, package)["code"] == str(package / "rewind_ls")  # type: ignore[index]
        through = run_hook(
            env, {**base, "hook_event_name": "UserPromptSubmit", "prompt": "a"}, argv
        )
        assert "rewind_ls.core.agents.hook_process" not in _imports(through)
        spare = int(status(env, package)["spare"])  # type: ignore[index]
        steps = package / "rewind_ls" / "core" / "agents" / "hook_steps.py"
        steps.write_text(steps.read_text() + "\n# a new version\n")
        last_old = run_hook(env, {**base, "hook_event_name": "Stop"}, argv)
        assert last_old.returncode == 0
        deadline = time.monotonic() + 10
        while alive(old) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not alive(old)
        # The spare forked before the change took the Stop (the one hook at the change, run
        # whole) or, when the server saw the change first, left with it: none waits on.
        while alive(spare) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not alive(spare)
        refused = run_hook(
            env, {**base, "hook_event_name": "UserPromptSubmit", "prompt": "b"}, argv
        )
        assert refused.returncode == 0
        if "rewind_ls.core.agents.hook_process" not in _imports(last_old):
            # The old server ran the Stop (it had not yet seen the change: the usual case; on a
            # slow machine its idle check, every 2 s, may see it first and the Stop runs
            # in-process): the hook after finds no server and runs in-process.
            assert "rewind_ls.core.agents.hook_process" in _imports(refused)
        new = wait_server(env, package=package)
        assert new != old
        after = run_hook(env, {**base, "hook_event_name": "Stop"}, argv)
        assert after.returncode == 0
        assert "rewind_ls.core.agents.hook_process" not in _imports(after)
        assert status(env, package)["pid"] == str(new)  # type: ignore[index]
    finally:
        info = status(env, package)
        if info:
            os.kill(int(info["pid"]), signal.SIGTERM)


def _state(pid: int) -> str:
    with open(f"/proc/{pid}/stat") as f:
        return f.read().split(")")[-1].split()[0]


def test_connections_queued_when_the_server_exits_are_told_it_is_stale(tmp_path: Path) -> None:
    """A server leaving (its code changed, idle, SIGTERM) answers `S` to the connections already
    queued on its socket: their hooks run in-process and start a new server (closed unanswered,
    a hook would run in-process and start none)."""
    import socket as socket_module

    env = server_env(tmp_path / "home", REWIND_LS_WATCH="0")
    path = _in(
        env, "from rewind_ls.core.agents.hook_client import socket_path; print(socket_path())"
    )
    run_hook(env, {"session_id": "s", "cwd": str(tmp_path), "hook_event_name": "Notification"})
    server = wait_server(env)
    spare = spare_of(env)
    queued = []
    try:
        os.kill(spare, signal.SIGSTOP)
        os.kill(server, signal.SIGSTOP)
        # Stopped for real before the connections are made: a spare still running would accept
        # the first one as a hook's (and wait for a request that never comes).
        deadline = time.monotonic() + 10
        while {_state(server), _state(spare)} != {"T"} and time.monotonic() < deadline:
            time.sleep(0.01)
        for _ in range(3):
            conn = socket_module.socket(socket_module.AF_UNIX, socket_module.SOCK_STREAM)
            conn.settimeout(10)
            conn.connect(path)
            queued.append(conn)
        os.kill(server, signal.SIGTERM)
        os.kill(server, signal.SIGCONT)
        assert [c.recv(1) for c in queued] == [b"S"] * 3
        deadline = time.monotonic() + 10
        while alive(server) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not alive(server) and not os.path.exists(path)
        os.kill(spare, signal.SIGCONT)  # it finds its server gone and leaves
        while alive(spare) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not alive(spare)
    finally:
        for conn in queued:
            conn.close()
        if alive(spare):
            os.kill(spare, signal.SIGKILL)
        if alive(server):
            os.kill(server, signal.SIGCONT)
            os.kill(server, signal.SIGTERM)


def test_two_workspaces_at_once_through_one_server(tmp_path: Path) -> None:
    turns = 3
    reference, outputs = _reference(tmp_path, turns)
    env = server_env(tmp_path / "home", REWIND_LS_WATCH="0")
    spaces = [tmp_path / "a", tmp_path / "b"]
    for ws in spaces:
        ws.mkdir()
        (ws / "shared.txt").write_text("start\n")
    results: dict[Path, list[subprocess.CompletedProcess[bytes]]] = {}
    with server_stopped_after(env):
        run_hook(env, {"session_id": "x", "cwd": str(tmp_path), "hook_event_name": "Notification"})
        server = wait_server(env)
        threads = [
            threading.Thread(
                target=lambda w=ws: results.__setitem__(w, session(w, env, "s", turns))
            )
            for ws in spaces
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert status(env)["pid"] == str(server)  # type: ignore[index]
    for ws in spaces:
        assert [(p.returncode, p.stdout, p.stderr) for p in results[ws]] == outputs
        assert recorded(ws, env) == reference


def test_a_long_state_path_and_temporary_folder_keep_the_socket_short(tmp_path: Path) -> None:
    """macOS limits a socket's path to 104 bytes: a long REWIND_LS_HOME or TMPDIR does not
    lengthen it, and hooks still go through the server."""
    home = tmp_path / ("h" * 120) / ("o" * 120)
    tmp = tmp_path / ("t" * 150)
    tmp.mkdir()
    env = server_env(home, TMPDIR=str(tmp), REWIND_LS_WATCH="0")
    env.pop("XDG_RUNTIME_DIR", None)
    ws = tmp_path / "ws"
    ws.mkdir()
    path = _in(env, "from rewind_ls.core.agents.hook_client import socket_path as p; print(p())")
    assert len(path.encode()) < 104
    with server_stopped_after(env):
        run_hook(env, {"session_id": "s", "cwd": str(ws), "hook_event_name": "SessionStart"})
        wait_server(env)
        traced = [HOOK_ARGV[0], "-X", "importtime", *HOOK_ARGV[1:]]
        proc = run_hook(
            env,
            {
                "session_id": "s",
                "cwd": str(ws),
                "hook_event_name": "UserPromptSubmit",
                "prompt": "p",
            },
            traced,
        )
        assert proc.returncode == 0
        assert "rewind_ls.core.agents.hook_process" not in _imports(proc)


def test_doctor_says_whether_the_server_is_up_and_which_code_it_runs(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    env = server_env(tmp_path / "home", REWIND_LS_WATCH="0")

    def said(environ: dict[str, str]) -> str:
        proc = subprocess.run(
            [PY, "-m", "rewind_ls", "doctor", "--json"],
            cwd=ws,
            env=environ,
            capture_output=True,
            text=True,
            timeout=60,
        )
        (check,) = [c for c in json.loads(proc.stdout)["checks"] if c["name"] == "hook server"]
        assert check["ok"]
        return str(check["detail"])

    assert said(env).startswith("not running")
    assert said({**env, "REWIND_LS_HOOK_SERVER": "0"}).startswith("off")
    with server_stopped_after(env):
        run_hook(env, {"session_id": "s", "cwd": str(ws), "hook_event_name": "SessionStart"})
        pid = wait_server(env)
        detail = said(env)
        assert detail.startswith(f"running (pid {pid}") and str(ROOT / "rewind_ls") in detail
        assert PY in detail
    path = _in(env, "from rewind_ls.core.agents.hook_client import socket_path as p; print(p())")
    deadline = time.monotonic() + 10
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not os.path.exists(path)  # stopped (SIGTERM), it removed its socket
    assert said(env).startswith("not running")


def _doctor_says(ws: Path, env: dict[str, str]) -> str:
    proc = subprocess.run(
        [PY, "-m", "rewind_ls", "doctor", "--json"],
        cwd=ws,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    (check,) = [c for c in json.loads(proc.stdout)["checks"] if c["name"] == "hook server"]
    return str(check["detail"])


def test_doctor_names_a_server_another_interpreter_of_this_install_runs(tmp_path: Path) -> None:
    """Hooks installed with `python3`, doctor run by `python` (both the same venv's): its own
    server is not running, and it says which one is, for the same code and home."""
    python3 = Path(PY).with_name("python3")
    if not python3.exists() or python3 == Path(PY):
        pytest.skip(f"no second name for {PY}")
    ws = tmp_path / "ws"
    ws.mkdir()
    env = server_env(tmp_path / "home", REWIND_LS_WATCH="0")
    argv = [str(python3), *HOOK_ARGV[1:]]
    with server_stopped_after(env):
        run_hook(env, {"session_id": "s", "cwd": str(ws), "hook_event_name": "SessionStart"}, argv)
        deadline = time.monotonic() + 30
        detail = _doctor_says(ws, env)
        while "one runs this code" not in detail and time.monotonic() < deadline:
            time.sleep(0.2)
            detail = _doctor_says(ws, env)
        assert detail.startswith(f"not running for {PY}"), detail
        assert f"one runs this code for this home on {python3}" in detail, detail
        pid = int(detail.split("(pid ")[1].split(")")[0])
        os.kill(pid, signal.SIGTERM)


def test_doctor_says_when_no_server_can_start(tmp_path: Path) -> None:
    """The socket folder open to other users (or another user's): doctor does not promise that
    the next hook starts a server, it says why none can."""
    ws = tmp_path / "ws"
    ws.mkdir()
    tmp = Path(tempfile.mkdtemp(prefix="rwls-", dir="/tmp"))
    try:
        env = server_env(tmp_path / "home", TMPDIR=str(tmp))
        env.pop("XDG_RUNTIME_DIR", None)
        assert "the next hook starts it" in _doctor_says(ws, env)
        folder = Path(
            _in(env, "from rewind_ls.core.agents.hook_client import socket_dir as d; print(d())")
        )
        folder.mkdir(mode=0o755)
        folder.chmod(0o755)
        detail = _doctor_says(ws, env)
        assert detail.startswith("not running, and none can start:"), detail
        assert "open to other users" in detail, detail
        run_hook(env, {"session_id": "s", "cwd": str(ws), "hook_event_name": "SessionStart"})
        time.sleep(1.0)
        assert list(folder.iterdir()) == []  # and indeed none started
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
