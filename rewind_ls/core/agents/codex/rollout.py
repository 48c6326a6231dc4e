"""Codex CLI rollouts: forking the conversation before a turn into a new session Codex can resume.

A rollout (`$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl`) is one JSON line per record,
`{timestamp, type, payload}`: a `session_meta` line first (its `payload.id` is the session id), then
each turn starting with an `event_msg` `task_started` that carries the turn's `turn_id`. The turn's
prompt, tool calls and answers follow it. The fork is every line before turn T's `task_started`,
with the session id rewritten, written as a new rollout beside today's sessions; the original is
never edited. `codex resume <new id>` continues from there; the fork carries the turns before T.
"""

from __future__ import annotations

import os
import shlex
import time
import uuid
from typing import Any

from rewind_ls.core.agents.claude.transcript import Fork, adopt_fork, read_lines, stage_session
from rewind_ls.core.errors import BadInput, RewindError
from rewind_ls.core.model import Turn


def check_rollout_path(path: str) -> str:
    """The rollout must be a .jsonl file inside Codex's sessions folder."""
    from rewind_ls.core.agents.registry import codex_home

    real = os.path.realpath(path)
    sessions = os.path.realpath(os.path.join(codex_home(), "sessions"))
    if not real.startswith(sessions + os.sep):
        raise BadInput(f"{path}: rollout is outside Codex's sessions folder ({sessions}); refused")
    if not real.endswith(".jsonl") or not os.path.isfile(real):
        raise BadInput(f"{path}: not a Codex rollout file (.jsonl)")
    return real


# Payload fields that name the session: session_meta's `id` and `session_id`, the events' `thread_id`.
# All must name the fork, or the resumed binary reports (and its hooks record) the original session.
_SESSION_FIELDS = ("id", "session_id", "thread_id")


def _renamed(line: dict[str, Any], old_id: str, new_id: str) -> dict[str, Any]:
    payload = line.get("payload")
    if not isinstance(payload, dict):
        return line
    fixed = {k: new_id if k in _SESSION_FIELDS and v == old_id else v for k, v in payload.items()}
    return {**line, "payload": fixed}


def turn_start(lines: list[dict[str, Any]], turn_id: str) -> int:
    """Index of the `task_started` line of Codex turn `turn_id`."""
    for index, line in enumerate(lines):
        payload = line.get("payload")
        if (
            line.get("type") == "event_msg"
            and isinstance(payload, dict)
            and payload.get("type") == "task_started"
            and payload.get("turn_id") == turn_id
        ):
            return index
    raise RewindError(f"conversation: turn {turn_id} is not in the rollout (no task_started line)")


def fork(path: str, turn_id: str, prompt: str) -> Fork:
    path = check_rollout_path(path)
    lines = read_lines(path)
    meta = lines[0].get("payload") if lines else None
    if not lines or lines[0].get("type") != "session_meta" or not isinstance(meta, dict):
        raise BadInput(f"{path}: first line is not Codex's session_meta")
    old_id = meta.get("id")
    if not isinstance(old_id, str) or not old_id:
        raise BadInput(f"{path}: session_meta has no session id")
    new_id = str(uuid.uuid4())
    keep = [_renamed(line, old_id, new_id) for line in lines[: turn_start(lines, turn_id)]]
    from rewind_ls.core.agents.registry import codex_home

    now = time.gmtime()
    folder = os.path.join(codex_home(), "sessions", time.strftime("%Y/%m/%d", now))
    os.makedirs(folder, exist_ok=True)
    name = f"rollout-{time.strftime('%Y-%m-%dT%H-%M-%S', now)}-{new_id}.jsonl"
    # Atomic: a failed fork leaves no half rollout that `codex resume` would offer.
    staged = stage_session(folder, new_id, keep, name, set_session_id=False)
    cwd = meta.get("cwd")
    result = Fork(new_id, staged, prompt, len(keep), None)
    resume = f"codex resume {new_id}"
    result.resume_command = f"cd {shlex.quote(cwd)} && {resume}" if isinstance(cwd, str) else resume
    return result


def conversation_source(store: Any, turn: Turn) -> tuple[str | None, str | None]:
    """(the session's rollout, reason it cannot be forked before `turn`)."""
    from rewind_ls.core.capture.recorder import turn_info

    session = store.session(turn.session_id)
    path = None if session is None else session.transcript_path
    if not path:
        return None, "Codex never reported this session's rollout path"
    if not isinstance(turn_info(turn).get("turnId"), str):
        return None, f"turn {turn.number} has no Codex turn id"
    try:
        return check_rollout_path(path), None
    except BadInput as exc:
        return None, str(exc)


def fork_turn(store: object, turn: Turn) -> Fork:
    """Fork the Codex conversation before `turn`; the fork session inherits the turns before it."""
    from rewind_ls.core.capture.recorder import turn_info
    from rewind_ls.core.store import Store

    assert isinstance(store, Store)
    session = store.session(turn.session_id)
    path = None if session is None else session.transcript_path
    if not path:
        raise RewindError("conversation: Codex never reported this session's rollout path")
    turn_id = turn_info(turn).get("turnId")
    if not isinstance(turn_id, str):
        raise RewindError(
            f"conversation: turn {turn.number} has no Codex turn id (recorded before "
            "rewind-ls knew Codex turns); it cannot be forked"
        )
    result = fork(path, turn_id, turn.prompt)
    adopt_fork(store, turn, result)
    return result
