from __future__ import annotations

import os
import random
import zlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rewind_ls.core.store.delta import apply_delta, make_delta


def big_text(lines: int = 25_000) -> bytes:
    rnd = random.Random(42)
    words = [b"alpha", b"beta", b"gamma", b"delta", b"return", b"self", b"value", b"=", b"("]
    out = []
    for i in range(lines):
        out.append(b"    " * rnd.randrange(4) + b" ".join(rnd.choices(words, k=6)) + b" %d\n" % i)
        if i % 7 == 0:
            out.append(b"\n")
        if i % 11 == 0:
            out.append(b"    }\n")
    return b"".join(out)


def roundtrip(base: bytes, target: bytes) -> bytes:
    delta = make_delta(base, target)
    assert apply_delta(base, delta) == target
    return delta


# --- examples ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("base", "target"),
    [
        (b"", b""),
        (b"", b"hello"),
        (b"hello", b""),
        (b"same", b"same"),
        (b"abc", b"abd"),
        (b"\x00\x01\x02" * 100, b"\x00\x01\x02" * 101),
        (b"line\r\n" * 50, b"line\r\n" * 25 + b"new\r\n" + b"line\r\n" * 25),
        (b"a\nb\nc\n" * 30, b"c\nb\na\n" * 30),
    ],
)
def test_examples_roundtrip(base: bytes, target: bytes) -> None:
    roundtrip(base, target)


def test_identical_is_tiny() -> None:
    data = big_text()
    assert len(roundtrip(data, data)) < 20


