"""The last known version of each path (the `known` table): what a scan compares the disk with
(size, mtime, inode: a cheap re-check), and the compare-and-swap a recorder's write goes through."""

from __future__ import annotations

import os

from rewind_ls.core.model import ABSENT, Version
from rewind_ls.core.store.db import Database
from rewind_ls.core.store.rows import version_of


class KnownPaths:
    """The `known` table of one store: one row per path ever seen, with the seq it was written at."""

    def __init__(self, db: Database) -> None:
        self.db = db
        self.conn = db.conn

    def known(self, path: str) -> tuple[Version, int | None, int | None] | None:
        """(version, mtime_ns, ino) last seen for `path`, or None when never seen."""
        row = self.conn.execute(
            "SELECT kind, hash, mode, size, mtime_ns, ino FROM known WHERE path = ?", (path,)
        ).fetchone()
        if row is None:
            return None
        return version_of(row[0], row[1], row[2], row[3]), row[4], row[5]

    def known_many(self, paths: list[str]) -> dict[str, tuple[Version, int | None, int | None]]:
        """`known` of many paths in a few queries; a path never seen is left out."""
        out: dict[str, tuple[Version, int | None, int | None]] = {}
        for i in range(0, len(paths), 500):
            part = paths[i : i + 500]
            rows = self.conn.execute(
                "SELECT path, kind, hash, mode, size, mtime_ns, ino FROM known"
                f" WHERE path IN ({','.join('?' * len(part))})",
                part,
            )
            for r in rows:
                out[r[0]] = (version_of(r[1], r[2], r[3], r[4]), r[5], r[6])
        return out

    def set_known(self, path: str, version: Version, st: os.stat_result | None = None) -> None:
        with self.db.transaction():
            self.conn.execute(
                "INSERT OR REPLACE INTO known(path, kind, hash, mode, size, mtime_ns, ino, seq)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    path,
                    version.kind,
                    version.hash,
                    version.mode,
                    version.size,
                    st.st_mtime_ns if st else None,
                    st.st_ino if st else None,
                    self.db.next_seq(),
                ),
            )

    def known_paths(self) -> list[tuple[str, Version, int | None, int | None]]:
        rows = self.conn.execute(
            "SELECT path, kind, hash, mode, size, mtime_ns, ino FROM known ORDER BY path"
        ).fetchall()
        return [(r[0], version_of(r[1], r[2], r[3], r[4]), r[5], r[6]) for r in rows]

    def known_file_signatures(
        self,
    ) -> dict[str, tuple[str, int | None, int | None, int | None, int | None]]:
        """path -> (path, size, mtime_ns, ino, mode) of every path known to hold something.
        Whole rows as values, unsliced: building 30,000 tuples is a measurable part of a scan."""
        return {
            r[0]: r
            for r in self.conn.execute(
                "SELECT path, size, mtime_ns, ino, mode FROM known WHERE kind != ?", (ABSENT,)
            ).fetchall()
        }

    def has_known_under(self, folder: str) -> bool:
        """Whether any path below `folder` (no trailing slash) was ever seen."""
        low = folder + "/"
        high = folder + "0"  # "0" sorts right after "/"
        row = self.conn.execute(
            "SELECT 1 FROM known WHERE path >= ? AND path < ? LIMIT 1", (low, high)
        ).fetchone()
        return row is not None

    def known_absent_paths(self) -> set[str]:
        return {r[0] for r in self.conn.execute("SELECT path FROM known WHERE kind = ?", (ABSENT,))}

    def known_versions(self, paths: list[str]) -> dict[str, tuple[Version, int]]:
        """path -> (version last seen, its row's seq) for those of `paths` that are known."""
        out: dict[str, tuple[Version, int]] = {}
        for i in range(0, len(paths), 500):
            chunk = paths[i : i + 500]
            marks = ",".join("?" * len(chunk))
            for row in self.conn.execute(
                f"SELECT path, kind, hash, mode, size, seq FROM known WHERE path IN ({marks})",
                chunk,
            ):
                out[row[0]] = (version_of(row[1], row[2], row[3], row[4]), row[5])
        return out

    def known_signatures_for(
        self, paths: list[str], prefixes: list[str], since_seq: int
    ) -> tuple[dict[str, tuple[str, int | None, int | None, int | None, int | None]], set[str]]:
        """`known_file_signatures` and `known_absent_paths`, restricted to `paths`, the paths
        under the folder `prefixes` ("a/b/") and the rows written after `since_seq` (a watched
        scan: only these can have changed)."""
        sigs: dict[str, tuple[str, int | None, int | None, int | None, int | None]] = {}
        absent: set[str] = set()
        cols = "SELECT path, size, mtime_ns, ino, mode, kind FROM known WHERE "
        queries: list[tuple[str, list[object]]] = [(cols + "seq > ?", [since_seq])]
        for i in range(0, len(paths), 500):
            chunk = paths[i : i + 500]
            queries.append((cols + f"path IN ({','.join('?' * len(chunk))})", list(chunk)))
        for prefix in prefixes:
            # "a/b/" up to "a/b0": every path below the folder, through the primary key's index.
            queries.append((cols + "path >= ? AND path < ?", [prefix, prefix[:-1] + "0"]))
        for sql, args in queries:
            for r in self.conn.execute(sql, args):
                if r[5] == ABSENT:
                    absent.add(r[0])
                else:
                    sigs[r[0]] = r[:5]
        return sigs, absent

    def known_seq(self, path: str) -> int | None:
        """The seq of `path`'s `known` row (None: not known): it changes whenever the row does."""
        row = self.conn.execute("SELECT seq FROM known WHERE path = ?", (path,)).fetchone()
        return None if row is None else int(row[0])

    def set_known_many(
        self,
        rows: list[tuple[str, Version, int | None, int | None]],
        replace: bool,
    ) -> None:
        """(path, version, mtime_ns, ino) rows (the shape `known_paths` reads) under one new seq;
        `replace`: an existing row is replaced, else it is kept."""
        verb = "INSERT OR REPLACE" if replace else "INSERT OR IGNORE"
        with self.db.transaction():
            seq = self.db.next_seq()
            self.conn.executemany(
                f"{verb} INTO known(path, kind, hash, mode, size, mtime_ns, ino, seq)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    (path, v.kind, v.hash, v.mode, v.size, mtime_ns, ino, seq)
                    for path, v, mtime_ns, ino in rows
                ],
            )
