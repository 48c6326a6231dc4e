"""Reading files for the store: a file's stat signature, and its content read and hashed.

A file is read again only when its signature (size, mtime_ns, inode, permission bits) differs from
the one recorded with its `known` row: `same_signature` is that test, for the scan and the recorder
alike. `read_many` reads many files in a thread pool (hashlib releases the GIL), in order,
with bounded look-ahead, and stops at a deadline.
"""

from __future__ import annotations

import os
import stat as stat_mod
import time

from rewind_ls.core.store import FILE, RAW, Version, digest, too_large

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence

# A file whose mtime is this close to the moment it was read could be rewritten within the same
# timestamp tick with the same size; its signature is not trusted (the next scan reads it again).
RACY_NS = 100_000_000
# Below this many files to read, a thread pool costs more than it saves.
_POOL_MIN = 64
# Files go to the pool in chunks: one task per file costs more in executor overhead than hashing
# a typical 2 KB source file does.
_CHUNK = 64


def same_signature(
    st: os.stat_result, size: int | None, mtime_ns: int | None, ino: int | None, mode: int | None
) -> bool:
    """Whether `st` still matches the signature recorded when the file was last read."""
    return (
        mtime_ns == st.st_mtime_ns
        and size == st.st_size
        and ino == st.st_ino
        and mode == stat_mod.S_IMODE(st.st_mode)
    )


def trusted_mtime(st: os.stat_result, racy_from: int) -> int | None:
    """`st`'s mtime, or None when it is too recent to vouch for the content (see `RACY_NS`)."""
    return st.st_mtime_ns if st.st_mtime_ns < racy_from else None


class FileRead:
    """A file's content as read: version, stored form (payload and codec), the fstat it was read
    under, and the raw bytes when the caller asked to keep them (to delta-encode the old version)."""

    __slots__ = ("codec", "data", "payload", "st", "version")

    def __init__(
        self,
        version: Version,
        st: os.stat_result,
        payload: bytes | None,
        codec: int,
        data: bytes | None,
    ) -> None:
        self.version = version
        self.st = st
        self.payload = payload
        self.codec = codec
        self.data = data


def read_file(full: str, keep_raw: bool, limit: int) -> FileRead | str:
    """Read and hash one file; a string says why it could not be read. Thread-safe."""
    try:
        # O_NOFOLLOW: a path swapped for a link after the walk is not followed out of the workspace;
        # O_NONBLOCK: a path swapped for a FIFO does not hang the hook.
        fd = os.open(
            full, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
        )
    except FileNotFoundError:
        return "vanished"
    except OSError as exc:
        return exc.strerror or str(exc)
    try:
        st = os.fstat(fd)
        if not stat_mod.S_ISREG(st.st_mode):
            return "is not a regular file"
        mode = stat_mod.S_IMODE(st.st_mode)
        if st.st_size > limit:
            return FileRead(too_large(st), st, None, RAW, None)
        # Read to end of file: it may have grown since fstat, and a read may come back short.
        parts = [os.read(fd, st.st_size + 1)]
        while parts[-1]:
            parts.append(os.read(fd, 1 << 20))
        data = parts[0] if len(parts) == 2 else b"".join(parts)
    except OSError as exc:
        return exc.strerror or str(exc)
    finally:
        os.close(fd)
    # The content as is: the store packs small contents together (better than one by one).
    version = Version(FILE, digest(data), mode, len(data))
    return FileRead(version, st, data, RAW, data if keep_raw else None)


def _read_chunk(fulls: Sequence[str], limit: int) -> list[FileRead | str]:
    return [read_file(full, False, limit) for full in fulls]


def read_many(
    root: str, rels: Sequence[str], limit: int, workers: int | None, deadline: float | None
) -> Iterator[tuple[int, FileRead | str | None]]:
    """(index into `rels`, what `read_file` made of it), in order, in a thread pool when there are
    many; once past `deadline` (time.monotonic) a last (index, None) says the rest was not read."""
    base = root.rstrip("/") + "/"
    fulls = [base + rel for rel in rels]
    if len(fulls) < _POOL_MIN or workers == 1:
        for i, full in enumerate(fulls):
            if deadline is not None and time.monotonic() > deadline:
                yield i, None
                return
            yield i, read_file(full, False, limit)
        return
    from collections import deque
    from concurrent.futures import Future, ThreadPoolExecutor

    n = workers or max(2, min(8, os.cpu_count() or 2))
    window = n * 4  # chunks in flight: bounded look-ahead, memory stays flat on huge trees
    with ThreadPoolExecutor(n, thread_name_prefix="rewind-ls-read") as pool:
        pending: deque[tuple[int, Future[list[FileRead | str]]]] = deque()
        stopped_at: int | None = None
        for start in range(0, len(fulls), _CHUNK):
            if deadline is not None and time.monotonic() > deadline:
                stopped_at = start
                break
            pending.append((start, pool.submit(_read_chunk, fulls[start : start + _CHUNK], limit)))
            if len(pending) >= window:
                first, fut = pending.popleft()
                for i, r in enumerate(fut.result()):
                    yield first + i, r
        while pending:
            first, fut = pending.popleft()
            for i, r in enumerate(fut.result()):
                yield first + i, r
        if stopped_at is not None:
            yield stopped_at, None
