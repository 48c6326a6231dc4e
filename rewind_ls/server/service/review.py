"""Review: who wrote each line, a turn's hunks, hover and code actions (the work is
`server/review.py`'s `Reviewer`, made on first use)."""

from __future__ import annotations

from typing import Any

from rewind_ls.core.errors import RewindError
from rewind_ls.server.service.base import TIMELINE_NAME, ServiceBase
from rewind_ls.server.workspace_view import OpenDoc


class ReviewWork(ServiceBase):
    _reviewer: Any

    @property
    def reviewer(self) -> Any:
        """The blame replay and hunk cache, made on first use (a `review.Reviewer`)."""
        if self._reviewer is None:
            from rewind_ls.server.review import Reviewer

            self._reviewer = Reviewer(self.store, self.root)
        return self._reviewer

    def blame(self, uri: str, docs: dict[str, OpenDoc]) -> dict[str, Any]:
        return {**self.reviewer.blame(self.rel_of(uri), docs), "uri": uri}

    def turn_hunks(
        self, turn_ref: str, uri: str | None, docs: dict[str, OpenDoc]
    ) -> dict[str, Any]:
        turn = self.turn(turn_ref)
        only = self.rel_of(uri) if uri else None
        files = self.reviewer.turn_hunks(turn.id, only, docs)
        for f in files:
            f["uri"] = self.uri(f["path"])
        return {"turn": self.turn_info(turn), "files": files}

    def hover(self, uri: str, line: int, docs: dict[str, OpenDoc]) -> str | None:
        try:
            rel = self.rel_of(uri)
        except RewindError:
            return None
        if rel == TIMELINE_NAME:
            return None
        result: str | None = self.reviewer.hover(rel, line, docs)
        return result

    def code_actions(
        self, uri: str, first: int, last: int, docs: dict[str, OpenDoc]
    ) -> list[dict[str, Any]]:
        try:
            rel = self.rel_of(uri)
        except RewindError:
            return []
        if rel == TIMELINE_NAME:
            return []
        result: list[dict[str, Any]] = self.reviewer.actions(rel, uri, first, last, docs)
        return result
