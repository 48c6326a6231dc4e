"""Line-based three-way merge (diff3 semantics) over raw bytes.

Used to revert one AI turn while keeping later edits: ``base`` is the file right after
the turn, ``ours`` the current file and ``theirs`` the file before the turn.

Lines are split with ``bytes.splitlines(keepends=True)``, so every line keeps its own
terminator (``\\n``, ``\\r\\n`` or ``\\r``) and a missing final newline survives byte-exactly.

Import cost matters (this runs inside a hook process), so neither ``typing`` nor
``difflib`` is imported at module level; ``difflib`` is only loaded for the rare
regions that have no line unique to both sides.
"""

from __future__ import annotations

from codecs import utf_8_decode  # codecs is loaded at interpreter start-up: free

from rewind_ls.core.text.gallop import common_run, common_run_before

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence

__all__ = [
    "MergeConflict",
    "MergeResult",
    "diffstat",
    "is_binary",
    "line_diff",
    "merge3",
    "merge3_markers",
]

# How much of the file is sniffed by is_binary (the same window git uses, rounded).
_SNIFF = 8192
_BOMS = (b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff")
# Above this many line-pair comparisons SequenceMatcher may go quadratic on highly
# repetitive input; its popularity heuristic keeps it bounded at some loss of quality.
_AUTOJUNK_THRESHOLD = 4_000_000
# Edit-distance budget of the Myers pass before falling back to patience anchoring.
_MYERS_MAX_D = 128

# (a_start, a_end, b_start, b_end): a[a_start:a_end] was replaced by b[b_start:b_end].
Hunk = tuple[int, int, int, int]


class MergeConflict:
    """Both sides changed ``base[base_start:base_end]`` (0-based line range) differently.

    ``ours`` and ``theirs`` are the replacement lines on each side, terminators included.
    """

    __slots__ = ("base_end", "base_start", "ours", "theirs")

    def __init__(
        self, base_start: int, base_end: int, ours: list[bytes], theirs: list[bytes]
    ) -> None:
        self.base_start = base_start
        self.base_end = base_end
        self.ours = ours
        self.theirs = theirs

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, MergeConflict):
            return NotImplemented
        return (self.base_start, self.base_end, self.ours, self.theirs) == (
            other.base_start,
            other.base_end,
            other.ours,
            other.theirs,
        )

    __hash__ = None  # type: ignore[assignment]  # mutable lists inside: not hashable

    def __repr__(self) -> str:
        return (
            f"MergeConflict(base_start={self.base_start}, base_end={self.base_end}, "
            f"ours={self.ours!r}, theirs={self.theirs!r})"
        )


class MergeResult:
    """Outcome of :func:`merge3`: ``merged`` is ``None`` exactly when there are conflicts."""

    __slots__ = ("conflicts", "merged")

    def __init__(self, merged: bytes | None, conflicts: list[MergeConflict]) -> None:
        self.merged = merged
        self.conflicts = conflicts

    @property
    def ok(self) -> bool:
        return self.merged is not None

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, MergeResult):
            return NotImplemented
        return self.merged == other.merged and self.conflicts == other.conflicts

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"MergeResult(merged={self.merged!r}, conflicts={self.conflicts!r})"


def is_binary(data: bytes) -> bool:
    """Heuristic text/binary classification on the first 8 KiB.

    Text means: starts with a UTF-8/UTF-16 byte-order mark, or contains no NUL byte and
    is valid UTF-8 (a multi-byte sequence cut by the 8 KiB window is tolerated).
    Everything else, including legacy 8-bit encodings such as Latin-1, counts as binary:
    callers then fall back to whole-file handling, which is always safe.
    """
    head = data[:_SNIFF]
    if head.startswith(_BOMS):
        return False
    if b"\x00" in head:
        return True
    try:
        # final=False accepts a multi-byte sequence cut off by the sniffing window.
        utf_8_decode(head, "strict", len(data) <= _SNIFF)
    except UnicodeDecodeError:
        return True
    return False


# Above this many lines changed (by a multiset count, a lower bound of the diff), diffstat reports
# that count instead of running the diff: it is a preview figure, and a line diff of two unrelated
# files costs O(N*D).
_STAT_EXACT_LIMIT = 256


