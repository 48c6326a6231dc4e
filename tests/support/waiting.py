"""Polling for a condition in tests that drive real processes (agent binaries, background jobs,
editors): generous on a loaded 2-core machine, and never a timing assert."""

from __future__ import annotations

import time
from collections.abc import Callable


def wait_for(
    check: Callable[[], object], what: str, timeout: float = 90.0, step: float = 0.1
) -> None:
    """Return once `check()` is true (asked every `step` seconds); fail naming `what` after
    `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(step)
    raise AssertionError(f"timed out waiting for {what}")
