"""Claude Code transcripts: finding a turn's prompt line and forking the conversation before it.

The original transcript is never edited. A fork is a new session file beside it holding the lines on
the prompt's `parentUuid` chain (so a branch left by the agent's own /rewind is followed correctly),
with `sessionId` rewritten; `claude --resume <new id>` continues from there. Unknown line types are
carried over untouched when they are on the chain and skipped otherwise.
"""

from __future__ import annotations

import json
import os
import uuid
from typing import Any

from rewind_ls.core import config
from rewind_ls.core.errors import BadInput, RewindError


class Fork:
    __slots__ = ("lines", "path", "prompt", "resume_command", "session_id")

    def __init__(self, session_id: str, path: str, prompt: str, lines: int) -> None:
        self.session_id = session_id
        self.path = path
        self.prompt = prompt
        self.lines = lines
        self.resume_command = f"claude --resume {session_id}" if lines else "claude"


def check_transcript_path(path: str) -> str:
    """The transcript must be a .jsonl file inside Claude Code's projects folder."""
    real = os.path.realpath(path)
    projects = os.path.realpath(os.path.join(config.claude_dir(), "projects"))
    if not real.startswith(projects + os.sep):
        raise BadInput(
            f"{path}: transcript is outside Claude Code's projects folder ({projects}); refused"
        )
    if not real.endswith(".jsonl"):
        raise BadInput(f"{path}: not a .jsonl transcript")
    if not os.path.isfile(real):
        raise BadInput(f"{path}: transcript not found")
    return real


def read_lines(path: str) -> list[dict[str, Any]]:
    """Every parseable JSON object line; damaged lines are skipped, not fatal."""
    out: list[dict[str, Any]] = []
    with open(path, "rb") as f:
        for raw in f:
            try:
                obj = json.loads(raw)
            except (ValueError, UnicodeDecodeError, RecursionError):
                continue  # RecursionError: nested deeper than the parser allows
            if isinstance(obj, dict):
                out.append(obj)
    return out


def prompt_text(line: dict[str, Any]) -> str | None:
    """The user's prompt if `line` is a prompt (not a tool result, not a meta line), else None."""
    if line.get("type") != "user" or line.get("isMeta") or line.get("isSidechain"):
        return None
    message = line.get("message")
    if not isinstance(message, dict):
        return None
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = []
        for block in content:
            if not isinstance(block, dict):
                continue
            if block.get("type") == "tool_result":
                return None
            if block.get("type") == "text" and isinstance(block.get("text"), str):
                texts.append(block["text"])
        return "\n".join(texts) if texts else None
    return None


def timestamp(line: dict[str, Any]) -> float | None:
    """A transcript line's `timestamp` (ISO 8601) as epoch seconds, or None."""
    stamp = line.get("timestamp")
    if not isinstance(stamp, str):
        return None
    try:
        from datetime import datetime

        return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def find_prompt(lines: list[dict[str, Any]], prompt: str, started_at: float) -> dict[str, Any]:
    """The prompt line of a turn: same text, the nearest in time (several branches may repeat it)."""
    wanted = prompt.strip()
    candidates = [
        ln for ln in lines if (prompt_text(ln) or "").strip() == wanted and ln.get("uuid")
    ]
    if not candidates:
        raise RewindError(f"the turn's prompt {prompt[:60]!r} is not in the transcript")

    def distance(line: dict[str, Any]) -> float:
        ts = timestamp(line)
        return abs(ts - started_at) if ts is not None else float("inf")

    return min(candidates, key=distance)


def fork(transcript_path: str, prompt: str, started_at: float) -> Fork:
    path = check_transcript_path(transcript_path)
    lines = read_lines(path)
    target = find_prompt(lines, prompt, started_at)
    by_uuid = {ln["uuid"]: ln for ln in lines if isinstance(ln.get("uuid"), str)}
    chain: list[dict[str, Any]] = []
    seen: set[str] = set()
    parent = target.get("parentUuid")
    while isinstance(parent, str) and parent in by_uuid and parent not in seen:
        seen.add(parent)
        chain.append(by_uuid[parent])
        parent = by_uuid[parent].get("parentUuid")
    chain.reverse()
    new_id = str(uuid.uuid4())
    out = os.path.join(os.path.dirname(path), f"{new_id}.jsonl")
    fd = os.open(out, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        for line in chain:
            copy = dict(line)
            if "sessionId" in copy:
                copy["sessionId"] = new_id
            f.write(json.dumps(copy, ensure_ascii=False) + "\n")
    return Fork(new_id, out, prompt, len(chain))


def session_transcript(store: object, turn: Any) -> tuple[str | None, str | None]:
    """(transcript path, reason it cannot be used) for a turn's session."""
    from rewind_ls.core.store import Store

    assert isinstance(store, Store)
    session = store.session(turn["session_id"])
    if session is None or session["kind"] != "agent":
        return None, "only agent sessions have a conversation"
    if session["agent"] != "claude-code":
        return None, f"conversation rewind is supported for Claude Code, not {session['agent']}"
    path = session["transcript_path"]
    if not path:
        return None, "the session's transcript path was never reported by the agent"
    try:
        return check_transcript_path(path), None
    except BadInput as exc:
        return None, str(exc)


def fork_turn(store: object, turn: Any) -> Fork:
    path, reason = session_transcript(store, turn)
    if path is None:
        raise RewindError(f"conversation: {reason}")
    return fork(path, turn["prompt"], turn["started_at"])
