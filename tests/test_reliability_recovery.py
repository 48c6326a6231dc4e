"""Nothing lost after a crash or in a race (issue #11, items 1 and 2), with the real CLI and hooks.

- Kill loop: an agent turn, then a rewind killed mid-swap (`REWIND_LS_FAULT=after-swap:K`); the
  person edits files showing the half state (some swapped, some not, some the restore created); in
  every other round a CLI command's recovery is killed too (a path moved aside, or its old content
  put back with the aside file not yet deleted: `undo-aside:N` / `undo-put-back:N`) and the person
  edits again; the agent keeps working through its hooks (the first hook finishes the roll back);
  then a CLI command runs. Every edit made after a kill is on disk (or kept beside its file, named),
  the untouched rest is back as before the restore, the hooks recorded nothing but the person's and
  the agent's edits, no temporary name was recorded, and the store is whole.
- Races at the gap: a writer lands after the last check and before the old file is moved aside, or
  after it was moved aside and before the new one goes in (`before-aside:N` / `before-link:N` hold
  the window open), or writes through a file descriptor opened before the restore; and writes at
  random moments during restores of many files. Lost writes must be 0.

Figures: printed at the end of the module (`Tally`); `REWIND_RELIABILITY_RUNS=N` sizes the loops.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from rewind_ls.core.store import digest
from tests.support.agent import FakeClaude
from tests.support.fault import Tally, check_store_whole, cli, env_for, query, runs

count = Tally("reliability/recovery")


@pytest.fixture(scope="module", autouse=True)
def report_tally() -> Iterator[None]:
    yield
    count.report()


def _stray(ws: Path) -> list[str]:
    return sorted(
        str(p.relative_to(ws)) for p in ws.rglob("*") if ".rewind-" in p.name and p.is_file()
    )


def _files(ws: Path, names: list[str]) -> dict[str, bytes | None]:
    return {n: (ws / n).read_bytes() if (ws / n).exists() else None for n in names}


def _person_edits(
    ws: Path, rng: random.Random, pool: list[str], r: int, what: str
) -> list[tuple[str, bytes]]:
    """The person edits some files as they are now (half restored, or moved aside by a recovery
    killed midway: absent), before any rewind-ls process runs. Returns (file, content) of each."""
    writes = []
    for n in rng.sample(sorted(set(pool)), 2):
        old = (ws / n).read_bytes() if (ws / n).exists() else b""
        data = old + f"person edit after {what} {r}\n".encode()
        (ws / n).write_bytes(data)
        writes.append((n, data))
    return writes


def _kept(name: str, data: bytes, final: bytes | None, beside: list[Path]) -> bool:
    """Whether an edit survived: the file holds it (or a later edit that appended to it), or a
    recovery kept it beside the file (an edit moved aside by a recovery killed midway, then the
    person wrote the path again) and said so."""
    if final is not None and final.startswith(data):
        return True
    return any(p.name.startswith(f".{name}.rewind-") and p.read_bytes() == data for p in beside)


def _kill_the_recovery(ws: Path, home: Path, rng: random.Random, swapped: int) -> bool:
    """Run a CLI command whose recovery is killed with a path moved aside or half put back; True
    when it died (the fault is reached only when that path is rolled back)."""
    stage = rng.choice(["undo-aside", "undo-put-back"])
    proc = cli(
        ws, home, "turns", extra_env={"REWIND_LS_FAULT": f"{stage}:{rng.randint(1, swapped)}"}
    )
    assert proc.returncode in (0, 137), proc.stderr
    return proc.returncode == 137


def _recorded_since(ws: Path, home: Path, seq: int) -> list[tuple[str]]:
    """The paths recorded as someone's change (not a restore's) after change `seq`."""
    rows = query(
        ws,
        home,
        "SELECT DISTINCT c.path FROM changes c JOIN turns t ON t.id = c.turn_id"
        " WHERE c.seq > ? AND t.session_id != 'rewind'",
        seq,
    )
    return [(str(p),) for (p,) in rows]


def _check_recorded(
    ws: Path,
    home: Path,
    agent: FakeClaude,
    seq: int,
    mine: dict[str, bytes],
    theirs: dict[str, bytes],
) -> None:
    """Since the kill, the agent's hooks recorded the person's edits and the agent's own, nothing
    else (a hook that recorded before finishing the interrupted restore would record its half
    swapped files as someone's change); the agent's turn after the kill holds its own edits only;
    no temporary name was ever recorded and no restore is left pending."""
    recorded = _recorded_since(ws, home, seq)
    assert {p for (p,) in recorded} <= {*mine, *theirs}, (recorded, mine, theirs)
    rows = query(
        ws,
        home,
        "SELECT c.path FROM changes c JOIN turns t ON t.id = c.turn_id"
        " WHERE t.session_id = ? AND t.number = ?",
        agent.session_id,
        agent.turns,
    )
    assert sorted(p for (p,) in rows) == sorted(theirs)
    assert query(ws, home, "SELECT count(*) FROM changes WHERE path LIKE '%.rewind-%'") == [(0,)]
    assert query(ws, home, "SELECT count(*) FROM turns WHERE state = 'pending'") == [(0,)]


def test_kill_loop_agent_and_person_keep_working(tmp_path: Path) -> None:
    rng = random.Random(11)
    ws, home = tmp_path / "ws", tmp_path / "home"
    ws.mkdir()
    names = [f"f{i:02}.txt" for i in range(12)]
    for n in names:
        (ws / n).write_bytes(f"{n} original\n".encode())
    agent = FakeClaude(ws, home, session_id="kill-loop")
    agent.hook("SessionStart", source="startup")
    for r in range(runs(6)):
        # An agent turn that changes some files and creates one; its number is the rewind's target.
        changed, created = rng.sample(names, 6), f"new{r}.txt"
        edits = {n: f"{n} by agent round {r}\n" for n in changed}
        agent.turn(f"round {r}", {**edits, created: f"created {r}\n"})
        before_rewind = _files(ws, [*names, created])
        swapped = rng.randint(1, len(changed))  # always a half state: some swapped, some not
        killed = cli(
            ws,
            home,
            *("rewind", str(agent.turns), "--session", agent.session_id, "--yes"),
            extra_env={"REWIND_LS_FAULT": f"after-swap:{swapped}"},
        )
        assert killed.returncode == 137, killed.stderr
        count("kills")
        (seq,) = query(ws, home, "SELECT max(seq) FROM changes")[0]
        pool = [*changed, created, *names[:2]]
        writes = _person_edits(ws, rng, pool, r, "the kill")
        if r % 2 and _kill_the_recovery(ws, home, rng, swapped):
            count("kills")
            count("recoveries killed")
            writes += _person_edits(ws, rng, pool, r, "the killed recovery")
        mine = dict(writes)
        # The agent keeps working on other files; its first hook finishes the interrupted restore.
        others = [n for n in names if n not in mine]
        theirs = {n: f"{n} agent after kill {r}\n".encode() for n in rng.sample(others, 2)}
        agent.turn(f"after kill {r}", dict(theirs))
        done = cli(ws, home, "turns", "--all")
        assert done.returncode == 0, done.stderr
        expected = {**before_rewind, **mine, **theirs}
        now = _files(ws, list(expected))
        beside = [ws / p for p in _stray(ws)]
        edits = [*writes, *theirs.items()]
        kept = [e for e in edits if _kept(e[0], e[1], now[e[0]], beside)]
        count("edits after kills", len(edits))
        count("edits after kills kept", len(kept))
        assert len(kept) == len(edits), f"round {r}: lost {set(edits) - set(kept)}"
        lost = [n for n in expected if now[n] != expected[n]]
        assert not lost, f"round {r}: {lost} differ from the expected content"
        # A file left beside a path holds an edit of the person's, nothing else.
        assert all(any(p.read_bytes() == d for _, d in writes) for p in beside), beside
        count("edits kept beside their file (named by the recovery)", len(beside))
        _check_recorded(ws, home, agent, seq, mine, theirs)
    check_store_whole(ws, home)


def test_recovery_is_undoable_and_leaves_moved_on_paths(tmp_path: Path) -> None:
    ws, home = tmp_path / "ws", tmp_path / "home"
    ws.mkdir()
    for n in ("a.txt", "b.txt", "c.txt"):
        (ws / n).write_bytes(f"{n} v0\n".encode())
    agent = FakeClaude(ws, home)
    agent.hook("SessionStart", source="startup")
    agent.turn("one", {"a.txt": "a v1\n", "b.txt": "b v1\n", "c.txt": "c v1\n"})
    killed = cli(ws, home, "rewind", "1", "--yes", extra_env={"REWIND_LS_FAULT": "after-swap:3"})
    assert killed.returncode == 137
    half = _files(ws, ["a.txt", "b.txt", "c.txt"])
    assert half == {"a.txt": b"a.txt v0\n", "b.txt": b"b.txt v0\n", "c.txt": b"c.txt v0\n"}
    (ws / "b.txt").write_bytes(b"b edited by the person after the kill\n")
    done = cli(ws, home, "turns")
    assert done.returncode == 0
    err = done.stderr.decode()
    assert "left alone, changed since the interruption: b.txt" in err, err
    assert "rewind-ls undo" in err
    # Put back where rewind-ls' own content was found; b kept as the person left it.
    assert _files(ws, ["a.txt", "b.txt", "c.txt"]) == {
        "a.txt": b"a v1\n",
        "b.txt": b"b edited by the person after the kill\n",
        "c.txt": b"c v1\n",
    }
    assert _stray(ws) == []
    # Undo brings back the half state the recovery found (b is the person's: a conflict, skipped).
    undone = cli(ws, home, "undo", "--yes", "--skip-conflicts")
    assert undone.returncode == 0, undone.stderr
    assert (ws / "a.txt").read_bytes() == b"a.txt v0\n"
    assert (ws / "c.txt").read_bytes() == b"c.txt v0\n"
    assert (ws / "b.txt").read_bytes() == b"b edited by the person after the kill\n"


def _race_world(tmp_path: Path, n: int) -> tuple[Path, Path, FakeClaude, list[str]]:
    ws, home = tmp_path / "ws", tmp_path / "home"
    ws.mkdir()
    names = [f"f{i:03}.txt" for i in range(n)]
    for name in names:
        (ws / name).write_bytes(b"v0\n")
    agent = FakeClaude(ws, home)
    agent.hook("SessionStart", source="startup")
    agent.turn("change them all", {})
    # One hook process for all files: a shell command rewrites them, PostToolUse records it.
    agent.turns += 1
    agent.hook("UserPromptSubmit", prompt="rewrite")
    agent.shell("for f in f*.txt; do echo v1 > $f; done")
    agent.hook("Stop", stop_hook_active=False)
    return ws, home, agent, names


def _rewind_proc(
    ws: Path, home: Path, turn: int, fault: str, mark: Path
) -> subprocess.Popen[bytes]:
    env = env_for(
        home,
        REWIND_LS_FAULT=fault,
        REWIND_LS_FAULT_MARK=str(mark),
        REWIND_LS_FAULT_PAUSE="0.4",
    )
    return subprocess.Popen(
        [sys.executable, "-m", "rewind_ls", "rewind", "-C", str(ws), str(turn), "--yes", "--json"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
    )


def _wait_for(mark: Path, proc: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 30
    while not mark.exists():
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline
        time.sleep(0.002)


def _in_store(ws: Path, home: Path, data: bytes) -> bool:
    return bool(query(ws, home, "SELECT 1 FROM blobs WHERE hash = ?", digest(data)))


async def test_a_running_server_settles_a_killed_restore_before_it_records(tmp_path: Path) -> None:
    """The language server was already running when a CLI rewind was killed mid-swap: before it
    records an editor agent's turn, it rolls the half-done restore back (as the hook and every CLI
    command do at their start) instead of recording the half-swapped files as changes."""
    from tests.support.lsp_client import start

    ws, home = tmp_path / "ws", tmp_path / "home"
    ws.mkdir()
    names = ["a.txt", "b.txt", "c.txt"]
    for n in names:
        (ws / n).write_bytes(f"{n} v0\n".encode())
    agent = FakeClaude(ws, home)
    agent.hook("SessionStart", source="startup")
    agent.turn("one", {n: f"{n} v1\n" for n in names})
    client, _editor = await start(ws, home)
    try:
        await client.protocol.send_request_async("rewind/listTurns", {})
        (seq,) = query(ws, home, "SELECT max(seq) FROM changes")[0]
        killed = cli(
            ws, home, "rewind", "1", "--yes", extra_env={"REWIND_LS_FAULT": "after-swap:2"}
        )
        assert killed.returncode == 137, killed.stderr
        assert query(ws, home, "SELECT count(*) FROM turns WHERE state = 'pending'") == [(1,)]
        half = _files(ws, names)
        assert sum(half[n] == f"{n} v0\n".encode() for n in names) == 2, half
        await client.protocol.send_request_async(
            "rewind/beginTurn", {"sessionId": "editor-agent-1", "prompt": "next"}
        )
    finally:
        await client.shutdown_session()
    assert query(ws, home, "SELECT count(*) FROM turns WHERE state = 'pending'") == [(0,)]
    assert _files(ws, names) == {n: f"{n} v1\n".encode() for n in names}
    recorded = _recorded_since(ws, home, seq)
    assert recorded == [], recorded
    assert _stray(ws) == []


@pytest.mark.parametrize("gap", ["before-aside", "before-link"])
@pytest.mark.parametrize("how", ["rewrite", "replace"])
def test_write_in_the_gap_is_put_back_and_reported(tmp_path: Path, gap: str, how: str) -> None:
    ws, home, _, names = _race_world(tmp_path, 5)
    victim = names[2]
    mark = tmp_path / "mark"
    proc = _rewind_proc(ws, home, 2, f"{gap}:3", mark)
    _wait_for(mark, proc)
    mine = b"written in the gap\n"
    if how == "rewrite":  # an editor writing the file in place (same inode, or a new one)
        with open(ws / victim, "wb") as f:
            f.write(mine)
    else:  # an editor's atomic save: write a temporary file, rename it over the path
        (ws / "save.tmp").write_bytes(mine)
        os.replace(ws / "save.tmp", ws / victim)
    out, err = proc.communicate(timeout=60)
    count("races tried (held gap)")
    assert proc.returncode == 3, (out, err)
    result = json.loads(out)
    assert result["status"] == "conflict" and victim in result["paths"], result
    assert (ws / victim).read_bytes() == mine
    # All or nothing: the others are still as before the rewind.
    assert all((ws / n).read_bytes() == b"v1\n" for n in names if n != victim)
    assert _stray(ws) == []
    count("lost writes", 0 if (ws / victim).read_bytes() == mine else 1)


def test_write_through_an_open_descriptor_keeps_the_backup(tmp_path: Path) -> None:
    ws, home, agent, names = _race_world(tmp_path, 3)
    mark = tmp_path / "mark"
    held = open(ws / names[0], "r+b")  # noqa: SIM115 - held open across the restore on purpose
    try:
        proc = _rewind_proc(ws, home, 2, "before-discard:1", mark)
        _wait_for(mark, proc)
        held.seek(0)
        held.write(b"late write through an old descriptor\n")
        held.flush()
        out, err = proc.communicate(timeout=60)
    finally:
        held.close()
    count("races tried (open descriptor)")
    assert proc.returncode == 0, err
    message = json.loads(out)["message"]
    assert "kept the old content" in message, message
    kept = [p for p in ws.iterdir() if p.name.startswith(f".{names[0]}.rewind-")]
    assert len(kept) == 1 and kept[0].read_bytes().startswith(b"late write"), kept
    assert (ws / names[0]).read_bytes() == b"v0\n"
    # The kept file is the person's to look at, never recorded as a change by the agent's scans.
    agent.turns += 1
    agent.hook("UserPromptSubmit", prompt="after the restore")
    agent.shell("true")
    agent.hook("Stop", stop_hook_active=False)
    assert query(ws, home, "SELECT count(*) FROM changes WHERE path LIKE '%.rewind-%'") == [(0,)]


def test_random_writes_during_large_restores(tmp_path: Path) -> None:
    """A writer hits one file at a random moment while 300 files are restored; its last write is on
    disk or, when the restore saw it before swapping, in the restore point (undoable)."""
    ws, home, agent, names = _race_world(tmp_path, 300)
    rng = random.Random(7)
    trials = runs(6)
    lost = 0
    for t in range(trials):
        agent.turns += 1
        agent.hook("UserPromptSubmit", prompt=f"rewrite {t}")
        agent.shell(f"for f in f*.txt; do echo v{t + 2} > $f; done")
        agent.hook("Stop", stop_hook_active=False)
        victim = rng.choice(names)
        delay = rng.uniform(0.05, 0.6)
        last: list[bytes] = []

        def writer(
            victim: str = victim, delay: float = delay, t: int = t, last: list[bytes] = last
        ) -> None:
            time.sleep(delay)
            for i in range(20):
                data = f"trial {t} write {i}\n".encode()
                (ws / victim).write_bytes(data)
                last[:] = [data]
                time.sleep(0.005)

        th = threading.Thread(target=writer)
        th.start()
        done = cli(ws, home, "rewind", str(agent.turns), "--yes", "--skip-conflicts", "--json")
        th.join()
        count("races tried (random)")
        assert done.returncode in (0, 3), done.stderr
        on_disk = (ws / victim).read_bytes()
        if on_disk != last[0] and not _in_store(ws, home, last[0]):
            lost += 1
        assert _stray(ws) == []
    count("lost writes", lost)
    assert lost == 0
