"""Read-side views of "who wrote this" and "what did this turn change", shared by the CLI (`blame`,
`revert -p`) and the server (hover, code actions, `rewind/blame`, `rewind/turnHunks`): plain
snake_case data built from `blame.Blamer` and `hunks.TurnFile`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rewind_ls.core.history.blame import (
    AGENT,
    BACKGROUND,
    ORIGINAL,
    OUTSIDE,
    RESTORE,
    SAVE,
    SHELL,
    SUBAGENT,
    UNRECORDED,
    Attribution,
    Blamer,
    Origin,
)
from rewind_ls.core.history.timeline import iso
from rewind_ls.core.model import Turn
from rewind_ls.core.restore.hunks import HunkState, TurnFile, turn_file
from rewind_ls.core.store import Store

WHO = {
    AGENT: "agent",
    SUBAGENT: "subagent",
    SHELL: "shell command",
    BACKGROUND: "background work",
    SAVE: "your save",
    OUTSIDE: "outside change",
    RESTORE: "rewind-ls restore",
    ORIGINAL: "before recording",
    UNRECORDED: "not recorded",
}


def origin_dict(origin: Origin) -> dict[str, Any]:
    return {
        "source": origin.source,
        "turn_id": origin.turn_id,
        "number": origin.number,
        "session_id": origin.session_id,
        "agent": origin.agent,
        "prompt": origin.prompt or None,
        "at": iso(origin.at),
    }


def runs(attribution: Attribution) -> list[dict[str, Any]]:
    """Consecutive lines with one author, as `BlameRun` data."""
    out: list[dict[str, Any]] = []
    origins = attribution.origins
    start = 0
    for i in range(1, len(origins) + 1):
        if i == len(origins) or origins[i] is not origins[start]:
            out.append({"start": start, "end": i, **origin_dict(origins[start])})
            start = i
    return out


def describe_origin(origin: Origin) -> str:
    """One line for a person: "turn 3 (claude-code agent, 2026-11-25 23:40): fix the parser"."""
    who = WHO.get(origin.source, origin.source)
    if origin.turn_id is None:
        return {
            ORIGINAL: "there before rewind-ls recorded this file",
            UNRECORDED: "not recorded yet (unsaved, or changed behind rewind-ls' back)",
        }.get(origin.source, who)
    when = iso(origin.at)
    when = when.replace("T", " ")[:16] if when else "?"
    if origin.source in (AGENT, SUBAGENT, SHELL, BACKGROUND):
        who = f"{origin.agent or 'agent'} {who}" if origin.source != AGENT else origin.agent or who
        if origin.source == SHELL:
            who = f"shell command in {origin.agent or 'the agent'}'s turn"
        elif origin.source == BACKGROUND:
            who = f"background job of {origin.agent or 'the agent'}'s turn"
        name = f"turn {origin.number}"
    elif origin.source == SAVE:
        name = "your save"
        who = "editor"
    elif origin.source == OUTSIDE:
        name = "outside change"
        who = "shell or another tool, between turns"
    else:
        name = "restore"
    prompt = " ".join(origin.prompt.split())
    return f"{name} ({who}, {when})" + (f": {prompt}" if prompt else "")


def hunk_dict(state: HunkState) -> dict[str, Any]:
    return {
        "index": state.hunk.idx,
        "status": state.status,
        "revertable": state.revertable,
        "start": state.start,
        "end": state.end,
        "removed": [line.decode("utf-8", "replace") for line in state.removed],
        "added": [line.decode("utf-8", "replace") for line in state.added],
    }


def turn_files(
    store: Store, turn: Turn, current: Any, only: str | None = None
) -> list[dict[str, Any]]:
    """Every file `turn` changed (or `only`), with its hunks against the content now
    (`current(path) -> bytes | None`)."""
    out = []
    for change in store.changes(turn.id):
        if only is not None and change.path != only:
            continue
        tf = turn_file(store, turn, change.path)
        item: dict[str, Any] = {
            "path": change.path,
            "change": str(change.kind or "modified"),
            "hunks": [],
            "note": None,
        }
        data = current(change.path)
        if tf is None:
            item["note"] = "no line hunks (created, deleted, binary or too large): whole file"
        elif data is None:
            item["note"] = "deleted since the turn"
        else:
            item["hunks"] = [hunk_dict(s) for s in tf.states(data)]
        out.append(item)
    return out


class LineReview:
    """What the server says about lines of one file: their authors, and the hunks there."""

    def __init__(
        self,
        store: Store,
        blamer: Blamer,
        path: str,
        data: bytes,
        files: Callable[[str, str], TurnFile | None] | None = None,
    ) -> None:
        self.store = store
        self.blamer = blamer
        self.path = path
        self.data = data
        self._files: dict[str, TurnFile | None] = {}
        self._load = files  # (turn id, path) -> the turn's change as lines (a cache, the server's)
        # A hover or a code action asks about a few lines: only those are blamed (`Blamer.lines`
        # stops walking the history once they are known); `attribution` is every line's.
        self._known: dict[int, Origin] = {}
        self._full: Attribution | None = None
        self._count: int | None = None
        self.content_hash: str | None = None  # the last recorded content's (once blamed)

    @property
    def attribution(self) -> Attribution:
        """Every line's author (`rewind/blame`)."""
        if self._full is None:
            self._full = self.blamer.blame(self.path, self.data)
            self.content_hash = self._full.content_hash
        return self._full

    def _need(self, first: int, last: int) -> None:
        if self._count is None:
            self._count = len(self.data.splitlines())
        last = min(last, self._count - 1)
        missing = [i for i in range(max(first, 0), last + 1) if i not in self._known]
        if self._full is not None or not missing:
            return
        found = self.blamer.lines(self.path, self.data, missing)
        self._known.update(found.origins)
        self.content_hash = found.content_hash

    def origin(self, line: int) -> Origin | None:
        if self._full is not None:
            origins = self._full.origins
            return origins[line] if 0 <= line < len(origins) else None
        self._need(line, line)
        return self._known.get(line)

    def turn_file(self, turn_id: str) -> TurnFile | None:
        if turn_id not in self._files and self._load is not None:
            self._files[turn_id] = self._load(turn_id, self.path)
        if turn_id not in self._files:
            turn = self.store.turn(turn_id)
            self._files[turn_id] = (
                turn_file(self.store, turn, self.path) if turn is not None else None
            )
        return self._files[turn_id]

    def hunks_at(self, first: int, last: int) -> list[tuple[Origin, TurnFile, HunkState]]:
        """The hunks covering lines first..last (0-based, inclusive) of the turns that last
        changed them: each with its state (revertable or not) against the content now."""
        out: list[tuple[Origin, TurnFile, HunkState]] = []
        seen: set[tuple[str, int]] = set()
        self._need(first, last)
        wanted: dict[str, Origin] = {}
        for line in range(max(first, 0), last + 1):
            o = self.origin(line)
            if o is not None and o.turn_id is not None and o.source != RESTORE:
                wanted.setdefault(o.turn_id, o)
        for turn_id, origin in wanted.items():
            tf = self.turn_file(turn_id)
            if tf is None:
                continue
            for state in tf.states(self.data, lines=(first, last)):
                h = state.hunk
                if (turn_id, h.idx) not in seen:
                    seen.add((turn_id, h.idx))
                    out.append((origin, tf, state))
        return out
