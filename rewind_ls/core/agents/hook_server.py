"""The hook server: one process per user (per interpreter, package folder and `REWIND_LS_HOME`)
that has imported everything a hook needs once, and forks a child per hook command, the way
Mercurial's chg or multiprocessing's forkserver skip an interpreter's start-up. The child is forked
ahead (`_prefork_loop`: a spare that has made a hook's first calls, `rehearse_hook`, waits on the
socket and takes the next hook itself), so neither the fork nor the child's first page faults
are on the hook's path.

Started detached by a hook that found none (`hook_client.start_server`, through
`fs/detached.spawn_argv`: `python -I -S .../rewind_ls/__main__.py hook-server`, the hook's own
interpreter and `sys.path`). It opens no store and starts no thread: each child gets the same
fresh state, sets the client's environment, folder, umask, argv and stdin, runs
`hook_process.run` as the in-process hook does, and sends the output and exit code back
(`hook_client.py` has the exchange). One at a time by an `flock` on `<socket>.lock`; it exits
after `REWIND_LS_HOOK_SERVER_IDLE` seconds without a hook (default 900), and as soon as any of the
code it imported changed on disk (an upgrade, a `git pull` in a development install). It checks
that after each hook's child took its hook, while the child runs (not before: the check's ~240
`stat`s would delay every hook), and every 2 s while idle. So the one hook taken when it finds the
code changed runs the code it imported, whole, like an in-process hook that started just before the
upgrade; then it forks no new spare, the waiting one leaves, it stops listening, answers `S`
(stale) to the connections already queued (each runs its hook in-process and starts a new
server) and exits.
"""

from __future__ import annotations

import _thread
import gc
import importlib
import io
import os
import select
import signal
import socket
import sys
import time
from collections.abc import Callable
from typing import Any, NoReturn

from rewind_ls.core.agents.hook_client import (
    at,
    context,
    field,
    fields,
    make_folder,
    package_dir,
    socket_path,
)
from rewind_ls.core.agents.hook_takeover import take_lock
from rewind_ls.core.fs import config, detached
from rewind_ls.core.store import db

IDLE_DEFAULT = 900.0
# Seconds after a spare took a connection by which the next one is forked at the latest.
SPARE_AFTER = 0.05
# Besides every module of the core (a hook imports only the core), the libraries a hook may load.
PRELOAD = ("zstandard",)


def idle_seconds() -> float:
    return config.env_positive("REWIND_LS_HOOK_SERVER_IDLE", IDLE_DEFAULT)


def _preload() -> None:
    """Import every module of the core, once: a child then imports none of ours (the modules a
    hook needs differ by agent, event and state, e.g. the delta of a file's second version), and
    every file of the code is in the staleness stamp."""
    import pkgutil

    import rewind_ls.core

    names = [m.name for m in pkgutil.walk_packages(rewind_ls.core.__path__, "rewind_ls.core.")]
    for name in [*names, *PRELOAD]:
        try:
            importlib.import_module(name)
        except Exception:  # imported (or reported) by the child that needs it, as in-process
            pass


def code_stamp() -> dict[str, tuple[int, int]]:
    """Every file of the code this process runs (modules, the interpreter) and every folder of
    the package (a module added or removed), with its mtime and size."""
    paths = {os.path.realpath(sys.executable)}
    for module in list(sys.modules.values()):
        path = getattr(module, "__file__", None)
        if path:
            paths.add(path)
    for folder, dirs, _files in os.walk(package_dir()):
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        paths.add(folder)
    stamp = {}
    for path in paths:
        try:
            st = os.stat(path)
        except OSError:
            continue
        stamp[path] = (st.st_mtime_ns, st.st_size)
    return stamp


def changed(stamp: dict[str, tuple[int, int]]) -> str | None:
    """The first file of `stamp` that changed or went since; None when none did."""
    for path, was in stamp.items():
        try:
            st = os.stat(path)
        except OSError:
            return path
        if (st.st_mtime_ns, st.st_size) != was:
            return path
    return None


