from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rewind_ls.core.text.merge import MergeConflict, MergeResult, diffstat, is_binary, merge3


def lines(*xs: str) -> bytes:
    return "".join(x + "\n" for x in xs).encode()


BASE = lines("a", "b", "c", "d", "e", "f", "g", "h")


# --- merge3: examples -------------------------------------------------------------


def test_ours_equals_base_takes_theirs() -> None:
    theirs = lines("a", "X", "c")
    assert merge3(BASE, BASE, theirs) == MergeResult(theirs, [])


def test_theirs_equals_base_takes_ours() -> None:
    ours = lines("a", "X", "c")
    assert merge3(BASE, ours, BASE) == MergeResult(ours, [])


def test_result_flags() -> None:
    res = merge3(BASE, BASE, BASE)
    assert res.merged == BASE and res.conflicts == [] and res.ok


def test_non_overlapping_edits_both_kept() -> None:
    ours = BASE.replace(b"b\n", b"B\n")
    theirs = BASE.replace(b"g\n", b"G\n")
    assert merge3(BASE, ours, theirs).merged == lines("a", "B", "c", "d", "e", "f", "G", "h")


def test_same_change_both_sides_taken_once() -> None:
    ours = BASE.replace(b"d\n", b"D1\nD2\n")
    res = merge3(BASE, ours, ours.replace(b"h\n", b"H\n"))
    assert res.merged == ours.replace(b"h\n", b"H\n")
    # Identical hunks inside otherwise different files.
    theirs = ours.replace(b"a\n", b"A\n")
    ours2 = ours.replace(b"h\n", b"H\n")
    assert merge3(BASE, ours2, theirs).merged == lines(
        "A", "b", "c", "D1", "D2", "e", "f", "g", "H"
    )


def test_overlapping_conflict() -> None:
    ours = BASE.replace(b"d\n", b"OURS\n")
    theirs = BASE.replace(b"d\n", b"THEIRS\n")
    res = merge3(BASE, ours, theirs)
    assert res.merged is None
    assert res.conflicts == [MergeConflict(3, 4, [b"OURS\n"], [b"THEIRS\n"])]
    assert not res.ok


def test_adjacent_changes_conflict() -> None:
    ours = BASE.replace(b"c\n", b"C\n")
    theirs = BASE.replace(b"d\n", b"D\n")
    res = merge3(BASE, ours, theirs)
    assert res.merged is None
    assert res.conflicts == [MergeConflict(2, 4, [b"C\n", b"d\n"], [b"c\n", b"D\n"])]


def test_insertions_at_same_point_conflict() -> None:
    ours = BASE.replace(b"d\n", b"d\nO\n")
    theirs = BASE.replace(b"d\n", b"d\nT\n")
    res = merge3(BASE, ours, theirs)
    assert res.conflicts == [MergeConflict(4, 4, [b"O\n"], [b"T\n"])]


def test_insertion_touching_change_conflicts() -> None:
    ours = BASE.replace(b"d\n", b"d\nO\n")  # insert after d (at 4)
    theirs = BASE.replace(b"e\n", b"E\n")  # change line 4
    assert merge3(BASE, ours, theirs).merged is None


def test_conflict_group_spans_chained_hunks() -> None:
    ours = BASE.replace(b"b\n", b"B\n").replace(b"d\n", b"D\n")
    theirs = BASE.replace(b"c\n", b"C\n")
    res = merge3(BASE, ours, theirs)
    assert res.conflicts == [
        MergeConflict(1, 4, [b"B\n", b"c\n", b"D\n"], [b"b\n", b"C\n", b"d\n"])
    ]


def test_multiple_conflicts_reported() -> None:
    ours = BASE.replace(b"a\n", b"A1\n").replace(b"h\n", b"H1\n")
    theirs = BASE.replace(b"a\n", b"A2\n").replace(b"h\n", b"H2\n")
    res = merge3(BASE, ours, theirs)
    assert [(c.base_start, c.base_end) for c in res.conflicts] == [(0, 1), (7, 8)]


def test_empty_files() -> None:
    assert merge3(b"", b"", b"").merged == b""
    assert merge3(b"", b"x\n", b"").merged == b"x\n"
    assert merge3(b"", b"", b"y\n").merged == b"y\n"
    assert merge3(b"", b"x\n", b"y\n").merged is None
    assert merge3(b"x\n", b"", b"x\n").merged == b""
    assert merge3(b"a\nb\nc\n", b"", b"a\nb\nc\nd\n").merged is None


def test_deletions() -> None:
    ours = BASE.replace(b"b\n", b"")
    theirs = BASE.replace(b"g\n", b"")
    assert merge3(BASE, ours, theirs).merged == lines("a", "c", "d", "e", "f", "h")
    # Delete on one side, edit the same line on the other: conflict.
    assert merge3(BASE, ours, BASE.replace(b"b\n", b"B\n")).merged is None


