"""Gemini CLI chat files: forking the conversation before a turn into a new session Gemini can resume.

A chat (`~/.gemini/tmp/<project>/chats/session-<time>-<id8>.jsonl`) starts with a header line naming
the session (`sessionId`), then records: messages `{id, timestamp, type: user|gemini|..., content}`
(a message may be written again, updated, under the same id) and edits of the whole record (`$set`,
`$rewindTo`). Gemini replays the lines in order, so a prefix of the file is the conversation as it
stood at that point. The fork is every line before the user message of turn T's prompt (found by its
text, the nearest in time to the turn's start when the same prompt was sent twice), with the header
renamed (every header and `$set` of the session id), written beside the original; the original is
never edited.
"""

from __future__ import annotations

import os
import shlex
import time
import uuid
from typing import Any

from rewind_ls.core.agents.claude.transcript import Fork, adopt_fork, read_lines, stage_session
from rewind_ls.core.capture.interrupts import line_time
from rewind_ls.core.errors import BadInput, RewindError
from rewind_ls.core.model import Turn


def check_chat_path(path: str) -> str:
    from rewind_ls.core.agents.gemini.hook import gemini_home

    real = os.path.realpath(path)
    tmp = os.path.realpath(os.path.join(gemini_home(), "tmp"))
    if not real.startswith(tmp + os.sep) or os.path.basename(os.path.dirname(real)) != "chats":
        raise BadInput(f"{path}: chat file is outside Gemini CLI's chats folders ({tmp}); refused")
    if not real.endswith(".jsonl") or not os.path.isfile(real):
        raise BadInput(f"{path}: not a Gemini CLI chat file (.jsonl)")
    return real


def _renamed(line: dict[str, Any], old_id: str, new_id: str) -> dict[str, Any]:
    """The line naming the fork: a resumed session writes its header again and `$set` records of
    its `sessionId`; any left naming the original would make Gemini load the fork as the original."""
    if line.get("sessionId") == old_id:
        line = {**line, "sessionId": new_id}
    update = line.get("$set")
    if isinstance(update, dict) and update.get("sessionId") == old_id:
        line = {**line, "$set": {**update, "sessionId": new_id}}
    return line


def _text(line: dict[str, Any]) -> str | None:
    content = line.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list) and all(isinstance(p, dict) and "text" in p for p in content):
        return "".join(str(p["text"]) for p in content)
    return None


def _is_prompt(line: dict[str, Any], prompt: str) -> bool:
    """`line`'s text is `prompt` (as stored: a long prompt is kept cut, with a note)."""
    from rewind_ls.core.store import prompt_matches

    text = _text(line)
    return text is not None and prompt_matches(prompt, text)


def prompt_index(lines: list[dict[str, Any]], prompt: str, started_at: float) -> int:
    found = [
        i
        for i, line in enumerate(lines)
        if line.get("type") == "user" and "id" in line and _is_prompt(line, prompt)
    ]
    if not found:
        raise RewindError(f"conversation: the prompt {prompt[:60]!r} is not in the chat file")
    return min(found, key=lambda i: abs((line_time(lines[i]) or 0.0) - started_at))


def fork(path: str, prompt: str, started_at: float) -> Fork:
    path = check_chat_path(path)
    lines = read_lines(path)
    if not lines or not isinstance(lines[0].get("sessionId"), str):
        raise BadInput(f"{path}: first line is not a Gemini CLI chat header (no sessionId)")
    old_id = lines[0]["sessionId"]
    new_id = str(uuid.uuid4())
    keep = [_renamed(ln, old_id, new_id) for ln in lines[: prompt_index(lines, prompt, started_at)]]
    folder = os.path.dirname(path)
    stamp = time.strftime("%Y-%m-%dT%H-%M", time.gmtime())
    name = f"session-{stamp}-{new_id[:8]}.jsonl"
    staged = stage_session(folder, new_id, keep, name, set_session_id=False)
    result = Fork(new_id, staged, prompt, len(keep), None)
    root = _project_root(folder)
    resume = f"gemini --resume {new_id}"
    result.resume_command = f"cd {shlex.quote(root)} && {resume}" if root else resume
    return result


def _project_root(chats: str) -> str | None:
    """The project a chats folder belongs to (Gemini writes it in `.project_root` beside it)."""
    try:
        with open(os.path.join(os.path.dirname(chats), ".project_root"), encoding="utf-8") as f:
            root = f.read().strip()
    except OSError:
        return None
    return root if os.path.isabs(root) else None


def conversation_source(store: Any, turn: Turn) -> tuple[str | None, str | None]:
    session = store.session(turn.session_id)
    path = None if session is None else session.transcript_path
    if not path:
        return None, "Gemini CLI never reported this session's chat file"
    try:
        return check_chat_path(path), None
    except BadInput as exc:
        return None, str(exc)


def fork_turn(store: Any, turn: Turn) -> Fork:
    """Fork the Gemini chat before `turn`; the fork session inherits the turns before it."""
    path, reason = conversation_source(store, turn)
    if path is None:
        raise RewindError(f"conversation: {reason}")
    result = fork(path, turn.prompt, turn.started_at)
    adopt_fork(store, turn, result)
    return result
