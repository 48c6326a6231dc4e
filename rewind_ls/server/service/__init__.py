"""The server's work, independent of pygls: every method runs on the store's worker thread and takes
or returns plain data. `handlers/` is the thin layer that receives requests, snapshots open
documents and calls these methods through the worker; `restore_driver.py` talks to the client
(applyEdit, progress, messages).

A restore in the editor goes: plan against buffers (`prepare`) -> restore point recorded -> the text
part travels as a WorkspaceEdit -> the client applies it -> `edit_reached` compares what the client
reports and the disk with the plan -> files a text edit cannot carry are written by the server
(`finish`).

The work is in parts by area (`turns`, `restore`, `review`, `recording`, over `base`); `Service`
puts them together with the store's lifecycle and the poll for other processes' turns.
"""

from __future__ import annotations

import logging
import os
from typing import Any

from rewind_ls.core.capture.recorder import Recorder
from rewind_ls.core.restore.recovery import recover
from rewind_ls.core.store import Store, Version
from rewind_ls.server.service.base import ServiceBase
from rewind_ls.server.service.recording import RecordingWork
from rewind_ls.server.service.restore import EditorRestore, PendingRestore, RestoreWork
from rewind_ls.server.service.review import ReviewWork
from rewind_ls.server.service.turns import TurnsWork

__all__ = ["EditorRestore", "PendingRestore", "Service"]

log = logging.getLogger("rewind_ls.server")


class Service(TurnsWork, RestoreWork, ReviewWork, RecordingWork, ServiceBase):
    def __init__(self, root: str) -> None:
        self.root = os.path.realpath(root)
        self.store = Store.open(self.root)
        self.recorder = Recorder(self.store)
        self.pre_save: dict[str, Version] = {}
        recover(self.store)
        from rewind_ls.core.store import gc

        gc.maybe_run(self.store)
        # Baseline now, so a turn recorded right after start-up is reported by the first poll.
        self._data_version = self.store.data_version()
        self._turn_mark = self._mark()
        from rewind_ls.core.agents.claude.follower import TranscriptFollower

        # When the agent's hooks do not fire, its transcript still says what it did.
        self.follower = TranscriptFollower(self.store)
        self._warned: set[str] = set()
        self._reviewer: Any = None

    def close(self) -> None:
        self.store.close()

    # --- other processes -----------------------------------------------------------------------

    def _mark(self) -> tuple[int, int, int]:
        return self.store.activity_mark()

    def follow_transcripts(self) -> int:
        """Record what the agents' transcripts show and no hook recorded; never fails the poll."""
        try:
            self._settle()
            return self.follower.poll()
        except Exception:
            log.exception("following the transcripts failed")
            return 0

    def hook_warnings(self) -> list[str]:
        """Once per session, when the transcript showed turns no hook reported: a line for the
        client's log (VS Code shows it in the output channel)."""
        from rewind_ls.core.agents.claude.check import hooks_not_firing

        if not self.follower.recorded:
            return []
        out = []
        for m in hooks_not_firing(self.store):
            if m["session_id"] in self._warned:
                continue
            self._warned.add(m["session_id"])
            out.append(
                f"rewind-ls: Claude Code session {m['session_id']}: its hooks are not firing "
                f"({m['prompts_from_transcript']} prompt(s), {m['tool_calls_from_transcript']} tool "
                "call(s) no hook reported); the transcript is being followed instead (run "
                "`rewind-ls doctor` for details)"
            )
        return out

    def overwritten_notices(self, limit: int = 3) -> list[str]:
        """Once each, the person's versions something else overwrote since the editors were last
        told (`core.history.overwritten`): at most `limit` lines, then how many more."""
        from rewind_ls.core.history.overwritten import new_notices

        found = [o.message() for o in new_notices(self.store, "editor")]
        if len(found) > limit:
            more = len(found) - limit
            found = [*found[:limit], f"and {more} more overwritten version(s): rewind-ls log PATH"]
        return found

    def changed_sessions(self) -> list[str] | None:
        """Sessions whose turns changed (new turn, new or settled change, turn ended) since the last
        call, or since the service opened: None when nothing did. Cheap when nothing was committed:
        `PRAGMA data_version` only moves when another connection commits."""
        followed = self.follow_transcripts()
        version = self.store.data_version()
        if version == self._data_version and not followed:
            return None
        self._data_version = version
        mark = self._mark()
        if mark == self._turn_mark:
            return None
        self._turn_mark = mark
        return self.store.recent_session_ids(5)
