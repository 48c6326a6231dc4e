"""Local history's cost: the workspace watcher recording the person's versions between turns.

    python -m bench history             # 1,000 saves in a minute across 50 files
    python -m bench history --smoke     # 60 saves in 6 s across 10 files: the command works

One workspace of generated text files (about 4 KB each), its first checkpoint taken by `rewind-ls
scan` (which starts the watcher), then saves at an even pace, each rewriting one line of one file
(round robin, so each file is still for seconds between its saves: every save is a quiet point,
the watcher's worst case). Measured:

- the watcher's CPU (user + system, from /proc) per save, against `python -I -S -c pass` (the
  interpreter's floor, the unit the hook's figures use), median of 5 runs of the floor;
- versions recorded (one per quiet point: here, one per save);
- store growth (its folder's apparent size) against the bytes the saves wrote: each new version is
  stored whole and the one before it becomes a reverse delta (`store/blobs.py`);
- what a day of normal work costs: `DAY_SAVES` versions of files of this size, from the measured
  store bytes per version.

Linux only (the watcher is inotify's). No target is asserted: the figures go into the issue's note.
"""

from __future__ import annotations

import os
import random
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

FLOOR = [sys.executable, "-I", "-S", "-c", "pass"]
# A day of normal work: a save (or a still edit) every 15 s for 8 hours.
DAY_SAVES = 8 * 3600 // 15


def _apparent(path: str) -> int:
    total = 0
    for d, _, names in os.walk(path):
        for n in names:
            try:
                total += os.lstat(os.path.join(d, n)).st_size
            except OSError:
                pass
    return total


def _cpu(pid: int) -> float:
    """User + system CPU seconds of `pid` so far."""
    with open(f"/proc/{pid}/stat", encoding="ascii") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _floor_cpu(runs: int = 5) -> float:
    """CPU seconds of one `python -I -S -c pass` (median of `runs`)."""
    import resource

    out = []
    for _ in range(runs):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        subprocess.run(FLOOR, check=True)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        out.append((after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime))
    return statistics.median(out)


def _lines(rng: random.Random, n: int) -> list[str]:
    words = ["const", "value", "return", "items", "map", "filter", "await", "render", "state"]
    return [" ".join(rng.choice(words) for _ in range(8)) + f" // {i}\n" for i in range(n)]


def bench(tmp: str, saves: int, files: int, seconds: float) -> list[str]:
    from rewind_ls.core.capture import local_history, watch_journal
    from rewind_ls.core.model import EXTERNAL_SESSION
    from rewind_ls.core.store import Store, store_dir_for

    ws = os.path.join(tmp, "ws")
    home = os.path.join(tmp, "home")
    os.makedirs(ws)
    rng = random.Random(7)
    texts: dict[str, list[str]] = {}
    for i in range(files):
        rel = f"src/file{i:03}.js"
        texts[rel] = _lines(rng, 60)  # about 4 KB
        os.makedirs(os.path.dirname(os.path.join(ws, rel)), exist_ok=True)
        with open(os.path.join(ws, rel), "w") as f:
            f.writelines(texts[rel])
    env = {**os.environ, "REWIND_LS_HOME": home, "REWIND_LS_WATCH": "1"}
    env["REWIND_LS_WATCH_IDLE"] = "600"
    for _ in range(2):  # the first scan takes the baseline and starts the watcher
        subprocess.run(
            [sys.executable, "-m", "rewind_ls", "scan"], cwd=ws, env=env, check=True, stdout=-3
        )
    store_path = store_dir_for(ws, home)
    wdir = watch_journal.watch_dir(store_path)
    os.environ.update(REWIND_LS_HOME=home)
    deadline = time.monotonic() + 60
    while watch_journal.sync(store_path, timeout=5) is None:
        if time.monotonic() > deadline:
            raise RuntimeError("the watcher did not start")
        time.sleep(0.1)
    pid = watch_journal.watcher_pid(wdir)
    assert pid is not None
    store_before = _apparent(store_path)
    cpu_before = _cpu(pid)
    written = 0
    names = sorted(texts)
    start = time.monotonic()
    for n in range(saves):
        rel = names[n % len(names)]
        lines = texts[rel]
        lines[rng.randrange(len(lines))] = f"edited {n} " + _lines(rng, 1)[0]
        data = "".join(lines).encode()
        with open(os.path.join(ws, rel), "wb") as f:
            f.write(data)
        written += len(data)
        # An even pace: the n-th save at n * seconds / saves.
        pause = start + (n + 1) * seconds / saves - time.monotonic()
        if pause > 0:
            time.sleep(pause)
    elapsed = time.monotonic() - start
    # Let the last quiet points pass, then stop the watcher (it records what is pending).
    time.sleep(local_history.debounce_seconds() + 1.5)
    cpu = _cpu(pid) - cpu_before
    os.kill(pid, 15)
    while watch_journal.alive(wdir):
        time.sleep(0.05)
    wal = _apparent(store_path) - store_before
    with Store.open(ws, home) as store:
        store.checkpoint()  # the WAL folded into the database: the store's size at rest
        versions = sum(
            1
            for t in store.turns(EXTERNAL_SESSION)
            for c in store.changes(t.id)
            if c.source == local_history.WATCH_SOURCE
        )
    growth = _apparent(store_path) - store_before
    floor = _floor_cpu()
    per_save = cpu / saves
    per_version = growth / max(1, versions)
    return [
        f"| saves | {saves} in {elapsed:.0f} s across {files} files (~{written // saves} B each) |",
        f"| versions recorded | {versions} |",
        f"| watcher CPU per save | {per_save * 1000:.2f} ms; `python -I -S -c pass` "
        f"{floor * 1000:.2f} ms CPU: {per_save / floor:.2f}x |",
        f"| watcher CPU, whole run | {cpu:.2f} s over {elapsed:.0f} s "
        f"({100 * cpu / elapsed:.1f} % of one core) |",
        f"| store growth | {growth} B for {written} B saved ({growth / written:.3f}x), "
        f"{per_version:.0f} B per version (at rest; {wal} B before the WAL checkpoint) |",
        f"| a day of normal work | {DAY_SAVES} versions (a save every 15 s for 8 h) of such "
        f"files: ~{DAY_SAVES * per_version / 1e6:.1f} MB of store |",
    ]


def main(argv: list[str]) -> int:
    smoke = "--smoke" in argv
    saves, files, seconds = (60, 10, 6.0) if smoke else (1000, 50, 60.0)
    with tempfile.TemporaryDirectory(prefix="rewind-ls-history-bench-") as tmp:
        os.chdir(tmp)
        print("| local history | figure |")
        print("| --- | --- |")
        for line in bench(tmp, saves, files, seconds):
            print(line, flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
