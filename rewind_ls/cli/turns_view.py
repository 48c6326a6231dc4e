"""`rewind-ls turns` as text: on a terminal every line fits its width (cut after a whole word or a
whole path, never wrapped); a pipe gets every file of a turn, prompts still in a 40-column column
(`--json` has them whole)."""

from __future__ import annotations

from typing import Any

from rewind_ls.cli.style import cells, clip, fit_items, pad, safe
from rewind_ls.core.model import is_background

MARKS = {"created": "+", "deleted": "-", "modified": "~"}
FIXED = 27  # "  ###  YYYY-MM-DD HH:MM  " and the gap before the files


def _items(turn: dict[str, Any]) -> list[str]:
    return [_item(f) for f in turn["files"]] or ["-"]


def _item(f: dict[str, Any]) -> str:
    """`~path`, and for a change shared with other sessions (both ran shell commands at once)
    `~path (shared with 1a2b3c4d)`; a background job's `~path (background)`."""
    item = f"{MARKS.get(f['change'], '?')}{safe(f['path'])}"
    if is_background(f.get("source") or ""):  # made after the turn ended, by work it started
        item += " (background)"
    shared = f.get("shared_with") or f.get("sharedWith")
    if shared:
        item += f" (shared with {', '.join(safe(s[:8]) for s in shared)})"
    return item


def session_lines(session: dict[str, Any], cols: int | None) -> list[str]:
    head = f"session {session['id']}  ({session['kind']}, {session['agent'] or '-'})"
    lines = [clip(head, cols) if cols else head]
    if cols:
        room = max(24, cols - FIXED)
        # The files column gets what a turn's first path needs (plus "+N"), up to all but 12
        # columns; the prompt the rest, at most 40.
        need = (
            max(
                (cells(its[0]) + (len(f" +{len(its) - 1}") if len(its) > 1 else 0))
                for its in (_items(t) for t in session["turns"])
            )
            if session["turns"]
            else 5
        )
        prompt_w = min(40, max(12, room - need))
        files_w = room - prompt_w
    else:
        prompt_w, files_w = 40, 0
    lines.append(f"  {'#':>3}  {'started':16}  {pad('prompt', prompt_w)}  files")
    for turn in session["turns"]:
        when = (turn["started_at"] or "").replace("T", " ")[:16]
        prompt = clip(safe(" ".join(turn["prompt"].split())), prompt_w)
        items = _items(turn)
        files = fit_items(items, files_w, ", ") if cols else ", ".join(items)
        line = f"  {turn['number']:>3}  {when:16}  {pad(prompt, prompt_w)}  {files}"
        agents = turn.get("subagents") or []
        if agents:  # edits made by a subagent inside this turn
            line += f"  (subagent: {', '.join(agents)})"
        lines.append(clip(line, cols) if cols else line)
        if turn.get("reconstructed"):
            note = f"       {turn['reconstructed']}"
            lines.append(clip(note, cols) if cols else note)
    return lines
