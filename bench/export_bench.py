"""Issue #41's figures: `rewind-ls export TURN --to DIR` of a 10,000-file workspace against
`git worktree add` of the same tree (a checkout into a new work tree), and `rewind-ls export --git`
of a 100-turn session against what a shadow repository spends committing the same turns as they
happen (`git add -A` + `git commit` per turn); then the rerun after one more turn (a fast-forward).

Both sides run as commands (Python's and git's start-up included), each run into a new folder or
from a deleted branch, the median of `runs`.
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Mapping

from bench.workloads import make_tree

PY = sys.executable
GIT_ENV = {
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_AUTHOR_NAME": "bench",
    "GIT_AUTHOR_EMAIL": "bench@example.invalid",
    "GIT_COMMITTER_NAME": "bench",
    "GIT_COMMITTER_EMAIL": "bench@example.invalid",
}

# (figure, rewind-ls, baseline, unit, target)
Figure = tuple[str, float, float, str, "float | None"]


def _run(cmd: list[str], env: Mapping[str, str], cwd: str) -> float:
    started = time.perf_counter()
    proc = subprocess.run(cmd, env=dict(env), cwd=cwd, capture_output=True)
    took = time.perf_counter() - started
    if proc.returncode != 0:
        raise RuntimeError(
            f"{' '.join(cmd)} exited {proc.returncode}: {proc.stderr.decode()[-2000:]}"
        )
    return took


def _edit(ws: str, rels: list[str], tag: str) -> None:
    for rel in rels:
        with open(os.path.join(ws, rel), "ab") as f:
            f.write(f"\n// {tag}\n".encode())


def bench_export(
    tmp: str, smoke: bool, runs: int, base_env: Mapping[str, str], notes: list[str]
) -> list[Figure]:
    from rewind_ls.core.capture.recorder import Recorder
    from rewind_ls.core.store import Store

    files = 300 if smoke else 10_000
    turns = 5 if smoke else 100
    ws = os.path.join(tmp, "export-ws")
    home = os.path.join(tmp, "export-home")
    rels = make_tree(ws, files, 0, seed=7)
    env = {**base_env, **GIT_ENV, "REWIND_LS_HOME": home}
    git = ["git", "-C", ws]
    _run([*git, "init", "-q", "-b", "main"], env, ws)
    _run([*git, "add", "-A"], env, ws)
    _run([*git, "commit", "-q", "-m", "tree"], env, ws)
    shadow = os.path.join(tmp, "export-shadow.git")
    _run(["git", "init", "-q", "--bare", shadow], env, ws)
    sh = ["git", f"--git-dir={shadow}", f"--work-tree={ws}"]
    _run([*sh, "add", "-A"], env, ws)
    _run([*sh, "commit", "-q", "-m", "start"], env, ws)
    shadow_s = 0.0
    with Store.open(ws, home=home) as store:
        rec = Recorder(store)
        rec.baseline_budget = None
        rec.attribute_outside_changes()
        for i in range(turns):
            rec.begin_turn("bench", f"turn {i + 1}: ten files", agent="bench")
            _edit(ws, rels[1 + (i * 10) % (len(rels) - 11) :][:10], f"turn {i}")
            rec.end_turn("bench")
            shadow_s += _run([*sh, "add", "-A"], env, ws) + _run(
                [*sh, "commit", "-q", "-m", f"turn {i}"], env, ws
            )
    cli = [PY, "-m", "rewind_ls", "-C", ws]

    ours, theirs = [], []
    for n in range(runs):
        dest = os.path.join(tmp, f"export-to-{n}")
        ours.append(_run([*cli, "export", "1", "--session", "bench", "--to", dest], env, tmp))
        tree = os.path.join(tmp, f"worktree-{n}")
        theirs.append(_run([*git, "worktree", "add", "-q", "--detach", tree, "HEAD"], env, ws))
        shutil.rmtree(dest)
        _run([*git, "worktree", "remove", "--force", tree], env, ws)
    to_dir = (
        f"export --to of {files} files (vs git worktree add)",
        statistics.median(ours),
        statistics.median(theirs),
        "s",
        None,
    )

    branch = ["export", "--git", "rewind/bench", "--session", "bench"]
    whole = []
    for _ in range(runs):
        _run([*git, "update-ref", "-d", "refs/heads/rewind/bench"], env, ws)
        whole.append(_run([*cli, *branch], env, tmp))
    with Store.open(ws, home=home) as store:
        rec = Recorder(store)
        rec.begin_turn("bench", "one more turn", agent="bench")
        _edit(ws, rels[1:4], "one more")
        rec.end_turn("bench")
    again = _run([*cli, *branch], env, tmp)
    notes.append(
        f"export --git: {turns} turns of 10 files each over {files} files; the shadow repository "
        f"committed the same turns in {shadow_s:.1f} s in all; one more turn then a rerun "
        f"(fast-forward): {again:.2f} s"
    )
    return [
        to_dir,
        (
            f"export --git of a {turns}-turn session (vs shadow repo's {turns} commits)",
            statistics.median(whole),
            shadow_s,
            "s",
            None,
        ),
        (
            "export --git rerun after one more turn (vs the same)",
            again,
            statistics.median(whole),
            "s",
            None,
        ),
    ]
