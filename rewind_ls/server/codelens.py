"""Code lenses on chat turns: each user prompt line of a Claude Code transcript (.jsonl) and each
turn line of the timeline document gets "Rewind to here", "Revert turn" and "Diff"; a restore point's
line gets "Undo this restore" and "Diff" (reverting a restore point would re-apply what it undid). The
lenses run server commands, which preview and ask before writing, so they work in any LSP client that
shows lenses."""

from __future__ import annotations

import json
import os
from typing import Any

from rewind_ls.core.agents.claude.transcript import prompt_text
from rewind_ls.core.capture.interrupts import line_time
from rewind_ls.core.capture.recorder import REWIND_SESSION
from rewind_ls.core.history.timeline import TIMELINE_TITLE, TURN_ID_AT_END
from rewind_ls.core.model import Scope, Turn
from rewind_ls.server.service import Service

Lens = tuple[int, str, str, list[Any]]


def _lenses(line: int, turn_id: str, restore_point: bool = False) -> list[Lens]:
    if restore_point:
        return [
            (line, "Undo this restore", "rewind.rewind", [turn_id, Scope.CODE]),
            (line, "Diff", "rewind.diff", [turn_id]),
        ]
    return [
        (line, "Rewind to here", "rewind.rewind", [turn_id, Scope.CODE]),
        (line, "Revert turn", "rewind.revert", [turn_id]),
        (line, "Diff", "rewind.diff", [turn_id]),
    ]


def lenses_for(service: Service, uri: str, text: str) -> list[Lens]:
    if uri.endswith(".jsonl"):
        return _transcript_lenses(service, uri, text)
    # The timeline is recognised by its text, whatever URI the client gave its buffer.
    if text.startswith(TIMELINE_TITLE + ":"):
        return _timeline_lenses(service, text)
    return []


def _timeline_lenses(service: Service, text: str) -> list[Lens]:
    out: list[Lens] = []
    for i, line in enumerate(text.splitlines()):
        match = TURN_ID_AT_END.search(line) if line.startswith("  ") else None
        turn = service.store.turn(match.group(1)) if match else None
        if turn is not None:
            out.extend(_lenses(i, turn.id, turn.session_id == REWIND_SESSION))
    return out


def _transcript_lenses(service: Service, uri: str, text: str) -> list[Lens]:
    session_id = os.path.splitext(os.path.basename(uri))[0]
    session = service.store.session(session_id)
    turns = service.store.turns(session_id) if session is not None else []
    if not turns:
        return []
    # Prompt text -> turns with that prompt; several branches may repeat a prompt: nearest in time.
    by_prompt: dict[str, list[Turn]] = {}
    for t in turns:
        by_prompt.setdefault(t.prompt.strip(), []).append(t)
    out: list[Lens] = []
    for index, raw in enumerate(text.split("\n")):
        if not raw.strip():
            continue
        try:
            obj = json.loads(raw)
        except (ValueError, RecursionError):  # a line nested deeper than the parser allows
            continue
        if not isinstance(obj, dict):
            continue
        prompt = prompt_text(obj)
        if prompt is None:
            continue
        candidates = by_prompt.get(prompt.strip())
        if not candidates:
            continue
        when = line_time(obj)
        best = min(
            candidates,
            key=lambda t: abs(t.started_at - when) if when is not None else t.seq,
        )
        out.extend(_lenses(index, best.id))
    return out
