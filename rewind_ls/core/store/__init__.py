"""The checkpoint store: one SQLite database (WAL) per workspace, outside the workspace.

Layout: `<home>/workspaces/<sha256(root)[:16]>/store.sqlite3`. Content is addressed by its SHA-256
and stored once: small contents written together (a baseline) go into zstd packs, others into
their own zstd frame (see `codec`), and an older version of a file stored on its own is re-encoded
as a delta against its newer version, so the newest content is always one decompression away. Every write happens in one
`BEGIN IMMEDIATE` transaction, so a process killed at any instant leaves the last committed
checkpoint whole, and several processes (agent hooks, the server, the CLI) can write at once.
"""

from __future__ import annotations

import hashlib
import os
import re
import sqlite3
import time
import zlib
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from rewind_ls.core.errors import CorruptBlob, StoreError
from rewind_ls.core.fs import config
from rewind_ls.core.fs.faults import fault

# The version vocabulary, re-exported for the modules that took it from here before `model`
# existed (other branches' blob and scan code); new code imports it from `model`.
from rewind_ls.core.model import ABSENT as ABSENT
from rewind_ls.core.model import ABSENT_VERSION as ABSENT_VERSION
from rewind_ls.core.model import FILE as FILE
from rewind_ls.core.model import OTHER as OTHER
from rewind_ls.core.model import (
    SHARED_SOURCE,
    AgentEvent,
    Change,
    PathChange,
    Session,
    SessionKind,
    Turn,
    TurnState,
    VersionKind,
)
from rewind_ls.core.model import TOO_LARGE as TOO_LARGE
from rewind_ls.core.model import UNKNOWN as UNKNOWN
from rewind_ls.core.model import Version as Version
from rewind_ls.core.model import too_large as too_large
from rewind_ls.core.store import codec

# The blob codecs, re-exported for the readers that hand the store encoded payloads.
from rewind_ls.core.store.codec import DELTA as DELTA
from rewind_ls.core.store.codec import PACKED as PACKED
from rewind_ls.core.store.codec import RAW as RAW
from rewind_ls.core.store.codec import ZLIB as ZLIB
from rewind_ls.core.store.codec import ZSTD as ZSTD

SCHEMA_VERSION = 3
# Bytes of decompressed packs a Store keeps (a restore reads many neighbours from each pack).
_PACK_CACHE = 32 << 20

# The database's errors, for the modules that must tell them apart without knowing the database:
# `DbError` is every one of them; `DatabaseError` a damaged, full or unusable file;
# `OperationalError` one the database could not carry out now (busy, locked, full).
DbError = sqlite3.Error
DatabaseError = sqlite3.DatabaseError
OperationalError = sqlite3.OperationalError

# Crash-safety tests: `REWIND_LS_FAULT=before-commit:3` kills the process just before the third
# write transaction of the process commits, `after-commit:3` just after it committed.
_commits = 0


