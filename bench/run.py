"""rewind-ls benchmark: builds its workloads in a temporary folder, measures rewind-ls and a shadow git
repository (what Cline, Roo Code, Gemini CLI and OpenCode do) side by side in the same run, and prints
one table: figure, rewind-ls, baseline, ratio, target, MET or MISSED. Each figure is the median of
`--runs`; each timed figure of issue #29 has a second row measured with a busy process on every core
("[loaded]", bench/load.py).

    python -m bench            # full sizes (issue #6), 5 runs
    python -m bench --smoke    # tiny sizes, 1 run: keeps the suite working in CI, proves nothing
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

from bench.load import load_average, loaded  # noqa: E402
from bench.workloads import change_line, make_big_text, make_tree  # noqa: E402

PY = sys.executable
# The interpreter's floor: what the hook command starts (`python -I -S`, no `site`) doing nothing.
FLOOR = [PY, "-I", "-S", "-c", "pass"]
# Environment of every process the bench starts; main() points Python's bytecode cache into the
# bench's temporary folder, as an installed package has its .pyc files (a development shell with
# PYTHONDONTWRITEBYTECODE=1 would otherwise compile rewind-ls from source in every hook).
BASE_ENV: dict[str, str] = dict(os.environ)
# These figures are the full walk's; `python -m bench growth` measures the workspace watcher.
BASE_ENV.setdefault("REWIND_LS_WATCH", "0")
# The hook rows measure the hook server (each has its row without it): on even where the caller's
# environment turns it off (the test suite's does).
BASE_ENV.pop("REWIND_LS_HOOK_SERVER", None)


class Sizes:
    def __init__(self, smoke: bool) -> None:
        self.files = 300 if smoke else 30_000
        self.ignored = 200 if smoke else 20_000
        self.changed = 10
        self.hook_file = 100_000
        self.storage_turns = 5 if smoke else 200
        self.storage_file = 64 << 10 if smoke else 1 << 20
        self.lsp_restore_files = 10 if smoke else 100
        self.memory_turns = 50 if smoke else 10_000
        self.review_lines = 500 if smoke else 10_000  # issue #28
        self.review_turns = 20 if smoke else 1_000


class Row:
    def __init__(
        self,
        figure: str,
        ours: float | None,
        base: float | None,
        unit: str,
        target: float | None = None,
        note: str = "",
    ) -> None:
        self.figure = figure
        self.ours = ours
        self.base = base
        self.unit = unit
        self.target = target
        self.note = note

    @property
    def ratio(self) -> float | None:
        if self.ours is None or not self.base:
            return None
        return self.ours / self.base


def fmt(value: float | None, unit: str) -> str:
    if value is None:
        return "n/a"
    if unit == "s":
        return f"{value * 1000:.0f} ms" if value < 10 else f"{value:.1f} s"
    if unit == "B":
        for name, scale in (("GB", 1e9), ("MB", 1e6), ("KB", 1e3)):
            if value >= scale:
                return f"{value / scale:.1f} {name}"
        return f"{value:.0f} B"
    return f"{value:.1f} {unit}"


def print_table(rows: list[Row], out: Callable[[str], None] = print) -> None:
    head = ("figure", "rewind-ls", "baseline", "ratio", "target", "verdict")
    body = []
    for r in rows:
        ratio = r.ratio
        met = "-" if r.target is None or ratio is None else verdict(ratio, r.target)
        body.append(
            (
                r.figure,
                fmt(r.ours, r.unit) if r.ours is not None else (r.note or "n/a"),
                fmt(r.base, r.unit) if r.base is not None else "-",
                f"{ratio:.2f}x" if ratio is not None else "-",
                f"<= {r.target}x" if r.target is not None else "-",
                met,
            )
        )
    widths = [max(len(str(x)) for x in col) for col in zip(head, *body, strict=True)]
    line = "| " + " | ".join(h.ljust(w) for h, w in zip(head, widths, strict=True)) + " |"
    out(line)
    out("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    for b in body:
        out("| " + " | ".join(str(x).ljust(w) for x, w in zip(b, widths, strict=True)) + " |")


def verdict(ratio: float, target: float) -> str:
    return "MET" if ratio <= target else "MISSED"


# --- helpers -------------------------------------------------------------------------------------


def timed(fn: Callable[[], object]) -> float:
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def run(cmd: list[str], **kw: Any) -> subprocess.CompletedProcess[bytes]:
    proc = subprocess.run(cmd, capture_output=True, **kw)
    if proc.returncode != 0:
        raise RuntimeError(
            f"{' '.join(cmd)} exited {proc.returncode}: {proc.stderr.decode()[-2000:]}"
        )
    return proc


def disk_usage(path: str) -> tuple[int, int]:
    """(bytes on disk as du counts them, apparent bytes) of everything under `path`."""
    blocks = apparent = 0
    for dirpath, _dirs, files in os.walk(path):
        for name in files:
            try:
                st = os.lstat(os.path.join(dirpath, name))
            except OSError:
                continue
            blocks += st.st_blocks * 512
            apparent += st.st_size
    return blocks, apparent


class Shadow:
    """A Cline-style shadow repository: its own git dir, the workspace as work tree."""

    def __init__(self, git_dir: str, tree: str) -> None:
        self.git_dir = git_dir
        self.tree = tree
        self.env = {
            **os.environ,
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_CONFIG_GLOBAL": os.devnull,
            "GIT_AUTHOR_NAME": "bench",
            "GIT_AUTHOR_EMAIL": "bench@example.invalid",
            "GIT_COMMITTER_NAME": "bench",
            "GIT_COMMITTER_EMAIL": "bench@example.invalid",
        }

    def git(self, *args: str) -> str:
        cmd = ["git", f"--git-dir={self.git_dir}", f"--work-tree={self.tree}", *args]
        return run(cmd, env=self.env, cwd=self.tree).stdout.decode().strip()

    def init(self) -> None:
        shutil.rmtree(self.git_dir, ignore_errors=True)
        run(["git", "init", "-q", "--bare", self.git_dir], env=self.env)
        run(["git", f"--git-dir={self.git_dir}", "config", "core.bare", "false"], env=self.env)

    def checkpoint(self, message: str) -> None:
        self.git("add", "-A")
        self.git("commit", "-q", "--allow-empty", "--no-verify", "-m", message)


def _hook_argv() -> list[str]:
    """The hook command `rewind-ls install` writes into the agents' settings (what they run)."""
    import shlex

    from rewind_ls.core.agents.settings import default_command

    return shlex.split(default_command("claude-code"))


