"""Who last changed each line of a file, from the store's recorded contents.

The path's history (`Store.path_history`, oldest first) is replayed: each settled change's `before`
and `after` contents are diffed with the merge's line diff, and the lines it inserted or replaced
are credited to it; lines it left alone keep their author. A change whose `before` is not what the
previous change left was preceded by an edit nobody recorded: those lines are "unrecorded". A
restore that brings back a content seen before brings back that content's authors (a revert does
not make rewind-ls the author of the agent's lines). Lines the current content (a buffer, the
disk) holds that the last recorded content does not are "unrecorded" too (an unsaved buffer).

`Blamer` keeps each path's replay and extends it as turns are recorded, so a hover costs one
history query and one diff of the last recorded content against the buffer.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import NamedTuple

from rewind_ls.core.capture import REWIND_SESSION, turn_info
from rewind_ls.core.errors import CorruptBlob
from rewind_ls.core.merge import is_binary, line_diff
from rewind_ls.core.model import FILE, PathChange, SessionKind, TurnState, Version
from rewind_ls.core.store import Store

# Who wrote a line (`Origin.source`).
AGENT = "agent"  # an agent's edit tool (Write, Edit, apply_patch, replace, ...)
SUBAGENT = "subagent"  # an agent's edit in a turn where only subagents edited
SHELL = "shell"  # a shell command inside an agent's turn (found by the scan)
SAVE = "save"  # the person's save in an editor
OUTSIDE = "outside"  # a change found between turns (a shell, another tool, the person)
RESTORE = "restore"  # written by a rewind / revert / undo of rewind-ls
ORIGINAL = "original"  # there before rewind-ls recorded anything of this path
UNRECORDED = "unrecorded"  # no recorded change wrote it (an unsaved buffer, an unrecorded edit)

# Contents remembered for restores that bring one back (their authors come back with them).
_REMEMBERED = 64


class Origin(NamedTuple):
    """One author of lines: a recorded change (its turn) or one of the two authorless sources."""

    source: str
    turn_id: str | None = None
    number: int | None = None
    session_id: str | None = None
    agent: str | None = None
    prompt: str = ""
    at: float | None = None
    seq: int = -1  # the change's workspace order (-1: no change)


ORIGINAL_ORIGIN = Origin(ORIGINAL)
UNRECORDED_ORIGIN = Origin(UNRECORDED)


class Attribution:
    """A content's lines and, per line, its author."""

    __slots__ = ("content_hash", "lines", "origins", "pending")

    def __init__(self, lines: list[bytes], origins: list[Origin], content_hash: str | None):
        self.lines = lines
        self.origins = origins
        self.content_hash = content_hash  # the last recorded content's
        self.pending: Origin | None = None  # the open turn still editing the path, if any


def _retarget(
    old: list[bytes], old_origins: list[Origin], new: list[bytes], author: Origin
) -> list[Origin]:
    """`new`'s authors: lines the diff keeps from `old` keep theirs, the rest are `author`'s."""
    if old == new:
        return list(old_origins)
    out: list[Origin] = []
    i = 0
    for a0, a1, b0, b1 in line_diff(old, new):
        out.extend(old_origins[i:a0])
        out.extend([author] * (b1 - b0))
        i = a1
    out.extend(old_origins[i:])
    return out


class _Replay:
    """One path's history replayed up to some change: the state `Blamer` keeps and extends."""

    __slots__ = (
        "count",
        "last_key",
        "lines",
        "mark",
        "origins",
        "pending",
        "remembered",
        "version",
    )

    def __init__(self) -> None:
        self.count = 0  # history entries consumed
        self.last_key: tuple[int, str | None, str | None] | None = None
        self.version: Version | None = None
        self.lines: list[bytes] = []
        self.origins: list[Origin] = []
        self.remembered: OrderedDict[str, list[Origin]] = OrderedDict()
        self.pending: Origin | None = None  # an open turn still editing the path
        self.mark: tuple[int, int] | None = None  # the store's write mark when last brought up

    def attribution(self) -> Attribution:
        rec = Attribution(self.lines, self.origins, self.version.hash if self.version else None)
        rec.pending = self.pending
        return rec