_SCHEMA = """
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


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def workspace_key(root: str) -> str:
    return hashlib.sha256(os.path.realpath(root).encode("utf-8", "surrogateescape")).hexdigest()[
        :16
    ]


def store_dir_for(root: str, home: str | None = None) -> str:
    return os.path.join(home or config.home_dir(), "workspaces", workspace_key(root))


# --- rows to records: the one place each record is built from its columns ------------------------

_SESSION_COLS = "id, kind, agent, transcript_path, started_at, last_activity_at, open_turn"
# Prompts are kept to this many characters (a pasted log can be hundreds of MB; the hook, a
# transcript and the server all store through `begin_turn`/`set_turn_prompt`), with a note of what
# was cut. Reads are bounded too, so a store written before the cap never loads a prompt whole.
MAX_PROMPT_CHARS = 64 * 1024
_PROMPT_CUT = "\n[prompt cut by rewind-ls: {n} more characters not stored]"
_PROMPT_CUT_RE = re.compile(r"\n\[prompt cut by rewind-ls: (\d+) more characters not stored\]$")


def bounded_prompt(prompt: str) -> str:
    """`prompt`, cut to MAX_PROMPT_CHARS with a note of how much was left out."""
    if len(prompt) <= MAX_PROMPT_CHARS:
        return prompt
    return prompt[:MAX_PROMPT_CHARS] + _PROMPT_CUT.format(n=len(prompt) - MAX_PROMPT_CHARS)


def prompt_matches(stored: str, text: str) -> bool:
    """Whether a stored (perhaps cut) prompt is `text`."""
    if stored == text:
        return True
    cut = _PROMPT_CUT_RE.search(stored)
    if cut is None:
        return False
    kept = stored[: cut.start()]
    return len(text) == len(kept) + int(cut.group(1)) and text.startswith(kept)


_TURN_COLS = (
    "id, session_id, number, seq, substr(prompt, 1, "
    f"{MAX_PROMPT_CHARS + 100}), started_at, ended_at, state, info"
)
_CHANGE_COLS = (
    "turn_id, path, seq, source, before_kind, before_hash, before_mode,"
    " after_kind, after_hash, after_mode, after_seq"
)
_CHANGES_OF_C = ", ".join(f"c.{name.strip()}" for name in _CHANGE_COLS.split(","))


# Stored string -> enum member by a dict: calling the enum costs ~20 times more, and a scan reads
# tens of thousands of versions.
_VERSION_KINDS = {k.value: k for k in VersionKind}
_SESSION_KINDS = {k.value: k for k in SessionKind}
_TURN_STATES = {s.value: s for s in TurnState}


def _version(kind: str, hash: str | None, mode: int | None, size: int | None = None) -> Version:
    """The one place a Version is built from stored columns (a change's side, a known path).
    A change records no size: 0, as for any Version built without one."""
    return Version(_VERSION_KINDS[kind], hash, mode, size or 0)


def _session(row: tuple[Any, ...]) -> Session:
    return Session(row[0], _SESSION_KINDS[row[1]], row[2], row[3], row[4], row[5], row[6])


def _turn(row: tuple[Any, ...]) -> Turn:
    return Turn(
        row[0], row[1], row[2], row[3], row[4], row[5], row[6], _TURN_STATES[row[7]], row[8]
    )


def _change(row: tuple[Any, ...]) -> Change:
    # before_kind is NOT NULL; after_kind is NULL while the turn is still editing the path.
    after = None if row[7] is None else _version(row[7], row[8], row[9])
    return Change(row[0], row[1], row[2], row[3], _version(row[4], row[5], row[6]), after, row[10])


def _path_change(row: tuple[Any, ...]) -> PathChange:
    change = _change(row)
    return PathChange(*change, row[11], _TURN_STATES[row[12]], _SESSION_KINDS[row[13]])


def _event(row: tuple[Any, ...]) -> AgentEvent:
    return AgentEvent(row[0], row[1], row[2], row[3], row[4], row[5])


class Store:
    """One workspace's store. Open with `Store.open(root)`; close when done (or use `with`)."""

    def __init__(self, conn: sqlite3.Connection, root: str, path: str) -> None:
        self.conn = conn
        self.root = root
        self.path = path
        self._in_tx = False
        # The last packs read, decompressed (a restore reads many neighbours from one pack).
        self._packs: dict[int, bytes] = {}

    # --- opening -------------------------------------------------------------------------------

    @classmethod
    def open(cls, root: str, home: str | None = None, create: bool = True) -> Store:
        root = os.path.realpath(root)
        config.check_home(home or config.home_dir())  # nothing read from a home others can change
        directory = store_dir_for(root, home)
        db = os.path.join(directory, "store.sqlite3")
        if not os.path.exists(db):
            moved = find_moved_store(root, home)
            if moved is not None:
                # The same folder under a new name (its files keep their inodes): its history
                # follows it instead of starting over.
                try:
                    reattach(moved, root, home)
                except (OSError, StoreError):
                    pass  # another process re-attached it first, or it cannot be: start anew
            if not os.path.exists(db) and not create:
                hint = "; to record an agent's turns: rewind-ls install claude-code"
                orphans = orphan_roots(home)
                if orphans:
                    hint += (
                        "; if this workspace was moved or renamed, re-attach its history with "
                        "`rewind-ls doctor --moved-from OLD` (folders with history that no longer "
                        f"exist: {', '.join(orphans[:5])})"
                    )
                raise StoreError(
                    f"{root}: no checkpoints recorded for this workspace yet ({db}){hint}"
                )
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
            conn.execute("PRAGMA busy_timeout=30000")
        except (OSError, sqlite3.Error) as exc:
            raise store_error(exc, db) from exc
        store = cls(conn, root, directory)
        store._init_schema()
        return store

    def _init_schema(self) -> None:
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
            for statement in _SCHEMA.strip().split(";"):
                if statement.strip():
                    self.conn.execute(statement)
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
                for statement in _MIGRATIONS[current].strip().split(";"):
                    if statement.strip():
                        self.conn.execute(statement)
                current += 1

    def close(self) -> None:
        self.conn.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """A write transaction; nested use joins the outer one. Waits for other writers."""
        if self._in_tx:
            yield self.conn
            return
        deadline = time.monotonic() + 60.0
        while True:
            try:
                self.conn.execute("BEGIN IMMEDIATE")
                break
            except sqlite3.OperationalError as exc:
                # busy_timeout normally absorbs contention; this is the rare case it gives up.
                if "locked" not in str(exc) and "busy" not in str(exc):
                    raise
                if time.monotonic() > deadline:
                    raise StoreError(f"{self.path}: the store stayed busy for 60 s") from exc
                time.sleep(0.05)
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

    # --- blobs ---------------------------------------------------------------------------------

    def has_blob(self, h: str) -> bool:
        return self.conn.execute("SELECT 1 FROM blobs WHERE hash = ?", (h,)).fetchone() is not None

    def put_blob(self, data: bytes, previous: str | None = None, h: str | None = None) -> str:
        """Store `data` once; return its hash. `previous` is the hash of an older version of the same
        file: if it is stored whole, it is re-encoded as a delta against `data` when that is smaller."""
        h = h or digest(data)
        with self.transaction():
            if self.has_blob(h):
                return h
            kind, payload = codec.compress(data)
            self.conn.execute(
                "INSERT INTO blobs(hash, size, codec, base, data) VALUES (?, ?, ?, NULL, ?)",
                (h, len(data), kind, payload),
            )
            if previous and previous != h:
                self._rebase_as_delta(previous, h, data)
        return h

    def _rebase_as_delta(self, old: str, new: str, new_data: bytes) -> None:
        row = self.conn.execute("SELECT codec, data FROM blobs WHERE hash = ?", (old,)).fetchone()
        # Only whole blobs stored on their own become deltas, and only against a whole blob: the
        # base graph stays acyclic. A packed blob stays: its bytes are shared with its pack.
        if row is None or row[0] in (DELTA, PACKED):
            return
        try:
            from rewind_ls.core.store.delta import make_delta
        except ImportError:  # pragma: no cover - delta support is optional at runtime
            return
        old_data = self._decode(old, row[0], row[1], None)
        delta = codec.delta_payload(make_delta(new_data, old_data))
        if len(delta) * 2 < len(row[1]):
            # Delete and re-insert rather than update in place: the row moves to the end of the
            # table among other small rows, and the leaf page that held the whole blob's inline
            # part is freed for reuse. Updated in place, every version of a big file left a page
            # nearly empty (200 one-line edits of a 1 MB file: a 1.7 MB store, 0.6 MB this way).
            self.conn.execute(
                "INSERT OR REPLACE INTO blobs(hash, size, codec, base, data)"
                " SELECT hash, size, ?, ?, ? FROM blobs WHERE hash = ?",
                (DELTA, new, delta, old),
            )

    def get_blob(self, h: str, known: Mapping[str, bytes] | None = None) -> bytes:
        """`h`'s content. `known`: contents already in hand (hash -> bytes); a chain of deltas
        stops at the first of them instead of decoding back from the whole version (reading a
        file's versions newest first costs one delta each, not the whole chain each)."""
        # Iterative, not recursive: each older version of a file is a delta against the next newer
        # one, so a much-edited file's chain is as deep as its history (recursing, ~500 versions
        # hit Python's recursion limit and the oldest ones could not be restored).
        if known and h in known:
            return known[h]
        chain: list[tuple[str, int, bytes, str | None]] = []
        cur = h
        data: bytes | None = None
        while True:
            row = self.conn.execute(
                "SELECT codec, base, data, pack, off, size FROM blobs WHERE hash = ?", (cur,)
            ).fetchone()
            if row is None:
                raise CorruptBlob(cur, "missing from the store")
            if row[0] == PACKED:
                chain.append((cur, RAW, self._pack_slice(cur, row[3], row[4], row[5]), None))
                break
            chain.append((cur, row[0], row[2], row[1]))
            if row[0] != DELTA or row[1] is None:
                break
            if len(chain) > 1_000_000:
                raise CorruptBlob(h, "its chain of deltas never reaches a whole version")
            cur = row[1]
            if known and cur in known:
                data = known[cur]
                break
        for key, kind, payload, base in reversed(chain):
            data = self._decode(key, kind, payload, base, base_data=data)
        assert data is not None
        return data

    def get_blobs(self, hashes: Iterable[str]) -> dict[str, bytes]:
        """hash -> content for each of `hashes`, members of one pack read together (each pack
        decompressed once). Raises CorruptBlob like `get_blob`."""
        wanted = list(dict.fromkeys(hashes))
        where: dict[str, tuple[int, int]] = {}
        for i in range(0, len(wanted), 500):
            part = wanted[i : i + 500]
            rows = self.conn.execute(
                f"SELECT hash, pack, off FROM blobs WHERE codec = {PACKED} AND hash IN"
                f" ({', '.join('?' * len(part))})",
                part,
            ).fetchall()
            where.update((r[0], (r[1], r[2])) for r in rows)
        return {h: self.get_blob(h) for h in sorted(wanted, key=lambda x: where.get(x, (-1, 0)))}

    def _pack_slice(self, h: str, pack: int | None, off: int | None, size: int) -> bytes:
        if pack is None or off is None:
            raise CorruptBlob(h, "packed without a pack")
        data = self._packs.get(pack)
        if data is None:
            row = self.conn.execute(
                "SELECT codec, size, data FROM packs WHERE id = ?", (pack,)
            ).fetchone()
            if row is None:
                raise CorruptBlob(h, f"its pack {pack} is missing from the store")
            try:
                data = codec.unpack(row[2], row[1])
            except ValueError as exc:
                raise CorruptBlob(h, f"pack {pack}: {exc}") from exc
            # Packs are never rewritten under the same id (AUTOINCREMENT): a cached one stays true.
            while self._packs and sum(map(len, self._packs.values())) + len(data) > _PACK_CACHE:
                self._packs.pop(next(iter(self._packs)))
            self._packs[pack] = data
        if off + size > len(data):
            raise CorruptBlob(h, f"outside its pack {pack}")
        return data[off : off + size]

    def _decode(
        self,
        h: str,
        kind: int,
        payload: bytes,
        base: str | None,
        depth: int = 0,
        base_data: bytes | None = None,
    ) -> bytes:
        try:
            if kind == DELTA:
                if base is None or depth > 10_000:
                    raise CorruptBlob(h, "delta without a usable base")
                from rewind_ls.core.store.delta import apply_delta

                source = base_data if base_data is not None else self.get_blob(base)
                data = apply_delta(source, codec.delta_bytes(payload))
            else:
                data = codec.decompress(kind, payload)
        except (zlib.error, ValueError) as exc:
            raise CorruptBlob(h, str(exc)) from exc
        if digest(data) != h:
            raise CorruptBlob(h, "content does not match its hash")
        return data

    # --- sessions and turns --------------------------------------------------------------------

    def ensure_session(
        self,
        session_id: str,
        kind: SessionKind | str,
        agent: str | None = None,
        transcript: str | None = None,
    ) -> None:
        """Create the session, or note its activity. `kind` may be given as its string (the hook
        modules say "agent"); one outside the vocabulary is refused here, never stored."""
        kind = SessionKind(kind)
        now = time.time()
        with self.transaction():
            self.conn.execute(
                "INSERT INTO sessions(id, kind, agent, transcript_path, started_at, last_activity_at)"
                " VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT(id) DO UPDATE SET"
                " last_activity_at = excluded.last_activity_at,"
                " transcript_path = coalesce(excluded.transcript_path, transcript_path)",
                (session_id, kind, agent, transcript, now, now),
            )

    def session(self, session_id: str) -> Session | None:
        row = self.conn.execute(
            f"SELECT {_SESSION_COLS} FROM sessions WHERE id = ?", (session_id,)
        ).fetchone()
        return None if row is None else _session(row)

    def sessions(self) -> list[Session]:
        rows = self.conn.execute(f"SELECT {_SESSION_COLS} FROM sessions ORDER BY last_activity_at")
        return [_session(r) for r in rows]

    def begin_turn(
        self,
        session_id: str,
        prompt: str,
        state: TurnState = TurnState.OPEN,
        info: str | None = None,
        started_at: float | None = None,
    ) -> str:
        """Open a new turn in `session_id` (which must exist) and make it the session's open turn.
        `started_at`: when it really started (a turn reconstructed from a transcript)."""
        turn_id = "t" + os.urandom(6).hex()
        stored = bounded_prompt(prompt)
        now = time.time() if started_at is None else started_at
        with self.transaction():
            number = self.conn.execute(
                "SELECT coalesce(max(number), 0) + 1 FROM turns WHERE session_id = ?", (session_id,)
            ).fetchone()[0]
            self.conn.execute(
                "INSERT INTO turns(id, session_id, number, seq, prompt, started_at, state, info)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (turn_id, session_id, number, self.next_seq(), stored, now, state, info),
            )
            self.conn.execute(
                "UPDATE sessions SET open_turn = ?, last_activity_at = ? WHERE id = ?",
                (turn_id, now, session_id),
            )
        return turn_id

    def end_turn(
        self, turn_id: str, state: TurnState = TurnState.CLOSED, ended_at: float | None = None
    ) -> None:
        with self.transaction():
            self.conn.execute(
                "UPDATE turns SET ended_at = ?, state = ? WHERE id = ?",
                (time.time() if ended_at is None else ended_at, state, turn_id),
            )
            self.conn.execute(
                "UPDATE sessions SET open_turn = NULL WHERE open_turn = ?", (turn_id,)
            )

    def set_turn_state(self, turn_id: str, state: TurnState, info: str | None = None) -> None:
        with self.transaction():
            self.conn.execute(
                "UPDATE turns SET state = ?, info = coalesce(?, info), ended_at = ? WHERE id = ?",
                (state, info, time.time(), turn_id),
            )

    def set_turn_info(self, turn_id: str, info: str) -> None:
        with self.transaction():
            self.conn.execute("UPDATE turns SET info = ? WHERE id = ?", (info, turn_id))

    def inherit_turns(self, source: str, target: str, below: int, transcript: str) -> int:
        """A forked conversation (`target`) carries the turns of `source` numbered below `below`:
        copy those turns and their changes (same numbers, same `seq`: one history, two sessions)
        so the fork's next turn is number `below` and its earlier turns can be rewound. Returns
        the number of turns copied; does nothing when `target` already exists."""
        now = time.time()
        with self.transaction():
            if self.session(target) is not None:
                return 0
            row = self.session(source)
            agent = None if row is None else row.agent
            # No agent has worked in the fork yet: it must not become the "current" session
            # (the latest activity) before the person resumes it; its first hook makes it so.
            quiet = now if row is None else min(now, row.started_at)
            self.conn.execute(
                "INSERT INTO sessions(id, kind, agent, transcript_path, started_at,"
                " last_activity_at) VALUES (?, 'agent', ?, ?, ?, ?)",
                (target, agent, transcript, now, quiet),
            )
            turns = self.conn.execute(
                "SELECT id FROM turns WHERE session_id = ? AND number < ? ORDER BY number",
                (source, below),
            ).fetchall()
            for (old_id,) in turns:
                new_id = "t" + os.urandom(6).hex()
                self.conn.execute(
                    "INSERT INTO turns(id, session_id, number, seq, prompt, started_at, ended_at,"
                    " state, info) SELECT ?, ?, number, seq, prompt, started_at,"
                    " coalesce(ended_at, ?), CASE state WHEN 'open' THEN 'closed' ELSE state END,"
                    " info FROM turns WHERE id = ?",
                    (new_id, target, now, old_id),
                )
                self.conn.execute(
                    "INSERT INTO changes SELECT ?, path, seq, source, before_kind, before_hash,"
                    " before_mode, after_kind, after_hash, after_mode, after_seq FROM changes"
                    " WHERE turn_id = ?",
                    (new_id, old_id),
                )
                # The fork's transcript holds these turns' prompt and tool ids again: claimed,
                # so the transcript follower does not record them a second time. `inherited`:
                # neither a hook's nor the transcript's (doctor's hooks check counts those).
                self.conn.execute(
                    "INSERT OR IGNORE INTO agent_events(session_id, kind, key, turn_id, source,"
                    " at) SELECT ?, kind, key, ?, 'inherited', at FROM agent_events"
                    " WHERE session_id = ? AND turn_id = ?",
                    (target, new_id, source, old_id),
                )
        return len(turns)

    def fork_origins(self) -> dict[str, tuple[str, int]]:
        """Each forked session's origin: session id -> (the session it was forked from, the turn
        number it was forked before). A fork's inherited turns share their `seq` with the source's
        (`inherit_turns`); the source is the latest-started other session holding the fork's last
        inherited turn and started before the fork (so a fork of a fork names the fork)."""
        rows = self.conn.execute(
            "SELECT f.session_id, max(f.number), s.id, s.started_at"
            " FROM turns f JOIN sessions fs ON fs.id = f.session_id"
            " JOIN turns o ON o.seq = f.seq AND o.session_id != f.session_id"
            " JOIN sessions s ON s.id = o.session_id AND s.started_at < fs.started_at"
            " WHERE f.seq IN (SELECT seq FROM turns GROUP BY seq HAVING count(*) > 1)"
            " GROUP BY f.session_id, s.id"
        ).fetchall()
        best: dict[str, tuple[str, int, float]] = {}
        for fork, last, source, started in rows:
            have = best.get(fork)
            # The source holds the fork's latest inherited turn; among those, the newest session.
            if have is None or (last, started) > (have[1], have[2]):
                best[fork] = (source, last, started)
        return {fork: (source, last + 1) for fork, (source, last, _) in best.items()}

    def turn(self, turn_id: str) -> Turn | None:
        row = self.conn.execute(f"SELECT {_TURN_COLS} FROM turns WHERE id = ?", (turn_id,))
        found = row.fetchone()
        return None if found is None else _turn(found)

    def turns(self, session_id: str | None = None) -> list[Turn]:
        if session_id is None:
            rows = self.conn.execute(f"SELECT {_TURN_COLS} FROM turns ORDER BY seq")
        else:
            rows = self.conn.execute(
                f"SELECT {_TURN_COLS} FROM turns WHERE session_id = ? ORDER BY seq", (session_id,)
            )
        return [_turn(r) for r in rows]

    def turns_page(
        self,
        session_id: str,
        limit: int,
        before_number: int | None = None,
        states: tuple[str, ...] | None = None,
    ) -> list[Turn]:
        """The newest `limit` turns of a session numbered below `before_number` (None: the newest),
        in `states` if given, newest first: a page of a long session without reading the others
        (the UNIQUE(session_id, number) index walks backwards)."""
        where = "session_id = ?"
        args: list[Any] = [session_id]
        if before_number is not None:
            where += " AND number < ?"
            args.append(before_number)
        if states is not None:
            where += f" AND state IN ({','.join('?' * len(states))})"
            args += list(states)
        rows = self.conn.execute(
            f"SELECT {_TURN_COLS} FROM turns WHERE {where} ORDER BY number DESC LIMIT ?",
            (*args, limit),
        )
        return [_turn(r) for r in rows]

    def turn_count(self, session_id: str, states: tuple[str, ...] | None = None) -> int:
        """How many turns a session has (in `states` if given): a count over the session's part
        of the (session_id, number) index, not a scan of every turn."""
        where, args = "session_id = ?", [session_id]
        if states is not None:
            where += f" AND state IN ({','.join('?' * len(states))})"
            args += list(states)
        row = self.conn.execute(f"SELECT COUNT(*) FROM turns WHERE {where}", args).fetchone()
        return int(row[0])

    def turn_by_number(self, session_id: str, number: int) -> Turn | None:
        row = self.conn.execute(
            f"SELECT {_TURN_COLS} FROM turns WHERE session_id = ? AND number = ?",
            (session_id, number),
        ).fetchone()
        return None if row is None else _turn(row)

    def turn_number_range(self, session_id: str) -> tuple[int | None, int | None]:
        """(lowest, highest) turn number kept for a session; (None, None) when it has none."""
        low, high = self.conn.execute(
            "SELECT min(number), max(number) FROM turns WHERE session_id = ?", (session_id,)
        ).fetchone()
        return low, high

    def latest_turn_seq(self) -> int | None:
        """The workspace order of the newest turn of any session (None: no turn yet)."""
        row = self.conn.execute("SELECT max(seq) FROM turns").fetchone()
        return None if row[0] is None else int(row[0])

    def latest_applied_turn(self, session_id: str) -> str | None:
        """The newest turn of `session_id` that was applied (wholly or partly): the restore
        point an undo goes back to."""
        row = self.conn.execute(
            "SELECT id FROM turns WHERE session_id = ? AND state IN ('applied', 'partial')"
            " ORDER BY seq DESC LIMIT 1",
            (session_id,),
        ).fetchone()
        return None if row is None else str(row[0])

    def latest_agent_session(self) -> str | None:
        row = self.conn.execute(
            "SELECT id FROM sessions WHERE kind = 'agent' ORDER BY last_activity_at DESC LIMIT 1"
        ).fetchone()
        return None if row is None else str(row[0])

    def recent_session_ids(self, limit: int) -> list[str]:
        """The sessions with the latest activity, latest first."""
        rows = self.conn.execute(
            "SELECT id FROM sessions ORDER BY last_activity_at DESC LIMIT ?", (limit,)
        ).fetchall()
        return [r[0] for r in rows]

    def clear_open_turn(self, session_id: str) -> None:
        with self.transaction():
            self.conn.execute("UPDATE sessions SET open_turn = NULL WHERE id = ?", (session_id,))

    def activity_mark(self) -> tuple[int, int, int]:
        """(newest turn seq, newest change or settled change seq, ended turns): moves whenever a
        turn starts or ends or a change is recorded or settled."""
        row = self.conn.execute(
            "SELECT (SELECT coalesce(max(seq), 0) FROM turns),"
            " (SELECT coalesce(max(coalesce(after_seq, seq)), 0) FROM changes),"
            " (SELECT count(*) FROM turns WHERE ended_at IS NOT NULL)"
        ).fetchone()
        return int(row[0]), int(row[1]), int(row[2])

    # --- retention (gc) ------------------------------------------------------------------------

    def _undo_floor(self, restore_session: str) -> int:
        """The seq of the latest applied restore point of `restore_session` (what `undo` rewinds
        to: it and every later turn are never dropped); past the newest turn when there is none."""
        row = self.conn.execute(
            "SELECT max(seq) FROM turns WHERE session_id = ? AND state IN ('applied', 'partial')",
            (restore_session,),
        ).fetchone()
        if row is not None and row[0] is not None:
            return int(row[0])
        return int(self.conn.execute("SELECT coalesce(max(seq), 0) + 1 FROM turns").fetchone()[0])

    def droppable_turns(self, ended_before: float, restore_session: str) -> list[str]:
        """Turns neither open nor pending that ended (or started, when never ended) before
        `ended_before`, oldest first; never the latest restore point nor a turn after it."""
        rows = self.conn.execute(
            "SELECT id FROM turns WHERE coalesce(ended_at, started_at) < ? AND state != 'open'"
            " AND state != 'pending' AND seq < ? ORDER BY seq",
            (ended_before, self._undo_floor(restore_session)),
        ).fetchall()
        return [r[0] for r in rows]

    def oldest_droppable_turn(self, restore_session: str) -> tuple[str, str] | None:
        """(id, session id) of the oldest turn neither open nor pending, before the latest restore
        point (see `droppable_turns`)."""
        row = self.conn.execute(
            "SELECT id, session_id FROM turns WHERE state NOT IN ('open', 'pending') AND seq < ?"
            " ORDER BY seq LIMIT 1",
            (self._undo_floor(restore_session),),
        ).fetchone()
        return None if row is None else (str(row[0]), str(row[1]))

    def turn_sessions(self, turn_ids: list[str]) -> dict[str, str]:
        """The session id of each of `turn_ids`."""
        out: dict[str, str] = {}
        for tid in turn_ids:
            row = self.conn.execute("SELECT session_id FROM turns WHERE id = ?", (tid,)).fetchone()
            if row is not None:
                out[tid] = str(row[0])
        return out

    def drop_turns(self, turn_ids: list[str]) -> None:
        """Delete turns and their changes, then every non-agent session left with no turn."""
        with self.transaction():
            for tid in turn_ids:
                self.conn.execute("DELETE FROM changes WHERE turn_id = ?", (tid,))
                self.conn.execute("DELETE FROM turns WHERE id = ?", (tid,))
            self.conn.execute(
                "DELETE FROM sessions WHERE open_turn IS NULL"
                " AND id NOT IN (SELECT session_id FROM turns) AND kind != 'agent'"
            )

    # --- changes -------------------------------------------------------------------------------

    def change(self, turn_id: str, path: str) -> Change | None:
        row = self.conn.execute(
            f"SELECT {_CHANGE_COLS} FROM changes WHERE turn_id = ? AND path = ?", (turn_id, path)
        ).fetchone()
        return None if row is None else _change(row)

    def changes(self, turn_id: str) -> list[Change]:
        rows = self.conn.execute(
            f"SELECT {_CHANGE_COLS} FROM changes WHERE turn_id = ? ORDER BY path", (turn_id,)
        )
        return [_change(r) for r in rows]

    def changes_of_turns(self, turn_ids: list[str]) -> list[Change]:
        if not turn_ids:
            return []
        marks = ",".join("?" * len(turn_ids))
        rows = self.conn.execute(
            f"SELECT {_CHANGE_COLS} FROM changes WHERE turn_id IN ({marks}) ORDER BY seq", turn_ids
        )
        return [_change(r) for r in rows]

    def changes_since(self, seq: int) -> list[Change]:
        """Every change first touched after workspace order `seq`, oldest first."""
        rows = self.conn.execute(
            f"SELECT {_CHANGE_COLS} FROM changes WHERE seq > ? ORDER BY seq", (seq,)
        )
        return [_change(r) for r in rows]

    def path_history(self, path: str) -> list[PathChange]:
        """Every change to `path`, oldest first, with its turn's session and state."""
        rows = self.conn.execute(
            f"SELECT {_CHANGES_OF_C}, t.session_id, t.state, s.kind"
            " FROM changes c JOIN turns t ON t.id = c.turn_id JOIN sessions s ON s.id = t.session_id"
            " WHERE c.path = ? ORDER BY c.seq",
            (path,),
        )
        return [_path_change(r) for r in rows]

    def path_histories(self, paths: list[str]) -> dict[str, list[PathChange]]:
        """`path_history` of many paths in a few queries (a restore plans thousands)."""
        out: dict[str, list[PathChange]] = {p: [] for p in paths}
        for i in range(0, len(paths), 500):
            part = paths[i : i + 500]
            rows = self.conn.execute(
                f"SELECT {_CHANGES_OF_C}, t.session_id, t.state, s.kind"
                " FROM changes c JOIN turns t ON t.id = c.turn_id"
                " JOIN sessions s ON s.id = t.session_id"
                f" WHERE c.path IN ({','.join('?' * len(part))}) ORDER BY c.seq",
                part,
            )
            for r in rows:
                out[r[1]].append(_path_change(r))
        return out

    def all_changes(self) -> list[Change]:
        """Every change of every turn, by path."""
        rows = self.conn.execute(f"SELECT {_CHANGE_COLS} FROM changes ORDER BY path")
        return [_change(r) for r in rows]

    def paths_in_flight(self, except_session: str | None = None) -> set[str]:
        """Paths an open turn is editing right now (before recorded, after not yet), of any
        session but `except_session`."""
        rows = self.conn.execute(
            "SELECT c.path FROM changes c JOIN turns t ON t.id = c.turn_id"
            " WHERE c.after_kind IS NULL AND t.state = ? AND t.session_id IS NOT ?",
            (TurnState.OPEN, except_session),
        )
        return {r[0] for r in rows}

    def record_before(self, turn_id: str, path: str, before: Version, source: str) -> bool:
        """Record `before` for (turn, path) on first touch only; returns True when recorded."""
        with self.transaction():
            if self.change(turn_id, path) is not None:
                return False
            self.conn.execute(
                "INSERT INTO changes(turn_id, path, seq, source, before_kind, before_hash,"
                " before_mode) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (turn_id, path, self.next_seq(), source, before.kind, before.hash, before.mode),
            )
        return True

    def record_after(self, turn_id: str, path: str, after: Version) -> None:
        with self.transaction():
            self.conn.execute(
                "UPDATE changes SET after_kind = ?, after_hash = ?, after_mode = ?, after_seq = ?"
                " WHERE turn_id = ? AND path = ?",
                (after.kind, after.hash, after.mode, self.next_seq(), turn_id, path),
            )

    def record_shared(
        self, turn_ids: list[str], path: str, before: Version, after: Version
    ) -> None:
        """One change that cannot be told apart between `turn_ids` (`model.SHARED_SOURCE`): each
        turn holds it (its first `before` kept when it touched the path already), marked as shared
        with the others."""
        with self.transaction():
            for turn_id in turn_ids:
                others = ",".join(t for t in turn_ids if t != turn_id)
                source = f"{SHARED_SOURCE}{others}"
                if not self.record_before(turn_id, path, before, source):
                    self.conn.execute(
                        "UPDATE changes SET source = ? WHERE turn_id = ? AND path = ?",
                        (source, turn_id, path),
                    )
                self.record_after(turn_id, path, after)

    def drop_change(self, turn_id: str, path: str) -> None:
        with self.transaction():
            self.conn.execute("DELETE FROM changes WHERE turn_id = ? AND path = ?", (turn_id, path))

    def set_before(self, turn_id: str, path: str, before: Version) -> bool:
        """Replace a change's `before` when it was recorded as unknown (a hook saw only the
        after; the transcript knows what the file held). Returns True when replaced."""
        with self.transaction():
            cur = self.conn.execute(
                "UPDATE changes SET before_kind = ?, before_hash = ?, before_mode = ?"
                " WHERE turn_id = ? AND path = ? AND before_kind = ?",
                (before.kind, before.hash, before.mode, turn_id, path, UNKNOWN),
            )
        return cur.rowcount > 0

    # --- the agent's own ids (prompt ids, tool_use ids): recorded once, by a hook or a transcript

    def claim_event(
        self, session_id: str, kind: str, key: str, source: str, turn_id: str | None = None
    ) -> bool:
        """Claim the agent's `kind` ('prompt' or 'tool') id `key`: True when nobody recorded it
        before (the caller records it now), False when a hook or a transcript already did."""
        with self.transaction():
            cur = self.conn.execute(
                "INSERT OR IGNORE INTO agent_events(session_id, kind, key, turn_id, source, at)"
                " VALUES (?, ?, ?, ?, ?, ?)",
                (session_id, kind, key, turn_id, source, time.time()),
            )
        return cur.rowcount > 0

    def set_event_turn(self, session_id: str, kind: str, key: str, turn_id: str) -> None:
        with self.transaction():
            self.conn.execute(
                "UPDATE agent_events SET turn_id = ? WHERE session_id = ? AND kind = ? AND key = ?",
                (turn_id, session_id, kind, key),
            )

    def event(self, session_id: str, kind: str, key: str) -> AgentEvent | None:
        row = self.conn.execute(
            "SELECT session_id, kind, key, turn_id, source, at FROM agent_events"
            " WHERE session_id = ? AND kind = ? AND key = ?",
            (session_id, kind, key),
        ).fetchone()
        return None if row is None else _event(row)

    def event_counts(self) -> dict[str, dict[str, int]]:
        """Per agent session: how many prompts and tool calls each recorder (`hook`,
        `transcript`) recorded first."""
        out: dict[str, dict[str, int]] = {}
        for session_id, kind, source, n in self.conn.execute(
            "SELECT session_id, kind, source, count(*) FROM agent_events"
            " GROUP BY session_id, kind, source"
        ):
            out.setdefault(session_id, {})[f"{kind}:{source}"] = n
        return out

    def set_turn_prompt(self, turn_id: str, prompt: str, info: str | None) -> None:
        with self.transaction():
            self.conn.execute(
                "UPDATE turns SET prompt = ?, info = ? WHERE id = ?",
                (bounded_prompt(prompt), info, turn_id),
            )

    # --- last known content of each path (compare-and-swap, cheap re-checks) --------------------

    def known(self, path: str) -> tuple[Version, int | None, int | None] | None:
        """(version, mtime_ns, ino) last seen for `path`, or None when never seen."""
        row = self.conn.execute(
            "SELECT kind, hash, mode, size, mtime_ns, ino FROM known WHERE path = ?", (path,)
        ).fetchone()
        if row is None:
            return None
        return _version(row[0], row[1], row[2], row[3]), row[4], row[5]

    def known_many(self, paths: list[str]) -> dict[str, tuple[Version, int | None, int | None]]:
        """`known` of many paths in a few queries; a path never seen is left out."""
        out: dict[str, tuple[Version, int | None, int | None]] = {}
        for i in range(0, len(paths), 500):
            part = paths[i : i + 500]
            rows = self.conn.execute(
                "SELECT path, kind, hash, mode, size, mtime_ns, ino FROM known"
                f" WHERE path IN ({','.join('?' * len(part))})",
                part,
            )
            for r in rows:
                out[r[0]] = (_version(r[1], r[2], r[3], r[4]), r[5], r[6])
        return out

    def set_known(self, path: str, version: Version, st: os.stat_result | None = None) -> None:
        with self.transaction():
            self.conn.execute(
                "INSERT OR REPLACE INTO known(path, kind, hash, mode, size, mtime_ns, ino, seq)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    path,
                    version.kind,
                    version.hash,
                    version.mode,
                    version.size,
                    st.st_mtime_ns if st else None,
                    st.st_ino if st else None,
                    self.next_seq(),
                ),
            )

    def known_paths(self) -> list[tuple[str, Version, int | None, int | None]]:
        rows = self.conn.execute(
            "SELECT path, kind, hash, mode, size, mtime_ns, ino FROM known ORDER BY path"
        ).fetchall()
        return [(r[0], _version(r[1], r[2], r[3], r[4]), r[5], r[6]) for r in rows]

    def known_file_signatures(
        self,
    ) -> dict[str, tuple[str, int | None, int | None, int | None, int | None]]:
        """path -> (path, size, mtime_ns, ino, mode) of every path known to hold something.
        Whole rows as values, unsliced: building 30,000 tuples is a measurable part of a scan."""
        return {
            r[0]: r
            for r in self.conn.execute(
                "SELECT path, size, mtime_ns, ino, mode FROM known WHERE kind != ?", (ABSENT,)
            ).fetchall()
        }

    def has_known_under(self, folder: str) -> bool:
        """Whether any path below `folder` (no trailing slash) was ever seen."""
        low = folder + "/"
        high = folder + "0"  # "0" sorts right after "/"
        row = self.conn.execute(
            "SELECT 1 FROM known WHERE path >= ? AND path < ? LIMIT 1", (low, high)
        ).fetchone()
        return row is not None

    def known_absent_paths(self) -> set[str]:
        return {r[0] for r in self.conn.execute("SELECT path FROM known WHERE kind = ?", (ABSENT,))}

    def known_versions(self, paths: list[str]) -> dict[str, tuple[Version, int]]:
        """path -> (version last seen, its row's seq) for those of `paths` that are known."""
        out: dict[str, tuple[Version, int]] = {}
        for i in range(0, len(paths), 500):
            chunk = paths[i : i + 500]
            marks = ",".join("?" * len(chunk))
            for row in self.conn.execute(
                f"SELECT path, kind, hash, mode, size, seq FROM known WHERE path IN ({marks})",
                chunk,
            ):
                out[row[0]] = (_version(row[1], row[2], row[3], row[4]), row[5])
        return out

    def seq_now(self) -> int:
        """The last sequence number handed out (every `known` row written later has a larger seq)."""
        row = self.conn.execute("SELECT n FROM counter WHERE id = 1").fetchone()
        return int(row[0]) if row else 0

    def known_signatures_for(
        self, paths: list[str], prefixes: list[str], since_seq: int
    ) -> tuple[dict[str, tuple[str, int | None, int | None, int | None, int | None]], set[str]]:
        """`known_file_signatures` and `known_absent_paths`, restricted to `paths`, the paths
        under the folder `prefixes` ("a/b/") and the rows written after `since_seq` (a watched
        scan: only these can have changed)."""
        sigs: dict[str, tuple[str, int | None, int | None, int | None, int | None]] = {}
        absent: set[str] = set()
        cols = "SELECT path, size, mtime_ns, ino, mode, kind FROM known WHERE "
        queries: list[tuple[str, list[object]]] = [(cols + "seq > ?", [since_seq])]
        for i in range(0, len(paths), 500):
            chunk = paths[i : i + 500]
            queries.append((cols + f"path IN ({','.join('?' * len(chunk))})", list(chunk)))
        for prefix in prefixes:
            # "a/b/" up to "a/b0": every path below the folder, through the primary key's index.
            queries.append((cols + "path >= ? AND path < ?", [prefix, prefix[:-1] + "0"]))
        for sql, args in queries:
            for r in self.conn.execute(sql, args):
                if r[5] == ABSENT:
                    absent.add(r[0])
                else:
                    sigs[r[0]] = r[:5]
        return sigs, absent

    def known_seq(self, path: str) -> int | None:
        """The seq of `path`'s `known` row (None: not known): it changes whenever the row does."""
        row = self.conn.execute("SELECT seq FROM known WHERE path = ?", (path,)).fetchone()
        return None if row is None else int(row[0])

    def set_known_many(
        self,
        rows: list[tuple[object, ...]],
        replace: bool,
    ) -> None:
        """(path, kind, hash, mode, size, mtime_ns, ino) rows under one new seq; `replace`: an
        existing row is replaced, else it is kept."""
        verb = "INSERT OR REPLACE" if replace else "INSERT OR IGNORE"
        with self.transaction():
            seq = self.next_seq()
            self.conn.executemany(
                f"{verb} INTO known(path, kind, hash, mode, size, mtime_ns, ino, seq)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                [(*r, seq) for r in rows],
            )

    def turns_in_state(self, session_id: str, state: TurnState) -> list[tuple[str, str | None]]:
        """(id, info) of a session's turns in `state`, oldest first (pending restore points)."""
        rows = self.conn.execute(
            "SELECT id, info FROM turns WHERE session_id = ? AND state = ? ORDER BY seq",
            (session_id, state),
        ).fetchall()
        return [(r[0], r[1]) for r in rows]

    def recent_restore_journals(self, limit: int) -> list[str | None]:
        """The journals of the latest applied or partial restore points that name backups."""
        rows = self.conn.execute(
            "SELECT info FROM turns WHERE session_id = 'rewind' AND state IN ('applied', 'partial')"
            " AND info LIKE '%.bak%' ORDER BY seq DESC LIMIT ?",
            (limit,),
        ).fetchall()
        return [r[0] for r in rows]

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

    # --- blobs in bulk, checks and maintenance -------------------------------------------------

    def insert_packed_blobs(self, blobs: list[tuple[str, int, int, bytes]]) -> None:
        """(hash, size, codec, payload) of whole blobs; one already stored stays. RAW payloads (the
        content itself) are encoded here: the small ones together in packs, in the given order."""
        with self.transaction():
            fresh = self._not_stored([b[0] for b in blobs])
            small: list[tuple[str, bytes]] = []
            rows: list[tuple[str, int, int, bytes]] = []
            for h, size, kind, payload in blobs:
                if h not in fresh:
                    continue
                fresh.discard(h)
                if kind != RAW:
                    rows.append((h, size, kind, payload))
                elif len(payload) <= codec.PACK_MEMBER_MAX:
                    small.append((h, payload))
                else:
                    rows.append((h, size, *codec.compress(payload)))
            if len(small) == 1:  # a pack of one is a blob on its own
                rows.append((small[0][0], len(small[0][1]), *codec.compress(small[0][1])))
                small = []
            self.conn.executemany(
                "INSERT INTO blobs(hash, size, codec, base, data) VALUES (?, ?, ?, NULL, ?)", rows
            )
            self._write_packs(small)

    def _not_stored(self, hashes: list[str]) -> set[str]:
        fresh = set(hashes)
        for i in range(0, len(hashes), 500):
            part = hashes[i : i + 500]
            found = self.conn.execute(
                f"SELECT hash FROM blobs WHERE hash IN ({', '.join('?' * len(part))})", part
            )
            fresh.difference_update(r[0] for r in found)
        return fresh

    def _write_packs(self, items: list[tuple[str, bytes]]) -> None:
        """Packs of `items` and their members' rows (call inside a transaction: a process killed
        midway leaves neither)."""
        if not items:
            return  # zstandard stays unimported (the hook that records a file or two)
        for pack in codec.build_packs(items):
            row = self.conn.execute(
                "INSERT INTO packs(codec, size, data) VALUES (?, ?, ?) RETURNING id",
                (ZSTD, pack.size, pack.payload),
            ).fetchone()
            self.conn.executemany(
                "INSERT INTO blobs(hash, size, codec, base, data, pack, off)"
                f" VALUES (?, ?, {PACKED}, NULL, x'', {int(row[0])}, ?)",
                [(h, size, off) for h, off, size in pack.members],
            )

    def delta_encode_older(self, old: str, new: str, new_data: bytes) -> None:
        """`put_blob(previous=old)` for blobs stored in bulk: keep the stored `old` as a delta
        against `new` (content `new_data`) when that is smaller."""
        if old != new:
            self._rebase_as_delta(old, new, new_data)

    def blob_hashes(self) -> list[str]:
        """Every stored hash, members of one pack together (a check that reads them all
        decompresses each pack once)."""
        return [
            r[0] for r in self.conn.execute("SELECT hash FROM blobs ORDER BY pack, off").fetchall()
        ]

    def drop_blobs(self, hashes: list[str]) -> None:
        """Delete these blobs; a pack that held any of them is rewritten with its other members
        (or deleted when none is left), so their bytes are reclaimed now."""
        with self.transaction():
            touched: set[int] = set()
            for h in hashes:
                row = self.conn.execute("DELETE FROM blobs WHERE hash = ? RETURNING pack", (h,))
                pack = row.fetchone()
                if pack is not None and pack[0] is not None:
                    touched.add(int(pack[0]))
            for pack_id in sorted(touched):
                self._repack(pack_id)

    def _repack(self, pack_id: int) -> None:
        members = self.conn.execute(
            "SELECT hash FROM blobs WHERE pack = ? ORDER BY off", (pack_id,)
        ).fetchall()
        items = [(r[0], self.get_blob(r[0])) for r in members]
        self.conn.execute("DELETE FROM blobs WHERE pack = ?", (pack_id,))
        self.conn.execute("DELETE FROM packs WHERE id = ?", (pack_id,))
        self._packs.pop(pack_id, None)
        if len(items) == 1:
            h, data = items[0]
            self.conn.execute(
                "INSERT INTO blobs(hash, size, codec, base, data) VALUES (?, ?, ?, NULL, ?)",
                (h, len(data), *codec.compress(data)),
            )
        elif items:
            self._write_packs(items)

    def pack_count(self) -> int:
        return int(self.conn.execute("SELECT count(*) FROM packs").fetchone()[0])

    def referenced_blobs(self) -> set[str]:
        """The hashes a change (before or after), a known path or a restore point's saved disk
        content (under an unsaved buffer) names."""
        return {
            r[0]
            for r in self.conn.execute(
                "SELECT before_hash FROM changes WHERE before_hash IS NOT NULL"
                " UNION SELECT after_hash FROM changes WHERE after_hash IS NOT NULL"
                " UNION SELECT hash FROM known WHERE hash IS NOT NULL"
                # A restore point's disk contents under unsaved buffers (restore_point.SAVED_DISK).
                " UNION SELECT json_extract(j.value, '$[1]') FROM"
                " (SELECT info FROM turns WHERE session_id = 'rewind' AND json_valid(info)) t,"
                " json_each(t.info, '$.savedDisk') j WHERE json_extract(j.value, '$[1]') IS NOT NULL"
            )
        }

    def delta_bases(self) -> dict[str, str]:
        """hash -> the hash it is a delta against, for every delta blob."""
        return dict(
            self.conn.execute("SELECT hash, base FROM blobs WHERE base IS NOT NULL").fetchall()
        )

    def missing_file_contents(self) -> int:
        """How many file contents that changes refer to are not in the store."""
        row = self.conn.execute(
            "SELECT count(*) FROM (SELECT before_hash AS h FROM changes WHERE before_kind = 'file'"
            " UNION SELECT after_hash FROM changes WHERE after_kind = 'file') x"
            " WHERE h NOT IN (SELECT hash FROM blobs)"
        ).fetchone()
        return int(row[0])

    def stored_bytes(self) -> int:
        """The size of every blob as stored (compressed, delta or in a pack)."""
        row = self.conn.execute(
            "SELECT (SELECT coalesce(sum(length(data)), 0) FROM blobs)"
            " + (SELECT coalesce(sum(length(data)), 0) FROM packs)"
        ).fetchone()
        return int(row[0])

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

    def stats(self) -> dict[str, Any]:
        blobs, raw = self.conn.execute(
            "SELECT count(*), coalesce(sum(size), 0) FROM blobs"
        ).fetchone()
        stored = self.stored_bytes()
        turns = self.conn.execute("SELECT count(*) FROM turns").fetchone()[0]
        return {"blobs": blobs, "content_bytes": raw, "stored_bytes": stored, "turns": turns}