HOOK_ARGV = _hook_argv()


# Every rewind-ls home a hook ran with: each has its hook server, stopped at the end.
HOMES: set[str] = set()


def hook_server_pid(home: str) -> int | None:
    """The pid of the hook server of `home`, when one holds its lock."""
    from rewind_ls.core.agents.hook_client import socket_path
    from rewind_ls.core.fs.detached import lock_held, lock_pid

    lock = socket_path(home) + ".lock"
    return lock_pid(lock) if lock_held(lock) else None


def wait_hook_server(home: str, timeout: float = 60.0) -> None:
    """Until the hook server of `home` answers (the state of every hook after a session's first)."""
    from rewind_ls.core.agents.hook_server_status import status

    deadline = time.monotonic() + timeout
    while status(home) is None:
        if time.monotonic() > deadline:
            raise RuntimeError(f"no hook server for {home} after {timeout:.0f} s")
        time.sleep(0.02)


def stop_hook_server(home: str) -> None:
    """Stop the hook server of `home` (SIGTERM: it removes its socket; SIGKILL if it does not go)
    and wait until its lock is free (the state before a session's first hook)."""
    from rewind_ls.core.agents.hook_client import socket_path

    stop_server(socket_path(home) + ".lock")


def stop_server(lock: str) -> None:
    """Stop the hook server holding `lock` and wait until the lock is free."""
    from rewind_ls.core.fs.detached import lock_held, lock_pid

    pid = lock_pid(lock) if lock_held(lock) else None
    if pid is None:
        return
    for sig, wait in ((signal.SIGTERM, 10.0), (signal.SIGKILL, 10.0)):
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            return
        deadline = time.monotonic() + wait
        while lock_held(lock) and time.monotonic() < deadline:
            time.sleep(0.01)
        if not lock_held(lock):
            return


class Agent:
    """Runs the real hook process (the installed hook command), as Claude Code does, for one
    session. Its hooks go through the hook server after the first, as in real use."""

    def __init__(self, ws: str, home: str, session: str = "bench-session", **env: str) -> None:
        self.ws = ws
        self.home = home
        self.session = session
        self.env = {**BASE_ENV, "REWIND_LS_HOME": home, **env}
        HOMES.add(home)

    def hook(self, event: str, **fields: Any) -> float:
        payload = {
            "session_id": self.session,
            "transcript_path": os.path.join(self.home, "transcript.jsonl"),
            "cwd": self.ws,
            "hook_event_name": event,
            **fields,
        }
        data = json.dumps(payload).encode()
        t = time.perf_counter()
        proc = subprocess.run(
            HOOK_ARGV,
            input=data,
            capture_output=True,
            env=self.env,
        )
        elapsed = time.perf_counter() - t
        if proc.returncode != 0 or b"error" in proc.stderr:
            raise RuntimeError(f"hook {event}: {proc.stderr.decode()[-2000:]}")
        return elapsed

    def cli(self, *args: str) -> float:
        t = time.perf_counter()
        run([PY, "-m", "rewind_ls", *args], env=self.env, cwd=self.ws)
        return time.perf_counter() - t


