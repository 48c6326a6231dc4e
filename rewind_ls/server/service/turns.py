"""Listing turns, the timeline document, a file's content at a turn, a folder at a turn, a turn's
diff document."""

from __future__ import annotations

import os
from typing import Any, NamedTuple

from rewind_ls.core.capture.baseline_spawn import progress
from rewind_ls.core.capture.recorder import read_current
from rewind_ls.core.errors import BadPath, UnknownTurn
from rewind_ls.core.fs.paths import from_uri, looks_like_uri, real_root
from rewind_ls.core.history.activity import activity
from rewind_ls.core.history.activity_page import render
from rewind_ls.core.history.diff import turn_diff
from rewind_ls.core.history.snapshot import Snapshot, list_folder, sizes, state_of_turn
from rewind_ls.core.history.timeline import TurnEntries, iso, list_sessions, timeline_text
from rewind_ls.core.model import ABSENT_VERSION, Turn
from rewind_ls.core.restore.plan import current_session
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


class _Page(NamedTuple):
    """The last page listed (its wire form, without the first checkpoint's progress) and what it
    was made from: the store's write mark before it was read, the workspace's real root, the
    request's session, cursor and limit."""

    mark: tuple[int, int]
    root: str
    session_id: str | None
    before: str | None
    limit: int
    wire: dict[str, Any]


def narrower_page(wire: dict[str, Any], limit: int) -> dict[str, Any]:
    """The page of `limit` turns per session cut from the wire form of a page of at least as many
    made from the same store state: each session's newest `limit` turns, and
    its `olderCursor` as a `limit` page gives it (the number of its oldest listed turn when it
    has older turns)."""
    sessions = []
    for s in wire["sessions"]:
        turns = s["turns"]
        # The page's own cursor is set only when it was full, and then `limit` is its size.
        cursor = str(turns[-limit]["number"]) if len(turns) > limit else s["olderCursor"]
        sessions.append({**s, "olderCursor": cursor, "turns": turns[-limit:]})
    return {**wire, "sessions": sessions}


