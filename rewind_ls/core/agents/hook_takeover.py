"""Taking the hook server's place from one that can serve no hook. A server or spare stopped by
SIGSTOP answers no hook until someone resumes it, and each hook waited `CONNECT_TIMEOUT` for it; a
server whose context changed after it started (`hook_client.context`: its limits were changed, it
was moved to another cgroup) answers every hook `D`. The hook that met it starts a new server
(`hook_client.through_server`: `busy`, `differs`), which ends the old one and takes the lock
(`take_lock`). So such a server costs one hook run in-process (a slow one, when stopped)."""

from __future__ import annotations

import os
import signal
import time

from rewind_ls.core.agents.hook_client import context
from rewind_ls.core.fs import detached


def take_lock(lock_path: str) -> int | None:
    """The server's lock; when a server that can serve no hook holds it (stopped, or of another
    context than its socket's, which is this process's), that server is ended and the lock taken."""
    lock = detached.take_lock(lock_path)
    if lock is not None:
        return lock
    holder = detached.lock_pid(lock_path) if detached.lock_held(lock_path) else None
    if holder is None or not (_end_stopped(holder) or _end_other_context(holder)):
        return None
    deadline = time.monotonic() + 5.0
    while lock is None and time.monotonic() < deadline:
        time.sleep(0.02)
        lock = detached.take_lock(lock_path)
    return lock


def _state(pid: int) -> tuple[str, int, int] | None:
    """Process `pid`'s state letter, parent and process group (`/proc/PID/stat`); None if gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            fields_ = f.read().rpartition(b")")[2].split()
        return fields_[0].decode(), int(fields_[1]), int(fields_[2])
    except (OSError, IndexError, ValueError):
        return None


def _end_stopped(server: int) -> bool:
    """SIGKILL the stopped processes of hook server `server` (its process group: it leads its
    own session): a stopped server or spare answers no hook until someone resumes it, and each
    hook waited `CONNECT_TIMEOUT` for it. (A stopped child running a hook ends like a killed
    one: its client runs the hook in-process.) Whether `server` itself was stopped, so ended: a
    new server may take its place; a running one forks a new spare."""
    own = _state(server)
    if own is None or own[2] != server:  # not a hook server: it leads its own process group
        return False
    stopped = own[0] == "T"
    for entry in os.listdir("/proc"):
        if entry.isdigit() and int(entry) != server:
            st = _state(int(entry))
            if st is not None and st[2] == server and st[0] == "T":
                os.kill(int(entry), signal.SIGKILL)
    if stopped:
        os.kill(server, signal.SIGKILL)
    return stopped


def _end_other_context(server: int) -> bool:
    """SIGTERM hook server `server` when its context is no longer this process's (the socket's:
    its name is a digest of it): it answers every hook `D`. It leaves as on any SIGTERM (the hook
    in hand finished, the connections queued told to run in-process). Whether it was told to."""
    own = _state(server)
    theirs = context(str(server))
    if own is None or own[2] != server or not theirs or theirs == context():
        return False
    os.kill(server, signal.SIGTERM)
    return True
