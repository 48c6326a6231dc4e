"""Every platform-specific call of rewind-ls, and the file-system calls that a large restore makes
thousands of times, made cheaper without weakening what they promise.

Platforms: Linux uses everything below; macOS has its own equivalents (`renameatx_np(RENAME_EXCL)`,
`fcntl(F_FULLFSYNC)`, process state from `ps`, no inotify: scans walk the workspace);
`REWIND_LS_PORTABLE=1` turns every Linux-only call off on Linux too, which is how the macOS code
paths are tested here (scripts/test.sh runs the store, capture and restore tests a second time so).
Windows outside WSL is not supported: `check_supported` says so in one line.

- `flush_files`: one `syncfs(2)` for a whole restore's temporary files instead of one `fsync` each
  (10,000 fsyncs cost seconds; syncfs flushes the same data in one pass, and reports a write-back
  error just like fsync). Called before the first file is moved into place, so what the journal
  names is durable exactly as before.
- `rename_noreplace`: `renameat2(RENAME_NOREPLACE)`, a move that never replaces an existing name, in
  one call instead of link + unlink. None when the file system or kernel does not offer it (the
  caller falls back to link + unlink).
- `parallel_map`: reads and hashes of many files in a few threads (file reads and hashlib release
  the GIL).
- `fsync_file`: fsync, `F_FULLFSYNC` on macOS (its fsync does not reach the disk's platter).
- `lock`: flock(2), imported on use (no `fcntl` on Windows).
- `process_alive`: whether a pid runs (a zombie does not): /proc on Linux, `ps` elsewhere.
- `inotify_available`: whether the workspace watcher (inotify through watchdog) can run here.

ctypes and the thread pool are imported on first use: the agent's hook imports this module (through
`restore.recovery.recover`) and must start fast.
"""

from __future__ import annotations

import errno
import os
import sys
from collections.abc import Callable, Iterable, Sequence
from typing import Any, TypeVar

T = TypeVar("T")
R = TypeVar("R")

_AT_FDCWD = -100
_RENAME_NOREPLACE = 1
_UNSUPPORTED = {errno.EINVAL, errno.ENOSYS, errno.ENOTSUP, errno.EOPNOTSUPP}

_RENAME_EXCL = 0x4  # macOS <sys/stdio.h>
_libc: Any = None


def portable() -> bool:
    """`REWIND_LS_PORTABLE=1`: no Linux-only call (renameat2, syncfs, /proc, inotify), as on macOS."""
    return os.environ.get("REWIND_LS_PORTABLE", "") not in ("", "0")


def _linux() -> bool:
    return sys.platform.startswith("linux") and not portable()


def _darwin() -> bool:
    return sys.platform == "darwin"


def check_supported() -> str | None:
    """The one-line reason rewind-ls cannot run on this platform, or None."""
    if sys.platform in ("win32", "cygwin"):
        return (
            "rewind-ls runs on Linux and macOS; on Windows, run it inside WSL "
            "(https://learn.microsoft.com/windows/wsl/)"
        )
    return None


def _c() -> Any:
    global _libc
    if _libc is None:
        import ctypes

        try:
            _libc = ctypes.CDLL(None, use_errno=True)
        except OSError:
            _libc = False
    return _libc


def _errno() -> int:
    import ctypes

    return ctypes.get_errno()


def rename_noreplace(
    src: str, dst: str, src_dir_fd: int = _AT_FDCWD, dst_dir_fd: int = _AT_FDCWD
) -> bool | None:
    """Move `src` to `dst` unless `dst` exists (False, `src` left as is). None: not available here
    (the caller falls back to link + unlink). Other errors raise OSError naming `src`.
    `src_dir_fd`/`dst_dir_fd`: the names are relative to these folder descriptors, not to the
    current folder. Linux: renameat2(RENAME_NOREPLACE); macOS: renameatx_np(RENAME_EXCL)."""
    if portable():
        return None
    libc = _c()
    if not libc:
        return None
    if _darwin():
        fn = getattr(libc, "renameatx_np", None)
        flag = _RENAME_EXCL
    else:
        fn = getattr(libc, "renameat2", None)
        flag = _RENAME_NOREPLACE
    if fn is None:
        return None
    res = fn(src_dir_fd, os.fsencode(src), dst_dir_fd, os.fsencode(dst), flag)
    if res == 0:
        return True
    err = _errno()
    if err == errno.EEXIST:
        return False
    if err in _UNSUPPORTED:
        return None
    raise OSError(err, os.strerror(err), src, None, dst)


