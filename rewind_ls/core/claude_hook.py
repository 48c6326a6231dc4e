"""Claude Code hook payloads -> recorder calls.

Runs in its own process on every agent edit, so it imports only the core (stdlib + the store) and
never fails the agent: `run()` turns every error into a message on stderr and in the log, exit 0.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Callable
from typing import Any

from rewind_ls.core import config
from rewind_ls.core.errors import BadInput, RewindError

AGENT = "claude-code"

# Edit tools and the tool_input field that names the file they change. (MultiEdit no longer exists in
# Claude Code 2.x; it stays here so an older binary's payloads are still recorded.)
EDIT_TOOLS = {
    "Write": "file_path",
    "Edit": "file_path",
    "MultiEdit": "file_path",
    "NotebookEdit": "notebook_path",
}
SHELL_TOOLS = {"Bash"}


def log(message: str) -> None:
    """Append to the log; never raises (the log is a courtesy, not a requirement)."""
    try:
        config.ensure_private_dir(config.home_dir())
        fd = os.open(config.log_path(), os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        with os.fdopen(fd, "a", encoding="utf-8", errors="replace") as f:
            f.write(f"{time.strftime('%Y-%m-%dT%H:%M:%S')} {message}\n")
    except OSError:
        pass


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


def _text(payload: dict[str, Any], key: str, required: bool = True) -> str | None:
    value = payload.get(key)
    if value is None and not required:
        return None
    if not isinstance(value, str) or (required and not value):
        raise BadInput(f"hook payload: field {key!r} must be a non-empty string, got {value!r:.80}")
    if "\x00" in value:
        raise BadInput(f"hook payload: field {key!r} contains a NUL byte")
    return value


def parse(raw: bytes) -> dict[str, Any]:
    if not raw.strip():
        raise BadInput("hook payload: stdin was empty (expected one JSON object from the agent)")
    try:
        payload = json.loads(raw)
    except (ValueError, UnicodeDecodeError, RecursionError) as exc:
        # RecursionError: nested deeper than the parser allows; still just bad JSON to the agent.
        raise BadInput(f"hook payload: not valid JSON ({type(exc).__name__}: {exc})") from None
    if not isinstance(payload, dict):
        raise BadInput(f"hook payload: expected a JSON object, got {type(payload).__name__}")
    return payload


def notify_enabled() -> bool:
    """REWIND_LS_NOTIFY=0 silences the line shown in the agent's UI after a turn that changed
    files (default on: it is how a person learns the turn is recorded and how to go back)."""
    return os.environ.get("REWIND_LS_NOTIFY", "1").strip().lower() not in (
        "0",
        "no",
        "off",
        "false",
    )


class Outcome:
    """What one hook call did: a line for the log, and a message for the person (or None)."""

    __slots__ = ("done", "message")

    def __init__(self, done: str, message: str | None = None) -> None:
        self.done = done
        self.message = message


def _inside_agent_folder(path: str, cwd: str) -> bool:
    """A path in the agent's own folder (plans, todos): the agent's business, not the project's."""
    full = os.path.realpath(path if os.path.isabs(path) else os.path.join(cwd, path))
    agent_dir = os.path.realpath(config.claude_dir())
    return full.startswith(agent_dir.rstrip(os.sep) + os.sep)


def _optional_text(payload: dict[str, Any], key: str) -> str | None:
    value = payload.get(key)
    return value if isinstance(value, str) and value and "\x00" not in value else None


# For the other agents' hook modules.
optional_text = _optional_text


def required_text(payload: dict[str, Any], key: str) -> str:
    value = _text(payload, key)
    assert value is not None
    return value


def handle(payload: dict[str, Any]) -> str:
    """Record one hook event. Returns a short description of what was done (for the log)."""
    return handle_event(payload).done


