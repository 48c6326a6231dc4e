"""The growth table of issue #17: how rewind-ls scales with the size of the workspace.

    python -m bench growth                         # 10k, 30k and 100k files, 5 runs per figure
    python -m bench growth --sizes 10000,30000     # some sizes
    python -m bench growth --smoke                 # 300 files, 1 run: proves the command works

Per size: a generated JavaScript-like tree committed to git, plus an ignored `node_modules` of two
thirds its size. In the same run: `git status`, a shadow repository (`git --git-dir=<elsewhere>
add -A` + commit), rewind-ls's first checkpoint (time; store bytes against the shadow
repository's loose objects and its `git gc` pack), the turn boundary (the real `Stop` hook after
a "shell command" changed 10 files) without and with the workspace watcher, the hook on an edit
against `python -I -S -c pass` (the interpreter's floor), and restores of 10,000 and 50,000 files
(in the first tree that has them) and their undo against `git checkout` of the same files. Each
target of issue #29 is printed with MET or MISSED, and each timed figure has a second row measured
with a busy process on every core ("[loaded]", bench/load.py). Sizes are apparent bytes.
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import signal
import sqlite3
import sys
import tempfile
import time

from bench.load import load_average, loaded
from bench.run import (
    BASE_ENV,
    FLOOR,
    HERE,
    HOMES,
    PY,
    Agent,
    Shadow,
    _store_db,
    change_files,
    disk_usage,
    fmt,
    median,
    run,
    stop_hook_server,
    timed,
    verdict,
    wait_hook_server,
)
from bench.workloads import make_tree

RESTORES = (10_000, 50_000)


class Figure:
    def __init__(
        self,
        size: int,
        figure: str,
        ours: float | None,
        base: float | None,
        unit: str,
        target: float | None = None,
    ) -> None:
        self.size = size
        self.figure = figure
        self.ours = ours
        self.base = base
        self.unit = unit
        self.target = target

    def cells(self) -> tuple[str, ...]:
        ratio = self.ours / self.base if self.ours is not None and self.base else None
        verdict_ = "-"
        if self.target is not None and ratio is not None:
            verdict_ = verdict(ratio, self.target)
        return (
            f"{self.size:,}",
            self.figure,
            fmt(self.ours, self.unit),
            fmt(self.base, self.unit) if self.base is not None else "-",
            f"{ratio:.2f}x" if ratio is not None else "-",
            f"<= {self.target}x" if self.target is not None else "-",
            verdict_,
        )


def print_growth(figures: list[Figure]) -> None:
    head = ("files", "figure", "rewind-ls", "baseline", "ratio", "target", "verdict")
    body = [f.cells() for f in figures]
    widths = [max(len(x) for x in col) for col in zip(head, *body, strict=True)]
    print("| " + " | ".join(h.ljust(w) for h, w in zip(head, widths, strict=True)) + " |")
    print("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    for b in body:
        print("| " + " | ".join(x.ljust(w) for x, w in zip(b, widths, strict=True)) + " |")
    sys.stdout.flush()


def _git(tree: str, *args: str) -> str:
    env = {**BASE_ENV, "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull}
    cmd = ["git", "-c", "user.name=bench", "-c", "user.email=bench@example.invalid", *args]
    return run(cmd, cwd=tree, env=env).stdout.decode()


def _apparent(path: str) -> int:
    return disk_usage(path)[1]


def _watch_dir(agent: Agent) -> str:
    return os.path.join(os.path.dirname(_store_db(agent)), "watch")


def _watcher_ready(agent: Agent) -> bool:
    from rewind_ls.core.capture import watch_journal

    wdir = _watch_dir(agent)
    try:
        with open(os.path.join(wdir, "journal"), "rb") as f:
            head = f.read(4096)
    except OSError:
        return False
    return b"\nR\n" in head and b"\nX " not in head and watch_journal.alive(wdir)


def _stop_watcher(agent: Agent) -> None:
    from rewind_ls.core.capture import watch_journal

    wdir = _watch_dir(agent)
    pid = watch_journal.watcher_pid(wdir)
    if pid is not None and watch_journal.alive(wdir):
        os.kill(pid, signal.SIGTERM)


def _mark_is_current(agent: Agent) -> bool:
    """The last scan left a watch mark in the running watcher's epoch: the next one is watched."""
    import json

    with sqlite3.connect(_store_db(agent)) as conn:
        row = conn.execute("SELECT value FROM meta WHERE key = 'scan.watch-mark'").fetchone()
    try:
        with open(os.path.join(_watch_dir(agent), "journal"), "rb") as f:
            epoch = f.readline().split()[1].decode()
    except (OSError, IndexError):
        return False
    return row is not None and json.loads(row[0]).get("epoch") == epoch


