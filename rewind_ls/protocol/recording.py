"""Recording for an agent that lives in the editor (`rewind/beginTurn`, `rewind/recordEdit`,
`rewind/endTurn`), and the `rewind/didChangeTurns` notification."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from rewind_ls.protocol.base import Params, Result


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
