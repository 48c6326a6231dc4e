"""What every part of the service shares: the workspace root and its store, paths and URIs, turn
lookup, a turn as the protocol shows it, and settling an interrupted restore before recording."""

from __future__ import annotations

import logging
from typing import Any

from rewind_ls.core.capture.recorder import Recorder
from rewind_ls.core.fs.paths import from_uri, looks_like_uri, relative_path, to_uri
from rewind_ls.core.history.timeline import turn_dict
from rewind_ls.core.model import Turn
from rewind_ls.core.restore.plan import resolve_turn
from rewind_ls.core.restore.recovery import settle
from rewind_ls.core.store import Store

# The timeline's buffer name: inside the workspace (so a client keeps it with this server), never on disk.
TIMELINE_NAME = ".rewind-timeline"

log = logging.getLogger("rewind_ls.server")


class ServiceBase:
    """The state the parts of `Service` work on (set by `Service.__init__`)."""

    root: str
    store: Store
    recorder: Recorder

    def rel_of(self, uri_or_path: str) -> str:
        path = from_uri(uri_or_path) if looks_like_uri(uri_or_path) else uri_or_path
        return relative_path(self.root, path, self.root)

    def uri(self, rel: str) -> str:
        return to_uri(self.root, rel)

    def turn(self, turn_ref: str | int) -> Turn:
        """A turn id, or a turn number of the current agent session (as the CLI takes them)."""
        return resolve_turn(self.store, str(turn_ref))

    def turn_info(self, turn: Turn) -> dict[str, Any]:
        session = self.store.session(turn.session_id)
        kind = session.kind if session is not None else "agent"
        return turn_dict(self.store, turn, kind, self.store.changes(turn.id))

    def _settle(self) -> None:
        """Before recording: a restore a killed CLI or hook left pending is finished or rolled back
        first (as the hook and every CLI command do at their start), so its half state is never
        recorded as someone's change."""
        for line in settle(self.store):
            log.warning("recovered an interrupted %s", line)