def handle_event(payload: dict[str, Any]) -> Outcome:
    """Record one hook event."""
    from rewind_ls.core.capture import Recorder
    from rewind_ls.core.paths import relative_path, session_workspace_root
    from rewind_ls.core.store import Store

    event = _text(payload, "hook_event_name")
    session_id = _text(payload, "session_id")
    cwd = _text(payload, "cwd")
    assert event is not None and session_id is not None and cwd is not None
    if not os.path.isabs(cwd) or not os.path.isdir(cwd):
        raise BadInput(f"hook payload: cwd {cwd!r} is not an existing absolute folder")
    transcript = _text(payload, "transcript_path", required=False)
    tool = payload.get("tool_name")
    tool_input = payload.get("tool_input")
    watched = event in ("SessionStart", "UserPromptSubmit", "Stop", "SessionEnd") or (
        event in ("PreToolUse", "PostToolUse") and (tool in EDIT_TOOLS or tool in SHELL_TOOLS)
    )
    if not watched:
        return Outcome(f"{event}: ignored")
    file_path = None
    if tool in EDIT_TOOLS and event in ("PreToolUse", "PostToolUse"):
        if not isinstance(tool_input, dict):
            raise BadInput(f"hook payload: {tool} tool_input must be an object")
        file_path = tool_input.get(EDIT_TOOLS[str(tool)])
        if not isinstance(file_path, str) or not file_path:
            raise BadInput(f"hook payload: {tool} tool_input has no {EDIT_TOOLS[str(tool)]!r}")
        if _inside_agent_folder(file_path, cwd):
            return Outcome(f"{tool} {file_path}: in the agent's own folder, not recorded")
    # One workspace per session, whatever folder the agent's shell has moved to since.
    root = session_workspace_root(session_id, cwd, os.environ.get("CLAUDE_PROJECT_DIR"))

    with Store.open(root) as store:
        if store.turns_in_state("rewind", "pending"):
            # A restore is running or was killed: finish or roll it back before recording, so
            # its half-swapped files and temporary names are never recorded as the agent's work.
            from rewind_ls.core.apply_disk import recover

            recover(store, wait=True)
        rec = Recorder(store)
        rec.progress = progress_printer()
        if event == "SessionStart":
            store.ensure_session(session_id, "agent", AGENT, transcript)
            open_turn = rec.open_turn_id(session_id)
            if payload.get("source") == "compact" and open_turn is not None:
                # Compaction inside a turn (automatic, mid-task): the changes so far are the turn's.
                rec.scan_into(open_turn, session_id)
                return Outcome(f"SessionStart compact inside {open_turn}")
            rec.attribute_outside_changes()
            return Outcome(f"SessionStart {session_id}")
        if event == "UserPromptSubmit":
            prompt = payload.get("prompt")
            prompt = prompt if isinstance(prompt, str) else ""
            prompt_id = _optional_text(payload, "prompt_id")
            if prompt_id and not store.claim_event(session_id, "prompt", prompt_id, "hook"):
                # The transcript follower recorded this prompt first (the hook came late).
                return Outcome(f"prompt {prompt_id}: already recorded from the transcript")
            turn = rec.begin_turn(
                session_id,
                # A lone surrogate (valid JSON, not UTF-8) could not be stored: replace it.
                prompt.replace("\x00", "").encode("utf-8", "replace").decode("utf-8"),
                "agent",
                AGENT,
                transcript,
                info=json.dumps({"promptId": prompt_id}) if prompt_id else None,
            )
            if prompt_id:
                store.set_event_turn(session_id, "prompt", prompt_id, turn)
            return Outcome(f"turn {turn} opened")
        if event in ("Stop", "SessionEnd"):
            ended = rec.end_turn(session_id)
            message = None
            if ended is not None and event == "Stop" and notify_enabled():
                message = turn_notice(store, ended)
            return Outcome(f"turn {ended} closed", message)
        store.ensure_session(session_id, "agent", AGENT, transcript)
        agent_type = _optional_text(payload, "agent_type")
        agent_id = _optional_text(payload, "agent_id")
        if tool in SHELL_TOOLS:
            from rewind_ls.core.scan import shell_finished, shell_started

            tool_use_id = payload.get("tool_use_id")
            run_id = tool_use_id if isinstance(tool_use_id, str) and tool_use_id else "-"
            if event == "PostToolUse":
                # A shell command may have changed files no edit tool reports: attribute them now.
                turn = rec.ensure_turn(session_id, agent=AGENT)
                changed = rec.scan_into(turn, session_id)
                shell_finished(store, session_id, run_id)
                if agent_type and changed:
                    rec.note_subagent(turn, agent_type, agent_id)
                return Outcome(f"{tool}: {len(changed)} changed file(s)")
            # Other sessions' scans leave files this command changes to this session's PostToolUse.
            shell_started(store, session_id, run_id)
            return Outcome(f"{tool}: command registered")
        assert isinstance(file_path, str)
        rel = relative_path(root, file_path, cwd)
        if event == "PreToolUse":
            turn = rec.before(session_id, rel, "tool", AGENT)
            done = f"{tool} {rel}: before recorded in {turn}"
        else:
            turn = rec.after(session_id, rel, "tool", AGENT)
            done = f"{tool} {rel}: after recorded in {turn}"
        tool_use_id = _optional_text(payload, "tool_use_id")
        if tool_use_id:
            # So the transcript follower does not record this tool call again.
            store.claim_event(session_id, "tool", tool_use_id, "hook", turn)
        if agent_type:
            # Subagent tool calls carry agent_id/agent_type; the turn shows who did the work.
            rec.note_subagent(turn, agent_type, agent_id)
            done += f" (subagent: {agent_type})"
        return Outcome(done)


