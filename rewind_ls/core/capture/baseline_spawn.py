"""Starting the detached baseline worker (`core.capture.baseline_worker`) and reading its progress.

A hook's scan spends at most `REWIND_LS_BASELINE_SECONDS` (default 0.5 s) on an unfinished
baseline, because the agent waits on every hook. What it could not take in that time is taken by
one detached worker per workspace: an exclusive `flock` on `<store>/baseline/lock` makes it the
only one, and the same lock tells a scan whether it is alive. It writes `done total` into
`<store>/baseline/progress` after every batch it commits, for `rewind-ls turns` and the editors.

Kept apart from the worker so the hook path imports only this small module (no cycle with `scan`).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable

from rewind_ls.core.fs.config import ensure_private_dir
from rewind_ls.core.store import Store

META_BASELINE = "scan.baseline"  # store meta: "complete" once every non-ignored file is stored
DIR = "baseline"
LOCK = "lock"
PROGRESS = "progress"
STARTING = "starting"
# A start claimed this long ago whose worker never took the lock (killed before it got going).
_STARTING_STALE = 30.0
_spawned: list[int] = []  # children of a long-lived process (the server), reaped when seen


def baseline_complete(store: Store) -> bool:
    return store.meta(META_BASELINE) == "complete"


def worker_dir(store_path: str) -> str:
    return os.path.join(store_path, DIR)


def alive(store_path: str) -> bool:
    """Whether a worker holds the lock (a shared lock taken and dropped at once: never blocks)."""
    import fcntl

    try:
        fd = os.open(os.path.join(worker_dir(store_path), LOCK), os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except OSError:
        return True
    finally:
        os.close(fd)
    return False


def busy(store_path: str) -> bool:
    """Whether a worker runs or is getting going (Python start-up takes a moment)."""
    if alive(store_path):
        return True
    try:
        started = os.stat(os.path.join(worker_dir(store_path), STARTING)).st_mtime
    except OSError:
        return False
    return time.time() - started < _STARTING_STALE


def progress(store_path: str) -> tuple[int, int] | None:
    """(files done, files to do) of the running worker; None when none runs."""
    if not alive(store_path):
        return None
    try:
        with open(os.path.join(worker_dir(store_path), PROGRESS), encoding="ascii") as f:
            done, total = f.read().split()[:2]
        return int(done), int(total)
    except (OSError, ValueError):
        return 0, 0  # started, nothing counted yet


def wait_for_baseline(
    root: str, store_path: str, complete: Callable[[], bool], limit_s: float
) -> bool:
    """Wait, at most `limit_s`, until the baseline is `complete()`, starting the worker again if
    it is gone. For a hook about to run a shell command: a file the command changes before the
    worker has read it would have no first content to go back to. True when complete."""
    deadline = time.monotonic() + limit_s
    while not complete():
        if time.monotonic() >= deadline:
            return False
        if not busy(store_path) and not ensure_running(root, store_path):
            return False
        time.sleep(0.05)
    return True


def worker_pid(store_path: str) -> int | None:
    """The pid the running worker wrote into its lock file (tests and the benchmark use it)."""
    try:
        with open(os.path.join(worker_dir(store_path), LOCK), "rb") as f:
            return int(f.read().strip() or b"0") or None
    except (OSError, ValueError):
        return None


def ensure_running(root: str, store_path: str) -> bool:
    """Start the workspace's baseline worker unless one runs or is starting: detached, in its own
    session, through `posix_spawn` (no `subprocess` import, no fork of a large process). True when
    one runs or was started."""
    import sys

    for pid in list(_spawned):
        try:
            if os.waitpid(pid, os.WNOHANG)[0]:
                _spawned.remove(pid)
        except ChildProcessError:
            _spawned.remove(pid)
    if alive(store_path):
        return True
    if not _claim_start(worker_dir(store_path)):
        return True  # another scan is starting it
    null = os.devnull
    try:
        pid = os.posix_spawn(
            sys.executable,
            [sys.executable, "-m", "rewind_ls.core.capture.baseline_worker", root, store_path],
            # Not the workspace's own folder first on sys.path (`-m` puts the cwd there, and a
            # workspace may hold a `rewind_ls` folder): Python 3.11+ reads PYTHONSAFEPATH.
            {**os.environ, "PYTHONSAFEPATH": "1"},
            file_actions=[
                (os.POSIX_SPAWN_OPEN, 0, null, os.O_RDONLY, 0),
                (os.POSIX_SPAWN_OPEN, 1, null, os.O_WRONLY, 0),
                (os.POSIX_SPAWN_OPEN, 2, null, os.O_WRONLY, 0),
            ],
            setsid=True,
        )
    except OSError:
        _unclaim(worker_dir(store_path))
        return False  # the next boundary's scan goes on with the baseline itself
    _spawned.append(pid)
    return True


def _claim_start(wdir: str) -> bool:
    """Only one scan starts a worker while it gets going (every scan meanwhile finds none alive)."""
    marker = os.path.join(wdir, STARTING)
    try:
        if time.time() - os.stat(marker).st_mtime < _STARTING_STALE:
            return False
        os.unlink(marker)  # its worker never got going
    except FileNotFoundError:
        pass
    except OSError:
        return False
    try:
        ensure_private_dir(wdir)
        os.close(os.open(marker, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600))
    except OSError:
        return False
    return True


def _unclaim(wdir: str) -> None:
    try:
        os.unlink(os.path.join(wdir, STARTING))
    except OSError:
        pass
