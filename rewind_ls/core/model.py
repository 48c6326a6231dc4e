"""The data model every layer uses: what the store hands out, and the words the restore speaks.

Records are immutable `NamedTuple`s (not dataclasses: `dataclasses` imports `inspect`, too slow
for the hook process, which loads only the stdlib's light modules). Only `core/store/rows.py` builds them from the
database: no other module knows a column name. The vocabularies are `str` enums whose values are
exactly the strings stored in SQLite and sent over the protocol, so a member compares equal to its
string, binds to SQLite as text and serialises to JSON as itself.

The records and vocabularies:

- Records are immutable `NamedTuple`s (not dataclasses: `dataclasses` imports `inspect`, too slow for
  the hook process). `Session(id, kind, agent, transcript_path, started_at, last_activity_at,
  open_turn)`, `Turn(id, session_id, number, seq, prompt, started_at, ended_at, state, info)`,
  `Change(turn_id, path, seq, source, before, after, after_seq)` with `before`/`after` as `Version`s
  (`after` None while the turn is still editing the path; `kind`: created, modified or deleted),
  `PathChange` (a change with its turn's `session_id`, `turn_state`, `session_kind`:
  `Store.path_history`), `AgentEvent`.
- `Version(kind, hash, mode, size)`: what a path held; immutable; equal when the content and the
  executable bits are.
- The vocabularies are `str` enums whose values are the strings stored in the database and sent over
  the protocol (a member equals its string, so no migration and no conversion at the edges):
  `VersionKind` (file, absent, too-large, unknown, other), `SessionKind`, `TurnState` (open, closed,
  pending, applied, partial, rolled-back), `ChangeKind`, `RestoreMode` (rewind, revert, undo, recover),
  `Action` (unchanged, create, modify, delete), `ConflictKind`, `Scope` (code, conversation, both),
  `RestoreStatus` (applied, nothing-to-do, conflict, partial, failed, planned, asking).
- The three fixed sessions have fixed ids (`EDITOR_SESSION` "editor", `EXTERNAL_SESSION` "external",
  `REWIND_SESSION` "rewind", plain `str` constants); `RestoreRequest` is not a record but the restore
  package's own value (`core/restore/request.py`).
"""

from __future__ import annotations

import os
from enum import Enum
from typing import Final, NamedTuple


class Words(str, Enum):
    """A `str` enum that prints and formats as its value (Python 3.10 has no `StrEnum`)."""

    def __str__(self) -> str:
        return str(self.value)

    def __format__(self, spec: str) -> str:
        return str(self.value).__format__(spec)


class VersionKind(Words):
    """What a path held at some moment."""

    FILE = "file"
    ABSENT = "absent"
    TOO_LARGE = "too-large"  # content known by hash and size only; not restorable
    UNKNOWN = "unknown"  # seen only after a change (hook installed mid-edit); not restorable
    OTHER = "other"  # a link, folder or other non-file where a file is expected (never stored)


FILE = VersionKind.FILE
ABSENT = VersionKind.ABSENT
TOO_LARGE = VersionKind.TOO_LARGE
UNKNOWN = VersionKind.UNKNOWN
OTHER = VersionKind.OTHER


class SessionKind(Words):
    AGENT = "agent"  # an agent's conversation (Claude Code, Codex, Gemini, the editor's agent)
    EDITOR = "editor"  # the person's saves in an editor
    EXTERNAL = "external"  # changes found between turns (a shell, another tool, the person)
    REWIND = "rewind"  # restore points written by rewind-ls itself


# The fixed sessions for changes that belong to no agent turn: their ids (one of each per workspace,
# named like their kind).
EDITOR_SESSION: Final = "editor"  # the person's saves in an editor
EXTERNAL_SESSION: Final = "external"  # changes found at a turn boundary that happened between turns
REWIND_SESSION: Final = "rewind"  # restore points written by rewind-ls itself


class TurnState(Words):
    OPEN = "open"  # the agent is working in it
    CLOSED = "closed"  # ended
    PENDING = "pending"  # a restore point whose restore is running (or was interrupted)
    APPLIED = "applied"  # a restore point whose restore finished
    PARTIAL = "partial"  # a restore point whose restore wrote some paths and failed others
    ROLLED_BACK = "rolled-back"  # a restore point whose restore was undone before it finished


class ChangeKind(Words):
    """What a settled change did to its path (`Change.kind`)."""

    CREATED = "created"
    MODIFIED = "modified"
    DELETED = "deleted"


class RestoreMode(Words):
    REWIND = "rewind"  # every path changed in T or later goes back to its content at T's start
    REVERT = "revert"  # T's own changes are undone by a three-way merge
    UNDO = "undo"  # rewind to the latest restore point
    RECOVER = "recover"  # finish or roll back a restore that was interrupted
    VERSION = "version"  # one file back to one recorded version (restore PATH --version HASH)


class Action(Words):
    """What a restore does to one path."""

    UNCHANGED = "unchanged"
    CREATE = "create"
    MODIFY = "modify"
    DELETE = "delete"


class ConflictKind(Words):
    MODIFIED_OUTSIDE = "modified-outside"  # the content now is not what rewind-ls last saw
    OTHER_SESSION = "other-session"  # someone else changed the path after T's session did
    MERGE = "merge"  # revert: the three-way merge does not apply
    NOT_RESTORABLE = "not-restorable"  # the content needed was too large to keep, or unknown
    UNREADABLE = "unreadable"  # the path cannot be read now (permission, a folder, a link)


