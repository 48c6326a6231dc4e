"""Review in the editor, for any LSP client: who wrote the line under the cursor (hover), and code
actions that revert one hunk of a turn or the turn in this file. Plain data on the store's thread
(`handlers/review.py` turns it into LSP types); the actions run server commands, which preview and ask before
writing, then restore through the one restore driver (restore point, compare-and-swap, undo).

An action is offered only for a hunk whose revert the planner would accept: the three-way merge of
that hunk alone against the content now (`HunkState.revertable`), and for the file only when the
turn's revert of it plans without conflict.
"""

from __future__ import annotations

from collections import OrderedDict
from difflib import unified_diff
from typing import Any

from rewind_ls.core.history.blame import RESTORE, SAVE, Blamer, Origin
from rewind_ls.core.history.review import LineReview, describe_origin, origin_dict, runs, turn_files
from rewind_ls.core.restore.hunks import EDITED, EDITED_NEARBY, REVERTED, TurnFile, turn_file
from rewind_ls.core.restore.plan import REVERT, Plan
from rewind_ls.core.restore.planner import plan_restore
from rewind_ls.core.store import Store
from rewind_ls.server.workspace_view import OpenDoc, buffer_reader, open_docs_by_path

PROMPT_CHARS = 60  # of the prompt in an action's title
PREVIEW_LINES = 20  # of the merge shown in a hunk revert's question
_TURN_FILES = 256  # turns' changes to a file kept as lines (immutable once settled)

Action = dict[str, Any]  # title, kind, command, arguments


def _short(prompt: str) -> str:
    text = " ".join(prompt.split())
    return text if len(text) <= PROMPT_CHARS else text[: PROMPT_CHARS - 1] + "\u2026"


def _turn_name(origin: Origin) -> str:
    if origin.source == SAVE:
        return "your save"
    if origin.number is None:
        return "turn ?"
    prompt = _short(origin.prompt)
    return f"turn {origin.number}: {prompt}" if prompt else f"turn {origin.number}"