def diffstat(old: bytes, new: bytes) -> tuple[int, int]:
    """Return ``(lines added, lines removed)`` going from ``old`` to ``new``: exact for ordinary
    edits; for very different contents, the multiset difference of their lines."""
    if old == new:
        return 0, 0
    a = old.splitlines(True)
    b = new.splitlines(True)
    # The common first and last lines count for nothing either way (they cancel in the multiset
    # difference, and the diff trims them first too): a restore of thousands of one-line edits
    # counts only the changed middles.
    head = _run_forward(a, 0, b, 0, min(len(a), len(b)))
    tail = _run_backward(a, len(a), b, len(b), min(len(a), len(b)) - head)
    a, b = a[head : len(a) - tail], b[head : len(b) - tail]
    from collections import Counter

    ca, cb = Counter(a), Counter(b)
    rough_added = sum((cb - ca).values())
    rough_removed = sum((ca - cb).values())
    if rough_added + rough_removed > _STAT_EXACT_LIMIT:
        return rough_added, rough_removed
    added = removed = 0
    for a0, a1, b0, b1 in _diff(a, b):
        removed += a1 - a0
        added += b1 - b0
    return added, removed


def merge3(base: bytes, ours: bytes, theirs: bytes) -> MergeResult:
    """Three-way merge of ``ours`` and ``theirs`` against their common ancestor ``base``.

    A base region changed on one side only takes that side; changed identically on both
    sides it is taken once; changed differently on both sides, where the changed regions
    overlap or merely touch (are adjacent), it is a conflict and ``merged`` is ``None``.
    """
    if ours == theirs or theirs == base:
        return MergeResult(ours, [])
    if ours == base:
        return MergeResult(theirs, [])
    out: list[bytes] = []
    conflicts: list[MergeConflict] = []
    for part in _merged(base.splitlines(True), ours.splitlines(True), theirs.splitlines(True)):
        if isinstance(part, MergeConflict):
            conflicts.append(part)
        else:
            out.extend(part)
    if conflicts:
        return MergeResult(None, conflicts)
    return MergeResult(b"".join(out), [])


def _merged(
    b: list[bytes], o: list[bytes], t: list[bytes]
) -> Iterator[list[bytes] | MergeConflict]:
    """The three-way merge of line lists, in order: runs of lines it settles, and the conflicts
    (base region, our lines, their lines) between them (the walk `merge3` and `merge3_markers`
    share)."""
    # Line offset side_index - base_index after the regions consumed so far, per side.
    shift = [0, 0]
    pos = 0  # next base line not yet emitted
    for lo, hi, group in _regions(_diff(b, o), _diff(b, t)):
        yield b[pos:lo]
        pos = hi
        mine, other = _side_spans((o, t), group, lo, hi, shift)
        if not group[1]:
            yield mine
        elif not group[0] or mine == other:
            yield other
        else:
            yield MergeConflict(lo, hi, mine, other)
    yield b[pos:]


def merge3_markers(
    base: bytes, ours: bytes, theirs: bytes, labels: tuple[str, str, str]
) -> tuple[bytes, int]:
    """The merge of :func:`merge3` with every conflict written in place, diff3 style (as
    ``git merge --conflict=diff3``): ``<<<<<<< ours-label``, our lines, ``||||||| base-label``, the
    base lines, ``=======``, their lines, ``>>>>>>> theirs-label``. ``labels`` is (ours, base,
    theirs). Returns the bytes and the number of conflicts written. Marker lines end like the
    file's first line (``\r\n`` or ``\n``); a side whose last line has no terminator gets one
    before the next marker, so every marker starts a line."""
    b = base.splitlines(True)
    o = ours.splitlines(True)
    t = theirs.splitlines(True)
    eol = b"\r\n" if (o or b or t or [b""])[0].endswith(b"\r\n") else b"\n"
    mine_l, base_l, theirs_l = (label.encode("utf-8", "replace") for label in labels)
    out: list[bytes] = []
    count = 0

    def block(lines: list[bytes]) -> None:
        out.extend(lines)
        if lines and not lines[-1].endswith((b"\n", b"\r")):
            out.append(eol)

    for part in _merged(b, o, t):
        if not isinstance(part, MergeConflict):
            out.extend(part)
            continue
        count += 1
        if out and not out[-1].endswith((b"\n", b"\r")):
            out.append(eol)
        out.append(b"<<<<<<< " + mine_l + eol)
        block(part.ours)
        out.append(b"||||||| " + base_l + eol)
        block(b[part.base_start : part.base_end])
        out.append(b"=======" + eol)
        block(part.theirs)
        out.append(b">>>>>>> " + theirs_l + eol)
    return b"".join(out), count


