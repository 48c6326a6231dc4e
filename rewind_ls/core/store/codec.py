"""How file contents are encoded in the store: the codecs and the pack format.

A content is stored in one of these forms (the `codec` column of `blobs`):

- RAW (0): as is (it did not compress).
- ZLIB (1): zlib, for a content stored on its own (an edit's after-state, a file over
  PACK_MEMBER_MAX). Compressed one file at a time, zstd is hardly smaller (~4% on source code), and
  zlib keeps the hook that stores an edit free of zstandard's import.
- DELTA (2): zlib of a `delta.make_delta` against the content named by `base`.
- ZSTD (3): one zstd frame: the codec of a pack's payload (read for blobs too).
- PACKED (4): a slice of a pack. A pack is one zstd frame holding many small contents back to back,
  so the compressor sees across files (a repository's files share names, imports and idioms: a
  10,000-file tree packs ~30% smaller than the same files compressed one by one, and smaller than
  `git gc`'s pack). A pack is cut at about PACK_TARGET bytes so reading one content decompresses at
  most a few MB (a few ms).

zstandard is imported on first use (a pack written or read), not by a hook that stores one edit.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterator, Sequence
from typing import Any

RAW = 0
ZLIB = 1
DELTA = 2
ZSTD = 3
PACKED = 4

# Contents up to this size go into packs (bigger ones compress well enough alone, and reading
# one must not decompress its neighbours).
PACK_MEMBER_MAX = 1 << 20
# A pack is closed once it holds this many bytes (before compression).
PACK_TARGET = 4 << 20
_LEVEL = 3
# The window: the whole pack (2**23 = 8 MB, a pack is cut at PACK_TARGET plus its last member),
# not level 3's 2 MB, so a content can refer to one anywhere earlier in its pack. Same CPU,
# packs ~4% smaller (the 100k-file bench tree: 0.286 -> 0.275 of the content); the reader needs
# no setting (zstd decodes windows up to 2**27 by default).
_WINDOW_LOG = 23

_zstd: Any = None


def _lib() -> Any:
    global _zstd
    if _zstd is None:
        import zstandard

        _zstd = zstandard
    return _zstd


def compress(data: bytes) -> tuple[int, bytes]:
    """(codec, payload) for a content stored on its own: zlib, or RAW when that is not smaller."""
    packed = zlib.compress(data, 6 if len(data) < 4 << 20 else 1)
    return (ZLIB, packed) if len(packed) < len(data) else (RAW, data)


def decompress(codec: int, payload: bytes) -> bytes:
    """The content of a RAW, ZLIB or ZSTD payload (ValueError or zlib.error when damaged)."""
    if codec == RAW:
        return bytes(payload)
    if codec == ZLIB:
        return zlib.decompress(payload)
    if codec == ZSTD:
        try:
            return bytes(_lib().ZstdDecompressor().decompress(payload))
        except _lib().ZstdError as exc:
            raise ValueError(f"zstd: {exc}") from exc
    raise ValueError(f"unknown codec {codec}")


def delta_payload(delta: bytes) -> bytes:
    return zlib.compress(delta, 6)


def delta_bytes(payload: bytes) -> bytes:
    return zlib.decompress(payload)


class Pack:
    """One pack being built: its members' (hash, offset, size) and the frame that holds them."""

    __slots__ = ("members", "payload", "size")

    def __init__(self, members: list[tuple[str, int, int]], payload: bytes, size: int) -> None:
        self.members = members
        self.payload = payload
        self.size = size


def build_packs(items: Sequence[tuple[str, bytes]]) -> Iterator[Pack]:
    """Group (hash, content) into packs of about PACK_TARGET bytes, in the given order (files of
    one folder sit together, and compress best together). Every content must be at most
    PACK_MEMBER_MAX bytes."""
    zstd = _lib()
    params = zstd.ZstdCompressionParameters.from_level(_LEVEL, window_log=_WINDOW_LOG)
    comp = zstd.ZstdCompressor(compression_params=params)
    members: list[tuple[str, int, int]] = []
    parts: list[bytes] = []
    offset = 0
    for h, data in items:
        members.append((h, offset, len(data)))
        parts.append(data)
        offset += len(data)
        if offset >= PACK_TARGET:
            yield Pack(members, comp.compress(b"".join(parts)), offset)
            members, parts, offset = [], [], 0
    if members:
        yield Pack(members, comp.compress(b"".join(parts)), offset)


def unpack(payload: bytes, size: int) -> bytes:
    """A pack's whole content (ValueError when damaged or not `size` bytes long)."""
    try:
        data = _lib().ZstdDecompressor().decompress(payload, max_output_size=size)
    except _lib().ZstdError as exc:
        raise ValueError(f"damaged pack: {exc}") from exc
    if len(data) != size:
        raise ValueError(f"damaged pack: {len(data)} bytes, expected {size}")
    return bytes(data)
