"""The database under a store: where it lives, how it is opened (private, WAL), its schema and
migrations, the one writer transaction, the sequence counter and the `meta` table.

Every write happens in one `BEGIN IMMEDIATE` transaction, so a process killed at any instant leaves
the last committed checkpoint whole, and several processes (agent hooks, the server, the CLI) can
write at once. The record and content modules of the store share one `Database` (its connection
and its transaction); nothing outside `core/store/` sees it.

The schema (store.sqlite3):

- `blobs(hash, size, codec, base, data, pack, off)`: content by sha256 (see `core/store/codec.py`); codec raw,
  zlib (a content stored on its own), zlib(delta against `base`), zstd (one frame), or packed:
  `size` bytes at `off` in pack `pack`. When a new version of a file is stored on its own, the previous
  version (if stored on its own) is re-encoded as a delta against it, so the newest content is one
  decompression away and history costs little.
- `packs(id, codec, size, data)` (schema 3): many small contents written together (a baseline, a scan)
  in one zstd frame of about 4 MB, so the compressor sees across files (a 10,000-file tree: ~30%
  smaller than compressed one by one, smaller than `git gc`'s pack). Written in the same transaction as
  its members' rows, so a killed process leaves neither. Ids are never reused (AUTOINCREMENT), so a
  process may keep a decompressed pack cached. `gc` rewrites a pack that lost members (or deletes it).
  Opening a schema-2 store adds the columns and the table; its blobs stay as they are.
- `sessions(id, kind, agent, transcript_path, …, open_turn)`: kind `agent`, `editor` (your saves),
  `external` (changes found between turns), `rewind` (restore points).
- `turns(id, session_id, number, seq, prompt, started_at, ended_at, state, info)`: `seq` is one
  workspace-wide order; restore points carry their journal in `info`, agent turns JSON
  `{promptId, subagents}` (plus `reconstructed: "transcript"`, `scanned` for turns rebuilt from a
  transcript). A forked conversation's session holds copies of the turns it inherits
  (same number and `seq`, changes copied).
- `changes(turn_id, path, seq, source, before_*, after_*)`: before = first touch in the turn,
  after = last seen in it.
- `agent_events(session_id, kind, key, turn_id, source, at)` (schema 2): the agent's prompt ids
  (`kind` prompt) and tool_use ids (`kind` tool) already recorded, by `source` `hook` or `transcript`;
  claimed with `INSERT OR IGNORE`, so the hooks and the transcript follower never record one twice.
  Opening a schema-1 store adds the table and the prompt ids its turns kept in `info`.
- `known(path, kind, hash, mode, size, mtime_ns, ino)`: the last content seen per path, with the stat
  signature that lets a re-check skip unchanged files without reading them.
- `meta`: schema version, `root` (the workspace folder, used to find moved workspaces), scan
  watermarks, `scan.unrecorded` (what the last scan could not record, by name), `scan.watch-mark`
  (the watcher epoch and journal offset the last clean scan synced to).
- Beside the database: `watch/` (the watcher's lock, journal, sync folder, status), `restore.lock` (one restore at a time per workspace), the scan's folder cache,
  `diffs/` written for editors that can show a document. All owner-only. (The timeline is never written:
  clients show it under a name inside the workspace.)
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager

from rewind_ls.core.errors import StoreError
from rewind_ls.core.fs import config
from rewind_ls.core.fs.faults import fault

SCHEMA_VERSION = 3
DB_NAME = "store.sqlite3"

# The database's errors, for the modules that must tell them apart without knowing the database:
# `DbError` is every one of them; `DatabaseError` a damaged, full or unusable file;
# `OperationalError` one the database could not carry out now (busy, locked, full).
DbError = sqlite3.Error
DatabaseError = sqlite3.DatabaseError
OperationalError = sqlite3.OperationalError

# Crash-safety tests: `REWIND_LS_FAULT=before-commit:3` kills the process just before the third
# write transaction of the process commits, `after-commit:3` just after it committed.
_commits = 0
# How long a reader lets SQLite wait for a lock, and a writer waits for another writer.
_BUSY_MS = 30000
_BUSY_SECONDS = 60.0
# A hook server's child answers its client before it finishes with its connections.
# `defer_closes()` makes `close` keep them here; `finish_deferred()` then closes them and leaves
# the next hook a WAL to append to (see there).
_close_later: list[sqlite3.Connection] | None = None
# The connection that started the next WAL: never closed (its close would delete that WAL again),
# the process `_exit`s with it open, as the in-process hook leaves its own.
_kept: list[sqlite3.Connection] = []


def defer_closes() -> None:
    global _close_later
    _close_later = []


def finish_deferred() -> None:
    """After a hook server's child answered: close its connections, and when the last one's close
    moved the WAL into the database and deleted it, start the next WAL now, off the agent's time.

    A hook through the server is usually the only process with its store open, so every hook's
    close deleted the WAL and its shared memory, and the next hook's first write re-created both
    and fsynced the new WAL's header and its folder on the agent's time (1 ms quiet, tens under
    I/O load). Here one write of nothing (the header's `user_version` flipped: an UPDATE to the
    same value writes no page) creates and syncs them; the next hook recovers that one frame and
    appends. When another process keeps the store open the close changes nothing, as before.
    Nothing committed depends on this: it runs after the reply, and a kill anywhere in it leaves
    what SQLite leaves after any kill; busy (another writer): skipped."""
    global _close_later
    pending, _close_later = _close_later or [], None
    for conn in pending:
        try:
            path = str(conn.execute("PRAGMA database_list").fetchone()[2])
        except sqlite3.Error:
            path = ""
        conn.close()
        if not path or os.path.exists(f"{path}-wal"):
            continue
        try:
            nxt = sqlite3.connect(path, isolation_level=None)
            _kept.append(nxt)
            nxt.execute("PRAGMA synchronous=NORMAL")
            nxt.execute("PRAGMA busy_timeout=0")
            nxt.execute("BEGIN IMMEDIATE")
            flip = int(nxt.execute("PRAGMA user_version").fetchone()[0]) ^ 1
            nxt.execute(f"PRAGMA user_version={flip}")
            nxt.execute("COMMIT")
        except sqlite3.Error:
            pass


def rehearse() -> None:
    """A throw-away in-memory database's first statements, in a fork server's spare child before
    it waits (`hook_server._spare`): the copy-on-write page faults of SQLite's first use (a
    quarter of a `rewind-ls turns` child's) then happen off the request's path."""
    conn = sqlite3.connect(":memory:")
    try:
        conn.execute("CREATE TABLE t(a)")
        conn.execute("INSERT INTO t VALUES (1)")
        conn.execute("SELECT a FROM t").fetchall()
    finally:
        conn.close()


SCHEMA = """
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS blobs(
  hash TEXT PRIMARY KEY, size INTEGER NOT NULL, codec INTEGER NOT NULL, base TEXT,
  data BLOB NOT NULL, pack INTEGER, off INTEGER);
