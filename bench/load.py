"""The machine under load for the benchmark's second rows: one busy process per core.

Issue #29 asks for each figure again "with the machine under load (another process busy on every
core)": that is where a watcher falls behind its sync and a hook waits for a core. The busy
processes are plain Python loops started here and ended here (by their own pids)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TypeVar

T = TypeVar("T")

BUSY = "while True:\n    pass\n"


@contextmanager
def busy_cores(count: int | None = None) -> Iterator[int]:
    """`count` (default: every core) processes spinning while the block runs; yields the count."""
    n = count or os.cpu_count() or 1
    procs = [
        subprocess.Popen(
            [sys.executable, "-I", "-S", "-c", BUSY],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        for _ in range(n)
    ]
    try:
        time.sleep(0.2)  # let them reach the loop
        yield n
    finally:
        for p in procs:
            p.kill()
        for p in procs:
            p.wait()


def loaded(fn: Callable[[], T]) -> T:
    """`fn()` with every core busy."""
    with busy_cores():
        return fn()


def load_average() -> str:
    """The 1-minute load average as the machine reports it (other users of a shared machine)."""
    try:
        return f"{os.getloadavg()[0]:.1f}"
    except OSError:
        return "?"