def _peer(conn: socket.socket) -> int | None:
    """The peer's pid when it is this user's (SO_PEERCRED; 0 where the platform tells only the
    uid: LOCAL_PEERCRED), else None: another user never gets a child of this server."""
    try:
        if hasattr(socket, "SO_PEERCRED"):  # Linux: struct ucred {pid, uid, gid}
            cred = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12)
            if int.from_bytes(cred[4:8], sys.byteorder) != os.geteuid():
                return None
            return int.from_bytes(cred[0:4], sys.byteorder)
        if sys.platform == "darwin":  # LOCAL_PEERCRED: struct xucred {version, uid, ...}
            cred = conn.getsockopt(0, 0x001, 76)
            return 0 if int.from_bytes(cred[4:8], sys.byteorder) == os.geteuid() else None
    except OSError:
        return None
    return None


def rehearse_hook() -> None:
    """A hook's first calls, in a spare before it waits (`_spare`): their copy-on-write page
    faults (the eval loop's, the type caches', malloc's) were ~1 ms of a hook's ~4.4 ms of CPU
    when the child made them on the hook's path (h-hook2's harness: 4.4 -> 3.3 ms)."""
    import hashlib
    import json

    db.rehearse()  # SQLite's first statements
    hashlib.sha256(bytes(128 << 10)).digest()  # a file's before/after is hashed
    payload = {"hook_event_name": "PreToolUse", "tool_input": {"file_path": "/f", "content": ""}}
    json.loads(json.dumps(payload))  # the payload read, the output written


def serve() -> int:
    """The server (run by `__main__.py hook-server`): its folder opened and checked once, every
    name in it reached through that descriptor (`hook_client.at`), so a folder renamed or
    planted meanwhile is never the one used; then `_prefork_loop`."""
    os.chdir("/")  # pin no workspace's folder
    folder, _, name = socket_path().rpartition("/")
    fd = make_folder(folder)
    if fd is None:
        return 1
    try:
        return _serve_in(lambda suffix: at(fd, folder, name + suffix))
    finally:
        os.close(fd)


def _serve_in(path: Callable[[str], str]) -> int:
    """The server with its socket at `path("")`, its lock at `path(".lock")`. The lock file is
    removed as it leaves (`detached.release_lock`)."""
    marker = path(".starting")
    lock = take_lock(path(".lock"))
    if lock is None:
        # Another server holds it. The claim of whoever started this one ends here: left, it
        # kept the next 10 s of hooks from starting a server after that one died.
        detached.unclaim(marker)
        return 0
    try:
        listener, stamp, info = _start(path(""))
    except BaseException:
        detached.unclaim(marker)
        detached.release_lock(path(".lock"), lock)
        raise
    detached.unclaim(marker)
    try:
        _prefork_loop(listener, stamp, info, lock)
    finally:
        try:
            os.unlink(path(""))  # still ours: a new server binds only once it holds the lock
        except OSError:
            pass
        _refuse_queued(listener)
        listener.close()
        detached.release_lock(path(".lock"), lock)
    return 0


def _start(path: str) -> tuple[socket.socket, dict[str, tuple[int, int]], bytes]:
    """Import the hook path, stamp its code and listen at `path` (created 0600): the listener,
    the code's stamp and the status lines."""
    _preload()
    stamp = code_stamp()
    # What every child shares stays shared: the collector would otherwise walk (write to)
    # every object the server imported, copying each page into each child.
    gc.collect()
    gc.freeze()
    info = (
        f"pid={os.getpid()}\npython={sys.executable}\ncode={package_dir()}\n"
        f"home={config.home_dir()}\n"
        f"since={time.strftime('%Y-%m-%dT%H:%M:%S')}\n"
    ).encode()
    try:
        os.unlink(path)  # a dead server's socket (the lock says none is alive)
    except FileNotFoundError:
        pass
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    os.umask(0o077)  # the socket is made 0600 as it is bound, not after (each child sets its own)
    listener.bind(path)
    listener.listen(128)
    return listener, stamp, info


def _refuse_queued(listener: socket.socket) -> None:
    """Answer `S` to the connections made before the socket was removed: their clients run the
    hook in-process and start a new server (closed unanswered, they would not start one)."""
    listener.setblocking(False)
    while True:
        try:
            conn, _ = listener.accept()
        except OSError:  # none left (BlockingIOError), or the listener failed
            return
        try:
            conn.setblocking(True)
            conn.settimeout(0.5)
            conn.sendall(b"S")
        except OSError:
            pass
        conn.close()


def _on_term(_signum: int, _frame: Any) -> None:
    """SIGTERM: the byte the signal writes to the wakeup pipe ends the loop (raising here could
    drop a connection just accepted, unanswered)."""


