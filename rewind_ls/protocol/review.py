"""Review: who wrote each line (`rewind/blame`) and a turn's hunks (`rewind/turnHunks`)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from rewind_ls.protocol.base import ChangeKind, Params, Result
from rewind_ls.protocol.turns import TurnInfo

BlameSource = Literal[
    "agent",  # an agent's edit tool
    "subagent",
    "shell",  # a shell command inside an agent's turn
    "background",  # work a turn started, after the turn ended (a background subagent, shell)
    "save",  # the person's save in an editor
    "outside",  # a change found between turns (a shell, another tool, the person)
    "restore",  # a rewind, revert or undo of rewind-ls
    "original",  # there before rewind-ls recorded anything of the file
    "unrecorded",  # no recorded change wrote it (an unsaved buffer, an edit not recorded yet)
]
HunkStatus = Literal["intact", "edited-nearby", "edited", "reverted"]


class BlameRun(Result):
    """Consecutive lines with one author."""

    start: int = Field(description="0-based first line.")
    end: int = Field(description="0-based line after the last one.")
    source: BlameSource
    turn_id: str | None = None
    number: int | None = Field(default=None, description="The turn's number in its session.")
    session_id: str | None = None
    agent: str | None = Field(default=None, description="claude-code, codex, editor, ...")
    prompt: str | None = None
    at: str | None = Field(default=None, description="When the turn ended (ISO 8601, UTC).")


class BlameParams(Params):
    uri: str = Field(description="The file (its open buffer when open, the disk otherwise).")


class BlameResult(Result):
    path: str
    uri: str
    line_count: int
    runs: list[BlameRun]


class HunkInfo(Result):
    index: int = Field(description="0-based, in file order; what rewind.revertHunk takes.")
    status: HunkStatus = Field(
        description="intact; edited-nearby (lines around it changed since: the revert is a merge, "
        "previewed); edited (its lines changed since: cannot be reverted alone); reverted (the "
        "file already holds what was there before the turn)."
    )
    revertable: bool
    start: int = Field(description="0-based line where its lines are now.")
    end: int = Field(description="0-based line after them (start for a deletion).")
    removed: list[str] = Field(description="Lines the turn removed (a revert puts them back).")
    added: list[str] = Field(description="Lines the turn wrote (a revert takes them out).")


class TurnFileHunks(Result):
    path: str
    uri: str
    change: ChangeKind
    hunks: list[HunkInfo] = Field(
        description="Empty when the change has no line hunks (created, deleted, binary, too "
        "large): the file reverts as a whole."
    )
    note: str | None = None


class TurnHunksParams(Params):
    turn_id: str
    uri: str | None = Field(default=None, description="Only this file.")


class TurnHunksResult(Result):
    turn: TurnInfo
    files: list[TurnFileHunks]
