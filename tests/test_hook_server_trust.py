"""Who the hook server is, and whom it serves (issue 37): the client reaches only this user's
server of this interpreter, through a folder checked by descriptor (a fake server in a planted or
raced folder never receives a request, from the real hook command or from a tight loop of
connects); a lock link planted anywhere is never followed; a caller in another context (mount
namespace, rlimits, nice) is not served by a server of another; a payload of 20 MiB goes through
the server and is recorded; a stopped server costs one slow hook and is replaced; a fresh home under
umask 000 ends with nothing world-writable and recording on.

The cross-user tests need root: they create a second user (`useradd`) and run the attacker as
that user, in a shared folder both can write (a non-sticky `TMPDIR`)."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import stat
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.support.agent import HOOK_ARGV
from tests.test_hook_server import (
    PY,
    ROOT,
    _in,
    alive,
    recorded,
    run_hook,
    server_env,
    server_stopped_after,
    status,
    wait_server,
)

ATTACKER = "rwls-attacker"
root_only = pytest.mark.skipif(
    os.geteuid() != 0, reason="needs root: creates a second user to play the attacker"
)


def attacker_ids() -> tuple[int, int]:
    """The test's second user (created once, kept: a system user without a home or a shell)."""
    import pwd

    try:
        entry = pwd.getpwnam(ATTACKER)
    except KeyError:
        proc = subprocess.run(
            ["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", ATTACKER],
            capture_output=True,
            text=True,
        )
        assert proc.returncode in (0, 9), proc.stderr  # 9: made meanwhile by another test
        entry = pwd.getpwnam(ATTACKER)
    return entry.pw_uid, entry.pw_gid


@contextmanager
def short_tmpdir(mode: int = 0o700) -> Iterator[Path]:
    """A `TMPDIR` of the test's own, short enough to hold the socket folder (a pytest folder is
    too long: the client falls back to /tmp)."""
    folder = Path(tempfile.mkdtemp(prefix="rwls-", dir="/tmp"))
    folder.chmod(mode)
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def shared_tmpdir() -> Any:
    """A folder every user can write and rename in (mode 0777, not sticky): a shared `TMPDIR`."""
    return short_tmpdir(0o777)


# The attacker (another user, stdlib only): a fake hook server listening in a folder of its own
# named like the victim's socket folder, with a lock link to the victim's file planted beside it.
# `plant`: that folder is put in place before the victim's; `race`: the attacker swaps it with the
# victim's real folder again and again (renameat2 RENAME_EXCHANGE: one always sits at the name).
# Every connection the fake server accepts is logged with the bytes it received.
FAKE = r"""
import ctypes, os, socket, sys, threading, time
shared, folder_name, names, target, log, mode = sys.argv[1:7]
real = os.path.join(shared, folder_name)
fake = os.path.join(shared, "fake")
os.mkdir(fake, 0o700)
servers = []
for name in names.split(","):
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    srv.bind(os.path.join(fake, name))
    srv.listen(128)
    servers.append(srv)
    os.symlink(target, os.path.join(fake, name + ".lock"))

def serve(srv):
    while True:
        conn, _ = srv.accept()
        conn.settimeout(2)
        try:
            data = conn.recv(1 << 16)
        except OSError:
            data = b""
        with open(log, "a") as f:
            f.write(f"{len(data)} {data[:40]!r}\n")
        conn.close()

for srv in servers:
    threading.Thread(target=serve, args=(srv,), daemon=True).start()
if mode == "plant":
    os.rename(fake, real)
    print("ready", flush=True)
    time.sleep(3600)
libc = ctypes.CDLL(None, use_errno=True)
AT_FDCWD, RENAME_EXCHANGE = -100, 2
swaps = 0
print("ready", flush=True)
while not os.path.exists(os.path.join(shared, "stop")):
    if libc.renameat2(AT_FDCWD, real.encode(), AT_FDCWD, fake.encode(), RENAME_EXCHANGE) == 0:
        swaps += 1
with open(log + ".swaps", "w") as f:
    f.write(str(swaps))
"""


