"""Binary delta compression between two versions of a file.

Format (all integers are unsigned LEB128 varints unless noted)::

    magic       1 byte  0xD1 (format version 1)
    base_len    varint  length of the base the delta was made against
    target_len  varint  length of the reconstructed target
    crc         4 bytes zlib.crc32(target), little endian
    ops...      until the end of the delta:
      varint h = length << 1 | kind, length >= 1
      kind 0 (insert): ``length`` literal bytes follow
      kind 1 (copy):   zigzag varint = base offset - end of the previous copy
                       (0 for the first), then ``length`` bytes are copied from base

Copy offsets are relative to the previous copy, so the common "same file, a few lines
edited" case encodes each copy in two or three bytes. ``apply_delta`` validates every
field and the checksum, so a damaged delta raises ``ValueError`` instead of returning
wrong bytes.

The encoder strips the common byte prefix and suffix with galloping slice comparisons
(C-speed memcmp), then matches the middle line by line against an index of the base's
lines, extending each hit forwards and backwards byte by byte. Binary data works too,
but only gains from the prefix/suffix and from any ``\\n`` bytes it happens to contain;
callers are expected to compare with plain zlib and keep the smaller.
"""

from __future__ import annotations

from itertools import accumulate, count
from operator import add
from zlib import crc32

from rewind_ls.core.text.gallop import common_run, common_run_before

__all__ = ["apply_delta", "make_delta"]

_MAGIC = 0xD1
# A copy op costs up to ~4 bytes plus splitting the surrounding insert, so shorter
# matches are not worth taking.
_MIN_COPY = 12
# Lines shorter than this are too common ("}", blank) to be useful as anchors.
_MIN_LINE = 3


def make_delta(base: bytes, target: bytes) -> bytes:
    """Encode ``target`` as a delta against ``base`` (see the module docstring)."""
    out = bytearray((_MAGIC,))
    _put_varint(out, len(base))
    _put_varint(out, len(target))
    out += crc32(target).to_bytes(4, "little")
    enc = _Encoder(out, target)

    limit = min(len(base), len(target))
    prefix = _common_prefix(base, 0, target, 0, limit)
    suffix = _common_suffix(base, len(base), target, len(target), limit - prefix)
    enc.copy(0, 0, prefix)
    tlo, thi = prefix, len(target) - suffix
    blo, bhi = prefix, len(base) - suffix
    if thi - tlo >= _MIN_COPY and bhi - blo >= _MIN_COPY:
        _match_middle(enc, base, blo, bhi, target, tlo, thi)
    enc.copy(len(base) - suffix, thi, suffix)
    enc.finish(len(target))
    return bytes(out)


def apply_delta(base: bytes, delta: bytes) -> bytes:
    """Rebuild the target from ``base`` and a delta made by :func:`make_delta`.

    Raises ``ValueError("corrupt delta: ...")`` on any malformed input, on a base of the
    wrong length, and when the result does not match the recorded checksum.
    """
    n = len(delta)
    if not n or delta[0] != _MAGIC:
        raise ValueError("corrupt delta: bad magic byte")
    base_len, pos = _get_varint(delta, 1)
    if base_len != len(base):
        raise ValueError(
            f"corrupt delta: made for a {base_len}-byte base, applied to {len(base)} bytes"
        )
    target_len, pos = _get_varint(delta, pos)
    if pos + 4 > n:
        raise ValueError("corrupt delta: truncated header")
    crc = int.from_bytes(delta[pos : pos + 4], "little")
    pos += 4
    src = memoryview(base)
    raw = memoryview(delta)
    out = bytearray()
    last = 0  # end of the previous copy in base
    while pos < n:
        head, pos = _get_varint(delta, pos)
        length = head >> 1
        if not length:
            raise ValueError(f"corrupt delta: empty op at byte {pos}")
        if len(out) + length > target_len:
            raise ValueError("corrupt delta: ops overflow the target length")
        if head & 1:
            zz, pos = _get_varint(delta, pos)
            off = last + ((zz >> 1) ^ -(zz & 1))
            if off < 0 or off + length > base_len:
                raise ValueError(f"corrupt delta: copy {off}+{length} outside the base")
            out += src[off : off + length]
            last = off + length
        else:
            if pos + length > n:
                raise ValueError("corrupt delta: truncated insert")
            out += raw[pos : pos + length]
            pos += length
    if len(out) != target_len:
        raise ValueError(f"corrupt delta: produced {len(out)} bytes, expected {target_len}")
    if crc32(out) != crc:
        raise ValueError("corrupt delta: checksum mismatch")
    return bytes(out)