class Scope(Words):
    """What a rewind restores: the files, the agent's conversation (forked before the turn), or both."""

    CODE = "code"
    CONVERSATION = "conversation"
    BOTH = "both"

    @property
    def code(self) -> bool:
        return self in (Scope.CODE, Scope.BOTH)

    @property
    def conversation(self) -> bool:
        return self in (Scope.CONVERSATION, Scope.BOTH)


class RestoreStatus(Words):
    """How a restore ended, as the CLI and the protocol report it."""

    APPLIED = "applied"
    NOTHING_TO_DO = "nothing-to-do"
    CONFLICT = "conflict"
    PARTIAL = "partial"
    FAILED = "failed"
    PLANNED = "planned"  # --dry-run, or the server's `apply: false`: nothing applied
    ASKING = "asking"  # a server command: the preview is out as a question to the person


class Version:
    """What a path held: a file (hash, mode, size), absent, or too large to keep. Immutable
    (`Final`: mypy refuses an assignment; not enforced at run time, where a guard would double the
    cost of making one, and a scan makes tens of thousands).

    Two versions are equal when they hold the same content and the same executable bits (the
    rest of the mode is the person's umask, not a change)."""

    __slots__ = ("hash", "kind", "mode", "size")

    def __init__(
        self, kind: VersionKind, hash: str | None = None, mode: int | None = None, size: int = 0
    ) -> None:
        self.kind: Final = kind
        self.hash: Final = hash
        self.mode: Final = mode
        self.size: Final = size

    def same_content(self, other: Version) -> bool:
        if self.kind == ABSENT or other.kind == ABSENT:
            return self.kind == other.kind
        return self.hash == other.hash

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, Version)
            and self.same_content(other)
            and (self.kind == ABSENT or (self.mode or 0) & 0o111 == (other.mode or 0) & 0o111)
        )

    def __hash__(self) -> int:
        return hash((self.kind, self.hash))

    def __repr__(self) -> str:
        if self.kind == ABSENT:
            return "Version(absent)"
        return f"Version({self.kind}, {str(self.hash)[:10]}, mode={oct(self.mode or 0)})"


ABSENT_VERSION = Version(ABSENT)


def too_large(st: os.stat_result) -> Version:
    """A file over the size cap, known by its stat signature only: never read nor hashed (a hook
    must not spend seconds on a 2 GB file), yet any rewrite, append or replacement changes it."""
    mode = st.st_mode & 0o7777
    return Version(TOO_LARGE, f"stat:{st.st_size}:{st.st_mtime_ns}:{st.st_ino}", mode, st.st_size)


class Session(NamedTuple):
    id: str
    kind: SessionKind
    agent: str | None
    transcript_path: str | None
    started_at: float
    last_activity_at: float
    open_turn: str | None


class Turn(NamedTuple):
    id: str
    session_id: str
    number: int
    seq: int  # workspace-wide order of the turn's start
    prompt: str
    started_at: float
    ended_at: float | None
    state: TurnState
    info: str | None  # JSON: a restore point's journal, a reconstructed turn's origin


def change_kind(before: Version, after: Version | None) -> ChangeKind | None:
    """Created, modified or deleted; None while unsettled (the tool call is still running, or
    failed)."""
    if after is None:
        return None
    if before.kind == ABSENT and after.kind != ABSENT:
        return ChangeKind.CREATED
    if after.kind == ABSENT and before.kind != ABSENT:
        return ChangeKind.DELETED
    return ChangeKind.MODIFIED


# A change's `source` when it cannot be told apart between turns (two sessions' shell commands
# running at once, or a killed agent's command and the person): "shared:<turn>,<turn>" names the
# other turns holding the same change. Rewinding or reverting any of them is a conflict.
SHARED_SOURCE = "shared:"


def shared_turns(source: str) -> list[str]:
    """The other turns a change is shared with (`SHARED_SOURCE`), [] when it is not shared."""
    if not source.startswith(SHARED_SOURCE):
        return []
    return [t for t in source[len(SHARED_SOURCE) :].split(",") if t]


# A change made by work a turn started that went on after the turn ended (a background subagent:
# `background-agent`; a background shell: `background-shell`), credited to that turn. Listings
# and blame call every such source "background".
BACKGROUND = "background"
BACKGROUND_AGENT = "background-agent"
BACKGROUND_SHELL = "background-shell"


def is_background(source: str) -> bool:
    return source.startswith(BACKGROUND)


class Change(NamedTuple):
    """One path touched in one turn: what it held before the turn first touched it, and after the
    turn was done with it (None while the turn is still editing it)."""

    turn_id: str
    path: str
    seq: int  # workspace order of the first touch
    source: str  # who saw it: a hook, a scan, a save, a transcript, a restore
    before: Version
    after: Version | None
    after_seq: int | None  # workspace order of the settling

    @property
    def kind(self) -> ChangeKind | None:
        return change_kind(self.before, self.after)


class PathChange(NamedTuple):
    """A change as `Store.path_history` lists it: a `Change` with its turn's session and state."""

    turn_id: str
    path: str
    seq: int
    source: str
    before: Version
    after: Version | None
    after_seq: int | None
    session_id: str
    turn_state: TurnState
    session_kind: SessionKind

    @property
    def kind(self) -> ChangeKind | None:
        return change_kind(self.before, self.after)


class AgentEvent(NamedTuple):
    """An agent's own id (a prompt id, a tool_use id) and who recorded it first."""

    session_id: str
    kind: str  # "prompt" or "tool"
    key: str
    turn_id: str | None
    source: str  # "hook" or "transcript"
    at: float
