"""The workspace watcher: a detached process per workspace that writes down which paths changed,
so a scan at a turn boundary `lstat`s those instead of walking the whole tree.

Started by a scan (a hook's or the language server's) when none runs (`watch_journal
.ensure_running`); one per workspace (an exclusive `flock` on `<store>/watch/lock`); it stops
after `REWIND_LS_WATCH_IDLE` seconds (default 600) with no event and no scan. The files it
shares with scans, and their format, are described in `core.capture.watch_journal`.

inotify comes from watchdog's `InotifyFD` (one inotify instance with a reader thread and
per-watch callbacks). watchdog rather than watchfiles because its callbacks surface what a watched
scan must not miss: `IN_Q_OVERFLOW` reaches `on_queue_overflow`, and a watch that cannot be added
raises `OSError(ENOSPC, "inotify watch limit reached")`; watchfiles' Rust core turns an overflow
into a rescan flag its Python API drops. Every folder of the workspace is watched except inside
`.git` (only `info/`, where `exclude` lives), below another checkout (a folder with its own
`.git`: only that folder itself) and the store; ignored folders are watched too, so a change of
ignore rules never leaves a folder unwatched.

An epoch is one inotify instance. Anything the watcher cannot follow exactly ends it with an `X`
line: the queue overflowed, a watch could not be added (the limit), the workspace itself moved,
too many paths pending. The next epoch starts at once (a watch limit stops the watcher instead);
scans compare epochs, so any gap means a full walk.

Local history (`core.capture.local_history`): every path noted is also handed to a `Settling`
list, and the main loop records the paths that have been still for about a second as versions of
the person's (the `external` session) in the store; what is pending when the watcher stops (idle,
SIGTERM/SIGINT/SIGHUP, an epoch's end) is recorded before it goes.
"""

from __future__ import annotations

import errno
import os
import signal
import sys
import threading
import time

from watchdog.observers.inotify_c import (
    CallbackId,
    InotifyConstants,
    InotifyEvent,
    InotifyFD,
    Mask,
    WatchDescriptor,
)

from rewind_ls.core.capture import local_history
from rewind_ls.core.capture import watch_journal as wj
from rewind_ls.core.fs import detached
from rewind_ls.core.fs.config import ensure_private_dir
from rewind_ls.core.store import Store

_C = InotifyConstants
_TREE_MASK = Mask(
    _C.IN_MODIFY
    | _C.IN_ATTRIB
    | _C.IN_CLOSE_WRITE
    | _C.IN_MOVED_FROM
    | _C.IN_MOVED_TO
    | _C.IN_CREATE
    | _C.IN_DELETE
    | _C.IN_DELETE_SELF
    | _C.IN_MOVE_SELF
    | _C.IN_DONT_FOLLOW
    | _C.IN_ONLYDIR
)
_ID = CallbackId(1)
# More distinct paths than this between two scans: not worth listing, the scan walks instead.
MAX_PENDING = 100_000
_TREE, _GITDIR, _GITINFO, _SYNC = range(4)


class _Ended(Exception):
    """The epoch cannot go on exactly; the message says why."""


