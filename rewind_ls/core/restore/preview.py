"""The preview of one restore, as every front end shows it before anything is written: the CLI
(`rewind-ls rewind|revert|undo`, its text and `--json`), and the server's `rewind/preview` request
and restore commands (the question put to the person). Built in one place from the request, its
turn and its plan."""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

from rewind_ls.core.model import Action, Scope, Turn
from rewind_ls.core.restore.plan import Plan, describe
from rewind_ls.core.restore.planner import restore_label
from rewind_ls.core.restore.request import RestoreRequest
from rewind_ls.core.store import Store

# Where a turn's conversation would be forked from (`conversation.fork.conversation_source`):
# (the transcript's path, None) or (None, why it cannot be).
ConversationSource = Callable[[Store, Turn], "tuple[str | None, str | None]"]


class Preview(NamedTuple):
    """`plan`: the code part (None when the scope has none); `files`: each path the plan shows
    (`describe`, with its "uri" at the server); `conversation`: whether the turn's conversation can
    be forked (scope conversation or both), {"available", "reason", "prompt"}."""

    request: RestoreRequest
    turn: Turn | None
    plan: Plan | None
    files: list[dict[str, object]]
    conversation: dict[str, object] | None

    @property
    def label(self) -> str:
        """The restore's name: the plan's (an undo names the restore it undoes), else the mode's."""
        if self.plan is not None and self.plan.label:
            return self.plan.label
        if self.turn is not None:
            return restore_label(self.request.mode, self.turn, self.request.scope)
        return str(self.request.mode)

    @property
    def conflicts(self) -> int:
        return sum(1 for f in self.files if f["conflict"])

    @property
    def nothing(self) -> bool:
        """No file would change nor is in conflict."""
        return not any(f["action"] != Action.UNCHANGED or f["conflict"] for f in self.files)


def build_preview(
    store: Store,
    request: RestoreRequest,
    turn: Turn | None,
    plan: Plan | None,
    source: ConversationSource | None = None,
    uri: Callable[[str], str] | None = None,
) -> Preview:
    """The preview of `request` (of `turn`, planned as `plan`). `source`: say whether the
    conversation can be forked (when the scope has a conversation part); `uri`: each file's
    "uri" (the server's)."""
    files: list[dict[str, object]] = []
    if plan is not None:
        for pp in plan.shown():
            files.append({**describe(pp), "uri": uri(pp.path)} if uri else describe(pp))
    conversation: dict[str, object] | None = None
    if source is not None and Scope(request.scope).conversation and turn is not None:
        path, reason = source(store, turn)
        conversation = {"available": path is not None, "reason": reason, "prompt": turn.prompt}
    return Preview(request, turn, plan, files, conversation)
