"""The MCP server itself, on the official MCP Python SDK (`mcp`, 2.x: `MCPServer`, FastMCP's
successor): each tool is a typed function, so its arguments' JSON schema comes from the signature
(with the `Field` descriptions the model reads) and its output schema from the structured result's
model; the SDK validates the arguments and turns a bad one into an `isError` result. Every tool
answers with a text part (for the model) and a structured part (the CLI's `--json` object).

Failures never end the server: a `RewindError` (an unknown turn, a path outside the workspace,
nothing to undo) and a refused restore are `isError` results naming the thing and the reason; any
other exception is the SDK's `isError` result too. This is the only module that imports `mcp`."""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from typing import Annotated, Any

from mcp.server.mcpserver import MCPServer
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import Field

import rewind_ls
from rewind_ls.core.errors import RewindError
from rewind_ls.mcp_server.session import Caller
from rewind_ls.mcp_server.tools import Answer, Refused, Tools
from rewind_ls.protocol.cli_output import BlameOutput, TurnsOutput
from rewind_ls.protocol.mcp_output import McpRestoreOutput, ShowTurnOutput

INSTRUCTIONS = """\
rewind-ls records every turn of this workspace's agent sessions (what each file held before the
agent touched it) and restores them. Turn numbers are those of your own session (list_turns).
Look before you restore: show_turn for a turn's diff and hunks, preview for what a restore would
write. revert undoes one turn's changes by a three-way merge (later work and the person's edits
survive); rewind takes files back to the start of a turn; undo undoes the last restore. You never
overwrite the person's work: a restore that would is refused with nothing written, and the
refusal says what the person can do in a terminal."""

Turn = Annotated[
    int | str,
    Field(description="A turn number of the session (see list_turns), or a turn id."),
]
Session = Annotated[
    str | None,
    Field(
        description="Another session's id (or its start); default: your own session (the "
        "agent's session id in the environment, else its latest live session here)."
    ),
]
Paths = Annotated[
    list[str] | None,
    Field(description="Only these files (workspace-relative or absolute); default: every file."),
]

_READ = ToolAnnotations(readOnlyHint=True, destructiveHint=False, openWorldHint=False)
_WRITE = ToolAnnotations(readOnlyHint=False, destructiveHint=True, openWorldHint=False)

log = logging.getLogger("rewind_ls.mcp")


def _result(answer: Answer) -> CallToolResult:
    return CallToolResult(
        content=[TextContent(type="text", text=answer.text)], structured_content=answer.data
    )


def _error(message: str, data: dict[str, Any] | None = None) -> CallToolResult:
    return CallToolResult(
        content=[TextContent(type="text", text=message)], structured_content=data, is_error=True
    )


def _call(work: Callable[[], Answer]) -> CallToolResult:
    """One tool's work; its failures as `isError` results, the server unharmed."""
    try:
        return _result(work())
    except Refused as exc:
        return _error(str(exc), exc.data)
    except RewindError as exc:
        return _error(f"error: {exc}")


def build(root: str, caller: Caller) -> MCPServer:
    """The server for workspace `root`, its tools calling `Tools` for `caller`."""
    tools = Tools(root, caller)
    server = MCPServer(
        "rewind-ls",
        title="rewind-ls",
        version=rewind_ls.__version__,
        instructions=INSTRUCTIONS,
        log_level="WARNING",
    )

    @server.tool(annotations=_READ)
    def list_turns(
        session: Session = None,
        all: Annotated[
            bool, Field(description="Every session of the workspace (restore points too).")
        ] = False,
        limit: Annotated[
            int, Field(ge=0, description="The newest N turns of each session (0: every turn).")
        ] = 100,
    ) -> Annotated[CallToolResult, TurnsOutput]:
        """The turns of your session (number, prompt, files with +created ~modified -deleted)."""
        return _call(lambda: tools.list_turns(session, all, limit))

    @server.tool(annotations=_READ)
    def show_turn(
        turn: Turn,
        path: Annotated[str | None, Field(description="Only this file.")] = None,
        session: Session = None,
    ) -> Annotated[CallToolResult, ShowTurnOutput]:
        """What a turn changed: a unified diff per file, and its hunks (indexes for revert)."""
        return _call(lambda: tools.show_turn(turn, path, session))

    @server.tool(annotations=_READ)
    def blame(
        path: Annotated[str, Field(description="The file (workspace-relative or absolute).")],
        start: Annotated[int | None, Field(ge=1, description="First line (1-based).")] = None,
        end: Annotated[int | None, Field(ge=1, description="Last line (1-based).")] = None,
    ) -> Annotated[CallToolResult, BlameOutput]:
        """Which turn (agent, shell, the person's save, outside) last wrote each line of a file."""
        return _call(lambda: tools.blame(path, start, end))

    @server.tool(annotations=_READ)
    def preview(
        mode: Annotated[
            str, Field(pattern="^(rewind|revert|undo)$", description="rewind, revert or undo.")
        ],
        turn: Annotated[
            int | str | None, Field(description="The turn (not for undo); see list_turns.")
        ] = None,
        paths: Paths = None,
        hunks: Annotated[
            list[int] | None,
            Field(description="revert of one path: only these hunk indexes (see show_turn)."),
        ] = None,
        session: Session = None,
    ) -> Annotated[CallToolResult, McpRestoreOutput]:
        """What a rewind, revert (or hunk revert) or undo would write, with its conflicts.
        Nothing is written."""
        return _call(lambda: tools.preview(mode, turn, paths, hunks, session))

    @server.tool(annotations=_WRITE)
    def rewind(
        turn: Turn, paths: Paths = None, session: Session = None
    ) -> Annotated[CallToolResult, McpRestoreOutput]:
        """Take files back to what they held at the start of a turn (every file that turn and
        later turns of the session changed, or only `paths`). Refused, nothing written, when it
        would overwrite the person's edits, another session's work or an unsaved buffer.
        Undoable."""
        return _call(lambda: tools.restore("rewind", turn, paths, None, session))

    @server.tool(annotations=_WRITE)
    def revert(
        turn: Turn,
        path: Annotated[str | None, Field(description="Only this file of the turn.")] = None,
        hunks: Annotated[
            list[int] | None,
            Field(description="With path: only these hunk indexes of the turn (see show_turn)."),
        ] = None,
        session: Session = None,
    ) -> Annotated[CallToolResult, McpRestoreOutput]:
        """Undo only one turn's own changes by a three-way merge: later turns and the person's
        edits of other lines survive. Refused, nothing written, when a change does not merge or
        would overwrite what is not the agent's. Undoable."""
        return _call(
            lambda: tools.restore("revert", turn, [path] if path else None, hunks, session)
        )

    @server.tool(annotations=_WRITE)
    def undo() -> Annotated[CallToolResult, McpRestoreOutput]:
        """Undo the latest rewind, revert or undo made in this workspace (by you or the person).
        Refused, nothing written, when a file moved on since."""
        return _call(lambda: tools.restore("undo", None, None, None, None))

    return server


def serve(root: str, agent: str | None) -> None:
    """Serve the tools of workspace `root` on stdin/stdout until the client closes them."""
    from rewind_ls.mcp_server.session import caller_of

    server = build(root, caller_of(agent, os.environ))
    server.run("stdio")
