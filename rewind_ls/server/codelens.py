"""Code lenses on chat turns: each user prompt line of a Claude Code transcript (.jsonl) and each
turn heading of the timeline document gets "Rewind to here", "Revert turn" and "Diff". The lenses run
server commands, so they work in any LSP client that shows lenses."""

from __future__ import annotations

import json
import os
import re
from typing import Any

from rewind_ls.core.transcript import prompt_text, timestamp
from rewind_ls.server.service import Service

Lens = tuple[int, str, str, list[Any]]

_TURN_COMMENT = re.compile(r"<!-- turn (t[0-9a-f]+) -->")


def _lenses(line: int, turn_id: str) -> list[Lens]:
    return [
        (line, "Rewind to here", "rewind.rewind", [turn_id, "code"]),
        (line, "Revert turn", "rewind.revert", [turn_id]),
        (line, "Diff", "rewind.diff", [turn_id]),
    ]


def lenses_for(service: Service, uri: str, text: str) -> list[Lens]:
    if uri.endswith(".jsonl"):
        return _transcript_lenses(service, uri, text)
    if uri.endswith(".md") and text.startswith("# rewind-ls timeline"):
        return _timeline_lenses(service, text)
    return []


def _timeline_lenses(service: Service, text: str) -> list[Lens]:
    out: list[Lens] = []
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if not line.startswith("## Turn ") or i + 1 >= len(lines):
            continue
        match = _TURN_COMMENT.search(lines[i + 1])
        if match and service.store.turn(match.group(1)) is not None:
            out.extend(_lenses(i, match.group(1)))
    return out


def _transcript_lenses(service: Service, uri: str, text: str) -> list[Lens]:
    session_id = os.path.splitext(os.path.basename(uri))[0]
    session = service.store.session(session_id)
    turns = service.store.turns(session_id) if session is not None else []
    if not turns:
        return []
    # Prompt text -> turns with that prompt; several branches may repeat a prompt: nearest in time.
    by_prompt: dict[str, list[Any]] = {}
    for t in turns:
        by_prompt.setdefault(t["prompt"].strip(), []).append(t)
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
        when = timestamp(obj)
        best = min(
            candidates,
            key=lambda t: abs(t["started_at"] - when) if when is not None else t["seq"],
        )
        out.extend(_lenses(index, best["id"]))
    return out
