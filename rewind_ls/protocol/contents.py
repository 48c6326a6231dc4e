"""A file's content at a turn (`rewind/fileAt`) and the timeline document (`rewind/timeline`)."""

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
