"""The compact store: zstd codecs and packs (round trip, contents of older stores, a process killed
with SIGKILL in the middle of writing a pack, gc reclaiming what packs hold)."""

from __future__ import annotations

import os
import random
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
import zlib
from pathlib import Path

import pytest

from rewind_ls.core.errors import CorruptBlob
from rewind_ls.core.store import (
    DELTA,
    FILE,
    PACKED,
    RAW,
    ZLIB,
    Store,
    Version,
    codec,
    digest,
    gc,
    store_dir_for,
)
from rewind_ls.core.store.delta import make_delta


def _source(rng: random.Random, n: int) -> bytes:
    words = ["const", "return", "import", "value", "items", "props", "render", "=>", "{", "}"]
    out: list[str] = []
    size = 0
    while size < n:
        out.append(" ".join(rng.choice(words) for _ in range(8)) + f" {rng.randint(0, 999)};\n")
        size += len(out[-1])
    return "".join(out).encode()[:n]


def _open(tmp_path: Path) -> Store:
    ws = tmp_path / "ws"
    ws.mkdir(exist_ok=True)
    return Store.open(str(ws), home=str(tmp_path / "home"))


def test_round_trip_packs_and_single_contents(tmp_path: Path) -> None:
    rng = random.Random(7)
    corpus = _source(rng, 2_000_000)
    contents = [corpus[i * 1000 : i * 1000 + rng.randint(0, 9000)] for i in range(1500)]
    contents += [b"", rng.randbytes(30_000), _source(rng, codec.PACK_MEMBER_MAX + 10)]
    contents += contents[:5]  # duplicates are stored once
    with _open(tmp_path) as store:
        store.insert_packed_blobs([(digest(c), len(c), RAW, c) for c in contents])
        # Stored again (another scan racing this one): nothing is added.
        before = store.stored_bytes()
        store.insert_packed_blobs([(digest(c), len(c), RAW, c) for c in contents[:50]])
        assert store.stored_bytes() == before
        raw = sum(len(c) for c in set(contents))
        assert store.pack_count() >= 2  # ~7 MB in packs of ~4 MB
        assert before < raw / 2
        for c in contents:
            assert store.get_blob(digest(c)) == c
        assert store.get_blobs(digest(c) for c in reversed(contents)) == {
            digest(c): c for c in contents
        }
        kinds = dict(store.conn.execute("SELECT hash, codec FROM blobs").fetchall())
        assert kinds[digest(contents[0])] == PACKED
        assert kinds[digest(contents[-6])] == ZLIB  # over PACK_MEMBER_MAX: on its own
        # A content stored on its own by an edit, then its older version becomes a delta.
        old, new = contents[1], contents[1] + b"one more line\n"
        store.put_blob(old)  # already packed: stays as it is
        store.put_blob(new, previous=digest(old))
        assert store.get_blob(digest(new)) == new and store.get_blob(digest(old)) == old


def test_damaged_pack_is_reported_not_returned(tmp_path: Path) -> None:
    contents = [b"line %d\n" % i * 40 for i in range(20)]
    with _open(tmp_path) as store:
        store.insert_packed_blobs([(digest(c), len(c), RAW, c) for c in contents])
        store.conn.execute("UPDATE packs SET data = substr(data, 1, length(data) - 9)")
        with pytest.raises(CorruptBlob, match="pack"):
            store.get_blob(digest(contents[3]))


