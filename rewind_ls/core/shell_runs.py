"""Shell commands running in other sessions, so a scan leaves their effects to them.

A session's `PreToolUse` for a shell command registers the run (a `meta` row, start time in ns);
its `PostToolUse` scan attributes what the command did and forgets the run. Meanwhile another
session's scan defers files changed after the oldest such start (see `core.scan`). A run whose
`PostToolUse` never came (the agent was killed) stops counting after `SHELL_RUN_EXPIRY_NS`.
"""

from __future__ import annotations

import time

TYPE_CHECKING = False
if TYPE_CHECKING:
    from rewind_ls.core.store import Store

SHELL_RUN = "scan.shell-run:"  # meta key prefix: "<prefix><session> <tool_use_id>" -> start ns
SHELL_RUN_EXPIRY_NS = 15 * 60 * 1_000_000_000


def shell_started(store: Store, session_id: str, tool_use_id: str) -> None:
    """A session's shell command is about to run: other sessions' scans leave its effects to it."""
    store.set_meta(f"{SHELL_RUN}{session_id} {tool_use_id}", str(time.time_ns()))


def shell_finished(store: Store, session_id: str, tool_use_id: str | None = None) -> None:
    """Forget one shell run of the session (all of them, at a turn boundary), and expired ones."""
    now = time.time_ns()
    with store.transaction():
        if tool_use_id is None:
            store.delete_meta_prefix(f"{SHELL_RUN}{session_id} ")
        else:
            store.delete_meta(f"{SHELL_RUN}{session_id} {tool_use_id}")
        store.delete_meta_prefix(SHELL_RUN, value_below=now - SHELL_RUN_EXPIRY_NS)


def in_flight_shell_start(store: Store, session_id: str | None, now_ns: int) -> int | None:
    """When the oldest shell command of another session still running began (None: none is)."""
    oldest: int | None = None
    for key, value in store.meta_with_prefix(SHELL_RUN):
        owner = key[len(SHELL_RUN) :].split(" ", 1)[0]
        try:
            started = int(value)
        except ValueError:
            continue
        if owner == session_id or now_ns - started > SHELL_RUN_EXPIRY_NS:
            continue
        oldest = started if oldest is None else min(oldest, started)
    return oldest
