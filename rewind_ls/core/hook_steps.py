"""The steps every agent's hook adapter takes, once (claude_hook, codex_hook, gemini_hook map their
payloads onto these).

Runs in the hook process on every agent edit: imports only the stdlib and the core.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Collection
from typing import TYPE_CHECKING, Any

from rewind_ls.core.errors import BadInput
from rewind_ls.core.model import TurnState

if TYPE_CHECKING:
    from rewind_ls.core.capture import Recorder
    from rewind_ls.core.store import Store


class Outcome:
    """What one hook call did: a line for the log, and a message for the person (or None)."""

    __slots__ = ("done", "message")

    def __init__(self, done: str, message: str | None = None) -> None:
        self.done = done
        self.message = message


def payload_text(payload: dict[str, Any], key: str, required: bool = True) -> str | None:
    value = payload.get(key)
    if value is None and not required:
        return None
    if not isinstance(value, str) or (required and not value):
        raise BadInput(f"hook payload: field {key!r} must be a non-empty string, got {value!r:.80}")
    if "\x00" in value:
        raise BadInput(f"hook payload: field {key!r} contains a NUL byte")
    return value


def required_text(payload: dict[str, Any], key: str) -> str:
    value = payload_text(payload, key)
    assert value is not None
    return value


def optional_text(payload: dict[str, Any], key: str) -> str | None:
    value = payload.get(key)
    return value if isinstance(value, str) and value and "\x00" not in value else None


def required_cwd(payload: dict[str, Any]) -> str:
    """The payload's `cwd`, which must be an existing absolute folder."""
    cwd = required_text(payload, "cwd")
    if not os.path.isabs(cwd) or not os.path.isdir(cwd):
        raise BadInput(f"hook payload: cwd {cwd!r} is not an existing absolute folder")
    return cwd


def inside_folder(path: str, cwd: str, folder: str) -> bool:
    """Whether `path` (relative ones are relative to `cwd`) is inside `folder`: the agent's own
    folder (sessions, plans, todos) is the agent's business, not the project's."""
    full = os.path.realpath(path if os.path.isabs(path) else os.path.join(cwd, path))
    return full.startswith(os.path.realpath(folder).rstrip(os.sep) + os.sep)


class HookEvent:
    """The fields every agent's hook payload carries, checked."""

    __slots__ = ("cwd", "name", "session_id", "tool", "transcript")

    def __init__(self, payload: dict[str, Any], strict_transcript: bool = False) -> None:
        self.name = required_text(payload, "hook_event_name")
        self.session_id = required_text(payload, "session_id")
        self.cwd = required_cwd(payload)
        # Claude Code always sends a usable transcript path: anything else there is a bad payload.
        self.transcript = (
            payload_text(payload, "transcript_path", required=False)
            if strict_transcript
            else optional_text(payload, "transcript_path")
        )
        tool = payload.get("tool_name")
        self.tool = tool if isinstance(tool, str) else None

    def parts(self) -> tuple[str, str, str, str | None, str | None]:
        """(event name, session id, cwd, transcript path, tool name)."""
        return self.name, self.session_id, self.cwd, self.transcript, self.tool

    def watched(
        self, turn_events: Collection[str], tool_events: Collection[str], *tools: Collection[str]
    ) -> bool:
        """A turn event, or a tool event of a tool in one of `tools` (the others are ignored)."""
        return self.name in turn_events or (
            self.name in tool_events and any(self.tool in t for t in tools)
        )


def tool_file(payload: dict[str, Any], tool: str, field: str) -> str:
    """The file an edit tool names in its `tool_input[field]`."""
    tool_input = payload.get("tool_input")
    if not isinstance(tool_input, dict):
        raise BadInput(f"hook payload: {tool} tool_input must be an object")
    file_path = tool_input.get(field)
    if not isinstance(file_path, str) or not file_path:
        raise BadInput(f"hook payload: {tool} tool_input has no {field!r}")
    return file_path


def notify_enabled() -> bool:
    """REWIND_LS_NOTIFY=0 silences the line shown in the agent's UI after a turn that changed
    files (default on: it is how a person learns the turn is recorded and how to go back)."""
    return os.environ.get("REWIND_LS_NOTIFY", "1").strip().lower() not in (
        "0",
        "no",
        "off",
        "false",
    )