class TurnsWork(ServiceBase):
    # Turns already listed, in wire form: a refresh makes (and validates) only new or changed ones.
    _turn_entries: TurnEntries | None = None
    # The last page: a narrower page asked while nothing was committed since (the status bar's
    # count right after the view's page) is cut from it instead of read again.
    _last_page: _Page | None = None
    # The last snapshot browsed (turn id, side, the store's write mark): a client lists a turn's
    # folders one by one, each from the same state.
    _snapshot: tuple[tuple[str, str, tuple[int, int]], Snapshot] | None = None

    def list_turns(
        self,
        session_id: str | None,
        limit: int | None = None,
        before: str | None = None,
        turn_id: str | None = None,
    ) -> dict[str, Any]:
        """`rewind/listTurns`'s result, in wire form (camelCase, validated)."""
        # Read before anything else: a commit while this page is read moves it, so the page is
        # never taken for one of the later state.
        mark = self.store.write_mark()
        root = real_root(self.store.root)
        last = self._last_page
        if (
            limit is not None
            and turn_id is None
            and last is not None
            and (last.mark, last.root, last.session_id, last.before)
            == (mark, root, session_id, before)
            and limit <= last.limit
        ):
            wire = narrower_page(last.wire, limit)
        else:
            if session_id is not None and self.store.session(session_id) is None:
                raise UnknownTurn(session_id, "no session with that id in this workspace")
            if self._turn_entries is None:
                self._turn_entries = TurnEntries(turn_wire)
            listing = list_sessions(
                self.store, session_id, limit, before, turn_id, self._turn_entries, root
            )
            wire = listing_wire(listing)
            if limit is not None and turn_id is None:
                self._last_page = _Page(mark, root, session_id, before, limit, wire)
        # The first checkpoint's progress is a file the worker writes, not the store: read each time.
        first = progress(self.store.path)
        if first is not None:
            wire = {**wire, "baseline": {"done": first[0], "total": first[1]}}
        return wire

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
            # Not changed in this turn: what the workspace held then (start or end: the snapshot a
            # browsed folder is listed from, so a listing and its files agree); a path rewind-ls
            # has no record of at all (ignored, say) is read from the disk as it is now.
            data = None
            if self.store.known(rel) is None and not self.store.path_history(rel):
                version, data, _ = read_current(self.root, rel)
            else:
                version = self._snapshot_of(turn, side).files.get(rel, ABSENT_VERSION)
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

    def file_versions(self, uri: str) -> dict[str, Any]:
        """`rewind/fileVersions`: every recorded version of the file, newest first
        (`history.versions.file_log`), each with the turn and side `rewind/fileAt` shows it by."""
        from rewind_ls.core.history.versions import file_log

        rel = self.rel_of(uri)
        log = file_log(self.store, rel)
        oldest = log[-2]["turn_id"] if len(log) >= 2 else None
        versions = []
        for v in log:
            first = v["turn_id"] is None
            versions.append(
                {
                    "hash": v["hash"],
                    "kind": v["kind"],
                    "time": v["time"],
                    "source": v["source"],
                    "change": v["change"],
                    "turn_id": oldest if first else v["turn_id"],
                    "side": "before" if first else "after",
                    "number": v["number"],
                    "session_id": v["session_id"],
                    "session_kind": v["session_kind"],
                    "prompt": v["prompt"],
                }
            )
        return {"uri": uri, "path": rel, "versions": versions}

    def find_version(self, uri: str, spec: str) -> tuple[str, str | None]:
        """(the id of the turn that recorded it, its full hash) of the file's version whose hash
        starts with `spec` (`rewind.restoreVersion`)."""
        from rewind_ls.core.restore.version_plan import find_version

        found = find_version(self.store, self.rel_of(uri), spec)
        return found.turn.id, found.version.hash

    def timeline_page(
        self, session_id: str | None, every_session: bool, nonce: str | None
    ) -> dict[str, Any]:
        """`rewind/timelinePage`: the picture of a session (who changed which file in which turn)
        as one page, for a webview when `nonce` is given."""
        if every_session:
            session_id = None
        else:
            if session_id is not None and self.store.session(session_id) is None:
                raise UnknownTurn(session_id, "no session with that id in this workspace")
            session_id = session_id or current_session(self.store)
            if session_id is None:
                raise UnknownTurn("current", "no agent session has been recorded here yet")
        grid = activity(self.store, session_id, every_session=every_session)
        return {
            "html": render(grid, webview=nonce is not None, nonce=nonce),
            "sessionId": grid.session_id,
            "turns": len(grid.columns),
            "files": len(grid.paths),
            "changes": len(grid.cells),
        }

    def list_folder(
        self, turn_ref: str, uri: str | None, side: str, recursive: bool = False
    ) -> dict[str, Any]:
        """`rewind/listFolder`: the names in one folder of the workspace at a turn's start (or end)."""
        turn = self.turn(turn_ref)
        folder = self._folder_of(uri)
        entries = list_folder(self._snapshot_of(turn, side), folder, recursive)
        if entries is None and folder:
            raise BadPath(folder, f"no file under this folder at turn {turn.number}'s {side}")
        entries = entries or []
        lengths = sizes(self.store, entries)

        def entry_uri(name: str) -> str:
            return self.uri(f"{folder}/{name}" if folder else name)

        return {
            "uri": self.uri(folder) if folder else self.uri(""),
            "turnId": turn.id,
            "number": turn.number,
            "side": side,
            "startedAt": iso(turn.started_at),
            "entries": [
                {
                    "name": e.name,
                    "uri": entry_uri(e.name),
                    "folder": e.folder,
                    "size": size,
                    "executable": e.version is not None and bool((e.version.mode or 0) & 0o111),
                    "kept": e.version is None
                    or (e.version.kind == FILE and e.version.hash is not None),
                }
                for e, size in zip(entries, lengths, strict=True)
            ],
        }

    def _folder_of(self, uri: str | None) -> str:
        if uri is None:
            return ""
        path = from_uri(uri) if looks_like_uri(uri) else uri
        if real_root(path.rstrip("/") or "/") == real_root(self.root):
            return ""
        return self.rel_of(uri)

    def _snapshot_of(self, turn: Turn, side: str) -> Snapshot:
        key = (turn.id, side, self.store.write_mark())
        if self._snapshot is not None and self._snapshot[0] == key:
            return self._snapshot[1]
        snapshot = state_of_turn(self.store, turn, after=side == "after")
        self._snapshot = (key, snapshot)
        return snapshot

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