class _Encoder:
    """Op writer that coalesces adjacent inserts and base-contiguous copies."""

    __slots__ = ("copy_len", "copy_off", "ins_start", "last", "out", "target")

    def __init__(self, out: bytearray, target: bytes) -> None:
        self.out = out
        self.target = target
        self.last = 0  # end of the previous emitted copy in base
        self.copy_off = 0
        self.copy_len = 0  # pending copy not yet written
        self.ins_start = 0  # target offset where the pending insert begins

    def copy(self, off: int, tpos: int, length: int) -> None:
        """Copy ``base[off:off+length]`` to target position ``tpos``; the target bytes
        between the previous op and ``tpos`` become an insert."""
        if length <= 0:
            return
        if tpos > self.ins_start:
            self._flush_copy()
            self._insert(self.ins_start, tpos)
        elif self.copy_len and self.copy_off + self.copy_len == off:
            self.copy_len += length
            self.ins_start = tpos + length
            return
        else:
            self._flush_copy()
        self.copy_off, self.copy_len = off, length
        self.ins_start = tpos + length

    def finish(self, end: int) -> None:
        if end > self.ins_start:
            self._flush_copy()
            self._insert(self.ins_start, end)
        self._flush_copy()

    def _flush_copy(self) -> None:
        if self.copy_len:
            _put_varint(self.out, self.copy_len << 1 | 1)
            rel = self.copy_off - self.last
            _put_varint(self.out, rel << 1 if rel >= 0 else (-rel << 1) - 1)
            self.last = self.copy_off + self.copy_len
            self.copy_len = 0

    def _insert(self, start: int, end: int) -> None:
        _put_varint(self.out, (end - start) << 1)
        self.out += self.target[start:end]


def _match_middle(
    enc: _Encoder, base: bytes, blo: int, bhi: int, target: bytes, tlo: int, thi: int
) -> None:
    """Emit ops for ``target[tlo:thi]`` using lines of ``base[blo:bhi]`` as anchors."""
    pieces = base[blo:bhi].split(b"\n")
    # Start offset of every piece, computed at C speed: blo + sum(previous lengths) + k.
    starts = map(add, accumulate(map(len, pieces), initial=blo), count())
    # Built back to front so the first occurrence of a repeated line wins.
    index = dict(zip(reversed(pieces), reversed(list(starts)[:-1]), strict=True))
    del pieces
    nbase = len(base)
    find = target.find
    t = tlo
    pending = tlo  # target bytes in [pending, t) are not covered by a copy yet
    shift = blo - tlo  # base offset minus target offset of the latest copy
    while t < thi:
        nl = find(b"\n", t, thi)
        end = thi if nl < 0 else nl
        cand = t + shift
        # Prefer continuing the previous copy's alignment: it keeps repeated lines
        # (blank, "}") in place and costs one slice comparison.
        if not (cand >= 0 and base[cand : cand + end - t + 1] == target[t : end + 1]):
            cand = index.get(target[t:end], -1) if end - t >= _MIN_LINE else -1
        if cand >= 0:
            fwd = _common_prefix(base, cand, target, t, min(nbase - cand, thi - t))
            back = _common_suffix(base, cand, target, t, min(cand, t - pending))
            if fwd + back >= _MIN_COPY:
                enc.copy(cand - back, t - back, fwd + back)
                t += fwd
                pending = t
                shift = cand - (t - fwd)
                continue
        t = end + 1


def _common_prefix(a: bytes, i: int, b: bytes, j: int, limit: int) -> int:
    """Length of the common run of ``a[i:]`` and ``b[j:]``, at most ``limit`` (bytes: gallop from 32)."""
    return common_run(a, i, b, j, limit, 32)


def _common_suffix(a: bytes, i: int, b: bytes, j: int, limit: int) -> int:
    """Length of the common run ending just before ``a[i]`` and ``b[j]``, at most ``limit``."""
    return common_run_before(a, i, b, j, limit, 32)


def _put_varint(out: bytearray, value: int) -> None:
    while value >= 0x80:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)


def _get_varint(data: bytes, pos: int) -> tuple[int, int]:
    """Decode a varint at ``pos``; returns ``(value, next position)``."""
    value = shift = 0
    n = len(data)
    while True:
        if pos >= n:
            raise ValueError("corrupt delta: truncated varint")
        byte = data[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, pos
        shift += 7
        if shift > 63:
            raise ValueError(f"corrupt delta: varint too long at byte {pos}")