@contextmanager
def attacker(
    shared: Path, folder: str, names: list[str], target: Path, mode: str
) -> Iterator[Path]:
    """The attacker's fake server running as the second user; yields its connection log."""
    uid, gid = attacker_ids()
    log = shared / "fake.log"
    log.touch()
    os.chown(log, uid, gid)
    args = [str(shared), folder, ",".join(names), str(target), str(log), mode]
    proc = subprocess.Popen(
        ["/usr/bin/python3", "-c", FAKE, *args],
        user=uid,
        group=gid,
        extra_groups=[],
        stdout=subprocess.PIPE,
        cwd="/",
    )
    try:
        assert proc.stdout is not None and proc.stdout.readline() == b"ready\n"
        yield log
    finally:
        (shared / "stop").touch()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def socket_of(env: dict[str, str]) -> str:
    return _in(env, "from rewind_ls.core.agents.hook_client import socket_path as p; print(p())")


def write_turn(env: dict[str, str], ws: Path) -> list[subprocess.CompletedProcess[bytes]]:
    """A turn whose Write changes `a.txt` (made when missing): its four hooks' results."""
    if not (ws / "a.txt").exists():
        (ws / "a.txt").write_text("a\n")
    base = {"session_id": "s", "cwd": str(ws)}
    tool = {"tool_name": "Write", "tool_input": {"file_path": str(ws / "a.txt")}}
    results = [
        run_hook(
            env, {**base, "hook_event_name": "UserPromptSubmit", "prompt": "p", "prompt_id": "1"}
        ),
        run_hook(env, {**base, "hook_event_name": "PreToolUse", **tool, "tool_use_id": "t"}),
    ]
    (ws / "a.txt").write_text("b\n")
    results.append(
        run_hook(env, {**base, "hook_event_name": "PostToolUse", **tool, "tool_use_id": "t"})
    )
    results.append(run_hook(env, {**base, "hook_event_name": "Stop"}))
    return results


def note_payload(ws: Path) -> dict[str, Any]:
    return {"session_id": "s", "cwd": str(ws), "hook_event_name": "Notification"}


def trust_env(tmp_path: Path, shared: Path) -> dict[str, str]:
    env = server_env(tmp_path / "home", TMPDIR=str(shared))
    env.pop("XDG_RUNTIME_DIR", None)
    return env


@root_only
def test_a_fake_server_in_a_planted_folder_never_receives_a_request(tmp_path: Path) -> None:
    """Another user made the socket folder first, with a fake server and a lock link in it: hooks
    run in-process (and record), no server of ours starts there, the fake receives nothing and
    the link's target is untouched."""
    ws = tmp_path / "ws"
    ws.mkdir()
    target = tmp_path / "precious.txt"
    target.write_text("precious\n")
    with shared_tmpdir() as shared:
        env = trust_env(tmp_path, shared)
        path = socket_of(env)
        folder, name = os.path.split(path)
        with attacker(shared, os.path.basename(folder), [name], target, "plant") as log:
            for _ in range(3):
                assert run_hook(env, note_payload(ws)).returncode == 0
                time.sleep(0.5)  # time for a server the hook started to come up
            assert status(env) is None
            assert log.read_text() == ""
            assert target.read_text() == "precious\n"


@root_only
def test_a_fake_server_swapped_in_by_another_user_never_receives_a_request(
    tmp_path: Path,
) -> None:
    """Another user swaps its fake folder with our socket folder as fast as it can while hooks
    and thousands of connects run: not one connection reaches the fake server (the client finds
    the socket through the folder it opened and checked, and checks the peer), every hook
    succeeds, and what was recorded is the session's."""
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("a\n")
    target = tmp_path / "precious.txt"
    target.write_text("precious\n")
    with shared_tmpdir() as shared:
        env = trust_env(tmp_path, shared)
        path = socket_of(env)
        folder, name = os.path.split(path)
        with server_stopped_after(env):
            assert run_hook(env, note_payload(ws)).returncode == 0
            wait_server(env)
            with attacker(shared, os.path.basename(folder), [name], target, "race") as log:
                loop = subprocess.run(
                    [PY, "-c", CONNECTS, path],
                    env=env,
                    cwd=ROOT,
                    capture_output=True,
                    text=True,
                    timeout=120,
                )
                assert loop.returncode == 0, loop.stderr
                results = write_turn(env, ws)
            swaps = int((shared / "fake.log.swaps").read_text())
            served, refused = map(int, loop.stdout.split())
            assert log.read_text() == "", log.read_text()
    assert swaps > 1000, swaps  # the race ran all along
    assert served > 0 and refused > 0, (served, refused)  # both folders were met
    assert [(r.returncode, r.stderr) for r in results] == [(0, b"")] * 4
    changes = [(v[0], v[4]) for v in recorded(ws, env)]
    assert ("a.txt", "modified") in changes, changes