def _turns(agent: Agent, tree: str, changed: list[str], runs: int, tag: str) -> dict[str, float]:
    """`runs` turns that each change `changed`: the Stop hook, `git status` and the shadow
    repository's add+commit after the same change; medians."""
    stop, status, shadow = [], [], []
    sh = Shadow(os.path.join(os.path.dirname(tree), os.path.basename(tree) + "-shadow.git"), tree)
    for i in range(runs):
        agent.hook("UserPromptSubmit", prompt=f"{tag} {i}")
        change_files(tree, changed, f"{tag} {i}")
        status.append(timed(lambda: _git(tree, "status", "--porcelain")))
        stop.append(agent.hook("Stop", stop_hook_active=False))
        shadow.append(timed(lambda i=i: sh.checkpoint(f"{tag} {i}")))
    return {"stop": median(stop), "status": median(status), "shadow": median(shadow)}


def _restore(agent: Agent, tree: str, rels: list[str], tmp: str) -> tuple[float, float, float]:
    """A turn that changed `rels`; (rewind-ls rewind, its undo, `git checkout` of the same
    files)."""
    agent.hook("UserPromptSubmit", prompt=f"change {len(rels)} files")
    change_files(tree, rels, "to be restored")
    agent.hook("Stop", stop_hook_active=False)
    with sqlite3.connect(_store_db(agent)) as conn:
        turn = conn.execute(
            "SELECT id FROM turns WHERE session_id = ? ORDER BY seq DESC LIMIT 1", (agent.session,)
        ).fetchone()[0]
    ours = agent.cli("rewind", turn, "--yes")
    for rel in rels[:: max(1, len(rels) // 50)]:
        with open(os.path.join(tree, rel), "rb") as f:
            if f.read().endswith(b"// to be restored\n"):
                raise RuntimeError(f"rewind-ls rewind did not restore {rel}")
    undo = agent.cli("undo", "--yes")
    listing = os.path.join(tmp, "restore-paths.txt")
    with open(listing, "w") as f:
        f.write("\n".join(rels) + "\n")
    git = timed(lambda: _git(tree, "checkout", f"--pathspec-from-file={listing}", "--"))
    # Back to what rewind-ls last saw, so the next figures start from a recorded tree.
    agent.hook("UserPromptSubmit", prompt="after the restore")
    agent.hook("Stop", stop_hook_active=False)
    return ours, undo, git


def _make(n: int, base: str, notes: list[str]) -> tuple[str, list[str]]:
    """The tree of `n` files committed to git, plus an ignored node_modules of two thirds."""
    tree = os.path.join(base, "tree")
    t = time.perf_counter()
    rels = make_tree(tree, n, n * 2 // 3)
    _git(tree, "init", "-q")
    _git(tree, "add", "-A")
    _git(tree, "commit", "-q", "-m", "tree")
    notes.append(
        f"{n:,} files (+ {n * 2 // 3:,} ignored): generated and committed in "
        f"{time.perf_counter() - t:.0f} s"
    )
    return tree, rels


def _hook_on_edit(agent: Agent, target: str, runs: int) -> tuple[float, float]:
    """The PreToolUse hook of an Edit (first touch in its turn) and `python -I -S -c pass`; medians.
    The hooks go through the hook server, up as after a session's first hook."""
    wait_hook_server(agent.home)
    edit, py = [], []
    for i in range(max(5, runs * 3)):
        agent.hook("UserPromptSubmit", prompt=f"edit {i}")
        tool_input = {"file_path": target, "old_string": "a", "new_string": "b"}
        edit.append(
            agent.hook("PreToolUse", tool_name="Edit", tool_input=tool_input, tool_use_id=f"e{i}")
        )
        py.append(timed(lambda: run(FLOOR, env=BASE_ENV)))
        agent.hook("Stop", stop_hook_active=False)
    return median(edit), median(py)


def _start_watching(agent: Agent, tree: str, changed: list[str], n: int) -> None:
    """A turn starts the watcher; once it is ready, two turns leave a mark in its epoch."""
    agent.hook("UserPromptSubmit", prompt="start the watcher")
    agent.hook("Stop", stop_hook_active=False)
    deadline = time.monotonic() + 300
    while not _watcher_ready(agent):
        if time.monotonic() > deadline:
            raise RuntimeError(f"{n} files: the watcher did not get ready in 300 s")
        time.sleep(0.05)
    _turns(agent, tree, changed, 2, "warm")
    if not _mark_is_current(agent):
        raise RuntimeError(f"{n} files: the scans did not leave a mark in the watcher's epoch")


def _first_checkpoint_again(tree: str, base: str) -> tuple[float, float]:
    """The first checkpoint into a fresh store and a fresh shadow repository (the loaded row)."""
    agent = Agent(
        tree, os.path.join(base, "home-loaded"), REWIND_LS_BASELINE_SECONDS="0", REWIND_LS_WATCH="0"
    )
    ours = agent.hook("SessionStart", source="startup")
    shadow = Shadow(os.path.join(base, "tree-shadow-loaded.git"), tree)
    git = timed(shadow.init)
    run(["git", f"--git-dir={shadow.git_dir}", "config", "gc.auto", "0"], env=shadow.env)
    git += timed(lambda: shadow.checkpoint("first"))
    shutil.rmtree(shadow.git_dir, ignore_errors=True)
    shutil.rmtree(os.path.join(base, "home-loaded"), ignore_errors=True)
    return ours, git


def _first_checkpoint_in_background(tree: str, home: str, watch: str = "0") -> tuple[float, float]:
    """SessionStart with the default budget, then turn boundaries (UserPromptSubmit, Stop) one
    after another while the baseline worker runs: (the longest hook, seconds from SessionStart
    until the baseline is complete). `watch`: REWIND_LS_WATCH ("1": the watcher the hooks start
    tells them what changed, as by default)."""
    from rewind_ls.core.capture import baseline_spawn

    agent = Agent(tree, home, REWIND_LS_WATCH=watch, REWIND_LS_WATCH_IDLE="600")
    started = time.perf_counter()
    longest = agent.hook("SessionStart", source="startup")
    db = None
    while True:
        if db is None:
            found = [
                os.path.join(home, "workspaces", d)
                for d in os.listdir(os.path.join(home, "workspaces"))
            ]
            db = found[0] if found else None
        if db is not None and _baseline_done(db) and not baseline_spawn.busy(db):
            break
        if time.perf_counter() - started > 3600:
            raise RuntimeError("the baseline worker did not finish in an hour")
        longest = max(longest, agent.hook("UserPromptSubmit", prompt="go on"))
        longest = max(longest, agent.hook("Stop"))
    elapsed = time.perf_counter() - started
    if watch != "0":
        _stop_watcher(agent)
    return longest, elapsed


def _baseline_done(store_path: str) -> bool:
    con = sqlite3.connect(f"file:{os.path.join(store_path, 'store.sqlite3')}?mode=ro", uri=True)
    try:
        row = con.execute("SELECT value FROM meta WHERE key = 'scan.baseline'").fetchone()
    except sqlite3.Error:
        return False
    finally:
        con.close()
    return bool(row and row[0] == "complete")


def bench_size(n: int, tmp: str, runs: int, restores: set[int], notes: list[str]) -> list[Figure]:
    base = os.path.join(tmp, f"t{n}")
    tree, rels = _make(n, base, notes)
    figs: list[Figure] = []
    home = os.path.join(base, "home")
    walk = Agent(tree, home, REWIND_LS_BASELINE_SECONDS="0", REWIND_LS_WATCH="0")
    shadow = Shadow(os.path.join(base, "tree-shadow.git"), tree)

    first_ours = walk.hook("SessionStart", source="startup")
    first_git = timed(shadow.init)
    # No automatic gc: it would pack the loose objects measured below, in the background, and
    # hold the lock of the `git gc` measured later.
    run(["git", f"--git-dir={shadow.git_dir}", "config", "gc.auto", "0"], env=shadow.env)
    first_git += timed(lambda: shadow.checkpoint("first"))
    store_bytes = _apparent(home)
    loose = _apparent(os.path.join(shadow.git_dir, "objects"))
    figs.append(
        Figure(n, "first checkpoint: time (vs shadow git)", first_ours, first_git, "s", 0.3)
    )
    figs.append(
        Figure(
            n,
            "first checkpoint: time (vs shadow git) [loaded]",
            *loaded(lambda: _first_checkpoint_again(tree, base)),
            "s",
            0.3,
        )
    )
    # With the hook's default baseline budget (what a person gets): the session starts, the
    # detached worker takes the baseline, and turns go on meanwhile. The longest hook the agent
    # waits for, against the 1 s, and the time until the baseline is complete.
    longest, background = _first_checkpoint_in_background(tree, os.path.join(base, "home-default"))
    figs.append(
        Figure(n, "longest hook while the first checkpoint runs (vs 1 s)", longest, 1.0, "s", 1.0)
    )
    figs.append(
        Figure(
            n,
            "first checkpoint in the background: until complete (vs shadow git)",
            background,
            first_git,
            "s",
            0.3,
        )
    )
    # The same with the watcher the hooks start (the default): a hook while the worker runs
    # looks at what the watcher saw instead of every file recorded so far.
    longest, background = _first_checkpoint_in_background(
        tree, os.path.join(base, "home-default-watched"), watch="1"
    )
    figs.append(
        Figure(
            n,
            "longest hook while the first checkpoint runs, watcher (vs 1 s)",
            longest,
            1.0,
            "s",
            1.0,
        )
    )
    figs.append(
        Figure(
            n,
            "first checkpoint in the background, watcher: until complete (vs shadow git)",
            background,
            first_git,
            "s",
            0.3,
        )
    )
    figs.append(
        Figure(n, "first checkpoint: store bytes (vs loose objects)", store_bytes, loose, "B")
    )

    changed = rels[1 :: max(1, len(rels) // 10)][:10]
    plain = _turns(walk, tree, changed, runs, "walk")
    figs.append(Figure(n, "git status (10 files changed)", plain["status"], None, "s"))
    figs.append(Figure(n, "shadow git add -A + commit", plain["shadow"], None, "s"))
    figs.append(
        Figure(n, "turn boundary, full walk (vs git status)", plain["stop"], plain["status"], "s")
    )

    watched = Agent(tree, home, REWIND_LS_WATCH="1", REWIND_LS_WATCH_IDLE="600")
    try:
        _start_watching(watched, tree, changed, n)
        wait_hook_server(watched.home)  # up, as after a session's first hook
        w = _turns(watched, tree, changed, runs, "watched")
        wl = loaded(lambda: _turns(watched, tree, changed, runs, "watched-loaded"))
        for tag, m in (("", w), (" [loaded]", wl)):
            figs.append(
                Figure(
                    n,
                    "turn boundary, watcher (vs git status)" + tag,
                    m["stop"],
                    m["status"],
                    "s",
                    0.2,
                )
            )
            figs.append(
                Figure(
                    n,
                    "turn boundary, watcher (vs shadow add+commit)" + tag,
                    m["stop"],
                    m["shadow"],
                    "s",
                    0.3,
                )
            )
        # The same turns with every hook in its own interpreter (before the hook server).
        watched.env["REWIND_LS_HOOK_SERVER"] = "0"
        off = _turns(watched, tree, changed, runs, "watched-no-server")
        del watched.env["REWIND_LS_HOOK_SERVER"]
        figs.append(
            Figure(
                n,
                "turn boundary, watcher, without the hook server (vs git status)",
                off["stop"],
                off["status"],
                "s",
                0.2,
            )
        )
        target = os.path.join(tree, changed[0])
        edit, py = _hook_on_edit(watched, target, runs)
        figs.append(Figure(n, "hook on an edit (vs python -I -S -c pass)", edit, py, "s", 2.0))
        edit, py = loaded(lambda: _hook_on_edit(watched, target, runs))
        figs.append(
            Figure(n, "hook on an edit (vs python -I -S -c pass) [loaded]", edit, py, "s", 2.0)
        )

        shadow_gc = timed(lambda: shadow.git("gc", "-q"))
        pack = _apparent(os.path.join(shadow.git_dir, "objects"))
        notes.append(f"{n:,} files: git gc of the shadow repository took {shadow_gc:.1f} s")
        figs.append(
            Figure(n, "first checkpoint: store bytes (vs git gc pack)", store_bytes, pack, "B", 1.0)
        )

        for k in sorted(restores):
            if k <= len(rels) - 1:
                restores.discard(k)
                target_ratio = 2.0 if k == 10_000 else None
                for tag in ("", " [loaded]"):
                    some = rels[1 : k + 1]
                    ours, undo, git = (
                        loaded(lambda some=some: _restore(watched, tree, some, base))
                        if tag
                        else _restore(watched, tree, some, base)
                    )
                    figs.append(
                        Figure(
                            n,
                            f"restore {k:,} files (vs git checkout){tag}",
                            ours,
                            git,
                            "s",
                            target_ratio,
                        )
                    )
                    figs.append(
                        Figure(
                            n, f"undo of that restore (vs git checkout){tag}", undo, git, "s", 2.0
                        )
                    )
    finally:
        _stop_watcher(watched)
    return figs


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench growth", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--sizes", default="10000,30000,100000", help="tree sizes, comma-separated")
    parser.add_argument("--runs", type=int, default=None, help="runs per figure (default 5)")
    parser.add_argument("--smoke", action="store_true", help="300 files, 1 run")
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder")
    args = parser.parse_args(argv)
    sizes = [300] if args.smoke else [int(s) for s in args.sizes.split(",") if s.strip()]
    runs = args.runs or (1 if args.smoke else 5)
    restores = {100} if args.smoke else set(RESTORES)
    tmp = tempfile.mkdtemp(prefix="rewind-ls-bench-")
    BASE_ENV.pop("PYTHONDONTWRITEBYTECODE", None)
    BASE_ENV["PYTHONPYCACHEPREFIX"] = os.path.join(tmp, "pycache")
    run([PY, "-m", "compileall", "-q", os.path.dirname(HERE) + "/rewind_ls"], env=BASE_ENV)
    git_version = run(["git", "--version"]).stdout.decode().strip()
    print(
        f"rewind-ls growth table: sizes {sizes}, {runs} run(s) per figure, median; "
        f"Python {platform.python_version()}, {git_version}, {os.cpu_count()} CPUs, "
        f"load average {load_average()} at the start, {tmp}",
        flush=True,
    )
    started = time.perf_counter()
    figures: list[Figure] = []
    notes: list[str] = []
    try:
        for n in sizes:
            figures.extend(bench_size(n, tmp, runs, restores, notes))
            print(f"  {n:,} files done ({time.perf_counter() - started:.0f} s)", flush=True)
            if n != sizes[-1]:  # so far, in case a later size does not finish
                print_growth([f for f in figures if f.size == n])
    finally:
        for home in HOMES:
            stop_hook_server(home)
        if args.keep:
            notes.append(f"kept: {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    print()
    print_growth(figures)
    print()
    for note in notes:
        print(f"- {note}")
    if restores:
        print(f"- no tree large enough for a restore of {sorted(restores)} files")
    print(
        f"- load average {load_average()} at the end; total {time.perf_counter() - started:.0f} s"
    )
    return 0