class _Loop:
    """The prefork loop's state: its wakeup pipe, the running children, the spare and when the
    next one is due."""

    def __init__(
        self, listener: socket.socket, stamp: dict[str, tuple[int, int]], info: bytes, lock: int
    ) -> None:
        self.listener = listener
        self.stamp = stamp
        self.info = info
        self.lock = lock
        self.stop_r, self.stop_w = os.pipe()
        os.set_blocking(self.stop_w, False)
        self.idle = idle_seconds()
        self.last = time.monotonic()
        self.children: dict[int, socket.socket | None] = {}  # running children, their clients
        self.spare: tuple[int, socket.socket] | None = None  # its pid, where it says "taken"
        self.served = 0
        # The next spare is forked once the last one's child is done (or a connection waits, or
        # `SPARE_AFTER` passed): forked at once, the fork and the spare's rehearsal ran beside
        # the hook, and on two busy cores took its CPU. Hooks come one after another (an agent
        # waits for each), so it is ready long before the next.
        self.due = 0.0
        self.latest = 0  # the last spare's pid, once it took a connection

    def stopped(self, ready: list[int]) -> bool:
        """Whether SIGTERM's byte is among what woke the loop (SIGCHLD's only wakes it)."""
        return self.stop_r in ready and signal.SIGTERM in os.read(self.stop_r, 64)

    def wait_for_spare_time(self) -> bool | None:
        """Before forking the next spare: wait until it is due or a connection waits. True to
        fork it now, False to loop again (a child ended), None on SIGTERM."""
        if not (self.latest in self.children and time.monotonic() < self.due):
            return True
        wait = self.due - time.monotonic()
        ready = select.select([self.listener.fileno(), self.stop_r], [], [], max(0.0, wait))[0]
        if self.stopped(ready):
            return None
        return self.listener.fileno() in ready

    def fork_spare(self) -> None:
        self.served += 1
        taken, taken_there = socket.socketpair()
        pid = os.fork()
        if pid == 0:
            signal.set_wakeup_fd(-1)
            signal.signal(signal.SIGCHLD, signal.SIG_DFL)
            taken.close()
            for fd in (self.lock, self.stop_r, self.stop_w):
                os.close(fd)
            for conn in self.children.values():
                if conn is not None:
                    conn.close()
            served_info = self.info + f"served={self.served}\n".encode()
            _spare(self.listener, taken_there, self.stamp, served_info)
        taken_there.close()
        self.spare = (pid, taken)

    def took(self, spare: tuple[int, socket.socket]) -> None:
        """The spare took a connection (or died): it is a child like any other."""
        try:
            _msg, fds, _flags, _addr = socket.recv_fds(spare[1], 1, 1)
        except OSError:
            fds = []
        spare[1].close()
        self.children[spare[0]] = socket.socket(fileno=fds[0]) if fds else None
        self.latest = spare[0]
        self.spare = None
        self.last = time.monotonic()
        self.due = self.last + SPARE_AFTER

    def step(self) -> bool:
        """One turn of the loop; False when the server leaves (SIGTERM, idle, its code changed)."""
        _reap_answering(self.children)
        if self.spare is None:
            fork = self.wait_for_spare_time()
            if fork is None:
                return False
            if not fork:
                return True
            self.fork_spare()
        spare = self.spare
        assert spare is not None
        ready = select.select([spare[1].fileno(), self.stop_r], [], [], 2.0)[0]
        if self.stopped(ready):
            return False
        if spare[1].fileno() in ready:
            self.took(spare)
            return not changed(self.stamp)
        idle = time.monotonic() - self.last > self.idle
        return bool(ready) or not (idle or changed(self.stamp))

    def close(self) -> None:
        if self.spare is not None:
            # Not a kill: the spare may have just taken a connection (its word still on its way
            # here), and a hook killed mid-run would be run again in-process. Closed, its pair
            # tells it to leave; one that takes a connection after this answers it `S`.
            self.spare[1].close()
        for conn in self.children.values():
            if conn is not None:
                conn.close()
        os.close(self.stop_r)
        os.close(self.stop_w)


