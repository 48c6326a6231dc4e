"""Read-side views of the store shared by the CLI and the server: sessions with their turns and files
(the shape of `rewind/listTurns`, camelCase, so `--json` and the protocol agree), and the timeline
markdown document."""

from __future__ import annotations

import sqlite3
import time
from typing import Any

from rewind_ls.core.capture import REWIND_SESSION, turn_info
from rewind_ls.core.paths import to_uri
from rewind_ls.core.plan import current_session
from rewind_ls.core.store import ABSENT, Store


def iso(ts: float | None) -> str | None:
    if ts is None:
        return None
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(ts))


def change_kind(row: sqlite3.Row) -> str | None:
    before = row["before_kind"]
    after = row["after_kind"]
    if after is None:
        return None  # touched, not settled (the tool call is still running or failed)
    if before == ABSENT and after != ABSENT:
        return "created"
    if after == ABSENT and before != ABSENT:
        return "deleted"
    return "modified"


def turn_dict(
    store: Store, turn: sqlite3.Row, session_kind: str, changes: list[sqlite3.Row]
) -> dict[str, Any]:
    files = []
    for c in changes:
        kind = change_kind(c)
        if kind is not None:
            files.append(
                {
                    "path": c["path"],
                    "uri": to_uri(store.root, c["path"]),
                    "change": kind,
                    "source": c["source"],
                }
            )
    return {
        "id": turn["id"],
        "number": turn["number"],
        "sessionId": turn["session_id"],
        "sessionKind": session_kind,
        "prompt": turn["prompt"],
        "startedAt": iso(turn["started_at"]),
        "endedAt": iso(turn["ended_at"]),
        "files": files,
        "subagents": turn_info(turn).get("subagents") or [],
    }


def list_sessions(store: Store, session_id: str | None = None) -> dict[str, Any]:
    sessions = store.sessions()
    if session_id is not None:
        sessions = [s for s in sessions if s["id"] == session_id]
    by_turn: dict[str, list[sqlite3.Row]] = {}
    cur = store.conn.execute("SELECT * FROM changes ORDER BY path")
    cur.row_factory = sqlite3.Row
    for c in cur:
        by_turn.setdefault(c["turn_id"], []).append(c)
    out = []
    for s in sessions:
        turns = [
            turn_dict(store, t, s["kind"], by_turn.get(t["id"], []))
            for t in store.turns(s["id"])
            if s["id"] != REWIND_SESSION or t["state"] in ("applied", "partial")
        ]
        out.append(
            {
                "id": s["id"],
                "kind": s["kind"],
                "agent": s["agent"],
                "transcriptPath": s["transcript_path"],
                "startedAt": iso(s["started_at"]),
                "lastActivityAt": iso(s["last_activity_at"]),
                "turns": turns,
            }
        )
    return {"workspace": store.root, "currentSessionId": current_session(store), "sessions": out}


def timeline_markdown(store: Store, session_id: str | None = None) -> str:
    """One heading per turn: `## Turn N · time · prompt`, then its files. The server puts code
    lenses on the headings; the turn id is in an HTML comment so the document can be parsed back."""
    listing = list_sessions(store, session_id)
    lines = [f"# rewind-ls timeline: {store.root}", ""]
    for session in listing["sessions"]:
        if session["kind"] == "rewind" and session_id is None and not session["turns"]:
            continue
        lines.append(f"<!-- session {session['id']} -->")
        title = {
            "agent": f"{session['agent'] or 'agent'} session",
            "editor": "your saves",
            "external": "changes outside agent turns",
            "rewind": "restore points",
        }
        lines.append(f"# {title.get(session['kind'], session['kind'])} {session['id'][:8]}")
        lines.append("")
        for turn in session["turns"]:
            prompt = " ".join(turn["prompt"].split())[:100] or "(no prompt)"
            when = (turn["startedAt"] or "").replace("T", " ").rstrip("Z")
            lines.append(f"## Turn {turn['number']} · {when} · {prompt}")
            lines.append(f"<!-- turn {turn['id']} -->")
            for f in turn["files"]:
                lines.append(f"- {f['change']}: `{f['path']}`")
            if not turn["files"]:
                lines.append("- (no file changes)")
            lines.append("")
    return "\n".join(lines) + "\n"