def median(values: list[float]) -> float:
    return statistics.median(values)


def change_files(tree: str, rels: list[str], tag: str) -> None:
    """What a shell command (`sed -i`, a formatter) does: rewrite files in place."""
    for rel in rels:
        with open(os.path.join(tree, rel), "ab") as f:
            f.write(f"// {tag}\n".encode())


# --- workloads -----------------------------------------------------------------------------------


def bench_hook(tmp: str, sizes: Sizes, runs: int) -> list[Row]:
    """The hook on an edit (a `PreToolUse` of `Write`, first touch of a 100 KB file in its turn:
    read, hashed, stored) against the interpreter's floor, quiet and with every core busy."""
    ws = os.path.join(tmp, "hook-ws")
    os.makedirs(ws)
    target = os.path.join(ws, "big.js")
    make_big_text(target, sizes.hook_file)
    agent = Agent(ws, os.path.join(tmp, "hook-home"))
    agent.hook("SessionStart", source="startup")
    tool_input = {"file_path": target, "content": "x"}

    def measure(tag: str) -> tuple[float, float]:
        ours, base = [], []
        for i in range(max(5, runs * 3)):
            change_line(target, i)
            agent.hook("UserPromptSubmit", prompt=f"edit {tag} {i}")
            ours.append(
                agent.hook(
                    "PreToolUse", tool_name="Write", tool_input=tool_input, tool_use_id=f"w{tag}{i}"
                )
            )
            base.append(timed(lambda: run(FLOOR, env=BASE_ENV)))
        return median(ours), median(base)

    def first(tag: str) -> tuple[float, float]:
        """The first hook of a session: no server yet, so it runs in-process and starts one."""
        ours, base = [], []
        for i in range(max(5, runs * 3)):
            change_line(target, i)
            agent.hook("UserPromptSubmit", prompt=f"edit {tag} {i}")
            stop_hook_server(agent.home)
            ours.append(
                agent.hook(
                    "PreToolUse", tool_name="Write", tool_input=tool_input, tool_use_id=f"f{tag}{i}"
                )
            )
            wait_hook_server(agent.home)  # its start-up is not the floor's
            base.append(timed(lambda: run(FLOOR, env=BASE_ENV)))
        return median(ours), median(base)

    name = "hook on an edit: PreToolUse recording a 100 KB file (vs python -I -S -c pass)"
    wait_hook_server(agent.home)
    quiet = measure("q")
    busy = loaded(lambda: measure("l"))
    first_name = "first hook of a session (no hook server yet: in-process, starts it)"
    first_quiet = first("fq")
    first_busy = loaded(lambda: first("fl"))
    # The hook before the server (REWIND_LS_HOOK_SERVER=0), in the same run, for comparison.
    agent.env["REWIND_LS_HOOK_SERVER"] = "0"
    stop_hook_server(agent.home)
    off = measure("o")
    del agent.env["REWIND_LS_HOOK_SERVER"]
    return [
        Row(name, *quiet, "s", 2.0),
        Row(name + " [loaded]", *busy, "s", 2.0),
        Row(first_name, *first_quiet, "s", 2.0),
        Row(first_name + " [loaded]", *first_busy, "s", 2.0),
        Row("hook on an edit without the hook server (REWIND_LS_HOOK_SERVER=0)", *off, "s", 2.0),
    ]


