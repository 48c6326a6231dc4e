"""The files a workspace watcher and a scan share, and the scan's side of them (stdlib only: the
hook imports this; the watcher itself, `core.capture.watcher`, runs in its own process).

In `<store>/watch/`:

- `lock`: held (`flock`, exclusive) by the one running watcher for its whole life; holds its pid.
  A scan tests it without waiting: free means no watcher runs.
- `journal`: what the watcher saw, one line each, appended, UTF-8 (surrogate-escaped names;
  backslash and newline escaped). A new epoch (a new inotify instance: a new watcher, or one that
  overflowed) replaces the file, so its first line names the epoch:
    `E <epoch> <pid>`   the epoch starts
    `R`                 every folder is watched: from here on nothing changes unseen
    `P <rel>`           something happened to this path (file or folder)
    `D <rel>`           a folder appeared, vanished, moved or changed mode: all below it
    `S <token>`         a scan's sync request was reached: every event before it is above it
    `X <reason>`        the epoch ended uncertain (queue overflow, watch limit, ...)
- `sync/`: a scan creates `sync/<token>` and waits for `S <token>` in the journal. inotify keeps
  one queue per instance in event order, so every change made before the request (a shell command
  that finished before the hook ran) is in the journal above that line (watchman's "cookies").
- `status`: why the last watcher stopped, and when (a watch limit holds new starts off a while).

Entries are written only when a sync request arrives (deduplicated by path), so the journal
grows with the paths changed per turn, not with the events.
"""

from __future__ import annotations

import os
import time

from rewind_ls.core.fs import detached

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator

WATCH_DIR = "watch"
JOURNAL = "journal"
LOCK = "lock"
SYNC_DIR = "sync"
STATUS = "status"
STARTING = "starting"  # a watcher was just started: no second one until it holds the lock
_STARTING_STALE = 10.0
# How long a scan waits for the watcher to answer its sync request before walking instead.
SYNC_TIMEOUT = 0.5
# After the watcher stopped on a watch limit, no new one is started for this long.
LIMIT_BACKOFF_SECONDS = 600.0


def enabled() -> bool:
    """`REWIND_LS_WATCH=0` turns the watcher off (every scan walks the workspace); so do a platform
    without inotify (macOS, `REWIND_LS_PORTABLE=1`) and a Linux Python without watchdog."""
    from rewind_ls.core.fs.disk_sync import inotify_available

    return os.environ.get("REWIND_LS_WATCH", "1") != "0" and inotify_available()


def idle_seconds() -> float:
    """The watcher stops after this long with no event and no scan (`REWIND_LS_WATCH_IDLE`, s)."""
    raw = os.environ.get("REWIND_LS_WATCH_IDLE", "")
    try:
        return max(1.0, float(raw)) if raw else 600.0
    except ValueError:
        return 600.0


def watch_dir(store_path: str) -> str:
    return os.path.join(store_path, WATCH_DIR)


def escape(rel: str) -> str:
    return rel.replace("\\", "\\\\").replace("\n", "\\n")


def unescape(text: str) -> str:
    if "\\" not in text:
        return text
    out: list[str] = []
    i = 0
    while i < len(text):
        c = text[i]
        if c == "\\" and i + 1 < len(text):
            nxt = text[i + 1]
            out.append("\n" if nxt == "n" else nxt)
            i += 2
        else:
            out.append(c)
            i += 1
    return "".join(out)


def alive(wdir: str) -> bool:
    """Whether a watcher holds the lock."""
    return detached.lock_held(os.path.join(wdir, LOCK))


def watcher_pid(wdir: str) -> int | None:
    """The pid the running watcher wrote into its lock file (tests and the benchmark stop it)."""
    return detached.lock_pid(os.path.join(wdir, LOCK))


def _held_off(wdir: str) -> bool:
    try:
        with open(os.path.join(wdir, STATUS), encoding="utf-8") as f:
            reason, _, when = f.read().partition("\n")
        return reason.startswith("limit") and time.time() - float(when) < LIMIT_BACKOFF_SECONDS
    except (OSError, ValueError):
        return False


def ensure_running(root: str, store_path: str) -> None:
    """Start the workspace's watcher if none runs (`fs.detached`)."""
    wdir = watch_dir(store_path)
    if alive(wdir) or _held_off(wdir):
        return
    # Its sync folder made owner-only with the marker (a watcher needs it at once).
    if not detached.claim_start(
        os.path.join(wdir, STARTING), os.path.join(wdir, SYNC_DIR), _STARTING_STALE
    ):
        return
    try:
        detached.spawn("rewind_ls.core.capture.watcher", root, store_path)
    except OSError:
        return  # no watcher: every scan walks, as without one