def turn_notice(store: Any, turn_id: str) -> str | None:
    """The line shown in the agent's UI when a turn that changed files ends."""
    from rewind_ls.core.capture import turn_label

    row = store.turn(turn_id)
    files = [c for c in store.changes(turn_id) if c["after_kind"] is not None]
    if row is None or not files:
        return None
    count = f"{len(files)} file{'s' if len(files) != 1 else ''}"
    return (
        f"rewind-ls: {turn_label(row)} recorded, {count}; "
        f"to go back: rewind-ls rewind {row['number']}"
    )


def run(agent: str, stdin: Any = None) -> int:
    """Entry point of `rewind-ls hook <agent>`: always exit 0 so the agent is never blocked.

    Reading the process's own stdin (`stdin` None) means this is the whole process: it then ends
    with `os._exit(0)` once its output is flushed. The agent waits on every hook, and a normal exit
    costs tens of milliseconds for nothing: the last SQLite connection to close checkpoints the WAL
    into the database and fsyncs it, and the interpreter tears every module down. Every transaction
    is already committed to the WAL, which the next process to open the store reads (or checkpoints).
    """
    from rewind_ls.core.agents import AGENTS

    if agent not in AGENTS:
        sys.stderr.write(
            f"rewind-ls hook: unknown agent {agent!r} (expected one of {', '.join(AGENTS)})\n"
        )
        return 0
    raw = b""
    try:
        raw = (stdin or sys.stdin.buffer).read()
        payload = parse(raw)
        outcome = AGENTS[agent].handler()(payload)
        if outcome.message:
            # Claude Code and Codex show a hook's `systemMessage` to the person (stdout JSON, exit 0).
            sys.stdout.write(json.dumps({"systemMessage": outcome.message}) + "\n")
        if os.environ.get("REWIND_LS_DEBUG"):
            log(f"hook {agent}: {outcome.done}")
    except RewindError as exc:
        sys.stderr.write(f"rewind-ls hook: {exc}\n")
        log(f"hook {agent}: {exc}")
    except Exception as exc:  # never block the agent for our own failure
        sys.stderr.write(f"rewind-ls hook: internal error: {type(exc).__name__}: {exc}\n")
        log(f"hook {agent}: internal error: {type(exc).__name__}: {exc} (payload {raw[:200]!r})")
    if stdin is None:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(0)
    return 0