# --- damaged and moved stores -------------------------------------------------------------------

_TABLES = (
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
DB_NAME = "store.sqlite3"


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
        for statement in _SCHEMA.strip().split(";"):
            if statement.strip():
                dst.execute(statement)
        for table in _TABLES:
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
    store = Store(sqlite3.connect(fresh, isolation_level=None), root, directory)
    try:
        bad = []
        for h in store.blob_hashes():
            try:
                store.get_blob(h)
            except CorruptBlob:
                bad.append(h)
        store.drop_blobs(bad)
        store.conn.execute("PRAGMA journal_mode=WAL")
    finally:
        store.close()
    return len(bad)


def store_root(directory: str) -> str | None:
    """The workspace folder a store was recorded for (its `root` meta), read-only; None if unreadable."""
    db = os.path.join(directory, DB_NAME)
    try:
        conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5)
    except sqlite3.Error:
        return None
    try:
        row = conn.execute("SELECT value FROM meta WHERE key = 'root'").fetchone()
        return None if row is None else str(row[0])
    except sqlite3.Error:
        return None
    finally:
        conn.close()


def orphan_roots(home: str | None = None) -> list[str]:
    """Workspace folders that have a store but no longer exist (moved, renamed or deleted)."""
    base = os.path.join(home or config.home_dir(), "workspaces")
    try:
        names = sorted(os.listdir(base))
    except OSError:
        return []
    found = []
    for name in names:
        recorded = store_root(os.path.join(base, name))
        if recorded and not os.path.isdir(recorded):
            found.append(recorded)
    return found