def test_insertions_at_start_and_end() -> None:
    ours = b"first\n" + BASE
    theirs = BASE + b"last\n"
    assert merge3(BASE, ours, theirs).merged == b"first\n" + BASE + b"last\n"
    assert merge3(BASE, theirs, ours).merged == b"first\n" + BASE + b"last\n"


def test_no_final_newline() -> None:
    base = b"a\nb\nc\nd\ne"
    ours = b"A\nb\nc\nd\ne"
    theirs = b"a\nb\nc\nd\ne\n"  # adds the final newline
    assert merge3(base, ours, theirs).merged == b"A\nb\nc\nd\ne\n"
    theirs2 = b"a\nb\nc\nd\nE"
    assert merge3(base, ours, theirs2).merged == b"A\nb\nc\nd\nE"
    # Removing the final newline on one side while editing elsewhere.
    assert merge3(b"a\nb\nc\nd\n", b"X\nb\nc\nd\n", b"a\nb\nc\nd").merged == b"X\nb\nc\nd"


def test_crlf_preserved_byte_exactly() -> None:
    base = b"one\r\ntwo\r\nthree\r\nfour\r\nfive\r\n"
    ours = base.replace(b"one", b"ONE")
    theirs = base.replace(b"five\r\n", b"five\r\nsix")
    assert merge3(base, ours, theirs).merged == b"ONE\r\ntwo\r\nthree\r\nfour\r\nfive\r\nsix"
    # A line-ending-only change is a change like any other.
    theirs2 = base.replace(b"four\r\n", b"four\n")
    assert merge3(base, ours, theirs2).merged == ours.replace(b"four\r\n", b"four\n")


def test_mixed_and_cr_line_endings() -> None:
    base = b"a\rb\r\nc\nd\re\n"
    ours = b"A\rb\r\nc\nd\re\n"
    theirs = b"a\rb\r\nc\nd\rE\n"
    assert merge3(base, ours, theirs).merged == b"A\rb\r\nc\nd\rE\n"


def test_non_utf8_bytes() -> None:
    base = "é\nç\nà\nü\nß\n".encode("latin-1")
    ours = base.replace("é".encode("latin-1"), b"\xff\xfe")
    theirs = base.replace("ß".encode("latin-1"), b"\x80")
    assert merge3(base, ours, theirs).merged == b"\xff\xfe\n\xe7\n\xe0\n\xfc\n\x80\n"


def test_repeated_lines() -> None:
    base = b"}\n\n}\n\n}\n\n}\n\n}\n"
    ours = b"x\n" + base
    theirs = base + b"y\n"
    assert merge3(base, ours, theirs).merged == b"x\n" + base + b"y\n"


def test_revert_turn_keep_later_edit() -> None:
    before = lines("def f():", "    return 1", "", "def g():", "    return 2", "", "x = 3")
    after_turn = before.replace(b"return 1", b"return 100")
    current = after_turn.replace(b"x = 3", b"x = 4")
    res = merge3(after_turn, current, before)
    assert res.merged == before.replace(b"x = 3", b"x = 4")


def test_conflict_repr_and_eq() -> None:
    c = MergeConflict(1, 2, [b"a"], [b"b"])
    assert "base_start=1" in repr(c)
    assert c != MergeConflict(1, 2, [b"a"], [b"c"])
    assert c != "x"
    assert "merged=None" in repr(MergeResult(None, [c]))


def test_large_file_merges_exactly() -> None:
    # Speed is measured in bench/, not here (a shared 2-core machine makes timed asserts flaky).
    base = b"".join(b"line number %d with some text\n" % i for i in range(40_000))
    assert len(base) > 1_000_000
    ours = base.replace(b"line number 10 with", b"LINE 10 with").replace(
        b"line number 39990 with", b"LINE 39990 with"
    )
    theirs = base.replace(b"line number 20000 with", b"LINE 20000 with")
    res = merge3(base, ours, theirs)
    assert res.merged == ours.replace(b"line number 20000 with", b"LINE 20000 with")
    assert diffstat(base, ours) == (2, 2)


def test_repetitive_large_file_terminates() -> None:
    # No unique lines at all: the difflib fallback must stay bounded (a quadratic fallback would
    # run for minutes here; speed itself is a bench/ figure).
    base = b"a\nb\n" * 5000
    ours = b"a\nb\nc\n" * 3000
    res = merge3(base, ours, base + b"z\n")
    # Ours rewrote the end that theirs appended to: one conflict, nothing merged.
    assert res.merged is None and len(res.conflicts) == 1, res


# --- merge3: properties -----------------------------------------------------------

line_st = st.sampled_from(
    [b"a\n", b"b\n", b"c\n", b"\n", b"a\r\n", b"}\n", b"x", b"\r", b"long line here\n"]
)
doc_st = st.lists(line_st, max_size=30).map(b"".join)
bytes_st = st.one_of(doc_st, st.binary(max_size=200))


@given(bytes_st, bytes_st)
def test_prop_ours_is_base(b: bytes, t: bytes) -> None:
    assert merge3(b, b, t) == MergeResult(t, [])