class Synced:
    """A sync request the watcher answered: its epoch and the journal offset after the answer."""

    __slots__ = ("epoch", "offset", "path")

    def __init__(self, epoch: str, offset: int, path: str) -> None:
        self.epoch = epoch
        self.offset = offset
        self.path = path

    def entries(self, start: int) -> list[tuple[str, str]] | None:
        """(kind "P" | "D", rel) journaled between `start` and the answer, deduplicated; None when
        the journal is not this epoch's any more or says the epoch ended uncertain."""
        try:
            with open(self.path, "rb") as f:
                head = f.readline()
                if _epoch_of(head) != self.epoch or start < len(head):
                    return None
                f.seek(start)
                data = f.read(self.offset - start)
        except OSError:
            return None
        if len(data) != self.offset - start or (data and not data.endswith(b"\n")):
            return None
        found: dict[str, str] = {}
        for kind, rel in _lines(data):
            if kind == "X":
                return None
            if kind in "PD" and (kind == "D" or rel not in found):
                found[rel] = kind
        return [(kind, rel) for rel, kind in found.items()]


def _epoch_of(head: bytes) -> str | None:
    parts = head.split()
    return parts[1].decode("ascii", "replace") if len(parts) >= 2 and parts[0] == b"E" else None


def _lines(data: bytes) -> Iterator[tuple[str, str]]:
    for raw in data.split(b"\n"):
        if len(raw) >= 1:
            text = raw.decode("utf-8", "surrogateescape")
            yield text[0], unescape(text[2:])


def sync_timeout() -> float:
    """`REWIND_LS_WATCH_SYNC`: seconds a scan waits for the watcher's answer (default 0.5): it
    normally comes in a millisecond; a watcher held back longer than this costs a walk, not a wait."""
    try:
        return float(os.environ.get("REWIND_LS_WATCH_SYNC", "") or SYNC_TIMEOUT)
    except ValueError:
        return SYNC_TIMEOUT


def sync(store_path: str, timeout: float | None = None) -> Synced | None:
    """Ask the running watcher to write down everything it saw so far; None when no watcher is
    ready (not running, still installing its watches, ended, or not answering in `timeout`)."""
    wdir = watch_dir(store_path)
    path = os.path.join(wdir, JOURNAL)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        head = os.pread(fd, 256, 0)
        first, _, rest = head.partition(b"\n")
        epoch = _epoch_of(first)
        # The journal must be the running watcher's (a new one holds the lock a moment before
        # it replaces the journal of the one before).
        owner = first.split()[2:3]
        if epoch is None or not rest.startswith(b"R\n") or not alive(wdir):
            return None
        if owner != [str(watcher_pid(wdir)).encode()]:
            return None
        return _request(fd, path, wdir, epoch, sync_timeout() if timeout is None else timeout)
    finally:
        os.close(fd)


def _replaced(fd: int, path: str) -> bool:
    try:
        return os.stat(path).st_ino != os.fstat(fd).st_ino
    except OSError:
        return True


def _request(fd: int, path: str, wdir: str, epoch: str, timeout: float) -> Synced | None:
    token = f"{os.getpid()}-{time.time_ns()}-{os.urandom(4).hex()}"
    start = os.fstat(fd).st_size
    want = f"\nS {token}\n".encode()
    request = os.path.join(wdir, SYNC_DIR, token)
    try:
        os.close(os.open(request, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600))
    except OSError:
        return None
    deadline = time.monotonic() + timeout
    pause = 0.0002
    try:
        # The line before our answer ends with "\n" too: read from one byte earlier.
        at = max(0, start - 1)
        while True:
            data = os.pread(fd, 1 << 20, at)
            hit = data.find(want)
            if hit >= 0:
                return Synced(epoch, at + hit + len(want), path)
            if b"\nX " in data or data.startswith(b"X "):
                return None  # the epoch ended before answering
            if time.monotonic() > deadline or not alive(wdir) or _replaced(fd, path):
                return None
            # Keep the tail that could hold the start of the answer; skip what cannot.
            cut = data.rfind(b"\n")
            if cut > 0:
                at += cut
            time.sleep(pause)
            pause = min(pause * 2, 0.01)
    finally:
        try:
            os.unlink(request)
        except OSError:
            pass
