"""Detached helper processes, one per workspace (the watcher, the first checkpoint's worker):
started through `posix_spawn` in a session of their own (no `subprocess` import and no fork of a
large process on the hook path), made unique by an exclusive `flock` on a lock file holding their
pid, and kept from starting twice while Python gets going by a `starting` marker.
"""

from __future__ import annotations

import os
import sys
import time

from rewind_ls.core.fs.config import ensure_private_dir

_spawned: list[int] = []  # children of a long-lived process (the server), reaped when seen


def lock_held(lock_path: str) -> bool:
    """Whether a process holds the lock (a shared lock taken and dropped at once: never blocks)."""
    import fcntl

    try:
        fd = os.open(lock_path, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except OSError:
        return True
    finally:
        os.close(fd)  # closing drops the shared lock, if taken
    return False


def take_lock(lock_path: str) -> int | None:
    """The helper's exclusive lock, with its pid written in; None when another holds it. Retried
    briefly: a caller's `lock_held` holds it shared for an instant, which must not make the only
    helper starting give up."""
    import fcntl

    fd = os.open(lock_path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    for _ in range(40):
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            time.sleep(0.005)
            continue
        os.ftruncate(fd, 0)
        os.pwrite(fd, str(os.getpid()).encode(), 0)
        return fd
    os.close(fd)
    return None


def lock_pid(lock_path: str) -> int | None:
    """The pid the lock's holder wrote into it (tests and the benchmark stop it)."""
    try:
        with open(lock_path, "rb") as f:
            return int(f.read().strip() or b"0") or None
    except (OSError, ValueError):
        return None


def claim_start(marker: str, private_dir: str, stale_s: float) -> bool:
    """Only one caller starts the process while it gets going (every caller meanwhile finds none
    holding the lock). A marker older than `stale_s` is one whose process never got going."""
    try:
        if time.time() - os.stat(marker).st_mtime < stale_s:
            return False
        os.unlink(marker)
    except FileNotFoundError:
        pass
    except OSError:
        return False
    try:
        # Owner-only like the rest of the store (makedirs gives only the leaf its mode).
        ensure_private_dir(private_dir)
        os.close(os.open(marker, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600))
    except OSError:
        return False
    return True


def unclaim(marker: str) -> None:
    try:
        os.unlink(marker)
    except OSError:
        pass


def spawn(module: str, *args: str) -> int:
    """Start `python -m module args...` detached (stdio on /dev/null, its own session); its pid.
    Raises OSError when it cannot be started."""
    return spawn_argv([sys.executable, "-m", module, *args])


def spawn_argv(argv: list[str]) -> int:
    """Start `argv` (a command of this interpreter) detached, as `spawn` does; its pid."""
    for pid in list(_spawned):
        try:
            if os.waitpid(pid, os.WNOHANG)[0]:
                _spawned.remove(pid)
        except ChildProcessError:
            _spawned.remove(pid)
    null = os.devnull
    pid = os.posix_spawn(
        argv[0],
        argv,
        # Not the caller's folder (a hook's is the workspace) first on sys.path, where `-m` puts
        # it: a workspace may hold a `rewind_ls` folder of its own. Python 3.11+ reads this.
        {**os.environ, "PYTHONSAFEPATH": "1"},
        file_actions=[
            (os.POSIX_SPAWN_OPEN, 0, null, os.O_RDONLY, 0),
            (os.POSIX_SPAWN_OPEN, 1, null, os.O_WRONLY, 0),
            (os.POSIX_SPAWN_OPEN, 2, null, os.O_WRONLY, 0),
        ],
        setsid=True,
    )
    _spawned.append(pid)
    return pid
