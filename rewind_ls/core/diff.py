"""Unified diffs of what a turn changed (before -> after)."""

from __future__ import annotations

import difflib
import sqlite3
from typing import Any

from rewind_ls.core.merge import is_binary
from rewind_ls.core.store import ABSENT, FILE, Store
from rewind_ls.core.timeline import change_kind


def _text(store: Store, kind: str | None, h: str | None) -> tuple[bytes | None, str | None]:
    if kind in (None, ABSENT):
        return b"", None
    if kind != FILE or h is None:
        return None, f"({kind}: content not kept)"
    return store.get_blob(h), None


def turn_diff(store: Store, turn: sqlite3.Row, path: str | None = None) -> list[dict[str, Any]]:
    out = []
    for c in store.changes(turn["id"]):
        if path is not None and c["path"] != path:
            continue
        kind = change_kind(c)
        if kind is None:
            continue
        old, old_note = _text(store, c["before_kind"], c["before_hash"])
        new, new_note = _text(store, c["after_kind"], c["after_hash"])
        name = c["path"]
        a = "/dev/null" if c["before_kind"] == ABSENT else f"a/{name}"
        b = "/dev/null" if c["after_kind"] == ABSENT else f"b/{name}"
        if old is None or new is None or is_binary(old) or is_binary(new):
            note = old_note or new_note or "binary content"
            body = f"--- {a}\n+++ {b}\n{note} differs\n"
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
        out.append({"path": name, "change": kind, "diff": f"diff rewind-ls {name}\n" + body})
    return out
