"""File-system calls that a large restore makes thousands of times, made cheaper without weakening
what they promise.

- `flush_files`: one `syncfs(2)` for a whole restore's temporary files instead of one `fsync` each
  (10,000 fsyncs cost seconds; syncfs flushes the same data in one pass, and reports a write-back
  error just like fsync). Called before the first file is moved into place, so what the journal
  names is durable exactly as before.
- `rename_noreplace`: `renameat2(RENAME_NOREPLACE)`, a move that never replaces an existing name, in
  one call instead of link + unlink. None when the file system or kernel does not offer it (the
  caller falls back to link + unlink).
- `parallel_map`: reads and hashes of many files in a few threads (file reads and hashlib release
  the GIL).

ctypes and the thread pool are imported on first use: the agent's hook imports this module (through
`apply_disk.recover`) and must start fast.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Callable, Iterable, Sequence
from typing import Any, TypeVar

T = TypeVar("T")
R = TypeVar("R")

_AT_FDCWD = -100
_RENAME_NOREPLACE = 1
_UNSUPPORTED = {errno.EINVAL, errno.ENOSYS, errno.ENOTSUP, errno.EOPNOTSUPP}

_libc: Any = None


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
    """Move `src` to `dst` unless `dst` exists (False, `src` left as is). None: not available here.
    Other errors raise OSError naming `src`. `src_dir_fd`/`dst_dir_fd`: the names are relative to
    these folder descriptors (renameat2's), not to the current folder."""
    libc = _c()
    fn = getattr(libc, "renameat2", None) if libc else None
    if fn is None:
        return None
    res = fn(src_dir_fd, os.fsencode(src), dst_dir_fd, os.fsencode(dst), _RENAME_NOREPLACE)
    if res == 0:
        return True
    err = _errno()
    if err == errno.EEXIST:
        return False
    if err in _UNSUPPORTED:
        return None
    raise OSError(err, os.strerror(err), src, None, dst)


def flush_files(directories: Iterable[str]) -> None:
    """Make every file written so far in `directories` durable: one syncfs per file system they
    are on (`os.sync()` where syncfs is missing). Raises OSError on a write-back error."""
    libc = _c()
    fn = getattr(libc, "syncfs", None) if libc else None
    if fn is None:
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

    pool = ThreadPoolExecutor(max_workers=min(workers, os.cpu_count() or 1))
    try:
        return list(pool.map(fn, items))
    finally:
        pool.shutdown(wait=True)
