"""The workspace scan's settings, read from the environment (the only place they are read).

`REWIND_LS_IGNORE`            extra ignore patterns, comma-separated, gitignore syntax
                              (e.g. `*.tmp,/data/,!keep.tmp`), on top of `.rewindignore`
`REWIND_LS_BASELINE_SECONDS`  time budget of a baseline taken by a hook (0 = no limit). Unset: 0.5 s,
                              and a detached worker takes the rest (`core.capture.baseline_worker`);
                              set: the hooks take the rest, at the next boundaries, as before
`REWIND_LS_SCAN`              `0` turns workspace scans off (edit tools are still recorded)
`REWIND_LS_SCAN_CACHE`        `0` lists every folder at every scan (no folder cache)
"""

from __future__ import annotations

import os

# The hook's baseline budget when REWIND_LS_BASELINE_SECONDS is unset or unreadable: the agent
# waits on every hook (the "no hook over 1 s"), and the worker takes the rest.
_DEFAULT_HOOK_BUDGET = 0.5
# How long a hook about to run a shell command waits for an unfinished first checkpoint (the
# worker's), so the command cannot change a file whose first content is not yet recorded. The
# hooks' own baseline budget before the worker existed (a session's first hooks waited as long).
_SHELL_WAIT = 10.0


def extra_ignore_patterns() -> list[str]:
    raw = os.environ.get("REWIND_LS_IGNORE", "")
    return [p.strip() for p in raw.split(",") if p.strip()]


def scans_enabled() -> bool:
    return os.environ.get("REWIND_LS_SCAN", "1") != "0"


def folder_cache_enabled() -> bool:
    return os.environ.get("REWIND_LS_SCAN_CACHE", "1") != "0"


def hook_baseline_budget() -> float | None:
    """Seconds a hook's scan may spend adding files to an unfinished baseline (None: no limit)."""
    raw = os.environ.get("REWIND_LS_BASELINE_SECONDS")
    try:
        value = float(raw) if raw else _DEFAULT_HOOK_BUDGET
    except ValueError:
        value = _DEFAULT_HOOK_BUDGET
    return None if value <= 0 else value


def shell_baseline_wait() -> float:
    """Seconds a hook about to run a shell command waits for the worker's first checkpoint (0
    when REWIND_LS_BASELINE_SECONDS is set: then the hooks take the baseline themselves)."""
    return _SHELL_WAIT if baseline_worker() else 0.0


def baseline_worker() -> bool:
    """Whether a hook leaves what its budget could not take to the detached baseline worker: yes,
    unless REWIND_LS_BASELINE_SECONDS is set (then the hooks go on with it, budget by budget)."""
    return not os.environ.get("REWIND_LS_BASELINE_SECONDS")
