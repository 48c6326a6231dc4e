"""Workspace scans: shell side effects are recorded at turn boundaries and restored by a rewind.

The end-to-end tests drive the real hook process (`FakeClaude`) and the real CLI; the in-process tests
call the scan directly to watch exactly which files it opens.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from rewind_ls.core.capture import folder_cache, shell_runs
from rewind_ls.core.capture import scan as scan_mod
from rewind_ls.core.capture.recorder import Recorder
from rewind_ls.core.store import Store
from tests.support.agent import FakeClaude

Snapshot = Callable[[], dict[str, tuple[bytes, int]]]


def _write(path: Path, text: str, mode: int | None = None) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    if mode is not None:
        path.chmod(mode)


def _tree_digest(top: Path) -> str:
    """Hash of every name, mode and byte under `top` (a .git folder), to prove nothing touched it."""
    h = hashlib.sha256()
    for dirpath, dirnames, filenames in os.walk(top):
        dirnames.sort()
        for name in sorted(filenames + dirnames):
            p = Path(dirpath) / name
            st = p.lstat()
            h.update(f"{p.relative_to(top)}\0{st.st_mode}\0".encode())
            if p.is_file() and not p.is_symlink():
                h.update(p.read_bytes())
    return h.hexdigest()


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.email=t@t", "-c", "user.name=t", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
    )


def _rewind(ws: Path, home: Path, turn: str, *extra: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "REWIND_LS_HOME": str(home), "CLAUDE_CONFIG_DIR": str(home / "claude")}
    proc = subprocess.run(
        [sys.executable, "-m", "rewind_ls", "rewind", turn, "--yes", *extra],
        cwd=ws,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc


def _turn_files(ws: Path, home: Path) -> list[dict[str, Any]]:
    import json

    env = {**os.environ, "REWIND_LS_HOME": str(home), "CLAUDE_CONFIG_DIR": str(home / "claude")}
    proc = subprocess.run(
        [sys.executable, "-m", "rewind_ls", "turns", "--json"],
        cwd=ws,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    turns: list[dict[str, Any]] = json.loads(proc.stdout)["sessions"][0]["turns"]
    return turns


SHELL_TURN = (
    "printf 'changed\\n' >> src/a.txt"
    " && printf 'new\\n' > src/new.txt"
    " && rm src/b.txt"
    " && mv src/c.txt src/c-renamed.txt"
    " && chmod +x run.sh"
)


def _plain_workspace(ws: Path) -> None:
    _write(ws / "src" / "a.txt", "a\n")
    _write(ws / "src" / "b.txt", "b\n")
    _write(ws / "src" / "c.txt", "c\n")
    _write(ws / "run.sh", "echo hi\n", 0o644)


def test_shell_changes_in_a_plain_folder_are_restored(
    ws: Path, home: Path, agent: FakeClaude, snapshot: Snapshot
) -> None:
    _plain_workspace(ws)
    agent.turn("first", {"notes.md": "# notes\n"})
    before = snapshot()

    agent.turns += 1
    agent.hook("UserPromptSubmit", prompt="shell edits")
    agent.shell(SHELL_TURN)
    agent.hook("Stop", stop_hook_active=False)
    after = snapshot()
    assert after != before

    files = {f["path"]: f["change"] for f in _turn_files(ws, home)[1]["files"]}
    assert files == {
        "src/a.txt": "modified",
        "src/new.txt": "created",
        "src/b.txt": "deleted",
        "src/c.txt": "deleted",
        "src/c-renamed.txt": "created",
        "run.sh": "modified",
    }
    _rewind(ws, home, "2")
    assert snapshot() == before


def test_changes_between_boundaries_without_a_bash_hook_are_caught_at_stop(
    ws: Path, home: Path, agent: FakeClaude, snapshot: Snapshot
) -> None:
    """A formatter or code generator run by the agent outside the Bash tool: found at Stop."""
    _plain_workspace(ws)
    agent.hook("SessionStart", source="startup")
    before = snapshot()
    agent.turns += 1
    agent.hook("UserPromptSubmit", prompt="generate")
    subprocess.run(["sh", "-c", SHELL_TURN], cwd=ws, check=True)
    agent.hook("Stop", stop_hook_active=False)
    _rewind(ws, home, "1")
    assert snapshot() == before


def test_git_repo_with_nested_ignores_and_a_nested_repository(
    ws: Path, home: Path, agent: FakeClaude, snapshot: Snapshot
) -> None:
    _git(ws, "init", "-q")
    _write(ws / ".gitignore", "build/\n*.log\n")
    _write(ws / "pkg" / ".gitignore", "gen/\n!keep.log\n")
    _write(ws / "pkg" / "mod.py", "x = 1\n")
    _write(ws / "pkg" / "gen" / "out.py", "generated\n")
    _write(ws / "pkg" / "keep.log", "kept\n")
    _write(ws / "build" / "app.bin", "binary\n")
    _write(ws / "debug.log", "log\n")
    # A nested repository is another checkout (issue #38): none of its files is recorded or restored.
    nested = ws / "vendor" / "lib"
    nested.mkdir(parents=True)
    _git(nested, "init", "-q")
    _write(nested / ".gitignore", "out/\n")
    _write(nested / "lib.c", "int f(void);\n")
    _write(nested / "out" / "lib.o", "object\n")
    _git(nested, "add", "-A")
    _git(nested, "commit", "-q", "-m", "nested")
    _write(ws / ".git" / "info" / "exclude", "secret.txt\n")
    _write(ws / "secret.txt", "s\n")
    _git(ws, "add", "-A")
    _git(ws, "commit", "-q", "-m", "outer")
    _plain_workspace(ws)
    git_before = (_tree_digest(ws / ".git"), _tree_digest(nested / ".git"))

    agent.turn("first", {"notes.md": "# notes\n"})
    before = snapshot()
    agent.turns += 1
    agent.hook("UserPromptSubmit", prompt="shell edits everywhere")
    agent.shell(
        SHELL_TURN + " && printf 'y = 2\\n' >> pkg/mod.py"
        " && printf 'changed\\n' >> vendor/lib/lib.c"
        " && printf 'new\\n' > vendor/lib/new.h"
        " && printf 'more\\n' >> pkg/keep.log"
        # Ignored: never recorded, and left alone by the rewind.
        " && printf 'regenerated\\n' > pkg/gen/out.py && printf 'rebuilt\\n' > build/app.bin"
        " && printf 'relinked\\n' > vendor/lib/out/lib.o && printf 'more\\n' >> debug.log"
        " && printf 'more\\n' >> secret.txt"
    )
    agent.hook("Stop", stop_hook_active=False)
    ignored = {
        p: snapshot()[p]
        for p in (
            "pkg/gen/out.py",
            "build/app.bin",
            "vendor/lib/out/lib.o",
            "debug.log",
            "vendor/lib/lib.c",
            "vendor/lib/new.h",
        )
    }
    ignored["secret.txt"] = snapshot()["secret.txt"]

    files = {f["path"] for f in _turn_files(ws, home)[1]["files"]}
    assert {"pkg/mod.py", "pkg/keep.log"} <= files
    assert not files & set(ignored)
    assert not any(f.startswith("vendor/lib/") for f in files)
    assert not any("/.git/" in f or f.startswith(".git/") for f in files)

    _rewind(ws, home, "2")
    now = snapshot()
    for path, state in ignored.items():
        assert now.pop(path) == state  # untouched by the rewind
        before.pop(path, None)
    assert now == before
    assert (_tree_digest(ws / ".git"), _tree_digest(nested / ".git")) == git_before


def test_rewind_ignore_setting_and_file(
    ws: Path, home: Path, agent: FakeClaude, snapshot: Snapshot
) -> None:
    _write(ws / ".rewindignore", "*.tmp\n")
    _write(ws / "a.txt", "a\n")
    agent.env["REWIND_LS_IGNORE"] = "data/, *.cache"
    agent.turn("first", {"notes.md": "# notes\n"})
    agent.turns += 1
    agent.hook("UserPromptSubmit", prompt="shell")
    agent.shell(
        "printf x > a.tmp && mkdir data && printf x > data/big.csv && printf x > b.cache"
        " && printf x > a.txt"
    )
    agent.hook("Stop", stop_hook_active=False)
    files = {f["path"] for f in _turn_files(ws, home)[1]["files"]}
    assert files == {"a.txt"}


# --- in-process -------------------------------------------------------------------------------


@pytest.fixture
def store(ws: Path, home: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Store]:
    monkeypatch.setenv("REWIND_LS_HOME", str(home))
    with Store.open(str(ws)) as s:
        yield s


_AUDIT: list[list[str]] = []
_HOOKED: list[bool] = []


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if _AUDIT and event in ("open", "os.scandir", "os.listdir") and args:
        _AUDIT[-1].append(os.fsdecode(args[0]) if isinstance(args[0], (str, bytes)) else "")


def test_ignored_trees_are_never_opened(ws: Path, store: Store) -> None:
    _write(ws / ".gitignore", "node_modules/\n")
    for i in range(50):
        _write(ws / "node_modules" / f"m{i}" / "index.js", "x\n")
    locked = ws / "node_modules" / "locked"
    locked.mkdir()
    locked.chmod(0)
    _write(ws / "src" / "a.js", "a\n")
    if not _HOOKED:
        sys.addaudithook(_audit)  # audit hooks cannot be removed: it only records while armed
        _HOOKED.append(True)
    rec = Recorder(store)
    opened: list[str] = []
    try:
        _AUDIT.append(opened)
        rec.attribute_outside_changes()  # the baseline
        _AUDIT.pop()
        _write(ws / "node_modules" / "m1" / "index.js", "changed\n")
        (ws / "src" / "a.js").write_text("changed\n")
        turn = store.begin_turn(_session(store), "p")
        _AUDIT.append(opened)
        changes = rec.scan_into(turn, "s")
    finally:
        del _AUDIT[:]
        locked.chmod(0o755)
    assert [c[0] for c in changes] == ["src/a.js"]
    assert rec.last_scan is not None and not rec.last_scan.skipped
    inside = [p for p in opened if "node_modules" + os.sep in p + os.sep]
    assert inside == [], inside
    assert any(p.endswith("a.js") for p in opened)


def _session(store: Store, sid: str = "s") -> str:
    store.ensure_session(sid, "agent", "test")
    return sid


def test_only_changed_signatures_are_read(ws: Path, store: Store) -> None:
    for i in range(100):
        _write(ws / f"f{i}.txt", f"{i}\n")
    rec = Recorder(store)
    rec.attribute_outside_changes()
    assert rec.last_scan is not None and rec.last_scan.adopted == 100
    time.sleep(0.15)  # past the racy window, so the baseline's signatures are trusted
    rec.attribute_outside_changes()
    (ws / "f3.txt").write_text("three\n")
    rec.attribute_outside_changes()
    assert rec.last_scan.read == 1 and rec.last_scan.files == 100
    assert [c[0] for c in rec.last_scan.changes] == ["f3.txt"]


def test_baseline_under_a_budget_adopts_and_resumes(ws: Path, store: Store) -> None:
    for i in range(300):
        _write(ws / "d" / f"f{i:03d}.txt", f"{i}\n")
    seen: list[tuple[str, int, int]] = []
    rec = Recorder(store)
    rec.progress = lambda what, done, total: seen.append((what, done, total))
    rec.baseline_budget = 0.0  # stop at once: nothing is read
    rec.attribute_outside_changes()
    assert rec.last_scan is not None and not rec.last_scan.baseline_complete
    # While the baseline is incomplete a new file is adopted, never called "created": a rewind
    # must not delete a file that may have been there all along.
    _write(ws / "late.txt", "late\n")
    rec.baseline_budget = None
    assert rec.attribute_outside_changes() is None
    assert rec.last_scan.baseline_complete and rec.last_scan.adopted > 0
    assert seen and seen[-1][0] == "baseline" and seen[-1][1] == seen[-1][2]
    assert store.known("late.txt") is not None
    assert scan_mod.baseline_complete(store)


def test_unignored_old_file_is_adopted_not_created(
    ws: Path, store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(scan_mod, "_CLOCK_SLACK_NS", 0)
    _write(ws / ".gitignore", "gen/\n")
    _write(ws / "gen" / "old.txt", "old\n")
    rec = Recorder(store)
    rec.attribute_outside_changes()
    time.sleep(0.05)
    rec.attribute_outside_changes()  # the watermark is now after old.txt's ctime
    (ws / ".gitignore").write_text("")
    _write(ws / "brand-new.txt", "new\n")
    found = {c[0]: c[1].kind for c in rec.scan_into(store.begin_turn(_session(store), "p"), "s")}
    assert found == {"brand-new.txt": "absent", ".gitignore": "file"}
    assert store.known("gen/old.txt") is not None


def test_other_sessions_running_shell_command_is_left_to_it(ws: Path, store: Store) -> None:
    _write(ws / "mine.txt", "mine\n")
    _write(ws / "theirs.txt", "theirs\n")
    rec = Recorder(store)
    rec.attribute_outside_changes()
    a = rec.begin_turn("A", "a's prompt")
    b = rec.begin_turn("B", "b's prompt")
    time.sleep(0.01)
    (ws / "mine.txt").write_text("mine, edited by A's formatter before B's command\n")
    old_ctime = (ws / "mine.txt").stat().st_ctime_ns
    shell_runs.shell_started(store, "B", "tool-1")
    (ws / "theirs.txt").write_text("theirs, written by B's command\n")
    assert (ws / "theirs.txt").stat().st_ctime_ns >= old_ctime
    # A's turn ends while B's command runs: B's in-flight file is not A's.
    # (mine.txt is within the clock slack of B's start, so it is deferred too.)
    rec.end_turn("A")
    assert "theirs.txt" not in {c.path for c in store.changes(a)}
    # B's PostToolUse scan attributes it.
    changes = rec.scan_into(b, "B")
    shell_runs.shell_finished(store, "B", "tool-1")
    assert "theirs.txt" in {c[0] for c in changes}
    assert "theirs.txt" in {c.path for c in store.changes(b)}


def test_other_sessions_open_edit_is_left_to_it(ws: Path, store: Store) -> None:
    _write(ws / "f.txt", "f\n")
    rec = Recorder(store)
    rec.attribute_outside_changes()
    a = rec.begin_turn("A", "a")
    rec.begin_turn("B", "b")
    rec.before("B", "f.txt")  # B's Write tool is in flight
    (ws / "f.txt").write_text("B's write\n")
    rec.end_turn("A")
    assert store.changes(a) == []
    rec.after("B", "f.txt")
    assert store.known("f.txt") is not None


def test_deleted_and_recreated_folder_and_symlink(ws: Path, store: Store) -> None:
    _write(ws / "dir" / "x.txt", "x\n")
    rec = Recorder(store)
    rec.attribute_outside_changes()
    turn = rec.begin_turn("A", "p")
    os.remove(ws / "dir" / "x.txt")
    os.rmdir(ws / "dir")
    (ws / "dir").write_text("now a file\n")
    os.symlink("/etc/passwd", ws / "link")
    found = {c[0]: (c[1].kind, c[2].kind) for c in rec.scan_into(turn, "A")}
    # The symlink is not content rewind-ls records (nor does it follow it out of the workspace).
    assert found == {"dir/x.txt": ("file", "absent"), "dir": ("absent", "file")}


def test_scan_command_takes_the_baseline_then_records_outside_changes(ws: Path, home: Path) -> None:
    import json

    _plain_workspace(ws)
    # Files written well before the scan: a file written within the scan's racy window (its mtime
    # too close to the scan to be trusted) is read again next time, by design, and a quick machine
    # starts the scan inside that window.
    old = time.time() - 5
    for p in ws.rglob("*"):
        os.utime(p, (old, old))
    env = {**os.environ, "REWIND_LS_HOME": str(home), "REWIND_LS_BASELINE_SECONDS": "0.000001"}

    def scan() -> dict[str, Any]:
        proc = subprocess.run(
            [sys.executable, "-m", "rewind_ls", "scan", "--json"],
            cwd=ws,
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
        result: dict[str, Any] = json.loads(proc.stdout)
        return result

    first = scan()  # the command is unbounded, whatever the hooks' budget says
    assert first["baselineComplete"] and first["baselineAdded"] == 4 and first["changes"] == []
    (ws / "src" / "a.txt").write_text("edited by the person\n")
    second = scan()
    assert second["changes"] == ["src/a.txt"] and second["turnId"]
    assert second["read"] == 1


def test_folder_cache_lists_exactly_what_the_walk_lists(ws: Path, store: Store) -> None:
    """The scan's folder cache (skips listing folders whose mtime did not change) must always agree
    with `core.capture.walk.walk`, through creations, deletions, renames, new and edited ignore files,
    new nested repositories and info/exclude edits."""
    import random

    from rewind_ls.core.capture.ignore import IgnoreRules
    from rewind_ls.core.capture.walk import walk

    rng = random.Random(int(os.environ.get("REWIND_LS_TEST_SEED", "6")))
    _write(ws / ".gitignore", "*.log\nbuild/\n")
    for d in ("a", "a/b", "a/b/c", "d", "build", "e/f"):
        for i in range(3):
            _write(ws / d / f"f{i}.txt", "x")
    _write(ws / "a" / "x.log", "log")

    def dirs() -> list[Path]:
        out = [ws]
        for p in sorted(ws.rglob("*")):
            if p.is_dir() and ".git" not in p.parts:
                out.append(p)
        return out

    def mutate(step: int) -> str:
        d = rng.choice(dirs())
        kind = rng.randrange(9)
        if kind == 0:
            _write(d / f"n{step}.txt", "new")
        elif kind == 1:
            files = [p for p in d.iterdir() if p.is_file() and p.name != ".gitignore"]
            if files:
                rng.choice(files).unlink()
        elif kind == 2:
            files = [p for p in d.iterdir() if p.is_file() and p.suffix == ".txt"]
            if files:
                rng.choice(files).rename(d / f"r{step}.log" if step % 2 else d / f"r{step}.txt")
        elif kind == 3:
            _write(d / f"sub{step}" / "g.txt", "g")
        elif kind == 4:  # an ignore file edited in place (same size: only the rules differ)
            gi = d / ".gitignore"
            rules = ["f1.txt\n", "f2.txt\n", "c/\n", "!x.log\n", "*.txt\n"]
            gi.write_text(rng.choice(rules))
        elif kind == 5 and d != ws and not (d / ".git").exists():
            (d / ".git" / "info").mkdir(parents=True)  # a nested repository appears
        elif kind == 6:
            exclude = ws / ".git" / "info" / "exclude"
            if (ws / ".git").exists():
                exclude.write_text(rng.choice(["f0.txt\n", "b/\n", ""]))
            else:
                (ws / ".git" / "info").mkdir(parents=True)
        elif kind == 7:
            (ws / ".rewindignore").write_text(rng.choice(["d/\n", "!x.log\n", "f2.txt\n"]))
        elif kind == 8:
            for p in (d / "f0.txt", d / "f1.txt"):
                if p.exists():
                    p.write_text("content changed, listing did not")
        return f"{kind} in {d.relative_to(ws)}"

    history = []
    for step in range(40):
        if step % 3 == 0:
            time.sleep(0.12)  # past the racy window, so the cache is trusted on the next scan
        rules = IgnoreRules.load(str(ws), [])
        expected = {rel for rel, _ in walk(str(ws), rules, folder_cache.skip_dirs(store))}
        got = {rel for rel, _ in folder_cache.walk_files(store, rules, [], time.time_ns())}
        assert got == expected, (history, got ^ expected)
        history.append(mutate(step))


def test_reverse_deltas_keep_a_much_edited_file_small(ws: Path, store: Store) -> None:
    """Each turn stores the newest version whole and re-encodes the previous one as a delta against
    it; the store must not keep a page per old version (it did, updating rows in place)."""
    import zlib

    lines = [f"line {i}: {hashlib.sha256(str(i).encode()).hexdigest()}\n" for i in range(4000)]
    target = ws / "big.txt"
    target.write_text("".join(lines))
    whole = len(zlib.compress(target.read_bytes(), 6))
    rec = Recorder(store)
    rec.attribute_outside_changes()
    for i in range(120):
        rec.begin_turn("A", f"turn {i}")
        lines[(i * 97) % len(lines)] = f"changed in turn {i}\n"
        target.write_text("".join(lines))
        rec.end_turn("A")
    codecs = dict(store.conn.execute("SELECT codec, count(*) FROM blobs GROUP BY codec").fetchall())
    assert codecs == {1: 1, 2: 120}  # one whole version, every older one a delta
    pages = store.conn.execute("PRAGMA page_count").fetchone()[0]
    size = pages * store.conn.execute("PRAGMA page_size").fetchone()[0]
    # Two whole versions (the newest, and the free pages the next one reuses), deltas, turns.
    assert size < 3 * whole + 100_000, (size, whole)


def test_oldest_version_of_a_much_edited_file_is_still_readable(store: Store) -> None:
    """Each scan re-encodes the previous version as a delta against the new one: a file edited in
    hundreds of turns has a delta chain that deep. Reading its oldest version must not recurse."""
    lines = [f"line {i} with enough text to be worth a delta\n" for i in range(400)]
    versions: list[tuple[str, bytes]] = []
    previous = None
    for i in range(1200):
        lines[i % len(lines)] = f"changed in turn {i}\n"
        data = "".join(lines).encode()
        previous = store.put_blob(data, previous=previous)
        versions.append((previous, data))
    deltas = store.conn.execute("SELECT count(*) FROM blobs WHERE codec = 2").fetchone()[0]
    assert deltas == len(versions) - 1
    for h, data in (versions[0], versions[600], versions[-1]):
        assert store.get_blob(h) == data