def progress_printer(prefix: str = "rewind-ls") -> Callable[[str, int, int], None]:
    """Progress of a workspace scan on stderr, only once it has been slow (> 1 s), once a second:
    a first checkpoint of a big workspace must not look like a hung agent."""
    started = time.monotonic()
    last = [started]

    def report(what: str, done: int, total: int) -> None:
        now = time.monotonic()
        if now - started < 1.0 or (now - last[0] < 1.0 and done < total):
            return
        last[0] = now
        label = "recording the workspace baseline" if what == "baseline" else "recording changes"
        sys.stderr.write(f"{prefix}: {label}: {done}/{total} files\n")
        sys.stderr.flush()

    return report


def turn_notice(store: Store, turn_id: str) -> str | None:
    """The line shown in the agent's UI when a turn that changed files ends."""
    from rewind_ls.core.capture import turn_label

    row = store.turn(turn_id)
    files = [c for c in store.changes(turn_id) if c.after is not None]
    if row is None or not files:
        return None
    count = f"{len(files)} file{'s' if len(files) != 1 else ''}"
    return (
        f"rewind-ls: {turn_label(row)} recorded, {count}; to go back: rewind-ls rewind {row.number}"
    )


def recorder(store: Store) -> Recorder:
    """The store's Recorder, after finishing or rolling back a restore that is running or was
    killed: its half-swapped files and temporary names are never recorded as the agent's work."""
    from rewind_ls.core.capture import Recorder

    if store.turns_in_state("rewind", TurnState.PENDING):
        from rewind_ls.core.apply_disk import recover

        recover(store, wait=True)
    rec = Recorder(store)
    rec.progress = progress_printer()
    return rec


def session_start(
    rec: Recorder, session_id: str, agent: str, transcript: str | None, source: Any
) -> Outcome:
    """A session starts (or resumes, or, `source` "compact", is compacted)."""
    rec.store.ensure_session(session_id, "agent", agent, transcript)
    open_turn = rec.open_turn_id(session_id)
    if source == "compact" and open_turn is not None:
        # Compaction inside a turn (automatic, mid-task): the changes so far are the turn's.
        rec.scan_into(open_turn, session_id)
        return Outcome(f"SessionStart compact inside {open_turn}")
    rec.attribute_outside_changes()
    return Outcome(f"SessionStart {session_id}")


def open_turn(
    rec: Recorder,
    session_id: str,
    prompt: Any,
    agent: str,
    transcript: str | None,
    info: str | None = None,
) -> str:
    """Open the turn of a prompt (a missing prompt is recorded as empty)."""
    text = prompt if isinstance(prompt, str) else ""
    return str(
        rec.begin_turn(
            session_id,
            # A lone surrogate (valid JSON, not UTF-8) could not be stored: replace it.
            text.replace("\x00", "").encode("utf-8", "replace").decode("utf-8"),
            "agent",
            agent,
            transcript,
            info=info,
        )
    )


def close_turn(rec: Recorder, session_id: str, notify: bool) -> Outcome:
    """Close the open turn; `notify`: the agent finished answering (not the session ending), so
    the person is told what was recorded."""
    ended = rec.end_turn(session_id)
    message = None
    if ended is not None and notify and notify_enabled():
        message = turn_notice(rec.store, ended)
    return Outcome(f"turn {ended} closed", message)


def shell_started(rec: Recorder, session_id: str, run_id: str) -> None:
    """A shell command starts: other sessions' scans leave the files it changes to this
    session's scan when it finishes."""
    from rewind_ls.core import shell_runs

    shell_runs.shell_started(rec.store, session_id, run_id)


def shell_finished(rec: Recorder, session_id: str, run_id: str, turn: str) -> list[Any]:
    """A shell command finished: it may have changed files no edit tool reports, so the workspace
    scan attributes them to `turn` now. Returns the changed files."""
    from rewind_ls.core import shell_runs

    changed = list(rec.scan_into(turn, session_id))
    shell_runs.shell_finished(rec.store, session_id, run_id)
    return changed


def record_path(rec: Recorder, session_id: str, rel: str, before: bool, agent: str) -> str:
    """Record a tool call's file before it runs (`before`) or after; returns the turn."""
    if before:
        return rec.before(session_id, rel, "tool", agent)
    return rec.after(session_id, rel, "tool", agent)
