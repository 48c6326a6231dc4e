"""A file's content at a turn (`rewind/fileAt`), a folder of the workspace at a turn
(`rewind/listFolder`, for browsing a turn read-only), the timeline document (`rewind/timeline`)
and the timeline picture (`rewind/timelinePage`)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from rewind_ls.protocol.base import Params, Result
from rewind_ls.protocol.turns import TIMELINE_PAGE


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


class ListFolderParams(Params):
    turn_id: str
    uri: str | None = Field(
        default=None, description="A folder of the workspace (file: URI); null: the workspace root."
    )
    side: Literal["before", "after"] = Field(
        default="before", description="The workspace at the start of the turn, or at its end."
    )
    recursive: bool = Field(
        default=False,
        description="Every file below the folder (each `name` its path from the folder), not "
        "the names directly inside it.",
    )


class FolderEntry(Result):
    name: str
    uri: str = Field(
        description="The file: URI the entry had in the workspace (for rewind/fileAt)."
    )
    folder: bool
    size: int = Field(default=0, description="Bytes (0 for a folder).")
    executable: bool = False
    kept: bool = Field(
        default=True,
        description="False for a file whose content rewind-ls does not hold (over the size cap).",
    )


class ListFolderResult(Result):
    uri: str
    turn_id: str
    number: int
    side: Literal["before", "after"]
    started_at: str = Field(description="The turn's start (ISO 8601): the entries' time.")
    entries: list[FolderEntry] = Field(description="Folders first, then files, each by name.")


class TimelinePageParams(Params):
    session_id: str | None = Field(
        default=None, description="The session pictured; null: the current agent session."
    )
    all: bool = Field(default=False, description="Every session's turns, not one session's.")
    nonce: str | None = Field(
        default=None,
        pattern=r"^[A-Za-z0-9+/=_-]{8,128}$",
        description="The webview's script nonce: the page's Content-Security-Policy allows only "
        "the script carrying it (null: the page of `rewind-ls timeline --html`).",
    )


class TimelinePageResult(Result):
    html: str = Field(description="One self-contained page (docs/see-the-past.md).")
    session_id: str | None
    turns: int
    files: int
    changes: int