# The victim's tight loop: 3,000 status requests through the hooks' own connect (the real client
# code), or for 15 s; prints how many reached a server and how many found none to trust.
CONNECTS = r"""
import sys, time
from rewind_ls.core.agents.hook_client import connect
path = sys.argv[1]
served = refused = 0
deadline = time.monotonic() + 15
for _ in range(3000):
    sock = connect(path)
    if sock is None:
        refused += 1
    else:
        sock.sendall(b"?")
        sock.recv(100)
        sock.close()
        served += 1
    if time.monotonic() > deadline:
        break
print(served, refused)
"""

# The server's own steps (its folder made, opened and checked; the lock taken and released through
# that descriptor), with the folder swapped for the attacker's right after the check, each time:
# the worst interleaving a race gives. Prints how many locks were taken.
LOCKS = r"""
import ctypes, os, sys
from rewind_ls.core.agents import hook_takeover
from rewind_ls.core.agents.hook_client import at, make_folder
from rewind_ls.core.fs import detached
folder, name, fake = sys.argv[1], sys.argv[2], sys.argv[3]
libc = ctypes.CDLL(None, use_errno=True)

def swap():
    assert libc.renameat2(-100, folder.encode(), -100, fake.encode(), 2) == 0, ctypes.get_errno()

taken = 0
for _ in range(50):
    fd = make_folder(folder)
    swap()  # the attacker's folder, with its lock link, now at the name
    lock = hook_takeover.take_lock(at(fd, folder, name + ".lock"))
    if lock is not None:
        detached.release_lock(at(fd, folder, name + ".lock"), lock)
        taken += 1
    swap()
    os.close(fd)
print(taken)
"""


@root_only
def test_a_lock_link_planted_in_a_raced_folder_is_never_followed(tmp_path: Path) -> None:
    """The attacker's folder holds the lock's name as a link to our file, and is swapped in
    right after the server checked its folder: fifty lock takes never write through the link
    (each takes the lock in our own folder); the target is untouched."""
    target = tmp_path / "precious.txt"
    target.write_text("precious\n")
    with shared_tmpdir() as shared:
        env = trust_env(tmp_path, shared)
        path = socket_of(env)
        folder, name = os.path.split(path)
        os.makedirs(folder, mode=0o700)
        with attacker(shared, "unused", [name], target, "plant"):
            proc = subprocess.run(
                [PY, "-c", LOCKS, folder, name, str(shared / "unused")],
                env=env,
                cwd=ROOT,
                capture_output=True,
                text=True,
                timeout=60,
            )
            assert proc.returncode == 0, proc.stderr
            assert os.path.islink(shared / "unused" / (name + ".lock"))
        assert int(proc.stdout) == 50, proc.stdout
        assert target.read_text() == "precious\n"
        assert os.listdir(folder) == [], "a lock file was left behind"


