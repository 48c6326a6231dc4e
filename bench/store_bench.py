"""The compact store and large restores, in one run, against a shadow git of the same tree.

    python bench/store_bench.py [FILES ...]        (default: 10000)

For each size: the first checkpoint (`rewind-ls scan` of a fresh tree) against a shadow repository's
`git add -A && git commit` (time, bytes of its loose objects, bytes of its `git gc` pack), then a turn
that rewrote every file, restored with `rewind-ls rewind TURN --yes` and undone with `rewind-ls undo
--yes`, against `git checkout <commit> -- .` of the same files. One run each (the sizes are large
enough that the noise is small). Set PYTHONPATH to a checkout of another version to measure it.
Store bytes are the store folder's apparent size: the packs plus SQLite's rows and indexes for every
path (hashes, `known`): about 0.4 MB per 1,000 files on top of the packs.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

from bench.run import Agent, Shadow, _last_turn_id, change_files, fmt  # noqa: E402
from bench.workloads import make_tree  # noqa: E402


def _apparent(path: str) -> int:
    total = 0
    for d, _, names in os.walk(path):
        for n in names:
            total += os.lstat(os.path.join(d, n)).st_size
    return total


def _timed(fn: object) -> float:
    t = time.perf_counter()
    fn()  # type: ignore[operator]
    return time.perf_counter() - t


def bench(tmp: str, files: int) -> list[str]:
    from rewind_ls.core.store import store_dir_for

    tree = os.path.join(tmp, f"tree-{files}")
    home = os.path.join(tmp, f"home-{files}")
    rels = make_tree(tree, files, 0)
    shadow = Shadow(os.path.join(tmp, f"shadow-{files}.git"), tree)
    shadow.init()
    shadow.git("config", "gc.auto", "0")
    agent = Agent(tree, home)
    ours = agent.cli("scan")
    git = _timed(lambda: shadow.checkpoint("first"))
    store_bytes = _apparent(store_dir_for(tree, home))
    loose = _apparent(os.path.join(shadow.git_dir, "objects"))
    shadow.git("gc", "-q")
    pack = _apparent(os.path.join(shadow.git_dir, "objects", "pack"))
    out = [
        f"{files} files, first checkpoint: rewind-ls {ours:.2f} s, shadow git add+commit "
        f"{git:.2f} s ({ours / git:.2f}x)",
        f"{files} files, first checkpoint bytes: rewind-ls {fmt(store_bytes, 'B')}, shadow git "
        f"loose {fmt(loose, 'B')} ({store_bytes / loose:.2f}x), git gc pack {fmt(pack, 'B')} "
        f"({store_bytes / pack:.2f}x)",
    ]
    # A turn that rewrites every file, then restore it.
    before = shadow.git("rev-parse", "HEAD")
    agent.hook("UserPromptSubmit", prompt="rewrite everything")
    change_files(tree, rels[1:], "rewritten")
    agent.hook("Stop", stop_hook_active=False)
    shadow.checkpoint("rewritten")
    after = shadow.git("rev-parse", "HEAD")
    turn_id = _last_turn_id(agent)
    rewind = agent.cli("rewind", turn_id, "--yes")
    with open(os.path.join(tree, rels[-1]), "rb") as f:
        restored = f.read()
    undo = agent.cli("undo", "--yes")
    git_back = _timed(lambda: shadow.git("checkout", before, "--", "."))
    with open(os.path.join(tree, rels[-1]), "rb") as f:
        if f.read() != restored:
            raise RuntimeError("git checkout and rewind-ls rewind disagree")
    git_fwd = _timed(lambda: shadow.git("checkout", after, "--", "."))
    n = len(rels) - 1
    out += [
        f"{files} files, rewind of {n} files: rewind-ls {rewind:.2f} s, git checkout "
        f"{git_back:.2f} s ({rewind / git_back:.2f}x)",
        f"{files} files, undo of that rewind: rewind-ls {undo:.2f} s, git checkout "
        f"{git_fwd:.2f} s ({undo / git_fwd:.2f}x)",
    ]
    return out


def main(argv: list[str]) -> int:
    sizes = [int(a) for a in argv] or [10_000]
    with tempfile.TemporaryDirectory(prefix="rewind-store-bench-") as tmp:
        # The hook runs with the bench's working folder: `python -m` would import a rewind_ls found
        # there before PYTHONPATH's.
        os.chdir(tmp)
        for files in sizes:
            for line in bench(tmp, files):
                print(line, flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