def can_flush_many() -> bool:
    """Whether `flush_files` makes many files durable at once (syncfs). Elsewhere each file is
    fsynced by itself: a plain sync(2) may return before the data is on disk."""
    libc = _c() if _linux() else None
    return bool(libc) and getattr(libc, "syncfs", None) is not None


def fsync_file(fd: int) -> None:
    """fsync; on macOS `F_FULLFSYNC`, which also flushes the drive's cache (its fsync does not),
    with fsync where the file system refuses it."""
    if _darwin():
        import fcntl

        full = getattr(fcntl, "F_FULLFSYNC", None)
        if full is not None:
            try:
                fcntl.fcntl(fd, full)
                return
            except OSError:
                pass
    os.fsync(fd)


def lock(fd: int, exclusive: bool = True, blocking: bool = True) -> None:
    """flock(2) on `fd`; BlockingIOError when `blocking` is False and another holds it."""
    import fcntl

    op = fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH
    fcntl.flock(fd, op | (0 if blocking else fcntl.LOCK_NB))


def process_alive(pid: int) -> bool:
    """Whether process `pid` runs: it exists (signal 0) and is not a zombie. A process of another
    user counts as alive. The zombie check reads /proc on Linux and asks `ps` elsewhere."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # alive, another user's
    if _linux():
        try:
            with open(f"/proc/{pid}/stat", "rb") as f:
                return f.read().rsplit(b")", 1)[-1].split()[0] != b"Z"
        except (OSError, IndexError):
            return True
    return not _ps_zombie(pid)


def _ps_zombie(pid: int) -> bool:
    import subprocess

    try:
        out = subprocess.run(
            ["ps", "-o", "stat=", "-p", str(pid)], capture_output=True, text=True, timeout=10
        )
    except (OSError, subprocess.SubprocessError):
        return False
    state = out.stdout.strip()
    if out.returncode != 0 and not state:
        return True  # gone between the signal and ps: as dead as a zombie
    return state.startswith("Z")


def inotify_available() -> bool:
    """Whether the workspace watcher can run: Linux (not portable) and watchdog installed (a
    dependency on Linux only)."""
    global _watchdog
    if not _linux():
        return False
    if _watchdog is None:
        import importlib.util

        _watchdog = importlib.util.find_spec("watchdog") is not None
    return _watchdog


_watchdog: bool | None = None


def flush_files(directories: Iterable[str]) -> None:
    """Make every file written so far in `directories` durable: one syncfs per file system they
    are on (`os.sync()` where syncfs is missing: callers check `can_flush_many` first and fsync
    each file where it is false). Raises OSError on a write-back error."""
    libc = _c() if _linux() else None
    fn = getattr(libc, "syncfs", None) if libc else None
    if fn is None:
        # The folders' own entries, each (a missing folder raises as with syncfs), then everything.
        for directory in dict.fromkeys(directories):
            fd = os.open(directory, os.O_RDONLY)
            try:
                fsync_file(fd)
            finally:
                os.close(fd)
        os.sync()
        return
    done: set[int] = set()
    for directory in directories:
        fd = os.open(directory, os.O_RDONLY)
        try:
            dev = os.fstat(fd).st_dev
            if dev not in done and fn(fd) != 0:
                err = _errno()
                raise OSError(err, os.strerror(err), directory)
            done.add(dev)
        finally:
            os.close(fd)


def parallel_map(fn: Callable[[T], R], items: Sequence[T], workers: int = 4) -> Iterable[R]:
    """`map(fn, items)`, in threads when there are many items; results in order, the first
    exception raised when its result is reached."""
    if len(items) < 64:
        return map(fn, items)
    from concurrent.futures import ThreadPoolExecutor

    # A few runs of items per thread, not one task each: a future per item cost about 12 us of
    # CPU (10k files: three times that per restore), more than many of the calls themselves.
    threads = min(workers, os.cpu_count() or 1)
    size = -(-len(items) // (threads * 4))
    runs = [items[i : i + size] for i in range(0, len(items), size)]
    pool = ThreadPoolExecutor(max_workers=threads)
    try:
        return [r for done in pool.map(lambda run: [fn(x) for x in run], runs) for r in done]
    finally:
        pool.shutdown(wait=True)