_SEGMENT = 32  # versions decoded and held at once while a history is replayed


class _Contents:
    """The contents of one file's versions, asked for oldest first, decoded newest first.

    A file's older versions are deltas against newer ones (`Store.put_blob`): decoding each
    version on its own walks the whole chain to the newest (1,000 versions: half a million delta
    applications). Here a first pass goes newest to oldest, one delta each, keeping every
    `_SEGMENT`-th version; then each segment is decoded down from the checkpoint above it. Two
    deltas per version, `_SEGMENT` versions in memory."""

    def __init__(self, store: Store, hashes: list[str]) -> None:
        self.store = store
        self.order = list(dict.fromkeys(hashes))
        self.index = {h: i for i, h in enumerate(self.order)}
        self.checkpoints: dict[int, bytes] = {}
        self.window: dict[str, bytes] = {}
        self.bad: set[str] = set()
        newer: dict[str, bytes] = {}
        for i in range(len(self.order) - 1, -1, -1):
            h = self.order[i]
            try:
                data = store.get_blob(h, newer)
            except CorruptBlob:
                self.bad.add(h)
                continue
            newer = {h: data}
            if i % _SEGMENT == 0:
                self.checkpoints[i] = data

    def get(self, h: str) -> bytes | None:
        if h in self.bad:
            return None
        if h in self.window:
            return self.window[h]
        i = self.index.get(h)
        if i is None:
            try:
                return self.store.get_blob(h)
            except CorruptBlob:
                return None
        start = i - i % _SEGMENT
        end = min(start + _SEGMENT, len(self.order))
        window: dict[str, bytes] = {}
        above = self.checkpoints.get(end)
        newer: dict[str, bytes] = {self.order[end]: above} if above is not None else {}
        for j in range(end - 1, start - 1, -1):
            key = self.order[j]
            if key in self.bad:
                continue
            data = self.checkpoints.get(j)
            if data is None:
                try:
                    data = self.store.get_blob(key, newer)
                except CorruptBlob:
                    self.bad.add(key)
                    continue
            window[key] = data
            newer = {key: data}
        self.window = window
        return window.get(h)


def _key(h: PathChange) -> tuple[int, str | None, str | None]:
    return (h.seq, h.after.hash if h.after is not None else None, str(h.turn_state))


