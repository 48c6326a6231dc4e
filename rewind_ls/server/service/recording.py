"""Recording from the editor: the person's saves (`will_save`, `did_save`) and the turns of an
agent that lives in the editor (`begin_turn`, `record_edit`, `end_turn`)."""

from __future__ import annotations

from typing import Any

from rewind_ls.core.capture.recorder import EDITOR_SESSION, read_current
from rewind_ls.core.errors import RewindError, UnknownTurn
from rewind_ls.core.restore.buffer_traces import remove_trace, write_trace
from rewind_ls.core.store import ABSENT, FILE, Version, digest
from rewind_ls.server.edits import decode_text, encode_buffer
from rewind_ls.server.service.base import TIMELINE_NAME, ServiceBase
from rewind_ls.server.workspace_view import OpenDoc, open_docs_by_path


class RecordingWork(ServiceBase):
    pre_save: dict[str, Version]

    # --- the unsaved buffers, told to other processes (core/restore/buffer_traces.py) ----------

    def publish_unsaved(self, docs: dict[str, OpenDoc]) -> list[str]:
        """List the open text documents whose buffer differs from the disk where the CLI and
        `rewind-ls mcp` look before they restore; returns those paths."""
        dirty: dict[str, str] = {}
        for rel, doc in open_docs_by_path(self.root, docs).items():
            if rel == TIMELINE_NAME:
                continue
            try:
                _, data, _ = read_current(self.root, rel)
            except RewindError:
                continue
            if data is not None and decode_text(data) is None:
                continue  # not a text file: the buffer is not comparable
            body = encode_buffer(doc.text, data)
            if body != data:
                dirty[rel] = digest(body)
        try:
            write_trace(self.store.path, dirty)
        except OSError:
            return []  # a full or read-only store folder: restores elsewhere cannot be told
        return sorted(dirty)

    def forget_unsaved(self) -> None:
        remove_trace(self.store.path)

    # --- recording from the editor ---------------------------------------------------------------

    def _editor_turn(self) -> str:
        self.store.ensure_session(EDITOR_SESSION, "editor", "editor")
        open_turn = self.recorder.open_turn_id(EDITOR_SESSION)
        latest = self.store.latest_turn_seq()
        if open_turn is not None:
            turn = self.store.turn(open_turn)
            if turn is not None and turn.seq == latest:
                return open_turn
            self.store.end_turn(open_turn)
        return self.store.begin_turn(EDITOR_SESSION, "your edits, saved in the editor")

    def will_save(self, uri: str) -> None:
        """Keep what is on disk just before the editor overwrites it."""
        self._settle()
        try:
            rel = self.rel_of(uri)
        except RewindError:
            return
        if rel == TIMELINE_NAME:
            return
        version, data, _ = read_current(self.root, rel)
        if data is not None and version.hash is not None:
            known = self.store.known(rel)
            prev = known[0].hash if known is not None else None
            self.store.put_blob(data, previous=prev, h=version.hash)
        self.pre_save[rel] = version

    def did_save(self, uri: str) -> bool:
        """Record a save as the person's change, unless it only persists content rewind-ls knows
        (a restore applied to a buffer, then saved). Returns True when a change was recorded."""
        self._settle()
        try:
            rel = self.rel_of(uri)
        except RewindError:
            return False
        if rel == TIMELINE_NAME:
            return False  # someone saved the timeline buffer: not a change of theirs to record
        known = self.store.known(rel)
        base = self.pre_save.pop(rel, None) or (known[0] if known is not None else None)
        post = self.recorder.snapshot(rel, known[0] if known is not None else None)
        if known is not None and post == known[0]:
            return False
        if base is None or post == base:
            return False
        turn = self._editor_turn()
        self.recorder.record_known_change(turn, rel, base, post, "save")
        return True

    # --- recording for an agent in the editor ----------------------------------------------------

    def begin_turn(self, session_id: str, prompt: str, agent: str | None) -> dict[str, Any]:
        self._settle()
        turn = self.recorder.begin_turn(session_id, prompt, "agent", agent or "editor-agent")
        return self.turn_info(self.turn(turn))

    def record_edit(
        self, session_id: str, uri: str, phase: str, text: str | None
    ) -> dict[str, Any]:
        rel = self.rel_of(uri)
        if self.store.session(session_id) is None:
            raise UnknownTurn(session_id, "no such session; call rewind/beginTurn first")
        self._settle()
        if text is None:
            turn = (self.recorder.before if phase == "before" else self.recorder.after)(
                session_id, rel, "record"
            )
            return {"turnId": turn, "recorded": True}
        # The agent gave the content: it may differ from the disk (an unsaved buffer).
        from rewind_ls.core.store import digest

        data = text.encode("utf-8")
        version = Version(FILE, digest(data), 0o644, len(data))
        self.store.put_blob(data, h=version.hash)
        turn = self.recorder.ensure_turn(session_id)
        if phase == "before":
            self.store.record_before(turn, rel, version, "record")
        else:
            if self.store.change(turn, rel) is None:
                known = self.store.known(rel)
                self.store.record_before(
                    turn, rel, known[0] if known else Version(ABSENT), "record"
                )
            self.store.record_after(turn, rel, version)
        return {"turnId": turn, "recorded": True}

    def end_turn(self, session_id: str) -> dict[str, Any]:
        if self.store.session(session_id) is None:
            raise UnknownTurn(session_id, "no such session")
        self._settle()
        turn = self.recorder.end_turn(session_id)
        if turn is None:
            raise RewindError(f"session {session_id}: no open turn to end")
        return self.turn_info(self.turn(turn))
