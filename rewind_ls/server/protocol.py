"""Every wire shape, once: the custom `rewind/*` protocol (params, results, notifications) and the
CLI's `--json` objects, as pydantic models.

Generated from these models, never written by hand: `schemas/*.json` (`python -m
rewind_ls.server.schemas --write`, a test fails on drift) and the VS Code client's
`editors/vscode/src/protocol.ts` (`python -m rewind_ls.server.protocol_ts`, at build time).
Field names are snake_case here and in core; camelCase exists only on the wire, made by the alias
generator when the server answers and when the CLI prints `--json` (`wire`). Params reject unknown
fields so a typo is an error, not a silent default.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

Scope = Literal["code", "conversation", "both"]
Mode = Literal["rewind", "revert"]
# A preview may also be of the undo (the latest restore point; no turnId needed).
PreviewMode = Literal["rewind", "revert", "undo"]
ChangeKind = Literal["created", "modified", "deleted"]
Action = Literal["create", "modify", "delete", "unchanged"]
ConflictKind = Literal[
    "modified-outside",  # current content is not what rewind-ls last saw (person, other tool)
    "other-session",  # another session (or the person's saves) changed the path after the turn
    "merge",  # revert: the three-way merge does not apply cleanly
    "not-restorable",  # the content needed was too large to record, or is unknown
]
SessionKind = Literal["agent", "editor", "external", "rewind"]
RestoreStatus = Literal["applied", "nothing-to-do", "conflict", "partial", "failed", "planned"]
SummarizeDirection = Literal["from", "upTo"]


class Params(BaseModel):
    """Base of request params: camelCase aliases, unknown fields are an error."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid")