class Blamer:
    """Per-line authors of files, kept per path between calls (the server holds one)."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self._replays: dict[str, _Replay] = {}
        self._origins: dict[tuple[str, str], Origin] = {}
        self._contents: _Contents | None = None  # while a long history is replayed

    # --- who made a change ------------------------------------------------------------------

    def origin(self, h: PathChange) -> Origin:
        """The author a change's lines are credited to."""
        key = (h.turn_id, h.source)
        found = self._origins.get(key)
        if found is not None:
            return found
        turn = self.store.turn(h.turn_id)
        session = self.store.session(h.session_id)
        if h.session_kind == SessionKind.EDITOR:
            source = SAVE
        elif h.session_kind == SessionKind.EXTERNAL:
            source = OUTSIDE
        elif h.session_kind == SessionKind.REWIND or h.session_id == REWIND_SESSION:
            source = RESTORE
        elif h.source == "scan":
            source = SHELL
        else:
            source = AGENT
        agent = session.agent if session is not None else None
        if source == AGENT and turn is not None:
            subagents = turn_info(turn).get("subagents") or []
            if subagents:
                agent = f"{agent or 'agent'} (subagent {', '.join(map(str, subagents))})"
        found = Origin(
            source,
            h.turn_id,
            turn.number if turn is not None else None,
            h.session_id,
            agent,
            turn.prompt if turn is not None else "",
            (turn.ended_at or turn.started_at) if turn is not None else None,
            h.seq,
        )
        self._origins[key] = found
        return found

    # --- replay -------------------------------------------------------------------------------

    def _content(self, version: Version | None) -> list[bytes] | None:
        """A recorded content's lines; None when it is not known as text (too large, binary,
        unknown, unreadable blob)."""
        if version is None or version.kind != FILE or version.hash is None:
            return [] if version is not None and version.kind == "absent" else None
        if self._contents is not None:
            data = self._contents.get(version.hash)
        else:
            try:
                data = self.store.get_blob(version.hash)
            except CorruptBlob:
                data = None
        if data is None or is_binary(data):
            return None
        return data.splitlines(True)

    def _catch_up(self, r: _Replay, h: PathChange) -> None:
        """Bring the replay to `h.before` when it is not where the last change left it: nobody
        recorded who wrote those lines (or this is the first change: they were there before)."""
        if r.version is not None and h.before.same_content(r.version):
            return
        before = self._content(h.before)
        if before is None:
            r.lines, r.origins = [], []
        else:
            who = ORIGINAL_ORIGIN if r.version is None else UNRECORDED_ORIGIN
            r.origins = _retarget(r.lines, r.origins, before, who)
            r.lines = before
        r.version = h.before

    def _step(self, r: _Replay, h: PathChange) -> None:
        if h.turn_state == TurnState.ROLLED_BACK:
            return
        if h.after is None:
            # A turn still editing the path: what differs from its `before` is its.
            r.pending = self.origin(h) if h.turn_state == TurnState.OPEN else None
            if r.pending is not None:
                self._catch_up(r, h)
            return
        r.pending = None
        author = self.origin(h)
        self._catch_up(r, h)
        after = self._content(h.after)
        if after is None:
            r.lines, r.origins = [], []
        elif author.source == RESTORE and (h.after.hash or "") in r.remembered:
            # A restore bringing back a content seen before brings its authors back too.
            r.origins = list(r.remembered[h.after.hash or ""])
            r.lines = after
        else:
            r.origins = _retarget(r.lines, r.origins, after, author)
            r.lines = after
        r.version = h.after
        if h.after.hash is not None and after is not None:
            r.remembered[h.after.hash] = r.origins
            r.remembered.move_to_end(h.after.hash)
            while len(r.remembered) > _REMEMBERED:
                r.remembered.popitem(last=False)

    def recorded(self, path: str) -> Attribution:
        """The authors of the last content recorded for `path`."""
        mark = self.store.write_mark()
        r = self._replays.get(path)
        if r is not None and r.mark == mark:
            return r.attribution()  # nothing was committed since: the history is the same
        history = self.store.path_history(path)
        if (
            r is None
            or r.count > len(history)
            or (r.count and _key(history[r.count - 1]) != r.last_key)
        ):
            r = _Replay()  # first call, or history rewritten (gc, a settled change): from scratch
            self._replays[path] = r
        todo = history[r.count :]
        if len(todo) > 2:
            hashes = [
                v.hash
                for h in todo
                for v in (h.before, h.after)
                if v is not None and v.kind == FILE and v.hash is not None
            ]
            self._contents = _Contents(self.store, hashes)
        try:
            for h in todo:
                self._step(r, h)
        finally:
            self._contents = None
        r.count = len(history)
        r.last_key = _key(history[-1]) if history else None
        r.mark = mark
        return r.attribution()

    def blame(self, path: str, current: bytes | None) -> Attribution:
        """The authors of `current` (the buffer or the disk) line by line; lines no recorded change
        wrote are `UNRECORDED` (or `ORIGINAL` when nothing of the path was ever recorded)."""
        rec = self.recorded(path)
        lines = (current or b"").splitlines(True)
        if rec.content_hash is None and not rec.lines and rec.pending is None:
            return Attribution(lines, [ORIGINAL_ORIGIN] * len(lines), None)
        origins = _retarget(rec.lines, rec.origins, lines, rec.pending or UNRECORDED_ORIGIN)
        return Attribution(lines, origins, rec.content_hash)
