"""File contents, addressed by their SHA-256 and stored once: on their own (compressed, see
`codec`), in packs (`packs`), or as a delta against a newer version of the same file, so the newest
content is always one decompression away. Every read is checked against its hash. Also what
retention and doctor ask about contents: which are referenced, what they cost."""

from __future__ import annotations

import hashlib
import zlib
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from rewind_ls.core.errors import CorruptBlob
from rewind_ls.core.store.codec import (
    DELTA,
    PACK_MEMBER_MAX,
    PACKED,
    RAW,
    Pack,
    compress,
    decompress,
    delta_bytes,
    delta_payload,
)
from rewind_ls.core.store.db import Database
from rewind_ls.core.store.packs import Packs


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class Blobs:
    """The `blobs` table of one store (a pack's members through `Packs`)."""

    def __init__(self, db: Database) -> None:
        self.db = db
        self.conn = db.conn
        self.packs = Packs(db.conn)

    def has_blob(self, h: str) -> bool:
        return self.conn.execute("SELECT 1 FROM blobs WHERE hash = ?", (h,)).fetchone() is not None

    def put_blob(self, data: bytes, previous: str | None = None, h: str | None = None) -> str:
        """Store `data` once; return its hash. `previous` is the hash of an older version of the same
        file: if it is stored whole, it is re-encoded as a delta against `data` when that is smaller."""
        h = h or digest(data)
        with self.db.transaction():
            if self.has_blob(h):
                return h
            kind, payload = compress(data)
            self.conn.execute(
                "INSERT INTO blobs(hash, size, codec, base, data) VALUES (?, ?, ?, NULL, ?)",
                (h, len(data), kind, payload),
            )
            if previous and previous != h:
                self._rebase_as_delta(previous, h, data)
        return h

    def _rebase_as_delta(self, old: str, new: str, new_data: bytes) -> None:
        row = self.conn.execute("SELECT codec, data FROM blobs WHERE hash = ?", (old,)).fetchone()
        # Only whole blobs stored on their own become deltas, and only against a whole blob: the
        # base graph stays acyclic. A packed blob stays: its bytes are shared with its pack.
        if row is None or row[0] in (DELTA, PACKED):
            return
        try:
            from rewind_ls.core.store.delta import make_delta
        except ImportError:  # pragma: no cover - delta support is optional at runtime
            return
        old_data = self._decode(old, row[0], row[1], None)
        delta = delta_payload(make_delta(new_data, old_data))
        if len(delta) * 2 < len(row[1]):
            # Delete and re-insert rather than update in place: the row moves to the end of the
            # table among other small rows, and the leaf page that held the whole blob's inline
            # part is freed for reuse. Updated in place, every version of a big file left a page
            # nearly empty (200 one-line edits of a 1 MB file: a 1.7 MB store, 0.6 MB this way).
            self.conn.execute(
                "INSERT OR REPLACE INTO blobs(hash, size, codec, base, data)"
                " SELECT hash, size, ?, ?, ? FROM blobs WHERE hash = ?",
                (DELTA, new, delta, old),
            )

    def delta_encode_older(self, old: str, new: str, new_data: bytes) -> None:
        """`put_blob(previous=old)` for blobs stored in bulk: keep the stored `old` as a delta
        against `new` (content `new_data`) when that is smaller."""
        if old != new:
            self._rebase_as_delta(old, new, new_data)

    def get_blob(self, h: str, known: Mapping[str, bytes] | None = None) -> bytes:
        """`h`'s content. `known`: contents already in hand (hash -> bytes); a chain of deltas
        stops at the first of them instead of decoding back from the whole version (reading a
        file's versions newest first costs one delta each, not the whole chain each)."""
        # Iterative, not recursive: each older version of a file is a delta against the next newer
        # one, so a much-edited file's chain is as deep as its history (recursing, ~500 versions
        # hit Python's recursion limit and the oldest ones could not be restored).
        if known and h in known:
            return known[h]
        chain: list[tuple[str, int, bytes, str | None]] = []
        cur = h
        data: bytes | None = None
        while True:
            row = self.conn.execute(
                "SELECT codec, base, data, pack, off, size FROM blobs WHERE hash = ?", (cur,)
            ).fetchone()
            if row is None:
                raise CorruptBlob(cur, "missing from the store")
            if row[0] == PACKED:
                chain.append((cur, RAW, self.packs.member_bytes(cur, row[3], row[4], row[5]), None))
                break
            chain.append((cur, row[0], row[2], row[1]))
            if row[0] != DELTA or row[1] is None:
                break
            if len(chain) > 1_000_000:
                raise CorruptBlob(h, "its chain of deltas never reaches a whole version")
            cur = row[1]
            if known and cur in known:
                data = known[cur]
                break
        for key, kind, payload, base in reversed(chain):
            data = self._decode(key, kind, payload, base, base_data=data)
        assert data is not None
        return data

    def get_blobs(self, hashes: Iterable[str]) -> dict[str, bytes]:
        """hash -> content for each of `hashes`, members of one pack read together (each pack
        decompressed once). Raises CorruptBlob like `get_blob`."""
        wanted = list(dict.fromkeys(hashes))
        where: dict[str, tuple[int, int]] = {}
        for i in range(0, len(wanted), 500):
            part = wanted[i : i + 500]
            rows = self.conn.execute(
                f"SELECT hash, pack, off FROM blobs WHERE codec = {PACKED} AND hash IN"
                f" ({', '.join('?' * len(part))})",
                part,
            ).fetchall()
            where.update((r[0], (r[1], r[2])) for r in rows)
        return {h: self.get_blob(h) for h in sorted(wanted, key=lambda x: where.get(x, (-1, 0)))}

    def _decode(
        self,
        h: str,
        kind: int,
        payload: bytes,
        base: str | None,
        depth: int = 0,
        base_data: bytes | None = None,
    ) -> bytes:
        try:
            if kind == DELTA:
                if base is None or depth > 10_000:
                    raise CorruptBlob(h, "delta without a usable base")
                from rewind_ls.core.store.delta import apply_delta

                source = base_data if base_data is not None else self.get_blob(base)
                data = apply_delta(source, delta_bytes(payload))
            else:
                data = decompress(kind, payload)
        except (zlib.error, ValueError) as exc:
            raise CorruptBlob(h, str(exc)) from exc
        if digest(data) != h:
            raise CorruptBlob(h, "content does not match its hash")
        return data

    # --- in bulk -------------------------------------------------------------------------------

    def insert_packed_blobs(self, blobs: list[tuple[str, int, int, bytes]]) -> None:
        """(hash, size, codec, payload) of whole blobs; one already stored stays. RAW payloads (the
        content itself) are encoded here: the small ones together in packs, in the given order."""
        with self.db.transaction():
            fresh = self.not_stored([b[0] for b in blobs])
            small: list[tuple[str, bytes]] = []
            rows: list[tuple[str, int, int, bytes]] = []
            for h, size, kind, payload in blobs:
                if h not in fresh:
                    continue
                fresh.discard(h)
                if kind != RAW:
                    rows.append((h, size, kind, payload))
                elif len(payload) <= PACK_MEMBER_MAX:
                    small.append((h, payload))
                else:
                    rows.append((h, size, *compress(payload)))
            if len(small) == 1:  # a pack of one is a blob on its own
                rows.append((small[0][0], len(small[0][1]), *compress(small[0][1])))
                small = []
            self.conn.executemany(
                "INSERT INTO blobs(hash, size, codec, base, data) VALUES (?, ?, ?, NULL, ?)", rows
            )
            self.packs.write(small)

    def insert_built_packs(self, packs: Sequence[Pack]) -> None:
        """Packs built before the transaction (`codec.build_packs`, in a reading thread, so the
        compression runs beside another batch's commit) and their members' rows. A member stored
        meanwhile (or twice among them) keeps its first row; its bytes here are never read, and
        a pack none of whose members is new is not written."""
        with self.db.transaction():
            fresh = self.not_stored([m[0] for p in packs for m in p.members])
            for pack in packs:
                members = []
                for m in pack.members:
                    if m[0] in fresh:
                        fresh.discard(m[0])
                        members.append(m)
                if members:
                    self.packs.insert(pack, members)

    def not_stored(self, hashes: list[str]) -> set[str]:
        fresh = set(hashes)
        for i in range(0, len(hashes), 500):
            part = hashes[i : i + 500]
            found = self.conn.execute(
                f"SELECT hash FROM blobs WHERE hash IN ({', '.join('?' * len(part))})", part
            )
            fresh.difference_update(r[0] for r in found)
        return fresh

    def blob_hashes(self) -> list[str]:
        """Every stored hash, members of one pack together (a check that reads them all
        decompresses each pack once)."""
        return [
            r[0] for r in self.conn.execute("SELECT hash FROM blobs ORDER BY pack, off").fetchall()
        ]

    def drop_blobs(self, hashes: list[str]) -> None:
        """Delete these blobs; a pack that held any of them is rewritten with its other members
        (or deleted when none is left), so their bytes are reclaimed now."""
        with self.db.transaction():
            touched: set[int] = set()
            for h in hashes:
                row = self.conn.execute("DELETE FROM blobs WHERE hash = ? RETURNING pack", (h,))
                pack = row.fetchone()
                if pack is not None and pack[0] is not None:
                    touched.add(int(pack[0]))
            for pack_id in sorted(touched):
                self._repack(pack_id)

    def _repack(self, pack_id: int) -> None:
        items = [(h, self.get_blob(h)) for h in self.packs.members(pack_id)]
        self.packs.delete(pack_id)
        if len(items) == 1:
            h, data = items[0]
            self.conn.execute(
                "INSERT INTO blobs(hash, size, codec, base, data) VALUES (?, ?, ?, NULL, ?)",
                (h, len(data), *compress(data)),
            )
        elif items:
            self.packs.write(items)

    # --- what retention and doctor ask ---------------------------------------------------------

    def referenced_blobs(self) -> set[str]:
        """The hashes a change (before or after), a known path or a restore point's saved disk
        content (under an unsaved buffer) names."""
        return {
            r[0]
            for r in self.conn.execute(
                "SELECT before_hash FROM changes WHERE before_hash IS NOT NULL"
                " UNION SELECT after_hash FROM changes WHERE after_hash IS NOT NULL"
                " UNION SELECT hash FROM known WHERE hash IS NOT NULL"
                # A restore point's disk contents under unsaved buffers (restore_point.SAVED_DISK).
                " UNION SELECT json_extract(j.value, '$[1]') FROM"
                " (SELECT info FROM turns WHERE session_id = 'rewind' AND json_valid(info)) t,"
                " json_each(t.info, '$.savedDisk') j WHERE json_extract(j.value, '$[1]') IS NOT NULL"
            )
        }

    def delta_bases(self) -> dict[str, str]:
        """hash -> the hash it is a delta against, for every delta blob."""
        return dict(
            self.conn.execute("SELECT hash, base FROM blobs WHERE base IS NOT NULL").fetchall()
        )

    def missing_file_contents(self) -> int:
        """How many file contents that changes refer to are not in the store."""
        row = self.conn.execute(
            "SELECT count(*) FROM (SELECT before_hash AS h FROM changes WHERE before_kind = 'file'"
            " UNION SELECT after_hash FROM changes WHERE after_kind = 'file') x"
            " WHERE h NOT IN (SELECT hash FROM blobs)"
        ).fetchone()
        return int(row[0])

    def sizes(self, hashes: list[str]) -> dict[str, int]:
        """hash -> the content's length in bytes, for those of `hashes` stored (a listing of a
        folder at a turn shows them; a change's version records no size)."""
        out: dict[str, int] = {}
        for i in range(0, len(hashes), 500):
            part = hashes[i : i + 500]
            rows = self.conn.execute(
                f"SELECT hash, size FROM blobs WHERE hash IN ({', '.join('?' * len(part))})", part
            )
            out.update((r[0], int(r[1])) for r in rows)
        return out

    def stored_bytes(self) -> int:
        """The size of every blob as stored (compressed, delta or in a pack)."""
        row = self.conn.execute(
            "SELECT (SELECT coalesce(sum(length(data)), 0) FROM blobs)"
            " + (SELECT coalesce(sum(length(data)), 0) FROM packs)"
        ).fetchone()
        return int(row[0])

    def stats(self) -> dict[str, Any]:
        """How many contents, their bytes, what they take stored, and how many turns hold them."""
        blobs, raw = self.conn.execute(
            "SELECT count(*), coalesce(sum(size), 0) FROM blobs"
        ).fetchone()
        stored = self.stored_bytes()
        turns = self.conn.execute("SELECT count(*) FROM turns").fetchone()[0]
        return {"blobs": blobs, "content_bytes": raw, "stored_bytes": stored, "turns": turns}