class Result(BaseModel):
    """Base of results and notifications: camelCase aliases."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True)


# --- listing -------------------------------------------------------------------------------------


class FileChange(Result):
    path: str = Field(description="Workspace-relative POSIX path.")
    uri: str
    change: ChangeKind
    source: str = Field(
        description="How it was seen: tool, save, scan, restore, record; shared: a change that "
        "cannot be told apart between this turn and `sharedWith`'s (shell commands of two "
        "sessions running at once, or an agent killed during one), so restoring it is a conflict."
    )
    shared_with: list[str] = Field(
        default_factory=list, description="Sessions whose turns hold the same shared change."
    )


class TurnInfo(Result):
    id: str = Field(description="Stable turn id; use it in every other request.")
    number: int = Field(description="1-based number within its session.")
    session_id: str
    session_kind: SessionKind
    prompt: str
    started_at: str = Field(description="ISO 8601, UTC.")
    ended_at: str | None = None
    files: list[FileChange]
    reconstructed: str | None = Field(
        default=None,
        description="Set when the turn was rebuilt from the agent's transcript because its hooks "
        "did not fire: what that means (e.g. shell side effects may be missing).",
    )


# The timeline's default page: the newest turns per session it shows.
TIMELINE_PAGE = 200


class ForkOrigin(Result):
    session_id: str
    before_number: int


class SessionInfo(Result):
    id: str
    kind: SessionKind
    agent: str | None = Field(default=None, description="claude-code, codex, editor, ...")
    transcript_path: str | None = None
    started_at: str
    last_activity_at: str
    turn_count: int = Field(
        description="Every turn the session has (its listed kind), not only those of this page."
    )
    older_cursor: str | None = Field(
        default=None,
        description="Set when the session has turns older than those listed: pass it as "
        "`before` (with this session's id) for the next page.",
    )
    fork_of: ForkOrigin | None = Field(
        default=None,
        description="Set on a forked conversation: the session it was forked from and before "
        "which turn (its turns below that number are copies of that session's).",
    )
    turns: list[TurnInfo] = Field(description="This page's turns, oldest first.")


class ListTurnsParams(Params):
    session_id: str | None = Field(
        default=None, description="Only this session; default: every session of the workspace."
    )
    limit: int | None = Field(
        default=None,
        ge=1,
        le=10000,
        description="A page: at most this many turns per session, the newest (pages go from "
        "newest to oldest). Default: every turn (a long session makes that megabytes).",
    )
    before: str | None = Field(
        default=None,
        description="A session's `olderCursor` from an earlier page: the turns before it "
        "(needs `sessionId`).",
    )
    turn_id: str | None = Field(
        default=None, description="Only this turn, in its session (what a lens's turn id names)."
    )


class ListTurnsResult(Result):
    workspace: str
    current_session_id: str | None = Field(
        description="The agent session with the latest activity (what a bare turn number means)."
    )
    sessions: list[SessionInfo]


# --- preview and restore -------------------------------------------------------------------------


class ConflictHunk(Result):
    base_start: int = Field(description="0-based line in the base (content after the turn).")
    base_end: int
    ours: list[str] = Field(description="Current lines in the conflicting region.")
    theirs: list[str] = Field(description="Lines from before the turn in the conflicting region.")


class Conflict(Result):
    kind: ConflictKind
    message: str
    hunks: list[ConflictHunk] = []


class FilePreview(Result):
    path: str
    uri: str
    action: Action
    added: int = Field(description="Lines added by the restore (0 for binary).")
    removed: int
    binary: bool = False
    conflict: Conflict | None = None
    markers: int = Field(
        default=0,
        description="Conflicts written with markers (a revert with merge: true) for the person to "
        "resolve.",
    )


class ConversationPreview(Result):
    available: bool
    reason: str | None = None
    prompt: str | None = None


class ConversationFork(Result):
    session_id: str
    transcript_path: str
    resume_command: str
    prompt: str


class PreviewParams(Params):
    turn_id: str | None = Field(
        default=None, description="The turn (required unless mode is undo)."
    )
    scope: Scope = "code"
    mode: PreviewMode = "rewind"
    paths: list[str] | None = Field(
        default=None, description="Limit to these paths (file URIs or workspace-relative paths)."
    )
    hunks: list[int] | None = Field(
        default=None, description="As in rewind/restore: only these hunks of the one path."
    )


class PreviewResult(Result):
    turn: TurnInfo = Field(
        description="The turn, or for an undo the restore point it goes back to."
    )
    mode: PreviewMode
    scope: Scope
    files: list[FilePreview]
    conflicts: int
    conversation: ConversationPreview | None = None


class RestoreOptions(Params):
    force: bool = Field(default=False, description="Overwrite conflicting paths (still undoable).")
    skip_conflicts: bool = Field(
        default=False, description="Restore every other path and leave conflicting ones alone."
    )
    apply: bool = Field(
        default=True,
        description="Send the edit through workspace/applyEdit and verify it; false: only return it.",
    )
    merge: bool = Field(
        default=False,
        description="A revert whose changes overlap later edits writes those files with diff3-style "
        "conflict markers (now / turn #N / before turn #N) to resolve, instead of refusing.",
    )


class RestoreParams(RestoreOptions):
    turn_id: str
    scope: Scope = "code"
    mode: Mode = "rewind"
    paths: list[str] | None = None
    hunks: list[int] | None = Field(
        default=None,
        description="With mode revert and exactly one path: revert only these hunks (0-based, as "
        "rewind/turnHunks lists them) of the turn's change to it; later edits of other lines stay.",
    )


class UndoParams(RestoreOptions):
    pass


class UnsavedText(Result):
    path: str
    uri: str
    edit: dict[str, Any] | None = Field(
        default=None,
        description="The WorkspaceEdit (LSP JSON) from the saved content to the unsaved text.",
    )


class RestoreResult(Result):
    status: RestoreStatus
    message: str
    edit: dict[str, Any] | None = Field(
        default=None, description="The WorkspaceEdit (LSP JSON) for the text part of the restore."
    )
    restore_point_id: str | None = Field(
        default=None, description="Turn id of the restore point; rewind.undo goes back to it."
    )
    files: list[FilePreview] = []
    written_by_server: list[str] = Field(
        default=[], description="Paths the server wrote itself (binary, too large for a text edit)."
    )
    failed: list[str] = Field(default=[], description="Paths that did not reach their content.")
    conversation: ConversationFork | None = None
    prompt: str | None = Field(default=None, description="The turn's prompt, to edit and resend.")
    unsaved: list[UnsavedText] = Field(
        default=[],
        description="Buffers an undo returns to unsaved text: the restore brought them to their "
        "last saved content (save them as usual), then apply each edit and leave the buffer "
        "unsaved. Sent only to clients that set initializationOptions.restoreUnsaved.",
    )


class SummarizeParams(Params):
    turn_id: str
    direction: SummarizeDirection = Field(
        description="from: keep before the turn, summarize it and after; upTo: summarize "
        "everything before the turn, keep it and after."
    )
    instructions: str | None = Field(default=None, description="What the summary should focus on.")


class SummarizeResult(Result):
    status: Literal["applied"]
    message: str
    direction: SummarizeDirection
    conversation: ConversationFork
    prompt: str = Field(description="The turn's prompt (to edit and resend after `from`).")


# --- contents and timeline -----------------------------------------------------------------------


class FileAtParams(Params):
    turn_id: str
    uri: str
    side: Literal["before", "after"] = "before"


class FileAtResult(Result):
    uri: str
    exists: bool
    text: str | None = Field(default=None, description="None when absent, binary or too large.")
    binary: bool = False
    too_large: bool = False


class TimelineParams(Params):
    session_id: str | None = None
    limit: int | None = Field(
        default=TIMELINE_PAGE,
        ge=1,
        description="The newest turns shown per session (older ones are counted on a line); "
        "null: every turn.",
    )


class TimelineResult(Result):
    uri: str = Field(
        description="A file: URI inside the workspace that is never written: the name to show "
        "the text under (an unsaved buffer), so the client keeps it with this server."
    )
    text: str


# --- recording from an agent that lives in the editor ---------------------------------------------


class BeginTurnParams(Params):
    session_id: str
    prompt: str = ""
    agent: str | None = None


class RecordEditParams(Params):
    session_id: str
    uri: str
    phase: Literal["before", "after"]
    text: str | None = Field(
        default=None, description="The content; omitted: the server reads the file from disk."
    )


class RecordEditResult(Result):
    turn_id: str
    recorded: bool


class EndTurnParams(Params):
    session_id: str


class DidChangeTurnsParams(Result):
    session_ids: list[str]
    reason: str


# --- review: who wrote each line, a turn's hunks ---------------------------------------------------

BlameSource = Literal[
    "agent",  # an agent's edit tool
    "subagent",
    "shell",  # a shell command inside an agent's turn
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


# Every custom method: name -> (params model, result model). The schema generator and the server's
# dispatcher both read this table, so a method cannot exist in one and not the other.
METHODS: dict[str, tuple[type[BaseModel], type[BaseModel] | None]] = {
    "rewind/listTurns": (ListTurnsParams, ListTurnsResult),
    "rewind/preview": (PreviewParams, PreviewResult),
    "rewind/restore": (RestoreParams, RestoreResult),
    "rewind/undo": (UndoParams, RestoreResult),
    "rewind/summarize": (SummarizeParams, SummarizeResult),
    "rewind/fileAt": (FileAtParams, FileAtResult),
    "rewind/timeline": (TimelineParams, TimelineResult),
    "rewind/beginTurn": (BeginTurnParams, TurnInfo),
    "rewind/recordEdit": (RecordEditParams, RecordEditResult),
    "rewind/endTurn": (EndTurnParams, TurnInfo),
    "rewind/didChangeTurns": (DidChangeTurnsParams, None),
    "rewind/blame": (BlameParams, BlameResult),
    "rewind/turnHunks": (TurnHunksParams, TurnHunksResult),
}
# The server's notifications to the client (no result): the client never sends them.
NOTIFICATIONS = frozenset(method for method, (_, result) in METHODS.items() if result is None)

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


class TurnsOutput(ListTurnsResult, Output):
    """`rewind-ls turns --json`."""

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

    mode: Literal["rewind", "revert", "undo"]
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


_M = TypeVar("_M", bound=BaseModel)


def wire(model: type[_M], data: Mapping[str, Any]) -> dict[str, Any]:
    """`data` (snake_case, as core builds it) as the wire's JSON object: checked against `model`,
    camelCase keys, exactly the keys `data` has (no defaults added)."""
    return model.model_validate(data).model_dump(mode="json", by_alias=True, exclude_unset=True)


# workspace/executeCommand commands (arguments are positional, as code lenses send them).
COMMANDS = {
    "rewind.rewind": "[turnId, scope?='code', options?] -> RestoreResult",
    "rewind.revert": "[turnId, options?] -> RestoreResult",
    "rewind.undo": "[options?] -> RestoreResult",
    "rewind.diff": "[turnId, uri?] -> shows the turn's diff (a .diff document via showDocument)",
    "rewind.revertHunk": "[turnId, uri, hunkIndex, options?] -> RestoreResult (asks first)",
    "rewind.revertInFile": "[turnId, uri, options?] -> RestoreResult (asks first)",
}
