"""Reading files for the store: a file's stat signature, and its content read and hashed.

A file is read again only when its signature (size, mtime_ns, inode, permission bits) differs from
the one recorded with its `known` row: `same_signature` is that test, for the scan and the recorder
alike. `read_many` reads many files in a thread pool, in order, with bounded look-ahead, and stops
at a deadline; each pool task reads a run of files about one pack long and compresses their small
contents into packs there (`codec.build_packs`). hashlib, zstd, zlib and file reads release the
GIL, so the reading threads hash and compress on the other core while the scanning thread commits
the previous run to the store (profile of a 100k-file baseline: reading+hashing, compressing and
the store's SQL each cost about a third of the CPU).
"""

from __future__ import annotations

import os
import stat as stat_mod
import time

from rewind_ls.core.store import FILE, PACKED, RAW, Version, codec, digest, too_large

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence

# A file whose mtime is this close to the moment it was read could be rewritten within the same
# timestamp tick with the same size; its signature is not trusted (the next scan reads it again).
RACY_NS = 100_000_000
# Below this many files to read, a thread pool costs more than it saves.
_POOL_MIN = 64
# A pool task reads files until their sizes add up to a pack (bigger packs compress better), or
# this many files; under a deadline (a hook's budget) a quarter of that, so a task started just
# before the deadline ends soon after it.
_CHUNK_FILES = 2048


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


class ReadChunk:
    """What one pool task made of a run of files: `reads[i]` is `read_file`'s answer for
    `rels[first + i]`. A `FileRead` whose codec is PACKED has no payload: its content is in one
    of `packs` (small contents, packed in the reading thread); the caller stores those packs in
    the same transaction as the reads' rows. A content over `codec.PACK_MEMBER_MAX` comes
    compressed on its own (`codec.compress`)."""

    __slots__ = ("first", "packs", "reads")

    def __init__(self, first: int, reads: list[FileRead | str], packs: list[codec.Pack]) -> None:
        self.first = first
        self.reads = reads
        self.packs = packs


def _read_chunk(first: int, fulls: Sequence[str], limit: int) -> ReadChunk:
    reads = [read_file(full, False, limit) for full in fulls]
    small: list[tuple[str, bytes]] = []
    seen: set[str] = set()
    for r in reads:
        if not isinstance(r, FileRead) or r.payload is None or r.codec != RAW:
            continue
        h = r.version.hash
        assert h is not None
        if len(r.payload) > codec.PACK_MEMBER_MAX:
            r.codec, r.payload = codec.compress(r.payload)
            continue
        if h not in seen:  # the same content twice in a run is packed once
            seen.add(h)
            small.append((h, r.payload))
        r.codec, r.payload = PACKED, None
    if len(small) == 1:
        # A pack of one is a blob on its own (the store compresses it): put its payload back.
        for r in reads:
            if isinstance(r, FileRead) and r.codec == PACKED:
                r.codec, r.payload = RAW, small[0][1]
        return ReadChunk(first, reads, [])
    return ReadChunk(first, reads, list(codec.build_packs(small)))


def _runs(sizes: Sequence[int], under_deadline: bool) -> Iterator[tuple[int, int]]:
    """(start, end) of runs of files about one pack long (see `_CHUNK_FILES`)."""
    target = codec.PACK_TARGET // 4 if under_deadline else codec.PACK_TARGET
    most = _CHUNK_FILES // 4 if under_deadline else _CHUNK_FILES
    start = total = 0
    for i, size in enumerate(sizes):
        total += min(size, codec.PACK_MEMBER_MAX)
        if total >= target or i + 1 - start >= most:
            yield start, i + 1
            start, total = i + 1, 0
    if start < len(sizes):
        yield start, len(sizes)


def read_many(
    root: str,
    rels: Sequence[str],
    sizes: Sequence[int],
    limit: int,
    workers: int | None,
    deadline: float | None,
) -> Iterator[ReadChunk | None]:
    """`ReadChunk`s of `rels` (whose sizes at the walk were `sizes`) in order, in a thread pool
    when there are many; once past `deadline` (time.monotonic) a last None says the rest was not
    read (chunks read meanwhile are dropped: nothing of them was stored)."""
    base = root.rstrip("/") + "/"
    fulls = [base + rel for rel in rels]
    runs = _runs(sizes, deadline is not None)
    if len(fulls) < _POOL_MIN or workers == 1:
        for start, end in runs:
            if deadline is not None and time.monotonic() > deadline:
                yield None
                return
            yield _read_chunk(start, fulls[start:end], limit)
        return
    from collections import deque
    from concurrent.futures import Future, ThreadPoolExecutor

    n = workers or max(2, min(8, os.cpu_count() or 2))
    window = n + 2  # runs in flight: bounded look-ahead, memory stays flat on huge trees
    with ThreadPoolExecutor(n, thread_name_prefix="rewind-ls-read") as pool:
        pending: deque[Future[ReadChunk]] = deque()
        for start, end in runs:
            if deadline is not None and time.monotonic() > deadline:
                break
            pending.append(pool.submit(_read_chunk, start, fulls[start:end], limit))
            if len(pending) >= window:
                yield pending.popleft().result()
        else:
            while pending:
                yield pending.popleft().result()
            return
        for fut in pending:
            fut.cancel()  # past the deadline: what is not started is left to a later scan
        yield None
