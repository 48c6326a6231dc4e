"""The real watcher process in tests: its folder, whether it is ready, starting it."""

from __future__ import annotations

from pathlib import Path

from rewind_ls.core.capture import watch_journal
from rewind_ls.core.store import Store
from tests.support.waiting import wait_for


def watch_dir(store: Store) -> str:
    return watch_journal.watch_dir(store.path)


def watcher_ready(store: Store) -> bool:
    """The running watcher's journal (its pid) says it is ready (R) and has not ended (a new
    epoch replaces it)."""
    try:
        head = Path(watch_dir(store), watch_journal.JOURNAL).read_bytes()
    except OSError:
        return False
    pid = watch_journal.watcher_pid(watch_dir(store))
    first, _, rest = head.partition(b"\n")
    return (
        first.startswith(b"E ")
        and first.endswith(f" {pid}".encode())
        and rest.startswith(b"R\n")
        and b"\nX " not in head
        and watch_journal.alive(watch_dir(store))
    )


def start_watcher(store: Store) -> None:
    watch_journal.ensure_running(store.root, store.path)
    wait_for(lambda: watcher_ready(store), "the watcher to be ready", step=0.02)
