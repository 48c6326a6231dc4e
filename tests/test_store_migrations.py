"""Schema 2 (the agent's prompt and tool_use ids, claimed once by a hook or a transcript) and 3
(packs): a version-1 store written before them is migrated in place; a newer store is refused."""

from __future__ import annotations

import json
import re
import sqlite3
import zlib
from pathlib import Path

import pytest

from rewind_ls.core import store as store_mod
from rewind_ls.core.store import RAW, SCHEMA_VERSION, Store, digest, store_dir_for

# Schema 1: no agent_events, and no packs (blobs without their pack columns).
V1_SCHEMA = re.sub(
    r"CREATE INDEX IF NOT EXISTS blobs_pack[^;]*;\s*CREATE TABLE IF NOT EXISTS packs\([^;]*;\s*",
    "",
    store_mod._SCHEMA.split("CREATE TABLE IF NOT EXISTS agent_events")[0],
).replace(", pack INTEGER, off INTEGER", "")
OLD_CONTENT = b"written by schema 1 with zlib\n" * 20


def write_v1_store(root: Path, home: Path) -> Path:
    """A store exactly as rewind-ls with schema 1 wrote it: no agent_events table, the hook's
    prompt id kept in the turn's info."""
    directory = Path(store_dir_for(str(root), str(home)))
    directory.mkdir(parents=True)
    db = directory / "store.sqlite3"
    conn = sqlite3.connect(db, isolation_level=None)
    conn.executescript(V1_SCHEMA)
    conn.execute("INSERT INTO meta VALUES ('schema_version', '1'), ('root', ?)", (str(root),))
    conn.execute("INSERT INTO sessions VALUES ('s1', 'agent', 'claude-code', NULL, 1.0, 2.0, NULL)")
    conn.execute(
        "INSERT INTO turns VALUES ('t1', 's1', 1, 1, 'hello', 1.0, 2.0, 'closed', ?)",
        (json.dumps({"promptId": "p-1"}),),
    )
    conn.execute("INSERT INTO turns VALUES ('t2', 's1', 2, 2, 'no id', 3.0, 4.0, 'closed', NULL)")
    conn.execute(
        "INSERT INTO blobs VALUES (?, ?, 1, NULL, ?)",
        (digest(OLD_CONTENT), len(OLD_CONTENT), zlib.compress(OLD_CONTENT)),
    )
    conn.close()
    return db


def test_version_1_store_is_migrated(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    home = tmp_path / "home"
    write_v1_store(root, home)
    assert SCHEMA_VERSION == 3
    with Store.open(str(root), home=str(home), create=False) as store:
        assert store.meta("schema_version") == "3"
        # Contents stored before packs existed read as they are; new ones go in packs.
        assert store.get_blob(digest(OLD_CONTENT)) == OLD_CONTENT
        fresh = [(digest(b"%d" % i * 50), 100, RAW, b"%d" % i * 50) for i in range(10, 13)]
        store.insert_packed_blobs(fresh)
        assert store.pack_count() == 1
        assert all(store.get_blob(h) == data for h, _, _, data in fresh)
        event = store.event("s1", "prompt", "p-1")
        assert event is not None and event.turn_id == "t1" and event.source == "hook"
        # The prompt the hook recorded under schema 1 is not recorded again from the transcript.
        assert not store.claim_event("s1", "prompt", "p-1", "transcript")
        assert store.claim_event("s1", "tool", "toolu_1", "transcript", "t2")
        assert not store.claim_event("s1", "tool", "toolu_1", "hook", "t2")
        assert [t.id for t in store.turns("s1")] == ["t1", "t2"]
    # Opening it again (already version 3) changes nothing.
    with Store.open(str(root), home=str(home), create=False) as store:
        assert store.event_counts() == {"s1": {"prompt:hook": 1, "tool:transcript": 1}}


def test_newer_store_is_refused(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    home = tmp_path / "home"
    db = write_v1_store(root, home)
    conn = sqlite3.connect(db, isolation_level=None)
    conn.execute("UPDATE meta SET value = '99' WHERE key = 'schema_version'")
    conn.close()
    with pytest.raises(Exception, match="newer rewind-ls"):
        Store.open(str(root), home=str(home), create=False)
