"""Restoring: `rewind/preview`, `rewind/restore`, `rewind/undo`, `rewind/summarize` (and the
options the restore commands take)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from rewind_ls.protocol.base import (
    Action,
    ConflictKind,
    Mode,
    Params,
    PreviewMode,
    RestoreStatus,
    Result,
    Scope,
    SummarizeDirection,
)
from rewind_ls.protocol.turns import TurnInfo


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
    version: str | None = Field(
        default=None,
        description="With mode version and exactly one path: the recorded version's hash (or its "
        "first 4+ digits, rewind/fileVersions) the path goes back to.",
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
    version: str | None = Field(
        default=None,
        description="With mode version and exactly one path: the recorded version's hash (or its "
        "first 4+ digits, rewind/fileVersions) the path goes back to; turnId: any turn that "
        "recorded it (a version's turnId in rewind/fileVersions).",
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
