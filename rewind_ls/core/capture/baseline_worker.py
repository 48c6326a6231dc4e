"""The detached baseline worker: takes the rest of a workspace's first checkpoint off the hooks.

Started by a hook's scan whose budget cut the baseline short (`core.capture.baseline_spawn`); one
per workspace (an exclusive `flock` on `<store>/baseline/lock`). It runs `scan(adopt_only=True)`:
every file never seen goes into the baseline, with no time limit; a change to a known file and
the watermark are left to the hooks' scans, which attribute them to the right turn.

Nothing is lost while it runs, by the rules a hook's budgeted baseline already follows:
- the hooks record their own files first (edit tools before and after, scans the known files);
- an adoption never replaces a row another process wrote meanwhile (`scan_commit`), so a file
  an agent's hook recorded while the worker was reading it keeps the hook's record;
- each batch is one transaction: a worker killed at any point leaves the batches before it, and
  the next hook's scan starts a new worker, which adopts only what is still missing.
"""

from __future__ import annotations

import os
import sys

from rewind_ls.core.capture import baseline_spawn as bs
from rewind_ls.core.capture.scan import baseline_complete, scan
from rewind_ls.core.fs import detached
from rewind_ls.core.fs.config import ensure_private_dir
from rewind_ls.core.store import Store

TYPE_CHECKING = False
if TYPE_CHECKING:
    from rewind_ls.core.capture.scan import Progress


def _progress_writer(wdir: str) -> Progress:
    path = os.path.join(wdir, bs.PROGRESS)

    def write(what: str, done: int, total: int) -> None:
        if what != "baseline":
            return
        tmp = f"{path}.{os.getpid()}.tmp"
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o600)
            with open(fd, "w", encoding="ascii") as f:
                f.write(f"{done} {total}\n")
            os.replace(tmp, path)
        except OSError:
            pass  # progress is a courtesy

    return write


def _adopt_nothing(found: object) -> str | None:
    raise AssertionError("an adopt-only scan records no change")


def run(root: str, store_path: str) -> int:
    wdir = bs.worker_dir(store_path)
    ensure_private_dir(wdir)
    lock = detached.take_lock(os.path.join(wdir, bs.LOCK))
    try:
        os.unlink(os.path.join(wdir, bs.STARTING))
    except OSError:
        pass
    if lock is None:
        return 0  # another worker runs
    try:
        # The agent waits on every hook, not on the worker: the hooks come first for the CPU.
        os.nice(10)
    except OSError:
        pass
    try:
        with Store.open(root) as store:
            if os.path.realpath(store.path) != os.path.realpath(store_path):
                return 2  # started for another home: not ours to fill
            if not baseline_complete(store):
                # Two reading threads, which also compress (`file_reader.read_many`), while
                # this one commits: the machine's second core (a shadow git uses one), at
                # nice 10, so a hook still comes first. (s-speed measured one thread better
                # when reading was all the threads did; now they hash and compress too.)
                scan(
                    store,
                    _adopt_nothing,
                    None,
                    progress=_progress_writer(wdir),
                    workers=2,
                    adopt_only=True,
                )
    finally:
        try:
            os.unlink(os.path.join(wdir, bs.PROGRESS))
        except OSError:
            pass
        os.close(lock)
    return 0


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(
            "usage: python -m rewind_ls.core.capture.baseline_worker ROOT STORE_PATH",
            file=sys.stderr,
        )
        return 2
    return run(argv[0], os.path.abspath(argv[1]))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
