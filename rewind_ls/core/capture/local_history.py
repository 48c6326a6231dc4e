"""Local history: the person's own versions of a file, recorded as they happen, not only at the
next turn boundary.

Between an agent's turns no hook runs: an edit by hand, `git checkout -- a.txt`, an agent's own
restore (Claude Code's `/rewind`, Gemini's `/restore`) or an `rm` is found by the scan at the next
boundary, which sees only what the disk holds then; whatever was there in between is lost. While
the workspace watcher runs (`core.capture.watcher`), it hands each path it saw change to a
`Settling` list, and once the path has been still for `debounce_seconds()` (about a second) its
content goes into the store as a version of the `external` session, through the same comparison
and compare-and-swap commit as a scan (`scan.ScanRun`, `scan_commit`): the ignore rules, the size
cap and the store's dedup apply, a deletion is recorded with the content that was deleted (the
change's `before`), and a path whose `known` row already matches (an editor save the language
server recorded, a restore) costs an `lstat`. A burst of writes costs one version per quiet point;
a path that never stays still gets one at least every `MAX_WAIT` seconds.

Nothing changes inside a turn: while any agent session has a turn open, what the watcher saw is
left to that turn's boundary scan (the turn owns its changes), and nothing is recorded while a
restore is in flight (a pending restore point: its files are the restore's, and `known` moves
when it finishes); those paths are tried again later. Both are checked again inside the
recording transaction, so a turn or a restore that starts meanwhile rolls the recording back.

What is pending when the watcher stops (idle, SIGTERM, an epoch ending) is recorded at once. A
watcher killed with paths pending loses nothing either: their `known` rows were not moved, so the
next scan (a new watcher's epoch means a full walk) finds and records them.

Settings: `REWIND_LS_HISTORY=0` turns versions off (the watcher then only journals paths);
`REWIND_LS_HISTORY_DEBOUNCE` the quiet time in seconds (default 1.0).
"""

from __future__ import annotations

import os
import threading
import time

from rewind_ls.core.capture.baseline_spawn import baseline_complete
from rewind_ls.core.capture.folder_cache import skip_dirs
from rewind_ls.core.capture.ignore import IgnoreRules
from rewind_ls.core.capture.scan import ScanRun, fill_old_versions
from rewind_ls.core.capture.scan_settings import extra_ignore_patterns
from rewind_ls.core.capture.walk import relative_skips
from rewind_ls.core.capture.watched_scan import Watched
from rewind_ls.core.model import (
    ABSENT_VERSION,
    EXTERNAL_SESSION,
    REWIND_SESSION,
    SessionKind,
    TurnState,
    Version,
)
from rewind_ls.core.store import Store

# The change `source` of a version the watcher recorded ("your edit" in `log`).
WATCH_SOURCE = "watch"
# The prompt of the external turns the watcher opens (one per quiet point).
WATCH_PROMPT = "your edits between turns (local history)"
DEBOUNCE_SECONDS = 1.0
# A path written without pause (a log, a watch-mode build) still gets a version this often.
MAX_WAIT = 10.0


def enabled() -> bool:
    """`REWIND_LS_HISTORY=0` turns the watcher's versions off."""
    return os.environ.get("REWIND_LS_HISTORY", "1") != "0"


def debounce_seconds() -> float:
    """How long a path must be still before its content is a version (`REWIND_LS_HISTORY_DEBOUNCE`)."""
    raw = os.environ.get("REWIND_LS_HISTORY_DEBOUNCE", "")
    try:
        return max(0.05, float(raw)) if raw else DEBOUNCE_SECONDS
    except ValueError:
        return DEBOUNCE_SECONDS