def test_contents_of_a_schema_2_store_read_after_migration(tmp_path: Path) -> None:
    """Blobs written before packs (zlib, raw, and a zlib delta) read the same after the upgrade."""
    ws = tmp_path / "ws"
    ws.mkdir()
    home = tmp_path / "home"
    directory = Path(store_dir_for(str(ws), str(home)))
    directory.mkdir(parents=True)
    conn = sqlite3.connect(directory / "store.sqlite3", isolation_level=None)
    conn.executescript(
        "CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);"
        "CREATE TABLE blobs(hash TEXT PRIMARY KEY, size INTEGER NOT NULL, codec INTEGER NOT NULL,"
        " base TEXT, data BLOB NOT NULL);"
        "INSERT INTO meta VALUES ('schema_version', '2');"
    )
    newer = _source(random.Random(1), 5000)
    older = newer.replace(b"value", b"VALUE", 3)
    tiny = b"\x00\x01"
    rows = [
        (digest(newer), len(newer), ZLIB, None, zlib.compress(newer, 1)),
        (digest(older), len(older), DELTA, digest(newer), zlib.compress(make_delta(newer, older))),
        (digest(tiny), 2, RAW, None, tiny),
    ]
    conn.executemany("INSERT INTO blobs VALUES (?, ?, ?, ?, ?)", rows)
    conn.close()
    with Store.open(str(ws), home=str(home), create=False) as store:
        assert store.meta("schema_version") == "3"
        assert store.get_blob(digest(newer)) == newer
        assert store.get_blob(digest(older)) == older
        assert store.get_blob(digest(tiny)) == tiny


def test_gc_reclaims_contents_held_in_packs(tmp_path: Path) -> None:
    rng = random.Random(3)
    # Contents that share nothing (random bytes): what gc frees is what they took.
    contents = [b"file %d\n" % i + rng.randbytes(4000) for i in range(3000)]
    with _open(tmp_path) as store:
        store.insert_packed_blobs([(digest(c), len(c), RAW, c) for c in contents])
        full = store.stored_bytes()
        packs = store.pack_count()
        assert packs >= 3
        # A known path names every third content: the rest is referenced by nothing.
        live = contents[::3]
        for i, c in enumerate(live):
            store.set_known(f"f{i}", Version(FILE, digest(c), 0o644, len(c)))
        result = gc.run(store, retention_days=3650, max_bytes=1 << 40)
        assert result["blobs_dropped"] == len(contents) - len(live)
        assert store.stored_bytes() < full * 0.45
        assert store.blob_hashes() and set(store.blob_hashes()) == {digest(c) for c in live}
        for c in live:
            assert store.get_blob(digest(c)) == c
        # Nothing live left: the packs go too.
        store.conn.execute("DELETE FROM known")
        gc.run(store, retention_days=3650, max_bytes=1 << 40)
        assert store.pack_count() == 0 and store.stored_bytes() == 0


_WRITER = textwrap.dedent(
    """
    import os, random, sys
    from rewind_ls.core.store import RAW, Store, digest
    ws, home, log = sys.argv[1:4]
    rng = random.Random(11)
    words = [b"alpha", b"beta", b"gamma", b"delta", b"{", b"}", b"return", b"const"]
    corpus = b" ".join(rng.choice(words) for _ in range(200_000))
    with Store.open(ws, home=home) as store, open(log, "a") as out:
        batch = 0
        while True:
            contents = []
            for i in range(1500):
                start = rng.randrange(len(corpus) - 8000)
                contents.append(corpus[start : start + rng.randint(300, 8000)] + b"%d-%d" % (batch, i))
            out.write("writing %d\\n" % batch)
            out.flush()
            store.insert_packed_blobs([(digest(c), len(c), RAW, c) for c in contents])
            out.write("".join("%s\\n" % digest(c) for c in contents))
            out.write("committed %d\\n" % batch)
            out.flush()
            os.fsync(out.fileno())
            batch += 1
    """
)