def _prefork_loop(
    listener: socket.socket,
    stamp: dict[str, tuple[int, int]],
    info: bytes,
    lock: int,
) -> None:
    """The loop: accept, fork, serve, with the fork off the request's path. A spare child,
    forked in advance, accepts the next connection itself and hands this process a copy of it
    (SCM_RIGHTS on a socket pair), which forks the next spare while it runs. (Forking a 40 MB
    interpreter takes 5-9 ms on a small VM.) A child that dies without its reply (killed, or
    `os._exit` by the crash tests' fault hook) is answered for: this process reaps it (woken by
    SIGCHLD) and sends its client `R` with the real status, as the shell would have seen it.
    Leaving, this process closes its end of the spare's pair: the spare exits, or, when it took
    a connection first, serves it whole. The same end closed by the kernel (kill -9 of this
    process) ends the spare too, rather than leave it holding the old socket."""
    loop = _Loop(listener, stamp, info, lock)
    signal.set_wakeup_fd(loop.stop_w)
    signal.signal(signal.SIGTERM, _on_term)
    signal.signal(signal.SIGCHLD, _on_term)  # a byte on the wakeup pipe: reap at once
    listener.setblocking(True)  # the spares block in `accept`; this process never accepts
    try:
        while loop.step():
            pass
    finally:
        listener.setblocking(False)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        signal.set_wakeup_fd(-1)
        loop.close()


def _reap_answering(children: dict[int, socket.socket | None]) -> None:
    """Reap the children that ended; to the client of one that ended otherwise than by its
    `os._exit(0)` after replying, send `R` with that status (`c:N`, `s:N`)."""
    for pid in list(children):
        try:
            done, status = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            done, status = pid, 0
        if not done:
            continue
        conn = children.pop(pid)
        if conn is None:
            continue
        code = os.waitstatus_to_exitcode(status)
        if code != 0:
            reply = f"s:{-code}" if code < 0 else f"c:{code}"
            try:
                conn.settimeout(0.5)
                conn.sendall(b"R" + field(reply.encode()))
            except OSError:  # the client is gone (it was killed: that is why the child died)
                pass
        conn.close()


def _spare(
    listener: socket.socket,
    taken: socket.socket,
    stamp: dict[str, tuple[int, int]],
    info: bytes,
) -> NoReturn:
    """A spare child: `rehearse_hook` (first calls whose copy-on-write page faults would otherwise
    be on the request's path), accept one connection of this user's, hand the server a copy of
    it, and serve it. A status request is answered and the spare stays the spare (`served`:
    requests taken + 1; `spare`: this pid). It waits on `taken` too: the server never writes
    there, so it reads EOF only when the server closed it (leaving: its code changed, idle,
    SIGTERM) or died (kill -9); the spare then exits rather than serve with a dead server's
    state or linger on its socket. A connection taken when the server can no longer be told is
    answered `S`: its client runs the request itself and starts a new server."""
    try:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        rehearse_hook()
        own = context()  # the server's, as this spare was forked
        info += f"spare={os.getpid()}\n".encode()
        while True:
            ready = select.select([listener.fileno(), taken.fileno()], [], [])[0]
            if taken.fileno() in ready:  # the server is gone or leaving
                _refuse_queued(listener)  # a killed server cannot: reset, they would start none
                os._exit(0)
            try:
                conn, _ = listener.accept()
            except BlockingIOError:  # taken by the leaving server's `_refuse_queued`
                continue
            conn.setblocking(True)
            peer = _peer(conn)
            if peer is None:
                conn.close()
                continue
            conn.settimeout(10.0)
            first = conn.recv(1)
            if first != b"?":
                break
            _answer_status(conn, stamp, info)
            conn.close()
        try:
            socket.send_fds(taken, [b"t"], [conn.fileno()])
        except OSError:  # the server died or left since the select
            conn.sendall(b"S")
            os._exit(0)
        taken.close()
    except BaseException:
        os._exit(0)
    _child(listener, conn, stamp, info, first, (peer, own))
    os._exit(0)


_replied = False  # the child sent its reply: its client may go (and close the socket) now


def replied() -> None:
    """Say the child's reply is going out: its client's EOF from now on is not a kill."""
    global _replied
    _replied = True


def die_with_client(conn: socket.socket) -> None:
    """A child's watch on its client (a thread): EOF before the reply (the agent killed the hook
    command, the person's command was killed) ends the child at once, as the kill would have
    ended the process in-process."""
    try:
        while conn.recv(1):
            pass
    except OSError:
        pass
    if not _replied:
        os._exit(1)


