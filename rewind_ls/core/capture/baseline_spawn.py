"""Starting the detached baseline worker (`core.capture.baseline_worker`) and reading its progress.

A hook's scan spends at most `REWIND_LS_BASELINE_SECONDS` (default 0.5 s) on an unfinished
baseline, because the agent waits on every hook. What it could not take in that time is taken by
one detached worker per workspace: an exclusive `flock` on `<store>/baseline/lock` makes it the
only one, and the same lock tells a scan whether it is alive. It writes `done total` into
`<store>/baseline/progress` after every batch it commits, for `rewind-ls turns` and the editors.

Kept apart from the worker so the hook path imports only this small module (no cycle with `scan`).

The first checkpoint off the hooks' path: a hook's scan spends at most its budget on an unfinished
baseline, then `baseline_spawn` (stdlib, hook path) starts one detached worker per workspace
(`python -m rewind_ls.core.capture.baseline_worker` with `PYTHONSAFEPATH=1`, `posix_spawn`, an
`flock` on `<store>/baseline/lock`, progress in `<store>/baseline/progress`: `progress()`, shown by
`rewind-ls turns`); the worker runs `scan(adopt_only=True)` (only files never seen, one transaction
per run its reading threads packed: ~1,100 files, one pack, with their rows); a hook's walk of an
unfinished baseline stops at its budget (`folder_cache.walk_files(deadline)`), and a hook that finds
the baseline completed meanwhile starts no worker; while it runs a hook's scan does not walk but
`lstat`s known files by name, so a change to one is still that turn's: with the watcher up, only
what it journaled since the last scan's mark plus the rows written since (the worker's adoptions;
`watched_scan.begin(lean=True)`, a mark flagged `lean` that only lean scans use), else every known
file. A shell command's `PreToolUse` waits up to 10 s for it (`wait_for_baseline`, called by
`hook_steps.wait_for_first_checkpoint`): a file the command changes before the worker read it would
have nothing to go back to.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable

from rewind_ls.core.fs import detached
from rewind_ls.core.store import Store

META_BASELINE = "scan.baseline"  # store meta: "complete" once every non-ignored file is stored
DIR = "baseline"
LOCK = "lock"
PROGRESS = "progress"
STARTING = "starting"
# A start claimed this long ago whose worker never took the lock (killed before it got going).
_STARTING_STALE = 30.0


def baseline_complete(store: Store) -> bool:
    return store.meta(META_BASELINE) == "complete"


def worker_dir(store_path: str) -> str:
    return os.path.join(store_path, DIR)


def alive(store_path: str) -> bool:
    """Whether a worker holds the lock."""
    return detached.lock_held(os.path.join(worker_dir(store_path), LOCK))


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
    return detached.lock_pid(os.path.join(worker_dir(store_path), LOCK))


def ensure_running(root: str, store_path: str) -> bool:
    """Start the workspace's baseline worker unless one runs or is starting (`fs.detached`). True
    when one runs or was started."""
    if alive(store_path):
        return True
    wdir = worker_dir(store_path)
    marker = os.path.join(wdir, STARTING)
    if not detached.claim_start(marker, wdir, _STARTING_STALE):
        return True  # another scan is starting it
    try:
        detached.spawn("rewind_ls.core.capture.baseline_worker", root, store_path)
    except OSError:
        detached.unclaim(marker)
        return False  # the next boundary's scan goes on with the baseline itself
    return True