class Epoch:
    """One inotify instance over the whole workspace, and the journal it writes."""

    def __init__(
        self, root: str, store_path: str, settling: local_history.Settling | None = None
    ) -> None:
        self.root = root.rstrip("/") or "/"
        self.settling = settling  # local history: the paths to record once still
        self.wdir = wj.watch_dir(store_path)
        self.skip = {os.path.realpath(store_path), os.path.realpath(self.wdir)}
        self.fd = InotifyFD()
        self.lock = threading.Lock()
        self.where: dict[int, tuple[int, str]] = {}  # wd -> (kind, root-relative folder)
        self.pending: dict[str, str] = {}
        self.ended: str | None = None
        self.last_activity = time.monotonic()
        self.epoch = os.urandom(8).hex()
        self.journal = -1

    # --- life ------------------------------------------------------------------------------

    def start(self) -> None:
        """Open a new journal, watch every folder, then say ready and start reading events."""
        path = os.path.join(self.wdir, wj.JOURNAL)
        tmp = f"{path}.{os.getpid()}.tmp"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_APPEND | os.O_CLOEXEC, 0o600)
        os.write(fd, f"E {self.epoch} {os.getpid()}\n".encode())
        os.replace(tmp, path)
        self.journal = fd
        sync_dir = os.path.join(self.wdir, wj.SYNC_DIR)
        for name in os.listdir(sync_dir):  # requests of an earlier epoch: never answered
            try:
                os.unlink(os.path.join(sync_dir, name))
            except OSError:
                pass
        try:
            self._watch_tree("")
            self._add(sync_dir, _SYNC, "")
        except _Ended as exc:
            self.end(str(exc))
            return
        os.write(fd, b"R\n")
        self.fd.start()

    def end(self, reason: str) -> None:
        with self.lock:
            if self.ended is None:
                self.ended = reason
                os.write(self.journal, f"X {wj.escape(reason)}\n".encode())

    def close(self) -> None:
        self.fd.stop()
        if self.journal >= 0:
            os.close(self.journal)
            self.journal = -1

    # --- watches ---------------------------------------------------------------------------

    def _add(self, full: str, kind: int, rel: str) -> bool:
        try:
            wd = self.fd.add_callback(os.fsencode(full), _TREE_MASK, self, _ID)
        except OSError as exc:
            if exc.errno in (errno.ENOENT, errno.ENOTDIR):
                return False  # gone already: its parent's event says so
            raise _Ended(f"{full}: {exc.strerror or exc}") from exc
        if wd < 0:  # watchdog passes EACCES over: a folder we cannot watch is not covered
            raise _Ended(f"{full}: permission denied")
        self.where[wd] = (kind, rel)
        return True

    def _watch_tree(self, top: str) -> None:
        """Watch `top` (root-relative, "" for the root) and every folder below it; the watch goes
        on before the listing, so an entry created meanwhile is either listed or reported."""
        stack = [top]
        while stack:
            rel = stack.pop()
            full = os.path.join(self.root, rel) if rel else self.root
            if os.path.realpath(full) in self.skip:
                continue
            if not self._add(full, _TREE, rel):
                if rel == "":
                    # The workspace itself cannot be watched: nothing is covered.
                    raise _Ended(f"{full}: cannot be watched (gone, or not a folder)")
                continue
            base = rel + "/" if rel else ""
            try:
                with os.scandir(full) as it:
                    entries = list(it)
            except OSError:
                continue
            if rel and any(e.name == ".git" for e in entries):
                # Another checkout (its own .git): not this workspace's. Its own folder stays
                # watched, so its `.git` going away is seen (a scan then walks it).
                continue
            for e in entries:
                try:
                    is_dir = e.is_dir(follow_symlinks=False)
                except OSError:
                    continue
                if e.name == ".git":
                    self._watch_git(base)
                elif is_dir:
                    stack.append(base + e.name)

    def _watch_git(self, base: str) -> None:
        """A repository's `info/` (its `exclude` is an ignore file), or its git folder until
        `info/` appears."""
        from rewind_ls.core.capture.ignore import git_common_dir

        repo = os.path.join(self.root, base) if base else self.root
        gitdir = git_common_dir(repo)
        if gitdir is None:
            return
        if not self._add(os.path.join(gitdir, "info"), _GITINFO, base):
            self._add(gitdir, _GITDIR, base)

    def _unwatch_below(self, rel: str) -> None:
        """Drop the watches of a folder that moved out of its place (or away) and those below."""
        prefix = rel + "/"
        gone = [
            wd
            for wd, (kind, r) in self.where.items()
            if kind == _TREE and (r == rel or r.startswith(prefix))
        ]
        for wd in gone:
            del self.where[wd]
        self.fd.remove_callbacks([(WatchDescriptor(wd), _ID) for wd in gone])

    # --- callbacks (the reader thread) -----------------------------------------------------

    def on_queue_overflow(self) -> None:
        self.end("inotify queue overflowed (IN_Q_OVERFLOW): events were lost")

    def on_watch_deleted(self, wd: WatchDescriptor) -> None:
        self.where.pop(wd, None)

    def on_event(self, event: InotifyEvent) -> None:
        if self.ended is not None:
            return
        self.last_activity = time.monotonic()
        try:
            self._on_event(event)
        except _Ended as exc:
            self.end(str(exc))
        except Exception as exc:  # anything unexpected: uncertain, never silently wrong
            self.end(f"watcher error: {exc!r}")

    def _on_event(self, event: InotifyEvent) -> None:
        place = self.where.get(event.wd)
        if place is None:
            return
        kind, rel = place
        name = os.fsdecode(event.name)
        if kind == _SYNC:
            if event.is_create or event.is_moved_to:
                self._answer(name, os.path.join(self.wdir, wj.SYNC_DIR, name))
            return
        if kind == _GITDIR:
            if name == "info" and (event.is_create or event.is_moved_to):
                self._watch_git(rel)
                self._note("P", rel + ".git/info/exclude")
            return
        if kind == _GITINFO:
            if name:
                self._note("P", rel + ".git/info/" + name)
            return
        if not name:
            if rel == "" and (event.is_delete_self or event.is_move_self):
                raise _Ended("the workspace folder itself was moved or deleted")
            return
        path = rel + "/" + name if rel else name
        if name == ".git":
            if event.is_directory and (event.is_create or event.is_moved_to):
                self._watch_git(rel + "/" if rel else "")
            self._note("P", path)  # a folder becoming (or ceasing to be) a repository
        elif event.is_directory:
            if event.is_moved_from or event.is_delete:
                self._unwatch_below(path)
            elif event.is_create or event.is_moved_to:
                self._watch_tree(path)
            self._note("D", path)
        else:
            self._note("P", path)

    def _note(self, kind: str, path: str) -> None:
        if self.settling is not None and not (path == ".git" or path.startswith(".git/")):
            self.settling.note(kind, path)
        if self.pending.get(path) != "D":
            self.pending[path] = kind
        if len(self.pending) > MAX_PENDING:
            raise _Ended(f"more than {MAX_PENDING} paths changed between two scans")

    def _answer(self, token: str, request: str) -> None:
        """A scan's sync request: everything seen so far, then its answer, in one write."""
        lines = [f"{k} {wj.escape(p)}\n" for p, k in self.pending.items()]
        lines.append(f"S {token}\n")
        with self.lock:
            if self.ended is None:
                os.write(self.journal, "".join(lines).encode("utf-8", "surrogateescape"))
        self.pending.clear()
        try:
            os.unlink(request)
        except OSError:
            pass