def test_one_line_change_in_1mb_is_small() -> None:
    base = big_text()
    assert len(base) > 1_000_000
    mid = base.index(b"\n", len(base) // 2) + 1
    target = base[:mid] + b"    a completely new line of code\n" + base[mid + 40 :]
    delta = make_delta(base, target)
    assert apply_delta(base, delta) == target
    assert len(delta) < 200, len(delta)


def test_scattered_line_changes_give_small_delta() -> None:
    base = big_text()
    lines = base.splitlines(keepends=True)
    rnd = random.Random(7)
    for _ in range(200):
        i = rnd.randrange(len(lines))
        op = rnd.randrange(3)
        if op == 0:
            lines[i] = b"changed line %d\n" % i
        elif op == 1:
            lines.insert(i, b"inserted line %d here\n" % i)
        else:
            del lines[i]
    target = b"".join(lines)
    delta = make_delta(base, target)
    assert apply_delta(base, delta) == target
    assert len(delta) < 8_000, len(delta)


def test_moved_block_is_copied() -> None:
    base = big_text(2000)
    cut = base.index(b"\n", 30_000) + 1
    cut2 = base.index(b"\n", 60_000) + 1
    target = base[cut:cut2] + base[:cut] + base[cut2:]
    assert len(roundtrip(base, target)) < 100


def test_mid_line_edit_extends_backwards() -> None:
    base = b"".join(b"this is a rather long line number %05d of text\n" % i for i in range(500))
    target = base.replace(b"number 00100 of", b"number 00100 0f").replace(
        b"number 00400 of", b"NUMBER 00400 of"
    )
    assert len(roundtrip(base, target)) < 60


def test_completely_different_costs_about_target_size() -> None:
    base = os.urandom(100_000)
    target = os.urandom(100_000)
    delta = roundtrip(base, target)
    assert len(target) <= len(delta) <= len(target) + 32


def test_binary_data_with_edits() -> None:
    base = bytes(random.Random(3).randbytes(300_000))
    target = base[:1000] + b"XYZ" + base[1000:250_000] + base[250_010:]
    delta = roundtrip(base, target)
    assert len(delta) < len(target)


def test_text_vs_zlib_on_unrelated_text() -> None:
    base = big_text(2000)
    target = b"".join(b"completely unrelated %d\n" % i for i in range(2000))
    delta = roundtrip(base, target)
    assert len(delta) <= len(target) + 32
    assert len(zlib.compress(delta)) < len(delta)  # still compressible: inserts are raw


# --- corruption -------------------------------------------------------------------


def test_wrong_base_rejected() -> None:
    base = b"hello world, hello world, hello world\n" * 10
    target = base + b"tail\n"
    delta = make_delta(base, target)
    with pytest.raises(ValueError, match="corrupt delta: made for a"):
        apply_delta(base + b"x", delta)
    same_length = base.replace(b"h", b"j")
    with pytest.raises(ValueError, match="corrupt delta: checksum"):
        apply_delta(same_length, delta)


@pytest.mark.parametrize(
    "delta",
    [
        b"",
        b"\x00",
        b"\xd1",
        b"\xd1\x00",
        b"\xd1\x00\x00\x00\x00\x00",
        b"\xd1\x00\x05" + zlib.crc32(b"hello").to_bytes(4, "little") + b"\x0ahel",
        b"\xd1\x00\x00\x00\x00\x00\x00\x03\x00",
        b"\xd1" + b"\xff" * 20,
        b"\xd1\x00\x01\x00\x00\x00\x00\x00",
    ],
)
def test_malformed_deltas(delta: bytes) -> None:
    with pytest.raises(ValueError, match=r"^corrupt delta: "):
        apply_delta(b"", delta)


def test_copy_outside_base() -> None:
    base = b"0123456789abcdef"
    good = make_delta(base, base)
    # Header is magic, base_len, target_len, crc; then one copy op of 16 bytes at +0.
    assert good[7:] == b"\x21\x00"
    with pytest.raises(ValueError, match="outside the base"):
        apply_delta(base, good[:7] + b"\x21\x02")
    with pytest.raises(ValueError, match="outside the base"):
        apply_delta(base, good[:7] + b"\x21\x01")


# --- properties -------------------------------------------------------------------


@given(st.binary(max_size=2000), st.binary(max_size=2000))
def test_prop_roundtrip_arbitrary(base: bytes, target: bytes) -> None:
    roundtrip(base, target)


@st.composite
def related(draw: st.DrawFn) -> tuple[bytes, bytes]:
    line = st.sampled_from([b"x = 1\n", b"}\n", b"\n", b"return value\n", b"def f(a, b):\n"])
    chunk = st.one_of(line, st.binary(max_size=30))
    base = b"".join(draw(st.lists(chunk, max_size=60)))
    target = bytearray(base)
    for _ in range(draw(st.integers(0, 6))):
        pos = draw(st.integers(0, len(target)))
        cut = draw(st.integers(0, 20))
        target[pos : pos + cut] = draw(chunk)
    return base, bytes(target)


@given(related())
@settings(max_examples=300)
def test_prop_roundtrip_related(case: tuple[bytes, bytes]) -> None:
    base, target = case
    delta = roundtrip(base, target)
    assert len(delta) <= len(target) + 16 + 4 * (len(target) // 12 + 1)


@given(related(), st.data())
@settings(max_examples=300)
def test_prop_corruption_detected(case: tuple[bytes, bytes], data: st.DataObject) -> None:
    base, target = case
    delta = bytearray(make_delta(base, target))
    kind = data.draw(st.sampled_from(["flip", "truncate", "insert", "delete"]))
    pos = data.draw(st.integers(0, len(delta) - 1))
    if kind == "flip":
        delta[pos] ^= data.draw(st.integers(1, 255))
    elif kind == "truncate":
        del delta[pos:]
    elif kind == "insert":
        delta[pos:pos] = data.draw(st.binary(min_size=1, max_size=4))
    else:
        del delta[pos]
    try:
        result = apply_delta(base, bytes(delta))
    except ValueError as exc:
        assert str(exc).startswith("corrupt delta: ")
    else:
        assert result == target  # e.g. a non-canonical but equivalent encoding


@given(st.binary(max_size=300), st.binary(max_size=300))
def test_prop_garbage_never_crashes(base: bytes, garbage: bytes) -> None:
    for delta in (garbage, b"\xd1" + garbage):
        try:
            apply_delta(base, delta)
        except ValueError as exc:
            assert str(exc).startswith("corrupt delta: ")
