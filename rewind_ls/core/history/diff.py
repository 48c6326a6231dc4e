"""Unified diffs: what a turn changed (before -> after), and two checkpoints (or a checkpoint and
the files now) compared."""

from __future__ import annotations

import difflib
from typing import Any

from rewind_ls.core.errors import CorruptBlob
from rewind_ls.core.history.versions import changed_paths_since, version_at
from rewind_ls.core.model import ABSENT, ABSENT_VERSION, FILE, Turn, Version
from rewind_ls.core.restore.plan import Reader
from rewind_ls.core.store import Store
from rewind_ls.core.text.merge import is_binary


def _text(store: Store, version: Version) -> tuple[bytes | None, str | None]:
    kind, h = version.kind, version.hash
    if kind == ABSENT:
        return b"", None
    if kind != FILE or h is None:
        return None, f"({kind}: content not kept)"
    try:
        return store.get_blob(h), None
    except CorruptBlob as exc:
        return None, f"({exc})"


def _unified(
    name: str,
    old: bytes | None,
    new: bytes | None,
    old_absent: bool,
    new_absent: bool,
    note: str | None,
    labels: tuple[str, str] = ("a", "b"),
) -> str:
    a = "/dev/null" if old_absent else f"{labels[0]}/{name}"
    b = "/dev/null" if new_absent else f"{labels[1]}/{name}"
    if old is None or new is None or is_binary(old) or is_binary(new):
        body = f"--- {a}\n+++ {b}\n{note or 'binary content'} differs\n"
    else:
        lines = difflib.unified_diff(
            old.decode("utf-8", "replace").splitlines(keepends=True),
            new.decode("utf-8", "replace").splitlines(keepends=True),
            a,
            b,
        )
        body = "".join(
            line if line.endswith("\n") else line + "\n\\ No newline at end of file\n"
            for line in lines
        )
    return f"diff rewind-ls {name}\n" + body


def turn_diff(store: Store, turn: Turn, path: str | None = None) -> list[dict[str, Any]]:
    out = []
    for c in store.changes(turn.id):
        if path is not None and c.path != path:
            continue
        kind = c.kind
        if kind is None or c.after is None:
            continue
        old, old_note = _text(store, c.before)
        new, new_note = _text(store, c.after)
        body = _unified(
            c.path,
            old,
            new,
            c.before.kind == ABSENT,
            c.after.kind == ABSENT,
            old_note or new_note,
        )
        out.append({"path": c.path, "change": kind, "diff": body})
    return out


def checkpoint_diff(
    store: Store,
    turn_a: Turn,
    turn_b: Turn | None,
    reader: Reader,
    path: str | None = None,
) -> list[dict[str, Any]]:
    """The workspace as recorded at the start of `turn_a` against the start of `turn_b` (None: the
    files now, read through `reader`). Every path changed after the earlier checkpoint, in any
    session, is compared; paths that hold the same content at both ends are left out."""
    first = min(turn_a.seq, turn_b.seq if turn_b is not None else turn_a.seq)
    paths = changed_paths_since(store, first)
    if path is not None:
        paths = [p for p in paths if p == path]
    out = []
    for p in paths:
        old_v = version_at(store, p, turn_a.seq) or ABSENT_VERSION
        if turn_b is None:
            new_v, new_data = reader(p)
            new_note = None
        else:
            new_v = version_at(store, p, turn_b.seq) or ABSENT_VERSION
            new_data, new_note = _text(store, new_v)
        if old_v.same_content(new_v):
            continue
        old_data, old_note = _text(store, old_v)
        if new_v.kind == ABSENT:
            new_data = b""
        old_absent, new_absent = old_v.kind == ABSENT, new_v.kind == ABSENT
        change = "created" if old_absent else "deleted" if new_absent else "modified"
        labels = ("a", "now" if turn_b is None else "b")
        body = _unified(p, old_data, new_data, old_absent, new_absent, old_note or new_note, labels)
        out.append({"path": p, "change": change, "diff": body})
    return out