def _status(wdir: str, reason: str) -> None:
    try:
        fd = os.open(
            os.path.join(wdir, wj.STATUS),
            os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC,
            0o600,
        )
        with open(fd, "w", encoding="utf-8") as f:
            f.write(f"{reason}\n{time.time()}")
    except OSError:
        pass


class _History:
    """The watcher's side of local history: the store opened on first need, the paths due
    recorded (`local_history.record_versions`), those a restore holds back put back."""

    def __init__(self, root: str, store_path: str) -> None:
        self.root = root
        self.store_path = store_path
        self.settling = local_history.Settling()
        self.quiet = local_history.debounce_seconds()
        self.store: Store | None = None
        self.retry_at = 0.0

    def _open(self) -> Store | None:
        if self.store is None:
            store = Store.open(self.root)
            if os.path.realpath(store.path) != os.path.realpath(self.store_path):
                store.close()  # started for another home: not ours to record into
                return None
            self.store = store
        return self.store

    def record(self, entries: list[tuple[str, str]]) -> None:
        if not entries:
            return
        try:
            store = self._open()
            later = [] if store is None else local_history.record_versions(store, entries)
        except Exception as exc:  # a busy or damaged store: the next scan still finds them
            print(f"rewind-ls watcher: recording versions failed: {exc!r}", file=sys.stderr)
            later = entries
            self.retry_at = time.monotonic() + 1.0
        if later:
            self.settling.put_back(later)

    def tick(self) -> None:
        if time.monotonic() >= self.retry_at and len(self.settling):
            self.record(self.settling.due(self.quiet))

    def flush(self) -> None:
        """Everything pending, still or not (the watcher stops)."""
        self.retry_at = 0.0
        for _ in range(3):  # a restore in flight holds them back a moment
            entries = self.settling.take_all()
            if not entries:
                break
            self.record(entries)
            if len(self.settling):
                time.sleep(0.2)

    def close(self) -> None:
        if self.store is not None:
            self.store.close()
            self.store = None


_stop: list[int] = []


def _on_signal(signum: int, frame: object) -> None:
    _stop.append(signum)  # the main loop ends the epoch and records what is pending


def run(root: str, store_path: str) -> int:
    """Watch until idle or told to stop; a new epoch after each uncertain end, except a watch
    limit. Versions pending at the end are recorded before returning."""
    wdir = wj.watch_dir(store_path)
    ensure_private_dir(os.path.join(wdir, wj.SYNC_DIR))
    lock = detached.take_lock(os.path.join(wdir, wj.LOCK))
    try:
        os.unlink(os.path.join(wdir, wj.STARTING))
    except OSError:
        pass
    if lock is None:
        return 0  # another watcher runs
    for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(signum, _on_signal)
    history = _History(root, store_path) if local_history.enabled() else None
    idle = wj.idle_seconds()
    last_activity = time.monotonic()
    try:
        while True:
            epoch = Epoch(root, store_path, history.settling if history is not None else None)
            epoch.last_activity = last_activity
            epoch.start()
            while epoch.ended is None:
                time.sleep(0.2)
                if history is not None:
                    history.tick()
                if _stop:
                    epoch.end(f"stopped (signal {_stop[0]})")
                elif time.monotonic() - epoch.last_activity > idle:
                    epoch.end("idle")
            last_activity = epoch.last_activity
            epoch.close()
            if history is not None:
                history.flush()
            reason = epoch.ended
            if _stop or reason == "idle" or "limit" in reason or not os.path.isdir(root):
                _status(wdir, "limit" if "limit" in reason else reason)
                return 0
            time.sleep(0.05)
    finally:
        if history is not None:
            history.flush()
            history.close()
        os.close(lock)


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: python -m rewind_ls.core.capture.watcher ROOT STORE_PATH", file=sys.stderr)
        return 2
    # The real path: a watch on a link to the workspace would watch the link, not the folder.
    return run(os.path.realpath(argv[0]), os.path.abspath(argv[1]))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
