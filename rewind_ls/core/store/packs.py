"""Packs: many small contents in one zstd frame (`codec.PACKED`; the format is in `codec`). Written
in the caller's transaction together with their members' rows; read through a cache of the last
packs decompressed, since a restore reads many neighbours from one pack."""

from __future__ import annotations

import sqlite3

from rewind_ls.core.errors import CorruptBlob
from rewind_ls.core.store.codec import PACKED, ZSTD, Pack, build_packs, unpack

# Bytes of decompressed packs a store keeps.
PACK_CACHE = 32 << 20


class Packs:
    """The `packs` table of one store, and the member rows of `blobs` that point into it. Writes
    run inside the caller's transaction (`Blobs`'): a pack only needs the connection."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        # The last packs read, decompressed.
        self._cache: dict[int, bytes] = {}

    def member_bytes(self, h: str, pack: int | None, off: int | None, size: int) -> bytes:
        """The `size` stored bytes of member `h` at `off` in `pack` (not yet checked against
        its hash)."""
        if pack is None or off is None:
            raise CorruptBlob(h, "packed without a pack")
        data = self._cache.get(pack)
        if data is None:
            row = self.conn.execute(
                "SELECT codec, size, data FROM packs WHERE id = ?", (pack,)
            ).fetchone()
            if row is None:
                raise CorruptBlob(h, f"its pack {pack} is missing from the store")
            try:
                data = unpack(row[2], row[1])
            except ValueError as exc:
                raise CorruptBlob(h, f"pack {pack}: {exc}") from exc
            # Packs are never rewritten under the same id (AUTOINCREMENT): a cached one stays true.
            while self._cache and sum(map(len, self._cache.values())) + len(data) > PACK_CACHE:
                self._cache.pop(next(iter(self._cache)))
            self._cache[pack] = data
        if off + size > len(data):
            raise CorruptBlob(h, f"outside its pack {pack}")
        return data[off : off + size]

    def write(self, items: list[tuple[str, bytes]]) -> None:
        """Packs of `items` (hash, content) and their members' rows (call inside a transaction:
        a process killed midway leaves neither)."""
        if not items:
            return  # zstandard stays unimported (the hook that records a file or two)
        for pack in build_packs(items):
            self.insert(pack, pack.members)

    def insert(self, pack: Pack, members: list[tuple[str, int, int]]) -> None:
        """A pack already built (`codec.build_packs`) and the rows of `members`, some or all of
        its (hash, offset, size) (call inside a transaction, as `write`)."""
        row = self.conn.execute(
            "INSERT INTO packs(codec, size, data) VALUES (?, ?, ?) RETURNING id",
            (ZSTD, pack.size, pack.payload),
        ).fetchone()
        self.conn.executemany(
            "INSERT INTO blobs(hash, size, codec, base, data, pack, off)"
            f" VALUES (?, ?, {PACKED}, NULL, x'', {int(row[0])}, ?)",
            [(h, size, off) for h, off, size in members],
        )

    def members(self, pack_id: int) -> list[str]:
        """The hashes a pack holds, in their order in it."""
        rows = self.conn.execute(
            "SELECT hash FROM blobs WHERE pack = ? ORDER BY off", (pack_id,)
        ).fetchall()
        return [r[0] for r in rows]

    def delete(self, pack_id: int) -> None:
        """Delete a pack and its members' rows (call inside a transaction)."""
        self.conn.execute("DELETE FROM blobs WHERE pack = ?", (pack_id,))
        self.conn.execute("DELETE FROM packs WHERE id = ?", (pack_id,))
        self._cache.pop(pack_id, None)

    def count(self) -> int:
        return int(self.conn.execute("SELECT count(*) FROM packs").fetchone()[0])
