"""Rows to records: the one place each record of `core.model` is built from its columns, the
column lists the record modules select, and the bound on a stored prompt."""

from __future__ import annotations

import re
from typing import Any

from rewind_ls.core.model import (
    AgentEvent,
    Change,
    PathChange,
    Session,
    SessionKind,
    Turn,
    TurnState,
    Version,
    VersionKind,
)

SESSION_COLS = "id, kind, agent, transcript_path, started_at, last_activity_at, open_turn"
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


TURN_COLS = (
    "id, session_id, number, seq, substr(prompt, 1, "
    f"{MAX_PROMPT_CHARS + 100}), started_at, ended_at, state, info"
)
CHANGE_COLS = (
    "turn_id, path, seq, source, before_kind, before_hash, before_mode,"
    " after_kind, after_hash, after_mode, after_seq"
)
# CHANGE_COLS of the `changes` table aliased `c` (a join).
CHANGES_OF_C = ", ".join(f"c.{name.strip()}" for name in CHANGE_COLS.split(","))


# Stored string -> enum member by a dict: calling the enum costs ~20 times more, and a scan reads
# tens of thousands of versions.
_VERSION_KINDS = {k.value: k for k in VersionKind}
_SESSION_KINDS = {k.value: k for k in SessionKind}
_TURN_STATES = {s.value: s for s in TurnState}


def version_of(kind: str, hash: str | None, mode: int | None, size: int | None = None) -> Version:
    """The one place a Version is built from stored columns (a change's side, a known path).
    A change records no size: 0, as for any Version built without one."""
    return Version(_VERSION_KINDS[kind], hash, mode, size or 0)


def session_of(row: tuple[Any, ...]) -> Session:
    return Session(row[0], _SESSION_KINDS[row[1]], row[2], row[3], row[4], row[5], row[6])


def turn_of(row: tuple[Any, ...]) -> Turn:
    return Turn(
        row[0], row[1], row[2], row[3], row[4], row[5], row[6], _TURN_STATES[row[7]], row[8]
    )


def change_of(row: tuple[Any, ...]) -> Change:
    # before_kind is NOT NULL; after_kind is NULL while the turn is still editing the path.
    after = None if row[7] is None else version_of(row[7], row[8], row[9])
    return Change(
        row[0], row[1], row[2], row[3], version_of(row[4], row[5], row[6]), after, row[10]
    )


def path_change_of(row: tuple[Any, ...]) -> PathChange:
    change = change_of(row)
    return PathChange(*change, row[11], _TURN_STATES[row[12]], _SESSION_KINDS[row[13]])


def event_of(row: tuple[Any, ...]) -> AgentEvent:
    return AgentEvent(row[0], row[1], row[2], row[3], row[4], row[5])
