"""One file's recorded versions, for an editor's file history (`rewind/fileVersions`): each turn's
version and each of the person's (local history), newest first, with what `rewind/fileAt` needs to
show one (`turnId`, `side`) and the hash `rewind.restoreVersion` restores."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from rewind_ls.protocol.base import Params, Result


class FileVersionsParams(Params):
    uri: str


class FileVersionItem(Result):
    hash: str | None = Field(description="The content's sha256; None: absent or never read.")
    kind: str = Field(description="file, absent, too-large, unknown or other")
    time: str | None = Field(description="When it was recorded (ISO 8601, UTC); None: first seen.")
    source: str = Field(
        description="Who made it: agent, your edit, your save, outside, shell, restore, first seen"
    )
    change: str = Field(description="created, modified, deleted, baseline or absent")
    turn_id: str | None = Field(description="The turn that recorded it (rewind/fileAt's turnId).")
    side: Literal["before", "after"] = Field(
        description="rewind/fileAt's side for this version: after, except the first version seen"
    )
    number: int | None = None
    session_id: str | None = None
    session_kind: str | None = None
    prompt: str = ""


class FileVersionsResult(Result):
    uri: str
    path: str
    versions: list[FileVersionItem]