@given(bytes_st, bytes_st)
def test_prop_theirs_is_base(b: bytes, o: bytes) -> None:
    assert merge3(b, o, b) == MergeResult(o, [])


@given(bytes_st, bytes_st)
def test_prop_same_both_sides(b: bytes, x: bytes) -> None:
    assert merge3(b, x, x) == MergeResult(x, [])


@given(bytes_st, bytes_st, bytes_st)
def test_prop_symmetric_and_consistent(b: bytes, o: bytes, t: bytes) -> None:
    res = merge3(b, o, t)
    assert (res.merged is None) == bool(res.conflicts)
    swapped = merge3(b, t, o)
    assert swapped.merged == res.merged
    assert [(c.base_start, c.base_end, c.ours, c.theirs) for c in res.conflicts] == [
        (c.base_start, c.base_end, c.theirs, c.ours) for c in swapped.conflicts
    ]
    nb = len(b.splitlines())
    for c in res.conflicts:
        assert 0 <= c.base_start <= c.base_end <= nb
        assert c.ours != c.theirs


@st.composite
def disjoint_edits(draw: st.DrawFn) -> tuple[bytes, bytes, bytes, bytes]:
    """Base of unique lines, and two edit sets on disjoint, non-adjacent base regions."""
    n = draw(st.integers(0, 40))
    base = [b"base %d\n" % i for i in range(n)]
    eol = draw(st.sampled_from([b"\n", b"\r\n"]))
    base = [ln.replace(b"\n", eol) for ln in base]
    if n and draw(st.booleans()):
        base[-1] = base[-1].rstrip(b"\r\n")  # no final newline
    # Regions (start, end, side, new lines) separated by at least one untouched line;
    # positions are "gaps" so pure insertions are possible too.
    regions: list[tuple[int, int, int, list[bytes]]] = []
    pos = 0
    counter = 0
    while pos <= n:
        pos += draw(st.integers(0, 4))
        if pos > n:
            break
        length = draw(st.integers(0, min(3, n - pos)))
        k = draw(st.integers(0, 3))
        if length == 0 and k == 0:
            k = 1
        new = []
        for _ in range(k):
            counter += 1
            new.append(b"new %d" % counter + eol)
        regions.append((pos, pos + length, draw(st.integers(0, 1)), new))
        pos += length + 1  # the +1 keeps regions non-adjacent
    # An insertion at the very end after an unterminated last line would glue lines.
    if n and not base[-1].endswith(b"\n"):
        regions = [r for r in regions if r[1] < n and r[0] < n]

    def apply(sides: set[int]) -> bytes:
        out: list[bytes] = []
        i = 0
        for s, e, side, new in regions:
            out.extend(base[i:s])
            out.extend(new if side in sides else base[s:e])
            i = e
        out.extend(base[i:])
        return b"".join(out)

    return b"".join(base), apply({0}), apply({1}), apply({0, 1})


@given(disjoint_edits())
@settings(suppress_health_check=[HealthCheck.too_slow])
def test_prop_disjoint_edits_merge_cleanly(case: tuple[bytes, bytes, bytes, bytes]) -> None:
    base, ours, theirs, both = case
    res = merge3(base, ours, theirs)
    assert res.conflicts == []
    assert res.merged == both


# --- diffstat ---------------------------------------------------------------------


def test_diffstat_basic() -> None:
    assert diffstat(b"", b"") == (0, 0)
    assert diffstat(b"", b"a\nb\n") == (2, 0)
    assert diffstat(b"a\nb\n", b"") == (0, 2)
    assert diffstat(BASE, BASE.replace(b"c\n", b"C\n")) == (1, 1)
    assert diffstat(b"a\nb", b"a\nb\n") == (1, 1)
    assert diffstat(b"a\r\nb\r\n", b"a\nb\n") == (2, 2)


@given(doc_st, doc_st)
def test_prop_diffstat_consistent(a: bytes, b: bytes) -> None:
    added, removed = diffstat(a, b)
    la, lb = len(a.splitlines()), len(b.splitlines())
    assert la - removed == lb - added >= 0
    if a == b:
        assert (added, removed) == (0, 0)


# --- is_binary --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (b"", False),
        (b"hello\nworld\n", False),
        ("héllo wörld ✓\n".encode(), False),
        (b"\x00\x01\x02", True),
        (b"text\x00more", True),
        (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", True),
        ("caf\xe9\n".encode("latin-1"), True),
        ("utf16 text".encode("utf-16"), False),  # has a BOM, contains NULs
        (b"\xef\xbb\xbfbom utf8", False),
        (b"a" * 9000 + b"\x00", False),  # NUL beyond the sniffed window
    ],
)
def test_is_binary(data: bytes, expected: bool) -> None:
    assert is_binary(data) is expected


def test_is_binary_tolerates_cut_multibyte_sequence() -> None:
    data = b"a" * 8191 + "é".encode() + b"rest"
    assert is_binary(data) is False
    assert is_binary(b"a" * 8191 + b"\xff" + b"rest") is True
