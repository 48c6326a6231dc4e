"""A background first-checkpoint worker as the rest of rewind-ls sees one (its lock held, its
progress file written), for the tests of what the CLI, the server and the editors show meanwhile."""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Iterator

from rewind_ls.core.capture import baseline_spawn


def write_progress(store_path: str, done: int, total: int) -> None:
    path = os.path.join(baseline_spawn.worker_dir(store_path), baseline_spawn.PROGRESS)
    with open(path, "w", encoding="ascii") as f:
        f.write(f"{done} {total}\n")


@contextlib.contextmanager
def first_checkpoint_running(store_path: str, done: int, total: int) -> Iterator[None]:
    """While inside: a worker runs with `done` of `total` files stored; after: none runs."""
    wdir = baseline_spawn.worker_dir(store_path)
    os.makedirs(wdir, exist_ok=True)
    fd = os.open(os.path.join(wdir, baseline_spawn.LOCK), os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX)
    try:
        write_progress(store_path, done, total)
        yield
    finally:
        os.close(fd)
