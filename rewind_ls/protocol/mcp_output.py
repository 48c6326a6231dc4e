"""The structured results of `rewind-ls mcp`'s tools that the CLI's `--json` has no object for: a
turn shown with its hunks (`show_turn`), and a restore that can also be refused (the agent never
forces). The other tools answer with the CLI's own objects (`TurnsOutput`, `BlameOutput`)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from rewind_ls.protocol.base import RestoreStatus
from rewind_ls.protocol.cli_output import FileDiff, Output, RestoreOutput
from rewind_ls.protocol.review import HunkInfo


class ShownFile(FileDiff):
    hunks: list[HunkInfo] = Field(
        description="The turn's hunks in this file against its content now (index: what revert's "
        "hunks take); empty when the file reverts as a whole."
    )
    note: str | None = None


class ShowTurnOutput(Output):
    """`show_turn`: what one turn changed."""

    turn_id: str
    number: int
    session_id: str
    prompt: str
    files: list[ShownFile]


class McpRestoreOutput(RestoreOutput):
    """`preview`, `rewind`, `revert`, `undo`: the CLI's restore object; `refused`: the agent may not
    make this restore (a conflict), nothing was written."""

    status: RestoreStatus | Literal["refused"]  # type: ignore[assignment]
    label: str = Field(
        description="The restore's name, as its restore point shows in `rewind-ls turns` and the "
        "editors: 'revert turn 1 (by claude-code via MCP)'."
    )
    next: str = Field(
        description="What can be done next: how to undo it, or why it was refused and what the "
        "person can do in a terminal."
    )
