"""`Store`: one workspace's store, the one object the rest of rewind-ls talks to. A facade: each
method hands the question to the component that owns it, over one shared database connection and
its one writer transaction (so a caller's `with store.transaction():` groups writes to several):

- `db.Database`: opening, the schema, the transaction, the sequence counter, `meta`, the WAL;
- `sessions.Sessions`: sessions and turns; `changes.Changes` and `changes.AgentEvents`: what a turn
  did; `known.KnownPaths`: the last known version of each path;
- `blobs.Blobs` (with `packs.Packs`): contents, stored once by hash.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterable, Mapping, Sequence
from contextlib import AbstractContextManager
from typing import Any

from rewind_ls.core.fs import config
from rewind_ls.core.model import (
    AgentEvent,
    Change,
    PathChange,
    Session,
    SessionKind,
    Turn,
    TurnState,
    Version,
)
from rewind_ls.core.store.blobs import Blobs
from rewind_ls.core.store.changes import AgentEvents, Changes
from rewind_ls.core.store.codec import Pack
from rewind_ls.core.store.db import Database
from rewind_ls.core.store.known import KnownPaths
from rewind_ls.core.store.moved import locate
from rewind_ls.core.store.sessions import Sessions


class Store:
    """One workspace's store. Open with `Store.open(root)`; close when done (or use `with`).
    Each method's contract is the docstring of the component method it hands the call to."""

    def __init__(self, db: Database) -> None:
        self._db = db
        self.conn = db.conn
        self.root = db.root
        self.path = db.path
        self._sessions = Sessions(db)
        self._changes = Changes(db)
        self._events = AgentEvents(db)
        self._known = KnownPaths(db)
        self._blobs = Blobs(db)

    @classmethod
    def open(cls, root: str, home: str | None = None, create: bool = True) -> Store:
        root = os.path.realpath(root)
        config.check_home(home or config.home_dir())  # nothing read from a home others can change
        directory = locate(root, home, create)
        return cls(Database.connect(root, directory, home))

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def transaction(self) -> AbstractContextManager[sqlite3.Connection]:
        """A write transaction; nested use joins the outer one. Waits for other writers."""
        return self._db.transaction()

    def checkpoint_at_end(self) -> AbstractContextManager[None]:
        """No automatic checkpoints inside the block, one at its end (a bulk write)."""
        return self._db.checkpoint_at_end()

    # --- the database: the sequence, meta, the file and its WAL (db.py) ---

    def next_seq(self) -> int:
        return self._db.next_seq()

    def seq_now(self) -> int:
        return self._db.seq_now()

    def meta(self, key: str) -> str | None:
        return self._db.meta(key)

    def set_meta(self, key: str, value: str) -> None:
        self._db.set_meta(key, value)

    def meta_with_prefix(self, prefix: str) -> list[tuple[str, str]]:
        return self._db.meta_with_prefix(prefix)

    def delete_meta(self, key: str) -> None:
        self._db.delete_meta(key)

    def delete_meta_prefix(self, prefix: str, value_below: int | None = None) -> None:
        self._db.delete_meta_prefix(prefix, value_below)

    def quick_check(self) -> str:
        return self._db.quick_check()

    def data_version(self) -> int:
        return self._db.data_version()

    def write_mark(self) -> tuple[int, int]:
        return self._db.write_mark()

    def checkpoint(self) -> None:
        self._db.checkpoint()

    # --- sessions and turns (sessions.py) ---

    def ensure_session(
        self,
        session_id: str,
        kind: SessionKind | str,
        agent: str | None = None,
        transcript: str | None = None,
    ) -> None:
        self._sessions.ensure_session(session_id, kind, agent, transcript)

    def session(self, session_id: str) -> Session | None:
        return self._sessions.session(session_id)

    def sessions(self) -> list[Session]:
        return self._sessions.sessions()

    def begin_turn(
        self,
        session_id: str,
        prompt: str,
        state: TurnState = TurnState.OPEN,
        info: str | None = None,
        started_at: float | None = None,
    ) -> str:
        return self._sessions.begin_turn(session_id, prompt, state, info, started_at)

    def end_turn(
        self, turn_id: str, state: TurnState = TurnState.CLOSED, ended_at: float | None = None
    ) -> None:
        self._sessions.end_turn(turn_id, state, ended_at)

    def set_turn_state(self, turn_id: str, state: TurnState, info: str | None = None) -> None:
        self._sessions.set_turn_state(turn_id, state, info)

    def set_turn_info(self, turn_id: str, info: str) -> None:
        self._sessions.set_turn_info(turn_id, info)

    def inherit_turns(self, source: str, target: str, below: int, transcript: str) -> int:
        return self._sessions.inherit_turns(source, target, below, transcript)

    def fork_origins(self) -> dict[str, tuple[str, int]]:
        return self._sessions.fork_origins()

    def turn(self, turn_id: str) -> Turn | None:
        return self._sessions.turn(turn_id)

    def turns(self, session_id: str | None = None) -> list[Turn]:
        return self._sessions.turns(session_id)

    def turns_page(
        self,
        session_id: str,
        limit: int,
        before_number: int | None = None,
        states: tuple[str, ...] | None = None,
    ) -> list[Turn]:
        return self._sessions.turns_page(session_id, limit, before_number, states)

    def turn_stamps_page(
        self,
        session_id: str,
        limit: int,
        before_number: int | None = None,
        states: tuple[str, ...] | None = None,
    ) -> list[tuple[str, int, tuple[Any, ...]]]:
        return self._sessions.turn_stamps_page(session_id, limit, before_number, states)

    def turns_of(self, turn_ids: list[str]) -> list[Turn]:
        return self._sessions.turns_of(turn_ids)

    def turn_count(self, session_id: str, states: tuple[str, ...] | None = None) -> int:
        return self._sessions.turn_count(session_id, states)

    def turn_by_number(self, session_id: str, number: int) -> Turn | None:
        return self._sessions.turn_by_number(session_id, number)

    def turn_number_range(self, session_id: str) -> tuple[int | None, int | None]:
        return self._sessions.turn_number_range(session_id)

    def turn_counts(self, after_seq: int = 0) -> tuple[dict[str, int], int]:
        return self._sessions.turn_counts(after_seq)

    def turns_dropped(self) -> int:
        return self._sessions.turns_dropped()

    def latest_turn(self, session_id: str) -> Turn | None:
        return self._sessions.latest_turn(session_id)

    def latest_turn_seq(self) -> int | None:
        return self._sessions.latest_turn_seq()

    def latest_applied_turn(self, session_id: str) -> str | None:
        return self._sessions.latest_applied_turn(session_id)

    def latest_agent_session(self) -> str | None:
        return self._sessions.latest_agent_session()

    def recent_session_ids(self, limit: int) -> list[str]:
        return self._sessions.recent_session_ids(limit)

    def clear_open_turn(self, session_id: str) -> None:
        self._sessions.clear_open_turn(session_id)

    def activity_mark(self) -> tuple[int, int, int]:
        return self._sessions.activity_mark()

    def droppable_turns(self, ended_before: float, restore_session: str) -> list[str]:
        return self._sessions.droppable_turns(ended_before, restore_session)

    def oldest_droppable_turn(self, restore_session: str) -> tuple[str, str] | None:
        return self._sessions.oldest_droppable_turn(restore_session)

    def turn_sessions(self, turn_ids: list[str]) -> dict[str, str]:
        return self._sessions.turn_sessions(turn_ids)

    def drop_turns(self, turn_ids: list[str]) -> None:
        self._sessions.drop_turns(turn_ids)

    def set_turn_prompt(self, turn_id: str, prompt: str, info: str | None) -> None:
        self._sessions.set_turn_prompt(turn_id, prompt, info)

    def turns_in_state(self, session_id: str, state: TurnState) -> list[tuple[str, str | None]]:
        return self._sessions.turns_in_state(session_id, state)

    def recent_restore_journals(self, limit: int) -> list[tuple[str, str | None]]:
        return self._sessions.recent_restore_journals(limit)

    # --- changes (changes.py) ---

    def change(self, turn_id: str, path: str) -> Change | None:
        return self._changes.change(turn_id, path)

    def changes(self, turn_id: str) -> list[Change]:
        return self._changes.changes(turn_id)

    def changes_of_turns(self, turn_ids: list[str]) -> list[Change]:
        return self._changes.changes_of_turns(turn_ids)

    def changes_since(self, seq: int) -> list[Change]:
        return self._changes.changes_since(seq)

    def path_history(self, path: str) -> list[PathChange]:
        return self._changes.path_history(path)

    def path_histories(
        self, paths: list[str], after_seq: int | None = None
    ) -> dict[str, list[PathChange]]:
        return self._changes.path_histories(paths, after_seq)

    def all_changes(self) -> list[Change]:
        return self._changes.all_changes()

    def paths_in_flight(self, except_session: str | None = None) -> set[str]:
        return self._changes.paths_in_flight(except_session)

    def record_before(self, turn_id: str, path: str, before: Version, source: str) -> bool:
        return self._changes.record_before(turn_id, path, before, source)

    def record_after(self, turn_id: str, path: str, after: Version) -> None:
        self._changes.record_after(turn_id, path, after)

    def record_changes(
        self, turn_id: str, rows: Sequence[tuple[str, Version, Version]], source: str
    ) -> None:
        self._changes.record_changes(turn_id, rows, source)

    def record_shared(
        self, turn_ids: list[str], path: str, before: Version, after: Version
    ) -> None:
        self._changes.record_shared(turn_ids, path, before, after)

    def record_as(
        self, turn_id: str, path: str, before: Version, after: Version, source: str
    ) -> None:
        self._changes.record_as(turn_id, path, before, after, source)

    def drop_change(self, turn_id: str, path: str) -> None:
        self._changes.drop_change(turn_id, path)

    def set_before(self, turn_id: str, path: str, before: Version) -> bool:
        return self._changes.set_before(turn_id, path, before)

    # --- the agent's own ids, recorded once (changes.py) ---

    def claim_event(
        self, session_id: str, kind: str, key: str, source: str, turn_id: str | None = None
    ) -> bool:
        return self._events.claim_event(session_id, kind, key, source, turn_id)

    def set_event_turn(self, session_id: str, kind: str, key: str, turn_id: str) -> None:
        self._events.set_event_turn(session_id, kind, key, turn_id)

    def event(self, session_id: str, kind: str, key: str) -> AgentEvent | None:
        return self._events.event(session_id, kind, key)

    def event_counts(self) -> dict[str, dict[str, int]]:
        return self._events.event_counts()

    # --- the last known version of each path (known.py) ---

    def known(self, path: str) -> tuple[Version, int | None, int | None] | None:
        return self._known.known(path)

    def known_many(self, paths: list[str]) -> dict[str, tuple[Version, int | None, int | None]]:
        return self._known.known_many(paths)

    def set_known(self, path: str, version: Version, st: os.stat_result | None = None) -> None:
        self._known.set_known(path, version, st)

    def known_paths(self) -> list[tuple[str, Version, int | None, int | None]]:
        return self._known.known_paths()

    def known_file_signatures(
        self,
    ) -> dict[str, tuple[str, int | None, int | None, int | None, int | None]]:
        return self._known.known_file_signatures()

    def has_known_under(self, folder: str) -> bool:
        return self._known.has_known_under(folder)

    def known_absent_paths(self) -> set[str]:
        return self._known.known_absent_paths()

    def known_versions(self, paths: list[str]) -> dict[str, tuple[Version, int]]:
        return self._known.known_versions(paths)

    def known_signatures_for(
        self, paths: list[str], prefixes: list[str], since_seq: int
    ) -> tuple[dict[str, tuple[str, int | None, int | None, int | None, int | None]], set[str]]:
        return self._known.known_signatures_for(paths, prefixes, since_seq)

    def known_seq(self, path: str) -> int | None:
        return self._known.known_seq(path)

    def set_known_many(
        self, rows: list[tuple[str, Version, int | None, int | None]], replace: bool
    ) -> None:
        self._known.set_known_many(rows, replace)

    # --- contents (blobs.py, packs.py) ---

    def has_blob(self, h: str) -> bool:
        return self._blobs.has_blob(h)

    def blobs_not_stored(self, hashes: list[str]) -> set[str]:
        """Which of `hashes` the store does not hold (a few queries for thousands)."""
        return self._blobs.not_stored(hashes)

    def put_blob(self, data: bytes, previous: str | None = None, h: str | None = None) -> str:
        return self._blobs.put_blob(data, previous, h)

    def get_blob(self, h: str, known: Mapping[str, bytes] | None = None) -> bytes:
        return self._blobs.get_blob(h, known)

    def get_blobs(self, hashes: Iterable[str]) -> dict[str, bytes]:
        return self._blobs.get_blobs(hashes)

    def insert_packed_blobs(self, blobs: list[tuple[str, int, int, bytes]]) -> None:
        self._blobs.insert_packed_blobs(blobs)

    def insert_built_packs(self, packs: Sequence[Pack]) -> None:
        self._blobs.insert_built_packs(packs)

    def delta_encode_older(self, old: str, new: str, new_data: bytes) -> None:
        self._blobs.delta_encode_older(old, new, new_data)

    def blob_hashes(self) -> list[str]:
        return self._blobs.blob_hashes()

    def drop_blobs(self, hashes: list[str]) -> None:
        self._blobs.drop_blobs(hashes)

    def referenced_blobs(self) -> set[str]:
        return self._blobs.referenced_blobs()

    def delta_bases(self) -> dict[str, str]:
        return self._blobs.delta_bases()

    def missing_file_contents(self) -> int:
        return self._blobs.missing_file_contents()

    def blob_sizes(self, hashes: list[str]) -> dict[str, int]:
        return self._blobs.sizes(hashes)

    def stored_bytes(self) -> int:
        return self._blobs.stored_bytes()

    def pack_count(self) -> int:
        return self._blobs.packs.count()

    def stats(self) -> dict[str, Any]:
        return self._blobs.stats()
