"""Copilot CLI sessions: forking the conversation before a turn into a new session Copilot can resume.

A session is a folder `~/.copilot/session-state/<id>/` holding `events.jsonl` (one event a line,
`{type, data, id, timestamp, parentId}`: `session.start` naming the session in `data.sessionId`,
`user.message` with the prompt in `data.content`, the assistant's messages and tool calls, hook runs,
`session.shutdown` / `session.resume` at each run's end and start) and `workspace.yaml` (`id: <id>`,
the project folder, ...). `copilot --resume=<id>` replays the events of that folder (1.0.102, seen
with the real binary: a folder holding a prefix of another's events, its ids renamed, resumes as a
conversation of its own).

The fork is a new folder: every event before the turn's prompt (its `user.message`, found by its text,
the nearest in time to the turn's start when the same prompt was sent twice, and the prompt's own
`userPromptSubmitted` hook events just before it), `session.start` renamed, and `workspace.yaml`
with its `id` renamed. The original folder is never edited.
"""

from __future__ import annotations

import os
import shlex
import shutil
import uuid
from typing import Any

from rewind_ls.core.agents.claude.transcript import Fork, adopt_fork, read_lines, stage_session
from rewind_ls.core.capture.interrupts import line_time
from rewind_ls.core.errors import BadInput, RewindError
from rewind_ls.core.model import Turn


def sessions_dir() -> str:
    from rewind_ls.core.agents.copilot.hook import copilot_home

    return os.path.join(copilot_home(), "session-state")


def events_path(session_id: str) -> str:
    return os.path.join(sessions_dir(), session_id, "events.jsonl")


def check_events_path(path: str) -> str:
    """`path` must be an events.jsonl of a session folder in Copilot's session-state folder."""
    real = os.path.realpath(path)
    root = os.path.realpath(sessions_dir())
    if os.path.dirname(os.path.dirname(real)) != root or os.path.basename(real) != "events.jsonl":
        raise BadInput(
            f"{path}: not a session's events.jsonl in Copilot's folder ({root}); refused"
        )
    if not os.path.isfile(real):
        raise BadInput(f"{path}: no such Copilot CLI session file")
    return real


def _is_prompt(line: dict[str, Any], prompt: str) -> bool:
    from rewind_ls.core.store import prompt_matches

    data = line.get("data")
    text = data.get("content") if isinstance(data, dict) else None
    return (
        line.get("type") == "user.message"
        and isinstance(text, str)
        and prompt_matches(prompt, text)
    )


def _prompt_hook(line: dict[str, Any]) -> bool:
    """A run of the prompt's own `userPromptSubmitted` hook (written just before its message)."""
    data = line.get("data")
    return (
        line.get("type") in ("hook.start", "hook.end")
        and isinstance(data, dict)
        and data.get("hookType") == "userPromptSubmitted"
    )


def prompt_index(lines: list[dict[str, Any]], prompt: str, started_at: float) -> int:
    """Where the events of the turn of `prompt` begin."""
    found = [i for i, line in enumerate(lines) if _is_prompt(line, prompt)]
    if not found:
        raise RewindError(
            f"conversation: the prompt {prompt[:60]!r} is not in the session's events"
        )
    index = min(found, key=lambda i: abs((line_time(lines[i]) or 0.0) - started_at))
    while index > 0 and _prompt_hook(lines[index - 1]):
        index -= 1
    return index


def _renamed(line: dict[str, Any], old_id: str, new_id: str) -> dict[str, Any]:
    data = line.get("data")
    named = isinstance(data, dict) and data.get("sessionId") == old_id
    if line.get("type") == "session.start" and named:
        assert isinstance(data, dict)
        return {**line, "data": {**data, "sessionId": new_id}}
    return line


def _workspace_yaml(folder: str, old_id: str, new_id: str) -> str:
    """The original's workspace.yaml with its `id:` line naming the fork ("" when it has none)."""
    try:
        with open(os.path.join(folder, "workspace.yaml"), encoding="utf-8") as f:
            text = f.read()
    except OSError:
        return ""
    return "".join(
        f"id: {new_id}\n" if line.rstrip("\n") == f"id: {old_id}" else line
        for line in text.splitlines(keepends=True)
    )


def _cwd(lines: list[dict[str, Any]]) -> str | None:
    for line in lines:
        data = line.get("data")
        context = data.get("context") if isinstance(data, dict) else None
        cwd = context.get("cwd") if isinstance(context, dict) else None
        if line.get("type") == "session.start" and isinstance(cwd, str) and os.path.isabs(cwd):
            return cwd
    return None


def fork(path: str, prompt: str, started_at: float) -> Fork:
    path = check_events_path(path)
    folder = os.path.dirname(path)
    old_id = os.path.basename(folder)
    lines = read_lines(path)
    index = prompt_index(lines, prompt, started_at)
    new_id = str(uuid.uuid4())
    cwd = _cwd(lines)
    if not any(line.get("type") == "user.message" for line in lines[:index]):
        # The session's first prompt: nothing comes before it to continue; start anew.
        result = Fork("", None, prompt, 0, None)
    else:
        new_folder = os.path.join(os.path.dirname(folder), new_id)
        os.mkdir(new_folder, 0o700)
        workspace = _workspace_yaml(folder, old_id, new_id)
        if workspace:
            with open(os.path.join(new_folder, "workspace.yaml"), "w", encoding="utf-8") as f:
                f.write(workspace)
        keep = [_renamed(line, old_id, new_id) for line in lines[:index]]
        staged = stage_session(new_folder, new_id, keep, "events.jsonl", set_session_id=False)
        result = Fork(new_id, staged, prompt, len(keep), None)
    resume = f"copilot --resume={new_id}" if result.lines else "copilot"
    result.resume_command = f"cd {shlex.quote(cwd)} && {resume}" if cwd else resume
    return result


def conversation_source(store: Any, turn: Turn) -> tuple[str | None, str | None]:
    session = store.session(turn.session_id)
    path = (session.transcript_path if session is not None else None) or events_path(
        turn.session_id
    )
    try:
        return check_events_path(path), None
    except BadInput as exc:
        return None, str(exc)


def fork_turn(store: Any, turn: Turn) -> Fork:
    """Fork the Copilot session before `turn`; the fork session inherits the turns before it."""
    path, reason = conversation_source(store, turn)
    if path is None:
        raise RewindError(f"conversation: {reason}")
    result = fork(path, turn.prompt, turn.started_at)
    if result.staged is not None:
        try:
            adopt_fork(store, turn, result)
        except BaseException:
            # No half a session: the fork's folder goes with its unpublished events.
            shutil.rmtree(os.path.dirname(result.path), ignore_errors=True)
            raise
    return result
