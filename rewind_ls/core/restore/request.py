"""One restore as asked for at the edge (a CLI command, a server request or command), carried as one
value to the planner, the flow and the applier instead of a handful of loose arguments."""

from __future__ import annotations

from typing import NamedTuple

from rewind_ls.core.model import RestoreMode, Scope


class RestoreRequest(NamedTuple):
    """`mode` rewind / revert / undo; `turn_id` the turn (an id, or at the server's edge a number;
    None for an undo); `paths` limit the restore (workspace-relative in the CLI, paths or URIs at
    the server's edge); `hunks` a revert of one path: only these hunks of the turn's change;
    `merge` a revert writes overlapping changes with conflict markers; `force` overwrites paths
    changed behind rewind-ls' back; `skip_conflicts` leaves every conflicting path alone; `apply`
    False: nothing is written (the CLI's --dry-run shows the preview; the server's `apply: false`
    returns the edit without applying it); `version` (mode version): the content hash, or a
    prefix of it, that the one path in `paths` goes back to; `by`: who asks, when not the person
    at a terminal or in an editor ("claude-code via MCP"): the restore point's name says so."""

    mode: RestoreMode | str
    turn_id: str | None = None
    scope: Scope | str = Scope.CODE
    paths: list[str] | None = None
    hunks: list[int] | None = None
    merge: bool = False
    force: bool = False
    skip_conflicts: bool = False
    apply: bool = True
    version: str | None = None
    by: str | None = None

    @property
    def code(self) -> bool:
        """Whether the restore has a code part (scope code or both)."""
        return self.scope in (Scope.CODE, Scope.BOTH)

    @property
    def conversation(self) -> bool:
        """Whether the restore forks the conversation (scope conversation or both; an undo never:
        its "turn" is a restore point, which has no conversation)."""
        return self.scope in (Scope.CONVERSATION, Scope.BOTH) and self.mode != RestoreMode.UNDO