class Settling:
    """Paths that changed and are not recorded yet: (kind "P" | "D", first event, last event).
    The watcher's reader thread notes; its main loop takes what is due."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.paths: dict[str, tuple[str, float, float]] = {}

    def note(self, kind: str, rel: str, now: float | None = None) -> None:
        at = time.monotonic() if now is None else now
        with self.lock:
            have = self.paths.get(rel)
            if have is None:
                self.paths[rel] = (kind, at, at)
            else:
                # A folder ("D": everything below it) stays a folder.
                self.paths[rel] = ("D" if "D" in (kind, have[0]) else kind, have[1], at)

    def due(self, quiet: float, now: float | None = None) -> list[tuple[str, str]]:
        """Take the paths still for `quiet` seconds, or waiting longer than `MAX_WAIT`."""
        at = time.monotonic() if now is None else now
        with self.lock:
            ready = [
                rel
                for rel, (_, first, last) in self.paths.items()
                if at - last >= quiet or at - first >= MAX_WAIT
            ]
            return [(self.paths.pop(rel)[0], rel) for rel in ready]

    def take_all(self) -> list[tuple[str, str]]:
        with self.lock:
            out = [(kind, rel) for rel, (kind, _, _) in self.paths.items()]
            self.paths.clear()
            return out

    def put_back(self, entries: list[tuple[str, str]]) -> None:
        """Entries that could not be recorded now (a restore in flight): due again later."""
        now = time.monotonic()
        for kind, rel in entries:
            self.note(kind, rel, now)

    def __len__(self) -> int:
        return len(self.paths)


class _NotNow(Exception):
    """Raised inside the recording transaction to roll it back: `later` True when the paths
    should be tried again (a restore in flight), False when they are a turn's."""

    def __init__(self, later: bool) -> None:
        super().__init__("later" if later else "a turn is open")
        self.later = later


def _agent_turn_open(store: Store) -> bool:
    return any(s.kind == SessionKind.AGENT and s.open_turn for s in store.sessions())


def _restore_in_flight(store: Store) -> bool:
    return bool(store.turns_in_state(REWIND_SESSION, TurnState.PENDING))


def record_versions(store: Store, entries: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """Record the current content of `entries` ((kind, rel) as the watcher noted them) as
    versions of the external session, when no agent turn is open and no restore is in flight.
    Returns the entries to try again later (a restore in flight), else []."""
    if not entries or not baseline_complete(store) or _agent_turn_open(store):
        return []  # no baseline yet: the scans take it; a turn open: its changes
    if _restore_in_flight(store):
        return entries

    def attribute(found: list[tuple[str, Version, Version]]) -> str:
        # Inside the commit's transaction: a turn or a restore started since the check above
        # rolls this back (the known rows stay, so nothing is lost).
        if _restore_in_flight(store):
            raise _NotNow(later=True)
        if _agent_turn_open(store):
            raise _NotNow(later=False)
        store.ensure_session(EXTERNAL_SESSION, SessionKind.EXTERNAL, "workspace")
        turn = store.begin_turn(EXTERNAL_SESSION, WATCH_PROMPT)
        store.record_changes(turn, found, WATCH_SOURCE)
        store.end_turn(turn)
        return turn

    patterns = extra_ignore_patterns()
    run = ScanRun(store, attribute, None, None, None)
    watched = Watched(None, entries, 0, patterns, since=store.seq_now())
    rules = IgnoreRules.load(store.root, patterns)
    skips = relative_skips(store.root, skip_dirs(store))
    known, gone = watched.known(store)
    changed, new = run.compare(watched.files(rules, skips, run.links), known, gone)
    if changed:
        fill_old_versions(store, changed)
    for c in new:
        c.old = ABSENT_VERSION  # the watcher saw it appear: created
    try:
        run.record(changed + new, [])
    except _NotNow as exc:
        return entries if exc.later else []
    return []


def status(store_path: str | None) -> str:
    """What `doctor` says of local history here: on (and whether the watcher runs now), or why
    versions come only at turn boundaries."""
    from rewind_ls.core.fs.disk_sync import inotify_available

    boundaries = "versions of your edits are recorded only at agent turn boundaries"
    if not inotify_available():
        # watchdog's FSEvents (macOS) or polling observers are not used: the watched scan's
        # exactness rules (epochs, overflow, sync cookies) are built on inotify's ordered queue,
        # and a polling observer would stat every file of the workspace every second.
        return f"off: no inotify on this platform (macOS, REWIND_LS_PORTABLE=1); {boundaries}"
    if os.environ.get("REWIND_LS_WATCH", "1") == "0":
        return f"off (REWIND_LS_WATCH=0): {boundaries}"
    if not enabled():
        return f"off (REWIND_LS_HISTORY=0): {boundaries}"
    from rewind_ls.core.capture import watch_journal

    running = store_path is not None and watch_journal.alive(watch_journal.watch_dir(store_path))
    now = (
        "the watcher runs now"
        if running
        else "the watcher is not running now (the next hook or the language server starts it)"
    )
    return (
        f"on: while the watcher runs, each file still for {debounce_seconds():g} s between turns "
        f"is kept as a version (rewind-ls log PATH); {now}"
    )