def bench_tree(tmp: str, sizes: Sizes, runs: int, notes: list[str]) -> list[Row]:
    tree = os.path.join(tmp, "tree")
    t = time.perf_counter()
    rels = make_tree(tree, sizes.files, sizes.ignored)
    tracked, tracked_apparent = 0, 0
    for rel in rels:
        tracked_apparent += os.path.getsize(os.path.join(tree, rel))
    tracked = len(rels)
    notes.append(
        f"tree: {tracked} files ({tracked_apparent / 1e6:.0f} MB) + {sizes.ignored} ignored under "
        f"node_modules/, generated in {time.perf_counter() - t:.1f} s"
    )
    shadow = Shadow(os.path.join(tmp, "shadow.git"), tree)
    homes = os.path.join(tmp, "homes")

    # First checkpoint: rewind-ls's baseline (the first SessionStart hook, unbounded) against the
    # shadow repository's init + add -A + commit. Alternating which goes first each run.
    first_ours, first_git, bytes_ours, bytes_git = [], [], [], []
    agent: Agent | None = None
    for i in range(runs):
        home = os.path.join(homes, f"h{i}")
        agent = Agent(tree, home, REWIND_LS_BASELINE_SECONDS="0")

        def ours(a: Agent = agent) -> None:
            first_ours.append(a.hook("SessionStart", source="startup"))

        def git() -> None:
            first_git.append(timed(lambda: (shadow.init(), shadow.checkpoint("first"))))

        for fn in (ours, git) if i % 2 == 0 else (git, ours):
            fn()
        bytes_ours.append(disk_usage(home))
        bytes_git.append(disk_usage(shadow.git_dir))
        if i < runs - 1:
            shutil.rmtree(home)
    assert agent is not None
    b_ours = median([b for b, _ in bytes_ours])
    b_git = median([b for b, _ in bytes_git])
    a_ours = median([a for _, a in bytes_ours])
    a_git = median([a for _, a in bytes_git])
    notes.append(
        f"first checkpoint, apparent bytes (file sizes, no block rounding): rewind-ls "
        f"{fmt(a_ours, 'B')}, shadow git {fmt(a_git, 'B')} ({a_ours / a_git:.2f}x); git writes one "
        "zlib file per object, rewind-ls one SQLite database"
    )
    rows = [
        Row("first checkpoint of the tree: time", median(first_ours), median(first_git), "s", 0.5),
        Row("first checkpoint of the tree: bytes on disk", b_ours, b_git, "B", 0.25),
    ]

    # Turn boundary: 10 files changed by a "shell command", then the Stop hook (a full workspace
    # scan) against add -A + commit.
    step = max(1, len(rels) // sizes.changed)
    changed = rels[1::step][: sizes.changed]
    stop_ours, stop_git, recorded = [], [], []
    for i in range(runs):
        agent.hook("UserPromptSubmit", prompt=f"turn {i}")
        change_files(tree, changed, f"turn {i}")

        def ours_stop() -> None:
            stop_ours.append(agent.hook("Stop", stop_hook_active=False))

        def git_stop(i: int = i) -> None:
            stop_git.append(timed(lambda: shadow.checkpoint(f"turn {i}")))

        for fn in (ours_stop, git_stop) if i % 2 == 0 else (git_stop, ours_stop):
            fn()
        recorded.append(_last_turn_changes(agent))
    notes.append(f"turn boundary: files recorded per turn by the scan: {sorted(set(recorded))}")
    rows.append(
        Row(
            f"turn boundary: {sizes.changed} files changed by a shell command "
            f"({tracked} files + {sizes.ignored} ignored)",
            median(stop_ours),
            median(stop_git),
            "s",
            1.0,
        )
    )

    # Restoring 10 files: `rewind-ls rewind TURN --yes` against `git restore --source --worktree`.
    agent.hook("UserPromptSubmit", prompt="the turn to rewind")
    before_commit = shadow.git("rev-parse", "HEAD")
    change_files(tree, changed, "to be rewound")
    agent.hook("Stop", stop_hook_active=False)
    shadow.checkpoint("to be rewound")
    after_commit = shadow.git("rev-parse", "HEAD")
    turn_id = _last_turn_id(agent)
    expected = {}
    for rel in changed:
        expected[rel] = run(
            ["git", f"--git-dir={shadow.git_dir}", "show", f"{before_commit}:{rel}"]
        ).stdout
    rest_ours, rest_git = [], []
    for i in range(runs):

        def ours_restore() -> None:
            rest_ours.append(agent.cli("rewind", turn_id, "--yes"))
            for rel in changed:
                with open(os.path.join(tree, rel), "rb") as f:
                    if f.read() != expected[rel]:
                        raise RuntimeError(f"rewind-ls rewind did not restore {rel}")
            agent.cli("undo", "--yes")

        def git_restore() -> None:
            rest_git.append(
                timed(
                    lambda: shadow.git(
                        "restore", f"--source={before_commit}", "--worktree", "--", *changed
                    )
                )
            )
            shadow.git("restore", f"--source={after_commit}", "--worktree", "--", *changed)

        for fn in (ours_restore, git_restore) if i % 2 == 0 else (git_restore, ours_restore):
            fn()
    rows.append(
        Row(
            f"restore {len(changed)} files from the CLI (vs git restore --source --worktree)",
            median(rest_ours),
            median(rest_git),
            "s",
            1.5,
        )
    )
    return rows


def _store_db(agent: Agent) -> str:
    from rewind_ls.core.store import store_dir_for

    return os.path.join(store_dir_for(agent.ws, agent.home), "store.sqlite3")


def _last_turn_id(agent: Agent) -> str:
    with sqlite3.connect(_store_db(agent)) as conn:
        row = conn.execute(
            "SELECT id FROM turns WHERE session_id = ? ORDER BY seq DESC LIMIT 1", (agent.session,)
        ).fetchone()
    return str(row[0])


def _last_turn_changes(agent: Agent) -> int:
    with sqlite3.connect(_store_db(agent)) as conn:
        return int(
            conn.execute(
                "SELECT count(*) FROM changes WHERE turn_id = ?", (_last_turn_id(agent),)
            ).fetchone()[0]
        )


def bench_storage(tmp: str, sizes: Sizes, notes: list[str]) -> Row:
    """Storage for N turns that each change one line of a big file: the store's reverse deltas
    against the shadow repository after `git gc` (delta-compressed pack)."""
    from rewind_ls.core.capture.recorder import Recorder
    from rewind_ls.core.store import Store

    ws = os.path.join(tmp, "storage-ws")
    os.makedirs(ws)
    target = os.path.join(ws, "big.txt")
    make_big_text(target, sizes.storage_file)
    home = os.path.join(tmp, "storage-home")
    shadow = Shadow(os.path.join(tmp, "storage-shadow.git"), ws)
    shadow.init()
    shadow.checkpoint("first")
    with Store.open(ws, home=home) as store:
        rec = Recorder(store)
        rec.baseline_budget = None
        rec.attribute_outside_changes()
        for i in range(sizes.storage_turns):
            rec.begin_turn("bench", f"turn {i}", agent="bench")
            change_line(target, i)
            rec.end_turn("bench")
            shadow.checkpoint(f"turn {i}")
        codecs = dict(
            store.conn.execute("SELECT codec, count(*) FROM blobs GROUP BY codec").fetchall()
        )
        versions = store.conn.execute("SELECT count(*) FROM changes").fetchone()[0]
    ours, _ = disk_usage(os.path.dirname(_store_path(ws, home)))
    ours_apparent = sum(
        os.path.getsize(os.path.join(os.path.dirname(_store_path(ws, home)), n))
        for n in os.listdir(os.path.dirname(_store_path(ws, home)))
    )
    shadow.git("gc", "-q")
    pack = 0
    pack_dir = os.path.join(shadow.git_dir, "objects", "pack")
    for name in os.listdir(pack_dir):
        if name.endswith(".pack"):
            pack += os.path.getsize(os.path.join(pack_dir, name))
    notes.append(
        f"storage: {versions} recorded changes; blobs by codec (0 raw, 1 zlib, 2 reverse delta): "
        f"{codecs}; store file {fmt(ours_apparent, 'B')} apparent, {fmt(ours, 'B')} on disk"
    )
    return Row(
        f"storage: {sizes.storage_turns} turns x 1 line of a {fmt(sizes.storage_file, 'B')} file "
        "(vs git gc pack)",
        float(ours_apparent),
        float(pack),
        "B",
        2.0,
    )


def _store_path(ws: str, home: str) -> str:
    from rewind_ls.core.store import store_dir_for

    return os.path.join(store_dir_for(ws, home), "store.sqlite3")


def _server_available() -> bool:
    proc = subprocess.run([PY, "-m", "rewind_ls", "serve", "--help"], capture_output=True)
    return proc.returncode == 0


def _fill_turns(ws: str, home: str, turns: int) -> None:
    """`turns` recorded turns, each changing one small file, written straight into the store."""
    from rewind_ls.core.store import ABSENT_VERSION, FILE, Store, Version

    with Store.open(ws, home=home) as store:
        store.ensure_session("bench", "agent", "bench")
        with store.transaction():
            for i in range(turns):
                turn = store.begin_turn("bench", f"prompt number {i}: change file {i % 50}")
                data = f"content {i}\n".encode()
                h = store.put_blob(data)
                store.record_before(turn, f"src/f{i % 50}.txt", ABSENT_VERSION, "tool")
                store.record_after(turn, f"src/f{i % 50}.txt", Version(FILE, h, 0o644, len(data)))
                store.end_turn(turn)


def _one_more_turn(store: Any) -> str:
    """One more turn of the bench's session, changing one file (what an agent's hooks write);
    returns its prompt."""
    from rewind_ls.core.store import ABSENT_VERSION, FILE, Version

    prompt = f"a new prompt {time.time_ns()}"
    turn = store.begin_turn("bench", prompt)
    data = prompt.encode()
    h = store.put_blob(data)
    store.record_before(turn, "src/new.txt", ABSENT_VERSION, "tool")
    store.record_after(turn, "src/new.txt", Version(FILE, h, 0o644, len(data)))
    store.end_turn(turn)
    return prompt


def bench_server(tmp: str, sizes: Sizes, runs: int, notes: list[str]) -> list[Row]:
    names = (
        f"preview+restore a {sizes.lsp_restore_files}-file turn through the language server",
        f"rewind/listTurns, a page, {sizes.memory_turns} turns",
        f"server peak memory, {sizes.memory_turns} turns",
    )
    if not _server_available():
        return [Row(n, None, None, "s", note="n/a (server not available)") for n in names]
    try:
        return _bench_server(tmp, sizes, runs, notes)
    except Exception as exc:  # the server is young: report, keep the other figures
        notes.append(f"server figures failed: {exc}")
        return [Row(n, None, None, "s", note="n/a (server failed, see notes)") for n in names]


def _trivial_round_trip(client: Any, ws: str, n: int = 20) -> float:
    """The server's round trip for a request that does no work: a code lens request for a document
    that is not open (answered [] at once). Measured in the same session as the figure beside it."""
    uri = "file://" + os.path.join(ws, "not-open.txt")
    times = []
    for _ in range(n):
        t = time.perf_counter()
        client.request("textDocument/codeLens", {"textDocument": {"uri": uri}})
        times.append(time.perf_counter() - t)
    return median(times)


def _bench_server(tmp: str, sizes: Sizes, runs: int, notes: list[str]) -> list[Row]:
    from bench.rpc import LspClient

    rows = []
    # A turn that changed N files, restored with rewind/restore (the server writes closed files).
    from rewind_ls.core.capture.recorder import Recorder
    from rewind_ls.core.store import Store

    ws = os.path.join(tmp, "lsp-ws")
    home = os.path.join(tmp, "lsp-home")
    for i in range(sizes.lsp_restore_files):
        os.makedirs(os.path.join(ws, "src"), exist_ok=True)
        with open(os.path.join(ws, "src", f"m{i}.ts"), "w") as f:
            f.write(f"export const v{i} = {i};\n" * 20)
    with Store.open(ws, home=home) as store:
        rec = Recorder(store)
        rec.baseline_budget = None
        rec.attribute_outside_changes()
        turn = rec.begin_turn("bench", "change everything", agent="bench")
        for i in range(sizes.lsp_restore_files):
            with open(os.path.join(ws, "src", f"m{i}.ts"), "a") as f:
                f.write("// changed\n")
        rec.end_turn("bench")
    env = {**BASE_ENV, "REWIND_LS_HOME": home}
    client = LspClient(ws, env)
    times = []
    statuses = set()
    try:
        client.initialize()
        trivial = _trivial_round_trip(client, ws)
        for _ in range(runs):
            t = time.perf_counter()
            client.request("rewind/preview", {"turnId": turn, "scope": "code", "mode": "rewind"})
            res = client.request(
                "rewind/restore", {"turnId": turn, "scope": "code", "mode": "rewind"}
            )
            times.append(time.perf_counter() - t)
            statuses.add(res["status"])
            client.request("rewind/undo", {})
    finally:
        client.close()
    notes.append(
        f"language server restore: status {sorted(statuses)} (closed files written by the server)"
    )
    rows.append(
        Row(
            f"preview+restore a {sizes.lsp_restore_files}-file turn through the language server "
            "(vs a trivial request)",
            median(times),
            trivial,
            "s",
            note=f"status {sorted(statuses)}",
        )
    )

    return rows + _bench_turn_lists(tmp, sizes, runs, notes)


# What the clients ask for: a page of the newest turns (editors/vscode TURN_PAGE, nvim PAGE) and, for
# the status bar, one turn with the session's count.
PAGE = {"limit": 100}
RESPONSE_TARGET = 64 << 10
MEMORY_TARGET = 80 << 20


def _cli_turns_argv() -> list[str]:
    """`rewind-ls turns` as a person runs it: the console script beside the interpreter."""
    script = os.path.join(os.path.dirname(PY), "rewind-ls")
    return [script, "turns"] if os.access(script, os.X_OK) else [PY, "-m", "rewind_ls", "turns"]


def _bench_turn_lists(tmp: str, sizes: Sizes, runs: int, notes: list[str]) -> list[Row]:
    """A long session: `rewind/listTurns` (a page, the view's refresh, the whole list), the
    server's memory, and `rewind-ls turns`."""
    from bench.rpc import LspClient

    count = sizes.memory_turns
    ws = os.path.join(tmp, f"turns-{count}")
    home = os.path.join(tmp, f"turns-{count}-home")
    os.makedirs(ws)
    _fill_turns(ws, home, count)
    env = {**BASE_ENV, "REWIND_LS_HOME": home}
    client = LspClient(ws, env)
    rows: list[Row] = []
    from rewind_ls.core.store import Store

    agent = Store.open(ws, home=home)  # the agent's hooks, in another process than the server's
    newest: list[str] = []
    try:
        client.initialize()

        def page_times() -> tuple[float, float, float]:
            # What a view does: it lists again after every turn, so a new turn is written (by
            # another connection, as a hook does) before each timed listing; a server that only
            # kept its last answer would not pass this.
            trivial = _trivial_round_trip(client, ws)
            page, refresh = [], []
            for _ in range(max(5, runs)):
                newest.append(_one_more_turn(agent))
                page.append(timed(lambda: client.request("rewind/listTurns", PAGE)))
                newest.append(_one_more_turn(agent))
                refresh.append(
                    timed(
                        lambda: (
                            client.request("rewind/listTurns", PAGE),
                            client.request("rewind/listTurns", {"limit": 1}),
                        )
                    )
                )
            return median(page), median(refresh), trivial

        quiet = page_times()
        busy = loaded(page_times)
        listing = client.request("rewind/listTurns", PAGE)
        size = len(json.dumps(listing).encode())
        listed = sum(len(s["turns"]) for s in listing["sessions"])
        total = sum(s["turnCount"] for s in listing["sessions"])
        if total < count:
            raise RuntimeError(f"rewind/listTurns counted {total} turns, expected {count}")
        client.request("rewind/timeline", {})
        # Peak memory of a server that clients read by pages (the whole list is measured after).
        peak = client.peak_rss_bytes()
        whole_t = timed(lambda: client.request("rewind/listTurns", {}))
        whole = client.request("rewind/listTurns", {})
        notes.append(
            f"rewind/listTurns with {count} turns: a page lists {listed} ({size / 1e3:.0f} KB); the "
            f"whole list (no limit, older clients) {len(json.dumps(whole)) / 1e6:.1f} MB in "
            f"{whole_t:.2f} s"
        )
        notes.append(
            f"server peak memory after the whole list too: {client.peak_rss_bytes() / 1e6:.1f} MB"
        )
        if listing["sessions"][0]["turns"][-1]["prompt"] != newest[-1]:
            raise RuntimeError("rewind/listTurns did not list the newest turn at once")
    finally:
        client.close()
        agent.close()
    page_name = f"rewind/listTurns, a page after a new turn, {count} turns (vs a trivial request)"
    view_name = (
        f"the view's refresh after a new turn (page + status count), {count} turns "
        "(vs a trivial request)"
    )
    rows += [
        Row(page_name, quiet[0], quiet[2], "s", 5.0),
        Row(page_name + " [loaded]", busy[0], busy[2], "s", 5.0),
        Row(view_name, quiet[1], quiet[2], "s", 5.0),
        Row(view_name + " [loaded]", busy[1], busy[2], "s", 5.0),
        Row(
            f"rewind/listTurns response, {count} turns (vs 64 KB)", size, RESPONSE_TARGET, "B", 1.0
        ),
        Row(
            f"server peak memory, {count} turns (vs 80 MB)",
            float(peak) if peak else None,
            MEMORY_TARGET,
            "B",
            1.0,
        ),
    ]

    def cli_times(argv: list[str]) -> Callable[[], tuple[float, float]]:
        def times() -> tuple[float, float]:
            ours, base = [], []
            for _ in range(max(5, runs)):
                ours.append(timed(lambda: run(argv, env=env, cwd=ws)))
                base.append(timed(lambda: run(FLOOR, env=BASE_ENV)))
            return median(ours), median(base)

        return times

    # Two rows, both kept: the development venv's console script (an editable install, whose
    # finder `site` runs at every start) and the one a person's install has (the wheel). No
    # target: the `<= 3x` one was retired with the command-line server (issue 37); a command runs
    # in the person's own process, and these rows say what that costs.
    name = f"rewind-ls turns, {count} turns (vs python -I -S -c pass)"
    rows.append(Row(name, *cli_times(_cli_turns_argv())(), "s"))
    rows.append(Row(name + " [loaded]", *loaded(cli_times(_cli_turns_argv())), "s"))
    script = _installed_console_script(tmp, notes)
    name = f"rewind-ls turns, installed wheel, {count} turns (vs python -I -S -c pass)"
    if script is None:
        rows.append(Row(name, None, None, "s", note="n/a (no wheel, see notes)"))
    else:
        rows.append(Row(name, *cli_times([script, "turns"])(), "s"))
        rows.append(Row(name + " [loaded]", *loaded(cli_times([script, "turns"])), "s"))
    return rows


def _installed_console_script(tmp: str, notes: list[str]) -> str | None:
    """`rewind-ls` as `pip install WHEEL` or pipx puts it: the wheel built from a copy of this
    tree, installed (not editable) in a venv of its own. Its dependencies are the development
    venv's, named by a `.pth` line (as pipx shares its own libraries); a plain path line is not
    an import hook, so `site` costs there what it costs in a person's venv. None (and a note)
    when the wheel cannot be built here (building it needs setuptools from the package index)."""
    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    src, out, venv = (os.path.join(tmp, "wheel-" + part) for part in ("src", "dist", "venv"))
    try:
        os.makedirs(src)
        for name in ("pyproject.toml", "README.md"):
            shutil.copy(os.path.join(repo, name), src)
        shutil.copytree(os.path.join(repo, "bin"), os.path.join(src, "bin"))
        shutil.copytree(
            os.path.join(repo, "rewind_ls"),
            os.path.join(src, "rewind_ls"),
            ignore=shutil.ignore_patterns("__pycache__"),
        )
        run([PY, "-m", "pip", "wheel", "--quiet", "--no-deps", "-w", out, src])
        wheels = [os.path.join(out, n) for n in os.listdir(out) if n.endswith(".whl")]
        run([PY, "-m", "venv", "--without-pip", venv])
        python = os.path.join(venv, "bin", "python")
        pip = [PY, "-m", "pip", "--python", python, "install", "--quiet", "--no-deps"]
        run([*pip, "--no-index", *wheels])
        purelib = run([python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"])
        import site

        with open(os.path.join(purelib.stdout.decode().strip(), "dependencies.pth"), "w") as f:
            f.write("".join(p + "\n" for p in site.getsitepackages()))
    except (OSError, RuntimeError) as exc:
        notes.append(f"installed wheel's console script not measured: {str(exc)[-300:]}")
        return None
    notes.append(f"installed wheel: {', '.join(os.path.basename(w) for w in wheels)} in {venv}")
    return os.path.join(venv, "bin", "rewind-ls")


def bench_export_rows(tmp: str, sizes: Sizes, runs: int, notes: list[str]) -> list[Row]:
    """Issue #41: export --to against git worktree add, export --git of a session
    (bench/export_bench.py)."""
    from bench.export_bench import bench_export

    try:
        found = bench_export(tmp, sizes.files < 1000, runs, BASE_ENV, notes)
    except Exception as exc:
        notes.append(f"export figures failed: {exc}")
        return [Row("export", None, None, "s", note="n/a (failed, see notes)")]
    return [Row(name, ours, base, unit, target) for name, ours, base, unit, target in found]


def bench_review_rows(tmp: str, sizes: Sizes, runs: int, notes: list[str]) -> list[Row]:
    """Issue #28: code actions + hover on a long file with a long history (bench/review_bench.py)."""
    from bench.review_bench import bench_review

    try:
        found = bench_review(tmp, sizes.review_lines, sizes.review_turns, runs, BASE_ENV, notes)
    except Exception as exc:
        notes.append(f"review figures failed: {exc}")
        return [Row("code actions + hover", None, None, "s", note="n/a (failed, see notes)")]
    return [Row(name, ours, base, "s", target) for name, ours, base, target in found]


def bench_mcp_rows(tmp: str, sizes: Sizes, runs: int, notes: list[str]) -> list[Row]:
    """Issue #39: the MCP server's tool calls against `rewind-ls turns` (bench/mcp_bench.py)."""
    from bench.mcp_bench import bench_mcp

    try:
        return bench_mcp(tmp, sizes, runs, notes)
    except Exception as exc:
        notes.append(f"MCP figures failed: {exc}")
        return [Row("MCP list_turns, preview", None, None, "s", note="n/a (failed, see notes)")]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__.split("\n\n")[0])
    parser.add_argument("--smoke", action="store_true", help="tiny sizes and 1 run (CI)")
    parser.add_argument(
        "--runs", type=int, default=None, help="runs per figure (default 5; smoke 1)"
    )
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder")
    parser.add_argument(
        "--only",
        choices=["hook", "tree", "storage", "server", "review", "mcp", "export"],
        action="append",
        help="run only these workloads (repeatable)",
    )
    args = parser.parse_args(argv)
    runs = args.runs or (1 if args.smoke else 5)
    sizes = Sizes(args.smoke)
    only = set(args.only or ["hook", "tree", "storage", "server", "review", "mcp", "export"])
    tmp = tempfile.mkdtemp(prefix="rewind-ls-bench-")
    notes: list[str] = []
    rows: list[Row] = []
    started = time.perf_counter()
    BASE_ENV.pop("PYTHONDONTWRITEBYTECODE", None)
    BASE_ENV["PYTHONPYCACHEPREFIX"] = os.path.join(tmp, "pycache")
    run([PY, "-m", "compileall", "-q", os.path.dirname(HERE) + "/rewind_ls"], env=BASE_ENV)
    git_version = run(["git", "--version"]).stdout.decode().strip()
    print(
        f"rewind-ls bench{' (smoke)' if args.smoke else ''}: {runs} run(s) per figure, median; "
        f"Python {platform.python_version()}, {git_version}, {os.cpu_count()} CPUs, "
        f"load average {load_average()} at the start, {tmp}",
        flush=True,
    )
    try:
        if "hook" in only:
            rows.extend(bench_hook(tmp, sizes, runs))
        if "tree" in only:
            rows.extend(bench_tree(tmp, sizes, runs, notes))
        if "storage" in only:
            rows.append(bench_storage(tmp, sizes, notes))
        if "server" in only:
            rows.extend(bench_server(tmp, sizes, runs, notes))
        if "review" in only:
            rows.extend(bench_review_rows(tmp, sizes, runs, notes))
        if "mcp" in only:
            rows.extend(bench_mcp_rows(tmp, sizes, runs, notes))
        if "export" in only:
            rows.extend(bench_export_rows(tmp, sizes, runs, notes))
    finally:
        for home in HOMES:
            stop_hook_server(home)
        if args.keep:
            notes.append(f"kept: {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    print()
    print_table(rows)
    print()
    for note in notes:
        print(f"- {note}")
    print(
        f"- load average {load_average()} at the end; total {time.perf_counter() - started:.0f} s"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
