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

The first question about a few lines (a hover, a code action) of a path with no replay yet does not
replay the whole history (seconds for a long one, on the server's single store thread): `lines`
walks the history backwards from the content now, newest change first, decoding each older version
by one delta from the newer one, and stops as soon as every line asked about has its author. A line
the newest turns wrote costs a few diffs, not a thousand. It answers what the replay would (the
same transitions, read in reverse; tests/test_blame_walk.py compares the two).
"""

from __future__ import annotations

from bisect import bisect_right
from collections import OrderedDict
from collections.abc import Iterable
from typing import NamedTuple

from rewind_ls.core.capture.recorder import REWIND_SESSION, turn_info
from rewind_ls.core.errors import CorruptBlob
from rewind_ls.core.model import FILE, PathChange, SessionKind, TurnState, Version, is_background
from rewind_ls.core.store import Store, digest
from rewind_ls.core.text.gallop import common_run, common_run_before
from rewind_ls.core.text.merge import line_diff

# Who wrote a line (`Origin.source`).
AGENT = "agent"  # an agent's edit tool (Write, Edit, apply_patch, replace, ...)
SUBAGENT = "subagent"  # an agent's edit in a turn where only subagents edited
SHELL = "shell"  # a shell command inside an agent's turn (found by the scan)
BACKGROUND = "background"  # work a turn started, after the turn ended (`model.is_background`)
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


def binary(data: bytes) -> bool:
    """Content with no lines to blame: a NUL in its first 8 KiB. Any other bytes split into
    lines, whatever their encoding (a Latin-1 file is blamed line by line; `merge.is_binary`,
    which a merge must be stricter about, would call it binary)."""
    return b"\x00" in data[:8192]


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


class LineOrigins(NamedTuple):
    """The authors of some lines of a content (`Blamer.lines`)."""

    origins: dict[int, Origin]  # line (0-based) -> its author, for the lines asked about
    line_count: int
    content_hash: str | None  # the last recorded content's, as in `Attribution`


def _is_restore(h: PathChange) -> bool:
    """`Blamer.origin(h).source == RESTORE`, without reading the turn."""
    if h.session_kind in (SessionKind.EDITOR, SessionKind.EXTERNAL):
        return False
    return h.session_kind == SessionKind.REWIND or h.session_id == REWIND_SESSION


def _common_lines(old: bytes, new: bytes) -> tuple[int, int, int, int]:
    """(p, lines_p, q_old, q_new): the first `lines_p` lines (bytes up to `p`) of both contents
    are the same, and so are their lines from `q_old` / `q_new` on, each run as long as the line
    diff's own prefix and suffix runs (the suffix never reaching into the prefix). Found on the
    bytes, in C: only the lines between are split and diffed. Contents with a CR are not asked
    (bytes.splitlines also splits on a lone CR)."""
    limit = min(len(old), len(new))
    k = common_run(old, 0, new, 0, limit)
    p = old.rfind(b"\n", 0, k) + 1  # whole lines, their newline included
    m = common_run_before(old, len(old), new, len(new), limit - p)
    so, sn = len(old) - m, len(new) - m
    if (so == 0 or old[so - 1] == 10) and (sn == 0 or new[sn - 1] == 10):
        q = so  # the common bytes start a line in both
    else:
        q = old.find(b"\n", so) + 1 or len(old)  # from the next line start in both
    return p, old.count(b"\n", 0, p), q, q + len(new) - len(old)


def _line_count(data: bytes, start: int, end: int) -> int:
    """The number of lines of data[start:end] (the last one may lack its newline)."""
    n = data.count(b"\n", start, end)
    return n + 1 if end > start and data[end - 1] != 10 else n


def _carry_back(
    old: bytes,
    new: bytes,
    author: Origin,
    at: dict[int, int],
    found: dict[int, Origin],
) -> dict[int, int]:
    """One transition `old` -> `new` read backwards (the inverse of `_retarget`): lines of `new`
    in `at` (line of `new` -> line asked about) that the diff inserted or replaced are `author`'s
    (into `found`); the others are returned as lines of `old`."""
    if old == new:
        return at
    if b"\r" in old or b"\r" in new:
        p, lines_p, q_old, q_new = 0, 0, len(old), len(new)
    else:
        p, lines_p, q_old, q_new = _common_lines(old, new)
    new_end = lines_p + _line_count(new, p, q_new)  # the first line of the common suffix
    shift = _line_count(old, p, q_old) - (new_end - lines_p)
    out: dict[int, int] = {}
    middle: dict[int, int] = {}
    for b, asked in at.items():
        if b < lines_p:
            out[b] = asked
        elif b >= new_end:
            out[b + shift] = asked
        else:
            middle[b] = asked
    if not middle:
        return out  # no line asked about is between: no need to diff (most steps, most hovers)
    # The line diff of the whole contents is the common prefix, this diff, the common suffix.
    ops = line_diff(old[p:q_old].splitlines(True), new[p:q_new].splitlines(True))
    starts = [b0 for _, _, b0, _ in ops]
    for b, asked in middle.items():
        r = b - lines_p
        k = bisect_right(starts, r) - 1
        if k >= 0 and r < ops[k][3]:
            found[asked] = author  # inserted or replaced by this transition
            continue
        # Unchanged: as many lines after the end of the op before it in both contents.
        a_end, b_end = (ops[k][1], ops[k][3]) if k >= 0 else (0, 0)
        out[lines_p + r - b_end + a_end] = asked
    return out


_PLANS = 8  # paths whose walk plan is kept


class _WalkPlan(NamedTuple):
    mark: tuple[int, int]  # the store's write mark it was made at
    states: list[Version | None]
    steps: list[PathChange | Origin | int]
    pending: PathChange | None
    last_data: bytes  # states[-1]'s content


def _key(h: PathChange) -> tuple[int, str | None, str | None]:
    return (h.seq, h.after.hash if h.after is not None else None, str(h.turn_state))


class Blamer:
    """Per-line authors of files, kept per path between calls (the server holds one)."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self._replays: dict[str, _Replay] = {}
        self._origins: dict[tuple[str, str], Origin] = {}
        self._contents: _Contents | None = None  # while a long history is replayed
        self._plans: dict[str, _WalkPlan] = {}

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
        elif is_background(h.source):
            source = BACKGROUND
        elif h.source == "scan":
            source = SHELL
        else:
            source = AGENT
        agent = session.agent if session is not None else None
        if source in (AGENT, BACKGROUND) and turn is not None:
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
        if data is None or binary(data):
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

    def lines(self, path: str, current: bytes | None, wanted: Iterable[int]) -> LineOrigins:
        """The authors of the lines `wanted` of `current`, as `blame` says them. With the path's
        replay in hand (or when it is cheap to extend) it is read; with none, the history is
        walked backwards only as far as those lines need (the module docstring says why)."""
        if path in self._replays:
            att = self.blame(path, current)
            n = len(att.origins)
            return LineOrigins(
                {i: att.origins[i] for i in wanted if 0 <= i < n}, n, att.content_hash
            )
        return self._walk_back(path, current, wanted)

    def _walk_plan(self, path: str) -> _WalkPlan:
        """The replay's transitions of `path`, without their contents (kept per path until the
        store's write mark moves: a hover after each keystroke does not query the history)."""
        mark = self.store.write_mark()
        plan = self._plans.get(path)
        if plan is not None and plan.mark == mark:
            return plan
        # states[k + 1] is what steps[k] leads to from states[k]; a step is the change that
        # wrote it, the author of an unrecorded gap, or the earlier state a restore brings back.
        states: list[Version | None] = [None]
        steps: list[PathChange | Origin | int] = []
        pending: PathChange | None = None
        remembered: OrderedDict[str, int] = OrderedDict()

        def catch_up(h: PathChange) -> None:
            prev = states[-1]
            if prev is not None and h.before.same_content(prev):
                return
            steps.append(ORIGINAL_ORIGIN if prev is None else UNRECORDED_ORIGIN)
            states.append(h.before)

        for h in self.store.path_history(path):
            if h.turn_state == TurnState.ROLLED_BACK:
                continue
            if h.after is None:
                pending = h if h.turn_state == TurnState.OPEN else None
                if pending is not None:
                    catch_up(h)
                continue
            pending = None
            catch_up(h)
            v = h.after
            known = v.kind == FILE and v.hash is not None
            if known and _is_restore(h) and v.hash in remembered:
                steps.append(remembered[v.hash or ""])
            else:
                steps.append(h)
            states.append(v)
            if known:
                # The replay's `remembered` (a binary or unreadable content counts here and not
                # there: only the 64-content horizon can differ, for such a file).
                remembered[v.hash or ""] = len(states) - 1
                remembered.move_to_end(v.hash or "")
                while len(remembered) > _REMEMBERED:
                    remembered.popitem(last=False)
        last = states[-1]
        plan = _WalkPlan(mark, states, steps, pending, self._decode(last, {}))
        self._plans[path] = plan
        while len(self._plans) > _PLANS:
            del self._plans[next(iter(self._plans))]
        return plan

    def _decode(self, v: Version | None, decoded: dict[str, bytes]) -> bytes:
        """`v`'s content as the replay reads it (b"" for none, binary or unreadable). `decoded`
        holds the version decoded last: the next older one is one delta away; it is updated."""
        if v is None or v.kind != FILE or v.hash is None:
            return b""
        data: bytes | None
        if v.hash in decoded:
            data = decoded[v.hash]
        else:
            try:
                data = self.store.get_blob(v.hash, decoded)
            except CorruptBlob:
                data = None
            decoded.clear()
            if data is not None:
                decoded[v.hash] = data
        if data is None or binary(data):
            return b""
        return data

    def _walk_back(self, path: str, current: bytes | None, wanted: Iterable[int]) -> LineOrigins:
        plan = self._walk_plan(path)
        states, steps, pending = plan.states, plan.steps, plan.pending
        last = states[-1]
        content_hash = last.hash if last is not None else None
        cur = current or b""
        count = len(cur.splitlines())
        at = {i: i for i in dict.fromkeys(wanted) if 0 <= i < count}
        found: dict[int, Origin] = {}
        new = plan.last_data
        # Seeded with the newest content (not when it reads as b"" for being binary: not its bytes).
        decoded = {last.hash: new} if new and last is not None and last.hash else {}

        def content(v: Version | None) -> bytes:
            return self._decode(v, decoded)

        if content_hash is None and not new and pending is None:
            return LineOrigins(dict.fromkeys(at.values(), ORIGINAL_ORIGIN), count, None)
        tail = self.origin(pending) if pending is not None else UNRECORDED_ORIGIN
        at = _carry_back(new, cur, tail, at, found)
        k = len(states) - 1
        while at and k > 0:
            what = steps[k - 1]
            if isinstance(what, int):  # a restore of a content seen before (states[what])
                k = what  # the same content: the same lines, the authors they had then
                new = content(states[k])
                continue
            author = self.origin(what) if isinstance(what, PathChange) else what
            assert isinstance(author, Origin)
            old = content(states[k - 1])
            at = _carry_back(old, new, author, at, found)
            new = old
            k -= 1
        return LineOrigins(found, count, content_hash)

    def whole_origin(self, path: str, current: bytes) -> Origin:
        """The author of `current` as a whole: the latest recorded change that wrote it
        (`UNRECORDED` when none did, `ORIGINAL` when nothing of the path was recorded)."""
        history = self.store.path_history(path)
        if not history:
            return ORIGINAL_ORIGIN
        h = digest(current)
        for change in reversed(history):
            if change.after is not None and change.after.hash == h:
                return self.origin(change)
        return UNRECORDED_ORIGIN

    def blame(self, path: str, current: bytes | None) -> Attribution:
        """The authors of `current` (the buffer or the disk) line by line; lines no recorded change
        wrote are `UNRECORDED` (or `ORIGINAL` when nothing of the path was ever recorded)."""
        lines = (current or b"").splitlines(True)
        if current is not None and binary(current):
            # No lines: the whole content is the last recorded change's that wrote it.
            whole = self.whole_origin(path, current)
            return Attribution(lines, [whole] * len(lines), digest(current))
        rec = self.recorded(path)
        if rec.content_hash is None and not rec.lines and rec.pending is None:
            return Attribution(lines, [ORIGINAL_ORIGIN] * len(lines), None)
        origins = _retarget(rec.lines, rec.origins, lines, rec.pending or UNRECORDED_ORIGIN)
        return Attribution(lines, origins, rec.content_hash)
