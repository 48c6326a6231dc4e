"""Listing turns: `rewind/listTurns` (sessions, their turns, each turn's files, pages)."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from rewind_ls.protocol.base import ChangeKind, Params, Result, SessionKind


class FileChange(Result):
    path: str = Field(description="Workspace-relative POSIX path.")
    uri: str
    change: ChangeKind
    source: str = Field(
        description="How it was seen: tool, save, scan, restore, record; background-shell: written "
        "by a shell job the turn left running in the background; shared: a change that "
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


class BaselineProgress(Result):
    done: int = Field(description="Files of the workspace the first checkpoint has stored.")
    total: int = Field(description="Files it has to store; 0 while it is still listing them.")


class TurnsListing(Result):
    """What `rewind/listTurns` and `rewind-ls turns --json` share."""

    workspace: str
    current_session_id: str | None = Field(
        description="The agent session with the latest activity (what a bare turn number means)."
    )
    sessions: list[SessionInfo]


class ListTurnsResult(TurnsListing):
    baseline: BaselineProgress | None = Field(
        default=None,
        description="Set while the first checkpoint of a large workspace is still being taken in "
        "the background (a rewind keeps every file it has not stored yet as it is); ask again "
        "until it is gone.",
    )


def turn_wire(entry: dict[str, Any]) -> dict[str, Any]:
    """A listing's turn entry in its wire form (what `ListTurnsResult` dumps it as)."""
    return TurnInfo.model_validate(entry).model_dump(mode="json", by_alias=True)


def listing_wire(listing: dict[str, Any]) -> dict[str, Any]:
    """`rewind/listTurns`'s result in wire form from a listing whose turns are already in it
    (`turn_wire`, made once per turn and kept by the server): the same JSON as
    `ListTurnsResult.model_validate(listing)` dumped, with the turns validated when they were
    made rather than on every page."""
    bare = {**listing, "sessions": [{**s, "turns": []} for s in listing["sessions"]]}
    out = ListTurnsResult.model_validate(bare).model_dump(mode="json", by_alias=True)
    for wire, session in zip(out["sessions"], listing["sessions"], strict=True):
        wire["turns"] = session["turns"]
    return out