def test_a_lock_link_in_our_own_folder_is_removed_not_followed(tmp_path: Path) -> None:
    """A link left at the server's lock path (in this user's own folder) is never written
    through: the server replaces it with a lock file of its own, which it removes as it leaves."""
    ws = tmp_path / "ws"
    ws.mkdir()
    target = tmp_path / "precious.txt"
    target.write_text("precious\n")
    with short_tmpdir() as tmp:
        env = server_env(tmp_path / "home", TMPDIR=str(tmp))
        env.pop("XDG_RUNTIME_DIR", None)
        path = socket_of(env)
        os.makedirs(os.path.dirname(path), mode=0o700)
        os.symlink(target, path + ".lock")
        assert run_hook(env, note_payload(ws)).returncode == 0
        pid = wait_server(env)
        assert target.read_text() == "precious\n"
        assert stat.S_ISREG(os.lstat(path + ".lock").st_mode)
        os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + 30
        while alive(pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not alive(pid)
        assert not os.path.lexists(path + ".lock"), "the lock file outlived its server"
        assert not os.path.lexists(path)
        assert os.listdir(os.path.dirname(path)) == []
    assert target.read_text() == "precious\n"


def served_count(env: dict[str, str]) -> int:
    """Spares the server forked: one per connection a spare took, + 1 (a status request is
    answered by the spare, which stays the spare)."""
    info = status(env)
    assert info, "no hook server"
    return int(info["served"])


def test_a_20_mib_payload_goes_through_the_server_and_is_recorded(tmp_path: Path) -> None:
    """A Write of 20 MiB: its hooks' payloads go through the server whole (nothing cut, nothing
    said about bad JSON), the file's old content is recorded and restored."""
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "big.txt").write_text("old content\n")
    env = server_env(tmp_path / "home")
    big = "x" * (20 << 20)
    base = {"session_id": "s", "cwd": str(ws)}
    tool = {"tool_name": "Write", "tool_input": {"file_path": str(ws / "big.txt"), "content": big}}
    with server_stopped_after(env):
        assert run_hook(env, {**base, "hook_event_name": "SessionStart"}).returncode == 0
        wait_server(env)
        before = served_count(env)
        first = run_hook(
            env, {**base, "hook_event_name": "UserPromptSubmit", "prompt": "p", "prompt_id": "1"}
        )
        pre = run_hook(env, {**base, "hook_event_name": "PreToolUse", **tool, "tool_use_id": "t"})
        (ws / "big.txt").write_text(big)
        post = run_hook(
            env,
            {
                **base,
                "hook_event_name": "PostToolUse",
                **tool,
                "tool_use_id": "t",
                "tool_response": {"content": big},
            },
        )
        stop = run_hook(env, {**base, "hook_event_name": "Stop"})
        # Each of the four hooks taken by a spare (a status request leaves the spare waiting).
        assert served_count(env) - before == 4
    for proc in (first, pre, post, stop):
        assert (proc.returncode, proc.stderr) == (0, b""), proc.stderr[:300]
    assert ("big.txt", "modified") in [(v[0], v[4]) for v in recorded(ws, env)]
    back = subprocess.run(
        [PY, "-m", "rewind_ls", "rewind", "1", "--yes"],
        cwd=ws,
        env={**env, "REWIND_LS_HOOK_SERVER": "0"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert back.returncode == 0, back.stderr
    assert (ws / "big.txt").read_text() == "old content\n"


def timed_hook(env: dict[str, str], ws: Path) -> float:
    start = time.monotonic()
    assert run_hook(env, note_payload(ws)).returncode == 0
    return time.monotonic() - start


def test_a_stopped_server_costs_one_slow_hook_and_is_replaced(tmp_path: Path) -> None:
    """SIGSTOP to the server and its spare: the next hook waits for it once (the connect's time
    limit), runs in-process and starts a server that ends the stopped one; the hooks after it
    go through the new server."""
    from rewind_ls.core.agents.hook_client import CONNECT_TIMEOUT

    ws = tmp_path / "ws"
    ws.mkdir()
    env = server_env(tmp_path / "home")
    with server_stopped_after(env):
        assert run_hook(env, note_payload(ws)).returncode == 0
        old = wait_server(env)
        os.killpg(old, signal.SIGSTOP)
        try:
            assert timed_hook(env, ws) >= CONNECT_TIMEOUT  # the one slow hook
            new = wait_server(env)
            assert new != old
            deadline = time.monotonic() + 10
            while alive(old) and time.monotonic() < deadline:
                time.sleep(0.05)
            assert not alive(old)
            before = served_count(env)
            times = [timed_hook(env, ws) for _ in range(4)]
            assert served_count(env) - before == 4, "the hooks after it went through the server"
            assert max(times) < CONNECT_TIMEOUT, times
        finally:
            try:
                os.killpg(old, signal.SIGCONT)
            except ProcessLookupError:
                pass


def test_a_stopped_spare_costs_one_slow_hook_and_its_server_forks_another(
    tmp_path: Path,
) -> None:
    """SIGSTOP to the spare only: one hook waits, the server (still running) gets a new spare
    and stays; the hooks after it go through it."""
    from rewind_ls.core.agents.hook_client import CONNECT_TIMEOUT

    ws = tmp_path / "ws"
    ws.mkdir()
    env = server_env(tmp_path / "home")
    with server_stopped_after(env):
        assert run_hook(env, note_payload(ws)).returncode == 0
        server = wait_server(env)
        spare = int(status(env)["spare"])  # type: ignore[index]
        os.kill(spare, signal.SIGSTOP)
        try:
            assert timed_hook(env, ws) >= CONNECT_TIMEOUT
            deadline = time.monotonic() + 20
            while alive(spare) and time.monotonic() < deadline:
                time.sleep(0.05)
            assert not alive(spare)
            assert wait_server(env) == server
            times = [timed_hook(env, ws) for _ in range(3)]
            assert max(times) < CONNECT_TIMEOUT, times
        finally:
            try:
                os.kill(spare, signal.SIGCONT)
            except ProcessLookupError:
                pass


# Stops the hook server of this process's context, if one runs (the namespace's own, started by
# its first hook), as the test's end stops the one outside.
STOP = (
    "import os, sys; sys.path.insert(0, sys.argv[1]); "
    "from rewind_ls.core.agents.hook_server_status import status; i = status(); "
    'i and os.kill(int(i["pid"]), 15)'
)


def sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


@pytest.mark.skipif(
    os.geteuid() != 0 or not shutil.which("unshare"), reason="needs root and unshare(1)"
)
def test_a_hook_in_a_private_read_only_mount_namespace_sees_its_own_files(tmp_path: Path) -> None:
    """A server runs outside; a hook runs in a private mount namespace where the workspace's file
    is another one, mounted read-only: it records what it sees there (as in its own process),
    not what the server outside would see."""
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("outside\n")
    inside = tmp_path / "inside.txt"
    inside.write_text("inside\n")
    env = server_env(tmp_path / "home")
    base = {"session_id": "s", "cwd": str(ws)}
    tool = {"tool_name": "Write", "tool_input": {"file_path": str(ws / "a.txt")}}
    payloads = [
        {**base, "hook_event_name": "UserPromptSubmit", "prompt": "p", "prompt_id": "1"},
        {**base, "hook_event_name": "PreToolUse", **tool, "tool_use_id": "t"},
    ]
    for i, payload in enumerate(payloads):
        (tmp_path / f"p{i}.json").write_text(json.dumps(payload))
    hook = " ".join(HOOK_ARGV)
    script = (
        f"mount --bind {inside} {ws / 'a.txt'} && mount -o remount,bind,ro {ws / 'a.txt'} && "
        f"{hook} < {tmp_path / 'p0.json'} && {hook} < {tmp_path / 'p1.json'} && "
        f"cat {ws / 'a.txt'} && {PY} -c '{STOP}' {ROOT}"
    )
    with server_stopped_after(env):
        assert run_hook(env, {**base, "hook_event_name": "SessionStart"}).returncode == 0
        wait_server(env)
        before = served_count(env)
        proc = subprocess.run(
            ["unshare", "--mount", "--propagation", "private", "sh", "-c", script],
            env=env,
            capture_output=True,
            timeout=120,
        )
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout == b"inside\n" and proc.stderr == b""
        assert served_count(env) == before, "the outside server ran a hook of the namespace"
    versions = json.loads(
        subprocess.run(
            [PY, "-m", "rewind_ls", "log", "a.txt", "--json"],
            cwd=ws,
            env={**env, "REWIND_LS_HOOK_SERVER": "0"},
            capture_output=True,
            text=True,
            timeout=60,
        ).stdout
    )["versions"]
    # "outside" is the first checkpoint's (SessionStart, before the namespace); a hook run by the
    # server outside would have seen that again, and recorded nothing new.
    assert sha("inside\n") in {v["hash"] for v in versions}, versions


# A hook's client run directly: prints why it did not use the server, or nothing (it ran there).
THROUGH = r"""
import sys
from rewind_ls.core.agents.hook_client import through_server
print(through_server(sys.argv[1:], sys.stdin.buffer.read()))
"""


@pytest.mark.skipif(not shutil.which("prlimit"), reason="needs prlimit(1)")
def test_callers_under_other_limits_or_nice_are_not_served_by_this_server(tmp_path: Path) -> None:
    """Other rlimits or another nice value: the hook's client does not reach the server started
    under the first ones (its socket's name is its context's); and a server whose limits changed
    after it started answers `D` to a caller under the old ones, who runs the hook itself and
    starts a server that replaces it."""
    ws = tmp_path / "ws"
    ws.mkdir()
    env = server_env(tmp_path / "home")
    data = json.dumps(note_payload(ws)).encode()

    def through(*prefix: str) -> str:
        proc = subprocess.run(
            [*prefix, PY, "-c", THROUGH, *HOOK_ARGV[-2:]],
            input=data,
            env=env,
            cwd=ROOT,
            capture_output=True,
            timeout=60,
        )
        assert proc.returncode == 0, proc.stderr
        return proc.stdout.decode().strip()

    with server_stopped_after(env):
        assert run_hook(env, note_payload(ws)).returncode == 0
        server = wait_server(env)
        assert through() == ""  # ran in the server
        assert through("prlimit", "--nofile=300:300") == "absent"
        assert through("nice", "-n", "7") == "absent"
        subprocess.run(["prlimit", "--pid", str(server), "--nofile=301:301"], check=True)
        # The spare forked before the change still has the caller's limits; the next one not.
        assert through() == ""
        assert through() == "differs"
        # The hook command that met it ran in-process and started a server that replaced it.
        assert run_hook(env, note_payload(ws)).returncode == 0
        deadline = time.monotonic() + 30
        while alive(server) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not alive(server)
        assert wait_server(env) != server
        assert through() == ""


def world_writable(*tops: Path) -> list[str]:
    found = []
    for top in tops:
        for folder, dirs, files in os.walk(top):
            for name in [*dirs, *files, ""]:
                path = os.path.join(folder, name) if name else folder
                try:
                    mode = os.lstat(path).st_mode
                except FileNotFoundError:  # the stopping server removed its socket meanwhile
                    continue
                if not stat.S_ISLNK(mode) and mode & 0o002:
                    found.append(f"{path} {stat.filemode(mode)}")
    return found


def test_a_fresh_home_under_umask_000_ends_with_nothing_world_writable_and_recording_on(
    tmp_path: Path,
) -> None:
    """A new account's first hooks (no ~/.local yet) with umask 000: the folders they create are
    0700, nothing under the home or the socket folder is writable by others, and the session is
    recorded (in-process and then through the server)."""
    with short_tmpdir() as tmp:
        _fresh_home_under_umask_000(tmp_path, tmp)


def _fresh_home_under_umask_000(tmp_path: Path, tmp: Path) -> None:
    home = tmp_path / "home"
    home.mkdir(mode=0o700)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("REWIND_LS_", "XDG_"))}
    env.update(HOME=str(home), TMPDIR=str(tmp), REWIND_LS_HOOK_SERVER_IDLE="30")
    env["REWIND_LS_WATCH"] = "0"
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("a\n")
    base = {"session_id": "s", "cwd": str(ws)}
    tool = {"tool_name": "Write", "tool_input": {"file_path": str(ws / "a.txt")}}

    def hook(payload: dict[str, Any]) -> None:
        proc = subprocess.run(
            HOOK_ARGV,
            input=json.dumps(payload).encode(),
            env=env,
            capture_output=True,
            timeout=60,
            umask=0,
        )
        assert (proc.returncode, proc.stderr) == (0, b""), proc.stderr

    with server_stopped_after(env):
        hook({**base, "hook_event_name": "SessionStart"})
        wait_server(env)
        hook({**base, "hook_event_name": "UserPromptSubmit", "prompt": "p", "prompt_id": "1"})
        hook({**base, "hook_event_name": "PreToolUse", **tool, "tool_use_id": "t"})
        (ws / "a.txt").write_text("b\n")
        hook({**base, "hook_event_name": "PostToolUse", **tool, "tool_use_id": "t"})
        hook({**base, "hook_event_name": "Stop"})
    assert world_writable(home, tmp) == []
    for folder in (home / ".local", home / ".local" / "share"):
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700, folder
    assert ("a.txt", "modified") in [(v[0], v[4]) for v in recorded(ws, env)]