class Reviewer:
    """Per server: the blame replay and the turns' changes as lines, kept between requests."""

    def __init__(self, store: Store, root: str) -> None:
        self.store = store
        self.root = root
        self.blamer = Blamer(store)
        self._files: OrderedDict[tuple[str, str], TurnFile | None] = OrderedDict()

    def _turn_file(self, turn_id: str, path: str) -> TurnFile | None:
        key = (turn_id, path)
        if key in self._files:
            self._files.move_to_end(key)
            return self._files[key]
        turn = self.store.turn(turn_id)
        change = self.store.change(turn_id, path)
        tf = turn_file(self.store, turn, path) if turn is not None else None
        if change is not None and change.after is not None:  # settled: it will not change
            self._files[key] = tf
            while len(self._files) > _TURN_FILES:
                self._files.popitem(last=False)
        return tf

    def review(self, path: str, docs: dict[str, OpenDoc]) -> LineReview | None:
        _, data = buffer_reader(self.root, open_docs_by_path(self.root, docs))(path)
        if data is None:
            return None
        return LineReview(self.store, self.blamer, path, data, self._turn_file)

    # --- rewind/blame and rewind/turnHunks ----------------------------------------------------

    def blame(self, path: str, docs: dict[str, OpenDoc]) -> dict[str, Any]:
        lr = self.review(path, docs)
        if lr is None:
            return {"path": path, "line_count": 0, "runs": []}
        return {"path": path, "line_count": len(lr.attribution.lines), "runs": runs(lr.attribution)}

    def turn_hunks(self, turn_id: str, only: str | None, docs: dict[str, OpenDoc]) -> list[Any]:
        turn = self.store.turn(turn_id)
        assert turn is not None
        reader = buffer_reader(self.root, open_docs_by_path(self.root, docs))
        return turn_files(self.store, turn, lambda p: reader(p)[1], only)

    # --- hover and code actions ---------------------------------------------------------------

    def hover(self, path: str, line: int, docs: dict[str, OpenDoc]) -> str | None:
        """Markdown for the line's author, or None for a line nobody recorded (nothing to say)."""
        lr = self.review(path, docs)
        origin = lr.origin(line) if lr is not None else None
        if lr is None or origin is None:
            return None
        if lr.content_hash is None and origin.turn_id is None:
            return None  # a file rewind-ls never recorded a change of: nothing to say
        lines = [f"**rewind-ls** \u00b7 {describe_origin(origin)}"]
        for o, tf, state in lr.hunks_at(line, line):
            if o is not origin:
                continue
            what = {
                EDITED: "edited since: cannot be reverted alone",
                EDITED_NEARBY: "lines around it changed since: reverting it merges",
                REVERTED: "already as before the turn",
            }.get(state.status, "unchanged since")
            lines.append(f"hunk {state.hunk.idx + 1} of {len(tf.hunks)} in this file ({what})")
        return "\n\n".join(lines)

    def actions(
        self, path: str, uri: str, first: int, last: int, docs: dict[str, OpenDoc]
    ) -> list[Action]:
        """The code actions for lines first..last: per hunk there that would revert, "Revert this
        change (turn N: prompt)"; per turn, "Revert turn N in this file" when that plans cleanly."""
        lr = self.review(path, docs)
        if lr is None:
            return []
        out: list[Action] = []
        turns: dict[str, Origin] = {}
        for line in range(first, last + 1):
            o = lr.origin(line)
            if o is not None and o.turn_id is not None:
                turns.setdefault(o.turn_id, o)
        for origin, _, state in lr.hunks_at(first, last):
            if not state.revertable:
                continue
            title = f"Revert this change ({_turn_name(origin)})"
            if state.status == EDITED_NEARBY:
                title += " \u2014 merges with edits made since"
            out.append(
                {
                    "title": title,
                    "command": "rewind.revertHunk",
                    "arguments": [origin.turn_id, uri, state.hunk.idx],
                }
            )
        for turn_id, origin in turns.items():
            if origin.source == RESTORE or not self._file_revertable(turn_id, path, docs, lr):
                continue
            name = "your save" if origin.source == SAVE else f"turn {origin.number}"
            out.append(
                {
                    "title": f"Revert {name} in this file",
                    "command": "rewind.revertInFile",
                    "arguments": [turn_id, uri],
                }
            )
        return out

    def _file_revertable(
        self, turn_id: str, path: str, docs: dict[str, OpenDoc], lr: LineReview
    ) -> bool:
        turn = self.store.turn(turn_id)
        if turn is None:
            return False
        tf = self._turn_file(turn_id, path)
        if tf is not None:
            # The turn's revert of a file it modified is this merge (plan_revert's, base = after
            # the turn, theirs = before it): computed from the lines in hand.
            merged = tf.merge({h.idx for h in tf.hunks}, lr.data)
            return merged is not None and merged != lr.data
        reader = buffer_reader(self.root, open_docs_by_path(self.root, docs))
        plan = plan_restore(self.store, REVERT, turn, reader, [path])
        return not plan.conflicts and bool(plan.changes())

    def origin_of(self, path: str, line: int, docs: dict[str, OpenDoc]) -> dict[str, Any] | None:
        lr = self.review(path, docs)
        origin = lr.origin(line) if lr is not None else None
        return origin_dict(origin) if origin is not None else None


def merge_preview(plan: Plan) -> list[str]:
    """The lines a one-path revert changes, as a short unified diff (the question shows it)."""
    out: list[str] = []
    for pp in plan.changes():
        old = (pp.current_data or b"").decode("utf-8", "replace").splitlines(True)
        new = (pp.target_data or b"").decode("utf-8", "replace").splitlines(True)
        diff = list(unified_diff(old, new, pp.path, pp.path, n=1))[2:]
        out.extend(line.rstrip("\r\n") for line in diff[:PREVIEW_LINES])
        if len(diff) > PREVIEW_LINES:
            out.append(f"... {len(diff) - PREVIEW_LINES} more line(s)")
    return out
