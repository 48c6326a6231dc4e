"""The crash-safety tests' hook: `REWIND_LS_FAULT=<stage>:<n>` makes the process stop at the n-th
time it reaches `stage` (the store's `before-commit` / `after-commit`, the disk applier's
`after-swap`, `tmp-half-written` and `after-discard`, a recovery's `undo-aside` and
`undo-put-back`, the server's `before-server-writes`, the race pauses of `restore.swap`). Never
set in normal use; read once, at import."""

from __future__ import annotations

import os

FAULT = os.environ.get("REWIND_LS_FAULT", "")


def reread() -> None:
    """Read the environment again: a hook server's child takes its client's environment after
    the server imported this module."""
    global FAULT
    FAULT = os.environ.get("REWIND_LS_FAULT", "")


def armed(stage: str, index: int) -> bool:
    """Whether the fault named by the environment is this one."""
    return bool(FAULT) and f"{stage}:{index}" == FAULT


def fault(stage: str, index: int) -> None:
    """Kill the process at once (no cleanup, no flush: as a crash would) when armed here."""
    if armed(stage, index):
        os._exit(137)
