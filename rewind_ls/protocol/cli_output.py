"""The CLI's `--json` objects, and `wire`, which turns core's snake_case data into the checked
camelCase object the CLI prints."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

from rewind_ls.protocol.base import (
    Action,
    RestoreStatus,
    Result,
    Scope,
    SessionKind,
    SummarizeDirection,
)
from rewind_ls.protocol.restore import Conflict, ConversationFork
from rewind_ls.protocol.review import BlameResult
from rewind_ls.protocol.turns import SessionInfo, TurnInfo, TurnsListing

# --- the CLI's --json output --------------------------------------------------------------------
# The same vocabulary as the protocol (a turn is a TurnInfo in both). Unknown fields are an error:
# core cannot add a key to the documented output without adding it here.


class Output(Result):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid")


class CliTurnInfo(TurnInfo, Output):
    subagents: list[str] = Field(
        default=[], description="Subagent types (e.g. general-purpose) that edited in the turn."
    )


class CliSessionInfo(SessionInfo, Output):
    turns: list[CliTurnInfo]  # type: ignore[assignment]


class TurnsOutput(TurnsListing, Output):
    """`rewind-ls turns --json`. Without the first checkpoint's `baseline` (its text output says
    it): the object keeps exactly the keys it always had, for the scripts that read it."""

    sessions: list[CliSessionInfo]  # type: ignore[assignment]
    unrecorded: list[str] = Field(
        default=[], description="Paths rewind-ls could not record: a rewind cannot restore them."
    )


class PlannedFile(Output):
    """One path of `rewind-ls rewind|revert|undo --json` (`files`)."""

    path: str
    action: Action
    added: int
    removed: int
    binary: bool
    conflict: Conflict | None
    markers: int = Field(
        default=0, description="Conflicts written with markers (revert --merge) to resolve."
    )


class RestoreOutput(Output):
    """`rewind-ls rewind|revert|undo --json` (`--dry-run`: status `planned`, nothing applied)."""

    mode: Literal["rewind", "revert", "undo", "version"]
    turn_id: str
    number: int
    scope: Scope
    files: list[PlannedFile] = []
    notes: list[str] = []
    unrecorded: list[str] = []
    status: RestoreStatus
    message: str | None = None
    restore_point_id: str | None = None
    conversation: ConversationFork | None = None


class SummarizeOutput(Output):
    """`rewind-ls summarize --json`."""

    mode: Literal["summarize"]
    direction: SummarizeDirection
    turn_id: str
    number: int
    status: Literal["applied"]
    conversation: ConversationFork


class FileDiff(Output):
    path: str
    change: str
    diff: str = Field(description="Unified diff text.")


class DiffOutput(Output):
    """`rewind-ls diff TURN [TURN_B|PATH] --json`."""

    turn_id: str
    number: int
    files: list[FileDiff]
    to: str | None = Field(default=None, description="The other checkpoint's turn id, or current.")


class ScanOutput(Output):
    """`rewind-ls scan --json`."""

    files: int
    read: int
    baseline_added: int
    baseline_complete: bool
    changes: list[str]
    turn_id: str | None
    deferred: int
    skipped: list[str]
    seconds: float


class FileVersion(Output):
    turn_id: str | None
    number: int | None
    session_id: str | None
    session_kind: SessionKind | None
    agent: str | None
    prompt: str
    time: str | None
    source: str
    change: str
    kind: str | None
    hash: str | None
    mode: int | None


class LogOutput(Output):
    """`rewind-ls log PATH --json`: newest first, the version first seen last."""

    path: str
    versions: list[FileVersion]


class GcOutput(Output):
    """`rewind-ls gc --json`."""

    turns_dropped: int
    versions_dropped: int = 0  # of the person's (edits between turns, saves)
    blobs_dropped: int
    bytes_before: int
    bytes_after: int
    dry_run: bool


class HooksNotFiring(Output):
    """An agent session with prompts or tool calls that only its transcript reported."""

    session_id: str
    prompts_from_transcript: int
    tool_calls_from_transcript: int
    prompts_from_hooks: int
    tool_calls_from_hooks: int


class DoctorCheck(Output):
    name: str
    ok: bool
    detail: str
    sessions: list[HooksNotFiring] | None = None


class DoctorOutput(Output):
    """`rewind-ls doctor --json`."""

    ok: bool
    workspace: str
    store_dir: str
    checks: list[DoctorCheck]


class BlameOutput(BlameResult, Output):
    """`rewind-ls blame PATH --json`."""


class ImportedSession(Output):
    session_id: str
    transcript: str
    turns: int
    changes: int


class ImportOutput(Output):
    """`rewind-ls import claude-code --json`."""

    sessions: list[ImportedSession]
    turns: int
    changes: int
    filled_befores: int
    skipped: list[str]


class ExportOutput(Output):
    """`rewind-ls export TURN --to DIR --json`."""

    turn_id: str
    number: int
    side: Literal["start", "end"] = Field(description="The turn's start, or its end (--after).")
    folder: str
    files: int
    bytes: int
    unwritable: list[str] = Field(
        description="Files in that state whose content rewind-ls does not hold (over the size "
        "cap, never seen): not written."
    )


class GitExportOutput(Output):
    """`rewind-ls export --git BRANCH --json`."""

    branch: str
    ref: str
    tip: str
    previous: str | None = Field(description="The branch's tip before; null: it was created.")
    fast_forward: bool
    commits: int = Field(description="Commits of this session on the branch (start + turns).")
    turns: list[int]
    running: list[int] = Field(description="Turns still running: not exported yet.")
    unwritable: list[str]


_M = TypeVar("_M", bound=BaseModel)


def wire(model: type[_M], data: Mapping[str, Any]) -> dict[str, Any]:
    """`data` (snake_case, as core builds it) as the wire's JSON object: checked against `model`,
    camelCase keys, exactly the keys `data` has (no defaults added)."""
    return model.model_validate(data).model_dump(mode="json", by_alias=True, exclude_unset=True)
