"""Read-side views of the store shared by the CLI and the server: sessions with their turns and files
(the fields of `rewind/listTurns`, snake_case: the server and the CLI's --json turn them into the
wire's camelCase through `rewind_ls.server.protocol`), and the timeline text document
(`timeline_text`)."""

from __future__ import annotations

import re
import time
from typing import Any

from rewind_ls.core.capture import REWIND_SESSION, turn_info
from rewind_ls.core.model import Change, PathChange, Turn, shared_turns
from rewind_ls.core.paths import to_uri
from rewind_ls.core.plan import current_session
from rewind_ls.core.store import Store
from rewind_ls.core.transcript_recorder import reconstructed_note


def iso(ts: float | None) -> str | None:
    if ts is None:
        return None
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(ts))


def change_kind(row: Change | PathChange) -> str | None:
    return row.kind  # None: touched, not settled (the tool call is still running or failed)


def turn_dict(store: Store, turn: Turn, session_kind: str, changes: list[Change]) -> dict[str, Any]:
    files = []
    for c in changes:
        kind = change_kind(c)
        if kind is not None:
            partners = shared_turns(c.source)
            entry: dict[str, Any] = {
                "path": c.path,
                "uri": to_uri(store.root, c.path),
                "change": kind,
                "source": "shared" if partners else c.source,
                "shared_with": _sessions_of(store, partners),
            }
            files.append(entry)
    return {
        "id": turn.id,
        "number": turn.number,
        "session_id": turn.session_id,
        "session_kind": session_kind,
        "prompt": turn.prompt,
        "started_at": iso(turn.started_at),
        "ended_at": iso(turn.ended_at),
        "files": files,
        "subagents": turn_info(turn).get("subagents") or [],
        # Set when the turn was rebuilt from the agent's transcript (its hooks did not fire).
        "reconstructed": reconstructed_note(turn),
    }


def _sessions_of(store: Store, turn_ids: list[str]) -> list[str]:
    """The sessions of `turn_ids` (a shared change's other turns), in order, once each."""
    out: list[str] = []
    for turn_id in turn_ids:
        row = store.turn(turn_id)
        if row is not None and row.session_id not in out:
            out.append(row.session_id)
    return out


def list_sessions(store: Store, session_id: str | None = None) -> dict[str, Any]:
    sessions = store.sessions()
    if session_id is not None:
        sessions = [s for s in sessions if s.id == session_id]
    by_turn: dict[str, list[Change]] = {}
    for c in store.all_changes():
        by_turn.setdefault(c.turn_id, []).append(c)
    out = []
    for s in sessions:
        turns = [
            turn_dict(store, t, s.kind, by_turn.get(t.id, []))
            for t in store.turns(s.id)
            if s.id != REWIND_SESSION or t.state in ("applied", "partial")
        ]
        out.append(
            {
                "id": s.id,
                "kind": s.kind,
                "agent": s.agent,
                "transcript_path": s.transcript_path,
                "started_at": iso(s.started_at),
                "last_activity_at": iso(s.last_activity_at),
                "turns": turns,
            }
        )
    return {"workspace": store.root, "current_session_id": current_session(store), "sessions": out}


TIMELINE_TITLE = "rewind-ls timeline"
# The last thing on a turn's line: its id, which is what the lenses and commands act on.
TURN_ID_AT_END = re.compile(r"\[(t[0-9a-f]+)\]\s*$")

_SESSION_TITLES = {
    "editor": "Your saves in the editor",
    "external": "Changes made outside agent turns (found by scans)",
    "rewind": "Restore points: what the files held just before each rewind, revert or undo",
}


def _when(turn: dict[str, Any]) -> str:
    return (turn["started_at"] or "").replace("T", " ").rstrip("Z")


def _one_line(text: str, limit: int = 100) -> str:
    return " ".join(text.split())[:limit]


def timeline_text(store: Store, session_id: str | None = None) -> str:
    """The timeline as plain text: a block per session, a line per turn ending with its id in
    brackets (what code lenses and commands act on), its files indented below. Restore points are
    shown as what they are ("restore point before rewind to turn 2"), never numbered like turns."""
    listing = list_sessions(store, session_id)
    lines = [
        f"{TIMELINE_TITLE}: {store.root}",
        "Turn numbers are those `rewind-ls turns` and the rewind.* commands accept.",
        "",
    ]
    for session in listing["sessions"]:
        if not session["turns"]:
            continue
        kind = session["kind"]
        if kind == "agent":
            current = " (current)" if session["id"] == listing["current_session_id"] else ""
            title = f"{session['agent'] or 'agent'} session {session['id'][:8]}{current}"
        else:
            title = _SESSION_TITLES.get(kind, kind)
        lines.append(title)
        for turn in session["turns"]:
            prompt = _one_line(turn["prompt"])
            if kind == "rewind":
                head = f"Restore point {_when(turn)} · before {prompt}"
            elif kind == "agent":
                head = f"Turn {turn['number']} · {_when(turn)} · {prompt or '(no prompt)'}"
            else:
                head = f"{_when(turn)} · {prompt or kind}"
            lines.append(f"  {head}  [{turn['id']}]")
            if turn.get("reconstructed"):
                lines.append(f"      ({turn['reconstructed']})")
            for f in turn["files"]:
                shared = f.get("shared_with")
                note = f"  (shared with {', '.join(s[:8] for s in shared)})" if shared else ""
                lines.append(f"      {f['change']:<9} {f['path']}{note}")
            if not turn["files"]:
                lines.append("      (no file changes)")
        lines.append("")
    if len(lines) == 3:
        lines.append("No turns recorded yet.")
    return "\n".join(lines) + "\n"