def _log_state(log: Path) -> tuple[list[list[str]], bool]:
    """The hashes of each committed batch, and whether a batch is being written now."""
    batches: list[list[str]] = []
    current: list[str] = []
    writing = False
    for line in log.read_text().splitlines():
        if line.startswith("writing"):
            writing, current = True, []
        elif line.startswith("committed"):
            batches.append(current)
            writing = False
        else:
            current.append(line)
    return batches, writing


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_sigkill_while_writing_a_pack_loses_nothing_committed(tmp_path: Path, seed: int) -> None:
    """A real process writing packs (~6 MB a batch, 2-3 packs) is killed with SIGKILL while a batch
    is being encoded or written: every batch it committed before reads back byte for byte, the
    interrupted batch left no half (all of its contents or none), and the database is whole."""
    ws = tmp_path / "ws"
    ws.mkdir()
    home, log = tmp_path / "home", tmp_path / "log"
    log.write_text("")
    repo = Path(__file__).resolve().parents[1]
    proc = subprocess.Popen(
        [sys.executable, "-c", _WRITER, str(ws), str(home), str(log)],
        cwd=repo,
        env={**os.environ, "PYTHONPATH": str(repo)},
    )
    rng = random.Random(seed)
    target = 1 + seed  # batches committed before the kill
    deadline = time.monotonic() + 120
    try:
        while True:
            batches, writing = _log_state(log)
            if len(batches) >= target and writing:
                break
            assert proc.poll() is None, "the writer died on its own"
            assert time.monotonic() < deadline, "the writer never got there"
            time.sleep(0.005)
        time.sleep(rng.uniform(0.0, 0.15))  # somewhere inside encoding or writing the packs
        proc.send_signal(signal.SIGKILL)
    finally:
        proc.kill()
        proc.wait()
    batches, _ = _log_state(log)
    assert len(batches) >= target
    committed = [h for batch in batches for h in batch]
    with Store.open(str(ws), home=str(home), create=False) as store:
        assert store.quick_check() == "ok"
        stored = set(store.blob_hashes())
        assert set(committed) <= stored
        for h, data in store.get_blobs(committed).items():
            assert digest(data) == h
        # The interrupted batch: its 1500 contents all went in (the commit beat the kill) or none.
        assert len(stored) - len(committed) in (0, 1500)
        for h in stored - set(committed):
            assert digest(store.get_blob(h)) == h


_EDIT_HOOKS = textwrap.dedent(
    """
    import io, json, sys
    from rewind_ls.core.agents.hook_process import run
    ws = sys.argv[1]
    for event, extra in [
        ("UserPromptSubmit", {"prompt": "p"}),
        ("PreToolUse", {"tool_name": "Write", "tool_input": {"file_path": "a.txt"}}),
        ("PostToolUse", {"tool_name": "Write", "tool_input": {"file_path": "a.txt"}}),
        ("Stop", {}),
    ]:
        payload = {"session_id": "s", "cwd": ws, "hook_event_name": event, **extra}
        assert run("claude-code", stdin=io.BytesIO(json.dumps(payload).encode())) == 0
        if event == "UserPromptSubmit":
            with open(ws + "/a.txt", "a") as f:
                f.write("an edit\\n")
    print(json.dumps("zstandard" in sys.modules))
    """
)


def test_hooks_after_the_baseline_do_not_import_zstandard(tmp_path: Path) -> None:
    """Packs are for many contents at once (a baseline); a hook that records an edit or two stores
    them with zlib and never pays for zstandard's import."""
    ws = tmp_path / "ws"
    ws.mkdir()
    for i in range(5):
        (ws / f"f{i}.txt").write_text(f"file {i}\n" * 50)
    (ws / "a.txt").write_text("a\n")
    repo = Path(__file__).resolve().parents[1]
    env = {**os.environ, "REWIND_LS_HOME": str(tmp_path / "home"), "PYTHONPATH": str(repo)}
    subprocess.run([sys.executable, "-m", "rewind_ls", "scan"], cwd=ws, env=env, check=True)
    with Store.open(str(ws), home=str(tmp_path / "home"), create=False) as store:
        assert store.pack_count() == 1  # the baseline went into a pack
    (ws / "f1.txt").write_text("changed outside a turn\n")  # recorded by the first hook's scan
    proc = subprocess.run(
        [sys.executable, "-c", _EDIT_HOOKS, str(ws)], env=env, capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().splitlines()[-1] == "false"
    with Store.open(str(ws), home=str(tmp_path / "home"), create=False) as store:
        assert store.get_blob(digest(b"a\nan edit\n")) == b"a\nan edit\n"
        assert store.get_blob(digest(b"changed outside a turn\n")) == b"changed outside a turn\n"