def find_moved_store(root: str, home: str | None = None, sample: int = 40) -> str | None:
    """The former folder of `root` when it was moved or renamed: a store whose folder no longer
    exists and whose last known files are here with the same inode, size and mtime (a move within
    a filesystem keeps all three). Only looked for when `root` has no store yet."""
    base = os.path.join(home or config.home_dir(), "workspaces")
    if not os.path.isdir(base):
        return None
    matches = []
    for old in orphan_roots(home):
        db = os.path.join(store_dir_for(old, home), DB_NAME)
        try:
            conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5)
            try:
                rows = conn.execute(
                    "SELECT path, size, ino, mtime_ns FROM known WHERE kind = 'file'"
                    " AND ino IS NOT NULL"
                    " ORDER BY seq DESC LIMIT ?",
                    (sample,),
                ).fetchall()
            finally:
                conn.close()
        except sqlite3.Error:
            continue
        if len(rows) < 3:
            continue  # too little to tell one folder from another
        same = 0
        for path, size, ino, mtime_ns in rows:
            try:
                st = os.lstat(os.path.join(root, *path.split("/")))
            except OSError:
                continue
            # Inode, size and mtime: a file made anew (even reusing a freed inode) differs.
            same += st.st_ino == ino and st.st_size == size and st.st_mtime_ns == mtime_ns
        if same * 10 >= len(rows) * 9:
            matches.append(old)
    return matches[0] if len(matches) == 1 else None


