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
        fd = os.open(lock_path, os.O_RDONLY | os.O_CLOEXEC | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except OSError:
        return True
    finally:
        os.close(fd)  # closing drops the shared lock, if taken
    return False


def _open_lock(lock_path: str) -> int | None:
    """The lock file, created 0600 when missing, never through a link (`O_NOFOLLOW`: a link
    planted at its path would make this process write its pid over the link's target) and only
    a plain file of this user's with one name (a hard link is a name for another file). A link
    found there is removed (only a link: its target is never touched), as the folders locks live
    in are this user's own 0700 ones, so the link was left by this user. None when it is not
    usable."""
    import errno
    import stat

    flags = os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK
    for _ in range(2):
        try:
            fd = os.open(lock_path, flags, 0o600)
        except OSError as exc:
            if exc.errno != errno.ELOOP:
                return None
            try:
                os.unlink(lock_path)  # the link, not its target
            except OSError:
                return None
            continue
        st = os.fstat(fd)
        if stat.S_ISREG(st.st_mode) and st.st_uid == os.geteuid() and st.st_nlink == 1:
            return fd
        os.close(fd)
        return None
    return None


def _still_named(fd: int, lock_path: str) -> bool:
    """Whether the lock file open as `fd` is still the one at `lock_path` (a holder leaving
    removes it, `release_lock`: a lock taken on the removed file is no lock)."""
    try:
        st = os.stat(lock_path, follow_symlinks=False)
    except OSError:
        return False
    mine = os.fstat(fd)
    return (st.st_dev, st.st_ino) == (mine.st_dev, mine.st_ino)


def take_lock(lock_path: str) -> int | None:
    """The helper's exclusive lock, with its pid written in; None when another holds it (or the
    lock's path holds something else than a plain file of ours: `_open_lock`). Retried
    briefly: a caller's `lock_held` holds it shared for an instant, which must not make the only
    helper starting give up."""
    import fcntl

    for _ in range(40):
        fd = _open_lock(lock_path)
        if fd is None:
            return None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            time.sleep(0.005)
            continue
        if not _still_named(fd, lock_path):
            os.close(fd)  # its holder removed it as it left: take the new one
            continue
        os.ftruncate(fd, 0)
        os.pwrite(fd, str(os.getpid()).encode(), 0)
        return fd
    return None


def release_lock(lock_path: str, fd: int) -> None:
    """Remove the lock file while holding it, then drop it: no lock file is left behind, and a
    process that opened it meanwhile finds it gone once it gets the lock (`_still_named`)."""
    try:
        if _still_named(fd, lock_path):
            os.unlink(lock_path)
    except OSError:
        pass
    os.close(fd)


def lock_pid(lock_path: str) -> int | None:
    """The pid the lock's holder wrote into it (tests and the benchmark stop it)."""
    try:
        fd = os.open(lock_path, os.O_RDONLY | os.O_CLOEXEC | os.O_NOFOLLOW | os.O_NONBLOCK)
        with os.fdopen(fd, "rb") as f:
            return int(f.read(32).strip() or b"0") or None
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
