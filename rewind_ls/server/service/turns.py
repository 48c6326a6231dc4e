"""Listing turns, the timeline document, a file's content at a turn, a turn's diff document."""

from __future__ import annotations

import os
from typing import Any

from rewind_ls.core.capture.baseline_spawn import progress
from rewind_ls.core.capture.recorder import read_current
from rewind_ls.core.errors import UnknownTurn
from rewind_ls.core.history.diff import turn_diff
from rewind_ls.core.history.timeline import TurnEntries, list_sessions, timeline_text
from rewind_ls.core.store import ABSENT, FILE
from rewind_ls.protocol.turns import listing_wire, turn_wire
from rewind_ls.server.edits import decode_text
from rewind_ls.server.service.base import TIMELINE_NAME, ServiceBase


def _write_private(path: str, text: str) -> None:
    """A document the server writes in the store's folder: owner-only, like the store (source code)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.fchmod(fd, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(text)


class TurnsWork(ServiceBase):
    # Turns already listed, in wire form: a refresh makes (and validates) only new or changed ones.
    _turn_entries: TurnEntries | None = None

    def list_turns(
        self,
        session_id: str | None,
        limit: int | None = None,
        before: str | None = None,
        turn_id: str | None = None,
    ) -> dict[str, Any]:
        """`rewind/listTurns`'s result, in wire form (camelCase, validated)."""
        if session_id is not None and self.store.session(session_id) is None:
            raise UnknownTurn(session_id, "no session with that id in this workspace")
        if self._turn_entries is None:
            self._turn_entries = TurnEntries(turn_wire)
        listing = list_sessions(self.store, session_id, limit, before, turn_id, self._turn_entries)
        first = progress(self.store.path)
        if first is not None:
            listing["baseline"] = {"done": first[0], "total": first[1]}
        return listing_wire(listing)

    def timeline(self, session_id: str | None, limit: int | None = None) -> dict[str, Any]:
        """The timeline text and the URI a client shows it under: a name inside the workspace that
        is never written to disk, so a client keeps it in this server's workspace (a file in the
        store folder made lsp-mode start a second server there)."""
        if session_id is not None and self.store.session(session_id) is None:
            raise UnknownTurn(session_id, "no session with that id in this workspace")
        text = timeline_text(self.store, session_id, limit)
        return {"uri": self.uri(TIMELINE_NAME), "text": text}

    def file_at(self, turn_ref: str, uri: str, side: str) -> dict[str, Any]:
        turn = self.turn(turn_ref)
        turn_id = turn.id
        rel = self.rel_of(uri)
        change = self.store.change(turn_id, rel)
        if change is None:
            # Not changed in this turn: its content at the turn's start is what the next change saw.
            history = [h for h in self.store.path_history(rel) if h.seq > turn.seq]
            if not history:
                version, data, _ = read_current(self.root, rel)
            else:
                version = history[0].before
                data = None
        else:
            version = change.before if side == "before" or change.after is None else change.after
            data = None
        if version.kind == ABSENT:
            return {"uri": uri, "exists": False, "text": None, "binary": False, "tooLarge": False}
        if version.kind != FILE or version.hash is None:
            return {"uri": uri, "exists": True, "text": None, "binary": False, "tooLarge": True}
        if data is None:
            data = self.store.get_blob(version.hash)
        text = decode_text(data)
        return {"uri": uri, "exists": True, "text": text, "binary": text is None, "tooLarge": False}

    def diff_document(self, turn_ref: str, uri: str | None) -> tuple[str, str]:
        turn = self.turn(turn_ref)
        turn_id = turn.id
        rel = self.rel_of(uri) if uri else None
        diffs = turn_diff(self.store, turn, rel)
        text = "".join(d["diff"] for d in diffs) or f"turn {turn.number} changed no file\n"
        directory = os.path.join(self.store.path, "diffs")
        os.makedirs(directory, mode=0o700, exist_ok=True)
        path = os.path.join(directory, f"turn-{turn.number}-{turn_id}.diff")
        _write_private(path, text)
        return "file://" + path, text