def reattach(old_root: str, new_root: str, home: str | None = None) -> str:
    """Give the store of a moved or renamed workspace (`old_root`) to its new folder. A store the
    new folder already has is kept aside when it holds no agent turn, refused otherwise. Returns
    the store folder now in use."""
    old_root = os.path.realpath(old_root)
    new_root = os.path.realpath(new_root)
    old_dir, new_dir = store_dir_for(old_root, home), store_dir_for(new_root, home)
    if old_dir == new_dir:
        raise StoreError(f"{old_root}: is this workspace itself; nothing to re-attach")
    if not os.path.exists(os.path.join(old_dir, DB_NAME)):
        raise StoreError(f"{old_root}: no checkpoints were recorded for that folder ({old_dir})")
    if os.path.isdir(old_root):
        raise StoreError(
            f"{old_root}: still exists; its history stays with it (move the folder first)"
        )
    if os.path.exists(os.path.join(new_dir, DB_NAME)):
        with Store.open(new_root, home=home, create=False) as existing:
            agent_turns = existing.conn.execute(
                "SELECT count(*) FROM turns t JOIN sessions s ON s.id = t.session_id"
                " WHERE s.kind = 'agent'"
            ).fetchone()[0]
        if agent_turns:
            raise StoreError(
                f"{new_root}: already has its own history ({agent_turns} agent turn(s), "
                f"{new_dir}); not merged with {old_root}'s"
            )
        os.replace(new_dir, f"{new_dir}.replaced-{time.strftime('%Y%m%d-%H%M%S')}")
    os.replace(old_dir, new_dir)
    with Store.open(new_root, home=home, create=False) as store:
        store.set_meta("root", new_root)
        store.set_meta("moved_from", old_root)
    return new_dir