def _regions(ours: list[Hunk], theirs: list[Hunk]) -> Iterator[tuple[int, int, list[list[Hunk]]]]:
    """The base regions changed on either side, in order: (lo, hi, [our hunks, their hunks]),
    every hunk of either side that overlaps or touches the growing region absorbed into it."""
    # Tag 0 = ours, 1 = theirs; sort by base position so overlapping hunks are neighbours.
    tagged = [(h[0], h[1], 0, h) for h in ours]
    tagged += [(h[0], h[1], 1, h) for h in theirs]
    tagged.sort()
    k = 0
    n = len(tagged)
    while k < n:
        lo, hi = tagged[k][0], tagged[k][1]
        group: list[list[Hunk]] = [[], []]
        while k < n and tagged[k][0] <= hi:
            _, end, side, hunk = tagged[k]
            group[side].append(hunk)
            if end > hi:
                hi = end
            k += 1
        yield lo, hi, group


def _side_spans(
    sides: tuple[list[bytes], list[bytes]],
    group: list[list[Hunk]],
    lo: int,
    hi: int,
    shift: list[int],
) -> tuple[list[bytes], list[bytes]]:
    """What each side holds in place of base[lo:hi]: a side without hunks there holds the base
    lines, shifted by its earlier hunks. Updates `shift` past the region."""
    spans: list[list[bytes]] = []
    for side in (0, 1):
        hs = group[side]
        if hs:
            start = hs[0][2] - (hs[0][0] - lo)
            end = hs[-1][3] + (hi - hs[-1][1])
            spans.append(sides[side][start:end])
            shift[side] = end - hi
        else:
            spans.append(sides[side][lo + shift[side] : hi + shift[side]])
    return spans[0], spans[1]


def line_diff(a: Sequence[bytes], b: Sequence[bytes]) -> list[Hunk]:
    """The changed regions between line lists ``a`` and ``b``, in order (the diff the merge uses:
    blame and one-hunk reverts share it, so their hunks are the merge's hunks)."""
    return _diff(a, b)


def _diff(a: Sequence[bytes], b: Sequence[bytes]) -> list[Hunk]:
    """Changed regions between line lists ``a`` and ``b``, in order."""
    hunks: list[Hunk] = []
    i = j = 0
    for x, y, size in _matches(a, b):
        if x > i or y > j:
            hunks.append((i, x, j, y))
        i, j = x + size, y + size
    if i < len(a) or j < len(b):
        hunks.append((i, len(a), j, len(b)))
    return hunks


def _matches(a: Sequence[bytes], b: Sequence[bytes]) -> list[tuple[int, int, int]]:
    """Sorted ``(i, j, size)`` runs with ``a[i:i+size] == b[j:j+size]``, non-crossing.

    Each region first loses its common prefix and suffix (compared in C via list-slice
    equality). A bounded Myers search then handles the usual "few edits" case in
    O(D^2) steps whatever the file size. Regions with more edits are split on lines
    unique to both sides (patience diff) and the gaps processed the same way; gaps
    without any unique line go to ``difflib``.
    """
    out: list[tuple[int, int, int]] = []
    todo = [(0, len(a), 0, len(b))]
    while todo:
        alo, ahi, blo, bhi = todo.pop()
        size = _run_forward(a, alo, b, blo, min(ahi - alo, bhi - blo))
        if size:
            out.append((alo, blo, size))
            alo += size
            blo += size
        size = _run_backward(a, ahi, b, bhi, min(ahi - alo, bhi - blo))
        if size:
            ahi -= size
            bhi -= size
            out.append((ahi, bhi, size))
        if alo == ahi or blo == bhi:
            continue
        found = _myers(a, alo, ahi, b, blo, bhi, _MYERS_MAX_D)
        if found is not None:
            out.extend(found)
            continue
        anchors = _unique_anchors(a, alo, ahi, b, blo, bhi)
        if anchors:
            pa, pb = alo, blo
            for ai, bj in anchors:
                out.append((ai, bj, 1))
                if ai > pa and bj > pb:
                    todo.append((pa, ai, pb, bj))
                pa, pb = ai + 1, bj + 1
            if ahi > pa and bhi > pb:
                todo.append((pa, ahi, pb, bhi))
            continue
        from difflib import SequenceMatcher  # rare path; keeps module import cheap

        autojunk = (ahi - alo) * (bhi - blo) > _AUTOJUNK_THRESHOLD
        sm = SequenceMatcher(None, a[alo:ahi], b[blo:bhi], autojunk=autojunk)
        for x, y, size in sm.get_matching_blocks():
            if size:
                out.append((alo + x, blo + y, size))
    out.sort()
    return out


