"""A workspace folder moved or renamed: its store found by the files it last saw (same inode, size
and mtime), and given to the new folder, when the store is opened or by `doctor --moved-from`."""

from __future__ import annotations

import os
import sqlite3
import time

from rewind_ls.core.errors import StoreError
from rewind_ls.core.fs import config
from rewind_ls.core.store.db import DB_NAME, Database, store_dir_for


def locate(root: str, home: str | None = None, create: bool = True) -> str:
    """The store folder of the workspace `root` (a real path). When it has no store yet, the store
    of the folder it was moved from follows it; with `create` False and still none, StoreError
    says how to record one (and names the folders with history that no longer exist)."""
    directory = store_dir_for(root, home)
    db = os.path.join(directory, DB_NAME)
    if not os.path.exists(db):
        moved = find_moved_store(root, home)
        if moved is not None:
            # The same folder under a new name (its files keep their inodes): its history
            # follows it instead of starting over.
            try:
                reattach(moved, root, home)
            except (OSError, StoreError):
                pass  # another process re-attached it first, or it cannot be: start anew
        if not os.path.exists(db) and not create:
            hint = "; to record an agent's turns: rewind-ls install claude-code"
            orphans = orphan_roots(home)
            if orphans:
                hint += (
                    "; if this workspace was moved or renamed, re-attach its history with "
                    "`rewind-ls doctor --moved-from OLD` (folders with history that no longer "
                    f"exist: {', '.join(orphans[:5])})"
                )
            raise StoreError(f"{root}: no checkpoints recorded for this workspace yet ({db}){hint}")
    return directory


def store_root(directory: str) -> str | None:
    """The workspace folder a store was recorded for (its `root` meta), read-only; None if unreadable."""
    db = os.path.join(directory, DB_NAME)
    try:
        conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5)
    except sqlite3.Error:
        return None
    try:
        row = conn.execute("SELECT value FROM meta WHERE key = 'root'").fetchone()
        return None if row is None else str(row[0])
    except sqlite3.Error:
        return None
    finally:
        conn.close()


def orphan_roots(home: str | None = None) -> list[str]:
    """Workspace folders that have a store but no longer exist (moved, renamed or deleted)."""
    base = os.path.join(home or config.home_dir(), "workspaces")
    try:
        names = sorted(os.listdir(base))
    except OSError:
        return []
    found = []
    for name in names:
        recorded = store_root(os.path.join(base, name))
        if recorded and not os.path.isdir(recorded):
            found.append(recorded)
    return found


def find_moved_store(root: str, home: str | None = None, sample: int = 40) -> str | None:
    """The former folder of `root` when it was moved or renamed: a store whose folder no longer
    exists and whose last known files are here with the same inode, size and mtime (a move within
    a filesystem keeps all three). Only looked for when `root` has no store yet."""
    base = os.path.join(home or config.home_dir(), "workspaces")
    if not os.path.isdir(base):
        return None
    matches = []
    for old in orphan_roots(home):
        db = os.path.join(store_dir_for(old, home), DB_NAME)
        try:
            conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5)
            try:
                rows = conn.execute(
                    "SELECT path, size, ino, mtime_ns FROM known WHERE kind = 'file'"
                    " AND ino IS NOT NULL"
                    " ORDER BY seq DESC LIMIT ?",
                    (sample,),
                ).fetchall()
            finally:
                conn.close()
        except sqlite3.Error:
            continue
        if len(rows) < 3:
            continue  # too little to tell one folder from another
        same = 0
        for path, size, ino, mtime_ns in rows:
            try:
                st = os.lstat(os.path.join(root, *path.split("/")))
            except OSError:
                continue
            # Inode, size and mtime: a file made anew (even reusing a freed inode) differs.
            same += st.st_ino == ino and st.st_size == size and st.st_mtime_ns == mtime_ns
        if same * 10 >= len(rows) * 9:
            matches.append(old)
    return matches[0] if len(matches) == 1 else None


def _open_existing(root: str, home: str | None) -> Database:
    """The database of `root`, which has one (what `Store.open(root, create=False)` opens)."""
    config.check_home(home or config.home_dir())
    return Database.connect(root, store_dir_for(root, home), home)


def reattach(old_root: str, new_root: str, home: str | None = None) -> str:
    """Give the store of a moved or renamed workspace (`old_root`) to its new folder. A store the
    new folder already has is kept aside when it holds no agent turn, refused otherwise. Returns
    the store folder now in use."""
    old_root = os.path.realpath(old_root)
    new_root = os.path.realpath(new_root)
    old_dir, new_dir = store_dir_for(old_root, home), store_dir_for(new_root, home)
    if old_dir == new_dir:
        raise StoreError(f"{old_root}: is this workspace itself; nothing to re-attach")
    if not os.path.exists(os.path.join(old_dir, DB_NAME)):
        raise StoreError(f"{old_root}: no checkpoints were recorded for that folder ({old_dir})")
    if os.path.isdir(old_root):
        raise StoreError(
            f"{old_root}: still exists; its history stays with it (move the folder first)"
        )
    if os.path.exists(os.path.join(new_dir, DB_NAME)):
        with _open_existing(new_root, home) as existing:
            agent_turns = existing.conn.execute(
                "SELECT count(*) FROM turns t JOIN sessions s ON s.id = t.session_id"
                " WHERE s.kind = 'agent'"
            ).fetchone()[0]
        if agent_turns:
            raise StoreError(
                f"{new_root}: already has its own history ({agent_turns} agent turn(s), "
                f"{new_dir}); not merged with {old_root}'s"
            )
        os.replace(new_dir, f"{new_dir}.replaced-{time.strftime('%Y%m%d-%H%M%S')}")
    os.replace(old_dir, new_dir)
    with _open_existing(new_root, home) as database:
        database.set_meta("root", new_root)
        database.set_meta("moved_from", old_root)
    return new_dir