CREATE INDEX IF NOT EXISTS blobs_pack ON blobs(pack) WHERE pack IS NOT NULL;
CREATE TABLE IF NOT EXISTS packs(
  id INTEGER PRIMARY KEY AUTOINCREMENT, codec INTEGER NOT NULL, size INTEGER NOT NULL,
  data BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS sessions(
  id TEXT PRIMARY KEY, kind TEXT NOT NULL, agent TEXT, transcript_path TEXT,
  started_at REAL NOT NULL, last_activity_at REAL NOT NULL, open_turn TEXT);
CREATE TABLE IF NOT EXISTS turns(
  id TEXT PRIMARY KEY, session_id TEXT NOT NULL, number INTEGER NOT NULL,
  seq INTEGER NOT NULL, prompt TEXT NOT NULL, started_at REAL NOT NULL, ended_at REAL,
  state TEXT NOT NULL DEFAULT 'open', info TEXT, UNIQUE(session_id, number));
CREATE INDEX IF NOT EXISTS turns_seq ON turns(seq);
CREATE TABLE IF NOT EXISTS changes(
  turn_id TEXT NOT NULL, path TEXT NOT NULL, seq INTEGER NOT NULL, source TEXT NOT NULL,
  before_kind TEXT NOT NULL, before_hash TEXT, before_mode INTEGER,
  after_kind TEXT, after_hash TEXT, after_mode INTEGER, after_seq INTEGER,
  PRIMARY KEY(turn_id, path));
CREATE INDEX IF NOT EXISTS changes_path ON changes(path, seq);
CREATE TABLE IF NOT EXISTS known(
  path TEXT PRIMARY KEY, kind TEXT NOT NULL, hash TEXT, mode INTEGER, size INTEGER,
  mtime_ns INTEGER, ino INTEGER, seq INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS counter(id INTEGER PRIMARY KEY CHECK (id = 1), n INTEGER NOT NULL);
INSERT OR IGNORE INTO counter VALUES (1, 0);
CREATE TABLE IF NOT EXISTS agent_events(
  session_id TEXT NOT NULL, kind TEXT NOT NULL, key TEXT NOT NULL, turn_id TEXT,
  source TEXT NOT NULL, at REAL NOT NULL, PRIMARY KEY(session_id, kind, key));
"""

# Every table, in the order a salvage copies them.
TABLES = (
    "meta",
    "counter",
    "sessions",
    "turns",
    "changes",
    "known",
    "packs",
    "blobs",
    "agent_events",
)

# Schema 2 adds `agent_events`: the agent's prompt ids and tool_use ids already recorded, and by
# whom (a hook or the transcript), so the two recorders never record the same one twice. A
# version-1 store gets the table, and the prompt ids its hooks kept in `turns.info`.
_MIGRATE_1_TO_2 = """
CREATE TABLE IF NOT EXISTS agent_events(
  session_id TEXT NOT NULL, kind TEXT NOT NULL, key TEXT NOT NULL, turn_id TEXT,
  source TEXT NOT NULL, at REAL NOT NULL, PRIMARY KEY(session_id, kind, key));
INSERT OR IGNORE INTO agent_events(session_id, kind, key, turn_id, source, at)
  SELECT session_id, 'prompt', json_extract(info, '$.promptId'), id, 'hook', started_at
  FROM turns WHERE json_valid(info) AND json_type(info, '$.promptId') = 'text';
UPDATE meta SET value = '2' WHERE key = 'schema_version'
"""

# Schema 3 adds packs (codec.PACKED: a blob is `size` bytes at `off` in pack `pack`). Stored blobs
# keep their codec and stay readable as they are; new contents use zstd.
_MIGRATE_2_TO_3 = """
ALTER TABLE blobs ADD COLUMN pack INTEGER;
ALTER TABLE blobs ADD COLUMN off INTEGER;
CREATE INDEX IF NOT EXISTS blobs_pack ON blobs(pack) WHERE pack IS NOT NULL;
CREATE TABLE IF NOT EXISTS packs(
  id INTEGER PRIMARY KEY AUTOINCREMENT, codec INTEGER NOT NULL, size INTEGER NOT NULL,
  data BLOB NOT NULL);
UPDATE meta SET value = '3' WHERE key = 'schema_version'
"""
_MIGRATIONS = {1: _MIGRATE_1_TO_2, 2: _MIGRATE_2_TO_3}


def run_script(conn: sqlite3.Connection, script: str) -> None:
    """Each statement of `script` in turn (inside the caller's transaction, unlike
    `executescript`, which commits first)."""
    for statement in script.strip().split(";"):
        if statement.strip():
            conn.execute(statement)


# --- where a workspace's store lives ----------------------------------------------------------


def workspace_key(root: str) -> str:
    return hashlib.sha256(os.path.realpath(root).encode("utf-8", "surrogateescape")).hexdigest()[
        :16
    ]


def store_dir_for(root: str, home: str | None = None) -> str:
    return os.path.join(home or config.home_dir(), "workspaces", workspace_key(root))


def has_store(root: str, home: str | None = None) -> bool:
    """Whether the workspace `root` (a real path; the folder may be gone) has a store."""
    return os.path.isfile(os.path.join(store_dir_for(root, home), DB_NAME))


# --- the database's errors, told to a person -------------------------------------------------


def store_error(exc: BaseException, db: str) -> StoreError:
    """A person's message, with the next step, for an SQLite or OS error on the store `db`."""
    if is_full(exc) or (_low_space(db) and "i/o error" in str(exc).lower()):
        return StoreError(
            f"{db}: no space left for the store ({exc}); free some disk space (or run "
            "`rewind-ls gc`) and try again. The workspace was not changed by this command."
        )
    if is_damage(exc):
        return StoreError(
            f"{db}: the store is damaged ({exc}). Next step: `rewind-ls doctor --repair` copies "
            "what can still be read into a new store and keeps the damaged file aside."
        )
    return StoreError(f"{db}: cannot use the store: {exc}")


def _low_space(db: str) -> bool:
    """SQLite reports some writes on a full disk as an I/O error (sizing its shared-memory
    file): look at the filesystem itself."""
    try:
        st = os.statvfs(os.path.dirname(db))
    except OSError:
        return False
    return st.f_bavail * st.f_frsize < config.MiB


def is_damage(exc: BaseException) -> bool:
    """Whether an SQLite error means the database file is damaged (not busy, not full)."""
    text = str(exc).lower()
    return isinstance(exc, sqlite3.DatabaseError) and (
        "malformed" in text or "not a database" in text or "corrupt" in text
    )


def is_full(exc: BaseException) -> bool:
    text = str(exc).lower()
    return isinstance(exc, (sqlite3.DatabaseError, OSError)) and (
        "disk is full" in text or "no space left" in text or "disk quota" in text
    )


class Database:
    """One store's SQLite connection: the writer transaction, the sequence counter, `meta`, the
    WAL's checkpoints. `root`: the workspace folder; `path`: the store's folder."""

    def __init__(self, conn: sqlite3.Connection, root: str, path: str) -> None:
        self.conn = conn
        self.root = root
        self.path = path
        self._in_tx = False

    @classmethod
    def connect(cls, root: str, directory: str, home: str | None = None) -> Database:
        """Open (or create) the database of the workspace `root` in `directory`: every folder on
        the way private, no symbolic link followed, WAL mode, the schema current."""
        db = os.path.join(directory, DB_NAME)
        try:
            # Every folder on the way is private, not only the last (makedirs applies the mode to
            # the leaf only).
            config.ensure_private_dir(home or config.home_dir())
            config.ensure_private_dir(os.path.dirname(directory))
            config.ensure_private_dir(directory)
            for name in (directory, db, f"{db}-wal", f"{db}-shm"):
                if os.path.islink(name):  # SQLite would follow it
                    raise StoreError(f"{name}: a symbolic link in the store; refused")
            old_umask = os.umask(0o077)
            try:
                conn = sqlite3.connect(
                    db, timeout=30.0, isolation_level=None, check_same_thread=False
                )
                conn.execute("PRAGMA journal_mode=WAL")
            finally:
                os.umask(old_umask)
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute(f"PRAGMA busy_timeout={_BUSY_MS}")
        except (OSError, sqlite3.Error) as exc:
            raise store_error(exc, db) from exc
        database = cls(conn, root, directory)
        database.init_schema()
        return database

    def init_schema(self) -> None:
        try:
            row = self.conn.execute(
                "SELECT value FROM meta WHERE key = 'schema_version'"
            ).fetchone()
        except sqlite3.OperationalError:
            row = None
        except sqlite3.DatabaseError as exc:
            raise store_error(exc, os.path.join(self.path, DB_NAME)) from exc
        if row is not None:
            version = int(row[0])
            if version > SCHEMA_VERSION:
                raise StoreError(
                    f"{self.path}: this store was written by a newer rewind-ls (schema {version}, "
                    f"this version reads {SCHEMA_VERSION}); upgrade rewind-ls"
                )
            if version < SCHEMA_VERSION:
                self._migrate(version)
            return
        with self.transaction():
            run_script(self.conn, SCHEMA)
            self.conn.execute(
                "INSERT OR IGNORE INTO meta VALUES ('schema_version', ?), ('root', ?)",
                (str(SCHEMA_VERSION), self.root),
            )
        # The database file itself was created under the private umask; make sure of the WAL too.
        for suffix in ("", "-wal", "-shm"):
            try:
                os.chmod(os.path.join(self.path, "store.sqlite3" + suffix), 0o600)
            except OSError:
                pass

    def _migrate(self, version: int) -> None:
        """Bring an older store up to SCHEMA_VERSION, in one transaction (several processes may
        open it at once: the version is re-read inside the transaction)."""
        with self.transaction():
            row = self.conn.execute(
                "SELECT value FROM meta WHERE key = 'schema_version'"
            ).fetchone()
            current = int(row[0]) if row is not None else SCHEMA_VERSION
            while current < SCHEMA_VERSION:
                run_script(self.conn, _MIGRATIONS[current])
                current += 1

    def close(self) -> None:
        if _close_later is not None:
            _close_later.append(self.conn)
            return
        self.conn.close()

    def __enter__(self) -> Database:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _begin(self) -> None:
        """`BEGIN IMMEDIATE`, waiting for another writer by trying again every millisecond (every
        10 ms after a second): SQLite's own busy handler sleeps longer and longer, up to 100 ms
        a try, so a writer behind back-to-back transactions (the baseline worker's, a few ms
        apart) woke in a gap between them only by luck and waited for several of them."""
        conn = self.conn
        conn.execute("PRAGMA busy_timeout=0")
        try:
            started = time.monotonic()
            while True:
                try:
                    conn.execute("BEGIN IMMEDIATE")
                    return
                except sqlite3.OperationalError as exc:
                    if "locked" not in str(exc) and "busy" not in str(exc):
                        raise
                    waited = time.monotonic() - started
                    if waited > _BUSY_SECONDS:
                        raise StoreError(
                            f"{self.path}: the store stayed busy for {_BUSY_SECONDS:.0f} s"
                        ) from exc
                    time.sleep(0.001 if waited < 1.0 else 0.01)
        finally:
            # Reads and checkpoints keep SQLite's handler (a reader is rarely told to wait).
            conn.execute(f"PRAGMA busy_timeout={_BUSY_MS}")

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """A write transaction; nested use joins the outer one. Waits for other writers."""
        if self._in_tx:
            yield self.conn
            return
        self._begin()
        self._in_tx = True
        try:
            yield self.conn
        except BaseException:
            self._in_tx = False
            self.conn.execute("ROLLBACK")
            raise
        self._in_tx = False
        global _commits
        _commits += 1
        fault("before-commit", _commits)
        self.conn.execute("COMMIT")
        fault("after-commit", _commits)

    def next_seq(self) -> int:
        """A workspace-wide, strictly increasing sequence number (call inside a transaction)."""
        row = self.conn.execute("UPDATE counter SET n = n + 1 WHERE id = 1 RETURNING n").fetchone()
        return int(row[0])

    def take_seqs(self, n: int) -> int:
        """`n` sequence numbers at once (inside a transaction): the last one; the block is the `n`
        numbers up to it."""
        row = self.conn.execute("UPDATE counter SET n = n + ? WHERE id = 1 RETURNING n", (n,))
        return int(row.fetchone()[0])

    def seq_now(self) -> int:
        """The last sequence number handed out (every `known` row written later has a larger seq)."""
        row = self.conn.execute("SELECT n FROM counter WHERE id = 1").fetchone()
        return int(row[0]) if row else 0

    # --- meta ----------------------------------------------------------------------------------

    def meta(self, key: str) -> str | None:
        row = self.conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def set_meta(self, key: str, value: str) -> None:
        with self.transaction():
            self.conn.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, value))

    def meta_with_prefix(self, prefix: str) -> list[tuple[str, str]]:
        return [
            (str(k), str(v))
            for k, v in self.conn.execute(
                "SELECT key, value FROM meta WHERE key >= ? AND key < ?",
                (prefix, prefix + "\uffff"),
            ).fetchall()
        ]

    def delete_meta(self, key: str) -> None:
        with self.transaction():
            self.conn.execute("DELETE FROM meta WHERE key = ?", (key,))

    def delete_meta_prefix(self, prefix: str, value_below: int | None = None) -> None:
        """Forget the meta keys starting with `prefix` (only those whose value, as an integer, is
        below `value_below` when given)."""
        with self.transaction():
            if value_below is None:
                self.conn.execute(
                    "DELETE FROM meta WHERE key >= ? AND key < ?", (prefix, prefix + "\uffff")
                )
            else:
                self.conn.execute(
                    "DELETE FROM meta WHERE key >= ? AND key < ? AND CAST(value AS INTEGER) < ?",
                    (prefix, prefix + "\uffff", value_below),
                )

    # --- the file: checks, change marks, the WAL -----------------------------------------------

    def quick_check(self) -> str:
        """SQLite's quick integrity check: "ok", or the first problem found."""
        return str(self.conn.execute("PRAGMA quick_check").fetchone()[0])

    def data_version(self) -> int:
        """Moves whenever another connection commits to the store (cheap to poll)."""
        return int(self.conn.execute("PRAGMA data_version").fetchone()[0])

    def write_mark(self) -> tuple[int, int]:
        """Moves whenever anything is committed to the store, by another connection or by this
        one: a reader's cache keyed on it is stale exactly when the mark moved."""
        return self.data_version(), self.conn.total_changes

    def checkpoint(self) -> None:
        """Copy the WAL into the database and truncate it (best effort: with a reader active, it
        checkpoints what it can and returns)."""
        self.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    @contextmanager
    def checkpoint_at_end(self) -> Iterator[None]:
        """No automatic checkpoints inside the block, one at its end (a bulk write: the WAL is
        copied into the database once rather than every 4 MB, each time with an fsync)."""
        autocheckpoint = int(self.conn.execute("PRAGMA wal_autocheckpoint").fetchone()[0])
        self.conn.execute("PRAGMA wal_autocheckpoint=0")
        try:
            yield
        finally:
            self.conn.execute(f"PRAGMA wal_autocheckpoint={autocheckpoint}")
            self.checkpoint()
