"""Salvage (`doctor --repair`): copy what can still be read of a damaged store into a new one, row
by row around the damaged pages, drop the contents that no longer match their hash, and keep the
damaged file aside."""

from __future__ import annotations

import os
import sqlite3
import time
from typing import Any

from rewind_ls.core.errors import CorruptBlob
from rewind_ls.core.store.blobs import Blobs
from rewind_ls.core.store.db import (
    DB_NAME,
    SCHEMA,
    SCHEMA_VERSION,
    TABLES,
    Database,
    run_script,
    store_dir_for,
)


def _copy_table(src: sqlite3.Connection, dst: sqlite3.Connection, table: str) -> tuple[int, int]:
    """Copy every readable row of `table`: a scan first, then row by row around damaged pages.
    Returns (rows copied, rowids that could not be read; -1: some, how many is unknown)."""
    # The columns both have: a damaged store of an older schema is copied into the current one.
    have = {r[1] for r in src.execute(f"PRAGMA table_info({table})")}
    if not have:
        return 0, 0
    cols = [r[1] for r in dst.execute(f"PRAGMA table_info({table})") if r[1] in have]
    names = ", ".join(cols)
    insert = f"INSERT OR IGNORE INTO {table}(rowid, {names}) VALUES (?{', ?' * len(cols)})"
    copied: set[int] = set()
    try:
        for row in src.execute(f"SELECT rowid, {names} FROM {table}"):
            dst.execute(insert, row)
            copied.add(row[0])
        return len(copied), 0
    except sqlite3.DatabaseError:
        pass
    try:
        high = int(src.execute(f"SELECT max(rowid) FROM {table}").fetchone()[0] or 0)
        known_end = True
    except sqlite3.DatabaseError:
        high = max(copied, default=0) + 100_000
        known_end = False
    bad = 0
    for rowid in range(1, high + 1):
        if rowid in copied:
            continue
        try:
            row = src.execute(f"SELECT rowid, {names} FROM {table} WHERE rowid = ?", (rowid,))
            found = row.fetchone()
        except sqlite3.DatabaseError:
            bad += 1
            continue
        if found is not None:
            dst.execute(insert, found)
            copied.add(rowid)
    # Without the table's last rowid, the failed probes are not a count of rows lost.
    return len(copied), bad if known_end or not bad else -1


def salvage(root: str, home: str | None = None) -> dict[str, Any]:
    """Copy what can be read of a damaged store into a new one; the damaged database (and its WAL)
    is kept aside as `store.sqlite3.damaged-<time>`. Stored contents are checked against their hash
    and dropped when damaged. Returns what was copied and lost."""
    directory = store_dir_for(os.path.realpath(root), home)
    db = os.path.join(directory, DB_NAME)
    fresh = db + ".salvage"
    for suffix in ("", "-wal", "-shm", "-journal"):
        if os.path.exists(fresh + suffix):
            os.unlink(fresh + suffix)
    report = _copy_readable(db, fresh, os.path.realpath(root))
    report["damaged_contents"] = _drop_damaged_blobs(fresh, root, directory)
    aside = f"{db}.damaged-{time.strftime('%Y%m%d-%H%M%S')}"
    for suffix in ("-wal", "-shm"):
        if os.path.exists(db + suffix):
            os.replace(db + suffix, aside + suffix)
    os.replace(db, aside)
    os.replace(fresh, db)
    os.chmod(db, 0o600)
    report["kept_aside"] = aside
    return report


def _copy_readable(db: str, fresh: str, root: str) -> dict[str, Any]:
    """Every readable row of the damaged `db`, copied into the new database `fresh` (private),
    with its meta and a sequence counter ahead of every seq that survived."""
    src = sqlite3.connect(db, isolation_level=None)
    old_umask = os.umask(0o077)
    try:
        dst = sqlite3.connect(fresh, isolation_level=None)
    finally:
        os.umask(old_umask)
    report: dict[str, Any] = {"tables": {}}
    try:
        dst.execute("BEGIN")
        run_script(dst, SCHEMA)
        for table in TABLES:
            try:
                report["tables"][table] = _copy_table(src, dst, table)
            except sqlite3.DatabaseError as exc:  # the table itself is unreadable
                report["tables"][table] = (0, -1)
                report.setdefault("unreadable", []).append(f"{table}: {exc}")
        dst.execute(
            "INSERT OR IGNORE INTO meta VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),)
        )
        dst.execute("INSERT OR REPLACE INTO meta VALUES ('root', ?)", (root,))
        top = dst.execute(
            "SELECT max(m) FROM (SELECT max(seq) AS m FROM turns UNION ALL SELECT max(seq) FROM"
            " changes UNION ALL SELECT max(seq) FROM known UNION ALL SELECT max(after_seq) FROM"
            " changes)"
        ).fetchone()[0]
        dst.execute("INSERT OR IGNORE INTO counter VALUES (1, 0)")
        dst.execute("UPDATE counter SET n = max(n, ?) WHERE id = 1", (int(top or 0),))
        dst.execute("COMMIT")
    finally:
        src.close()
        dst.close()
    return report


def _drop_damaged_blobs(fresh: str, root: str, directory: str) -> int:
    """Drop the contents of `fresh` that do not decode to their hash (gc-style: the rows naming
    them stay and show as not restorable); leave it in WAL mode. Returns how many were dropped."""
    db = Database(sqlite3.connect(fresh, isolation_level=None), root, directory)
    try:
        blobs = Blobs(db)
        bad = []
        for h in blobs.blob_hashes():
            try:
                blobs.get_blob(h)
            except CorruptBlob:
                bad.append(h)
        blobs.drop_blobs(bad)
        db.conn.execute("PRAGMA journal_mode=WAL")
    finally:
        db.close()
    return len(bad)