def read_request(conn: socket.socket, count: int) -> list[bytes] | None:
    """A request's `count` fields, as they arrive; None when the client left first."""
    buf = bytearray()  # appended in place: a 20 MiB payload is not copied once per piece
    while True:
        parsed = fields(buf, 0, count)
        if parsed is not None:
            return parsed[0]
        chunk = conn.recv(1 << 20)
        if not chunk:
            return None
        buf += chunk


def _answer_status(conn: socket.socket, stamp: dict[str, tuple[int, int]], info: bytes) -> None:
    stale = changed(stamp)
    conn.sendall(info + (f"stale={stale}\n".encode() if stale else b""))


def _child(
    listener: socket.socket,
    conn: socket.socket,
    stamp: dict[str, tuple[int, int]],
    info: bytes,
    first: bytes,
    peer: tuple[int, bytes],
) -> None:
    """Serve one connection (`first`: its kind, already read; `peer`: the client's pid, 0 when
    unknown, and this server's `context`). A hook whose client's context is not the server's is
    answered `D`: it runs in the client's own process, with its own namespaces, rights and limits."""
    try:
        listener.close()
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        conn.settimeout(10.0)
        kind = first
        if kind == b"?":
            _answer_status(conn, stamp, info)
            os._exit(0)
        if kind != b"H":
            os._exit(0)
        parts = read_request(conn, 6)
        if parts is None:
            os._exit(0)
        if peer[0] and context(str(peer[0])) != peer[1]:
            conn.sendall(b"D")
            os._exit(0)
        conn.sendall(b"A")
        # While the client's `G` is on its way: nothing this changes is seen outside this process.
        become = _become(*parts)
        if conn.recv(1) != b"G":
            os._exit(0)  # the client gave up and runs the hook itself
        conn.settimeout(None)
        _thread.start_new_thread(die_with_client, (conn,))
        db.defer_closes()
        reply = _run_hook(*become)
        replied()
        conn.sendall(reply)
        conn.close()
        db.finish_deferred()  # the WAL's checkpoint and the next one's start, after the reply
    except BaseException:
        pass
    os._exit(0)


def _become(
    argv: bytes, cwd: bytes, environ: bytes, umask: bytes, stdin: bytes, ppid: bytes
) -> tuple[str, bytes, io.BytesIO, io.BytesIO]:
    """Become the client's hook process (its environment, folder, umask, argv, parent, stdio):
    the agent and the stdin bytes to run the hook with, and where its stdout and stderr go."""
    wanted = {}
    for entry in environ.split(b"\0") if environ else ():
        key, _, value = entry.partition(b"=")
        if key:
            wanted[key] = value
    # Only what differs from the server's (the first hook's) environment: each change is a
    # putenv/unsetenv, and clearing all to set all again cost ~0.1 ms a hook for nothing.
    env = os.environb
    for key in [k for k in env if k not in wanted]:
        del env[key]
    for key, value in wanted.items():
        if env.get(key) != value:
            env[key] = value
    time.tzset()
    from rewind_ls.core.fs import faults

    faults.reread()  # read at import, in the server
    from rewind_ls.core.capture import shell_runs

    shell_runs.HOOK_PARENT = int(ppid)  # the agent is the client's ancestor, not ours
    os.chdir(cwd)
    os.umask(int(umask))
    sys.argv = [os.fsdecode(a) for a in argv.split(b"\0")]
    out, err = io.BytesIO(), io.BytesIO()
    sys.stdout = io.TextIOWrapper(out, encoding="utf-8", write_through=True)
    sys.stderr = io.TextIOWrapper(
        err, encoding="utf-8", errors="backslashreplace", write_through=True
    )
    sys.stdin = io.TextIOWrapper(io.BytesIO(stdin), encoding="utf-8")
    return (sys.argv[2] if len(sys.argv) > 2 else ""), stdin, out, err


def _run_hook(agent: str, stdin: bytes, out: io.BytesIO, err: io.BytesIO) -> bytes:
    """Run the hook as `run` does in-process (after `_become`), and return the reply: its
    stdout, stderr and exit code."""
    from rewind_ls.core.agents.hook_process import run

    code = run(agent, io.BytesIO(stdin), whole_process=False)
    sys.stdout.flush()
    sys.stderr.flush()
    return b"R" + field(out.getvalue()) + field(err.getvalue()) + field(str(code).encode())