def _run_forward(a: Sequence[bytes], i: int, b: Sequence[bytes], j: int, limit: int) -> int:
    """Length of the common run ``a[i:]`` / ``b[j:]`` (at most ``limit``), by galloping."""
    return common_run(a, i, b, j, limit)


def _run_backward(a: Sequence[bytes], i: int, b: Sequence[bytes], j: int, limit: int) -> int:
    """Length of the common run ending just before ``a[i]`` / ``b[j]`` (at most ``limit``)."""
    return common_run_before(a, i, b, j, limit)


def _myers(
    a: Sequence[bytes], alo: int, ahi: int, b: Sequence[bytes], blo: int, bhi: int, max_d: int
) -> list[tuple[int, int, int]] | None:
    """Myers' greedy shortest edit script, or ``None`` if it needs more than ``max_d`` edits.

    Diagonal snakes are followed with :func:`_run_forward`, so long unchanged stretches
    cost almost nothing; the work is bounded by ``max_d`` squared.
    """
    n, m = ahi - alo, bhi - blo
    off = max_d + 1
    v = [0] * (2 * max_d + 3)  # v[off + k] = furthest x on diagonal k = x - y
    trace: list[list[int]] = []
    for d in range(max_d + 1):
        trace.append(v[:])
        for k in range(-d, d + 1, 2):
            if k == -d or (k != d and v[off + k - 1] < v[off + k + 1]):
                x = v[off + k + 1]  # step down: insertion from b
            else:
                x = v[off + k - 1] + 1  # step right: deletion from a
            y = x - k
            if x < n and y < m:
                x += _run_forward(a, alo + x, b, blo + y, min(n - x, m - y))
            v[off + k] = x
            if x >= n and x - k >= m:
                return _myers_backtrack(trace, n, m, off, alo, blo)
    return None


def _myers_backtrack(
    trace: list[list[int]], x: int, y: int, off: int, alo: int, blo: int
) -> list[tuple[int, int, int]]:
    out: list[tuple[int, int, int]] = []
    for d in range(len(trace) - 1, -1, -1):
        v = trace[d]
        k = x - y
        if k == -d or (k != d and v[off + k - 1] < v[off + k + 1]):
            px = v[off + k + 1]
            py = px - k - 1
            sx, sy = px, py + 1
        else:
            px = v[off + k - 1]
            py = px - k + 1
            sx, sy = px + 1, py
        if d == 0:
            sx, sy = 0, 0
        if x > sx:
            out.append((alo + sx, blo + sy, x - sx))
        x, y = px, py
    return out


def _unique_anchors(
    a: Sequence[bytes], alo: int, ahi: int, b: Sequence[bytes], blo: int, bhi: int
) -> list[tuple[int, int]]:
    """Longest in-order chain of lines that occur exactly once in both ranges."""
    pos_a: dict[bytes, int] = {}
    for k in range(alo, ahi):
        line = a[k]
        pos_a[line] = -1 if line in pos_a else k
    pos_b: dict[bytes, int] = {}
    for k in range(blo, bhi):
        line = b[k]
        pos_b[line] = -1 if line in pos_b else k
    # Pairs in increasing b order (dict keeps first-insertion order).
    pairs = [(pos_a.get(line, -1), j) for line, j in pos_b.items() if j >= 0]
    pairs = [p for p in pairs if p[0] >= 0]
    if not pairs:
        return []
    # Longest increasing subsequence on the a positions (patience sorting).
    tails: list[int] = []  # tails[L] = index into pairs ending the best chain of length L+1
    back = [-1] * len(pairs)
    for idx, (ai, _) in enumerate(pairs):
        lo, hi = 0, len(tails)
        while lo < hi:
            mid = (lo + hi) // 2
            if pairs[tails[mid]][0] < ai:
                lo = mid + 1
            else:
                hi = mid
        if lo:
            back[idx] = tails[lo - 1]
        if lo == len(tails):
            tails.append(idx)
        else:
            tails[lo] = idx
    chain: list[tuple[int, int]] = []
    idx = tails[-1]
    while idx >= 0:
        chain.append(pairs[idx])
        idx = back[idx]
    chain.reverse()
    return chain
