"""Claude Code hook payloads -> recorder calls.

Runs in its own process on every agent edit, so it imports only the core (stdlib + the store) and
never fails the agent: `run()` turns every error into a message on stderr and in the log, exit 0.
"""

from __future__ import annotations

import json
import os
import sys
import time
from typing import TYPE_CHECKING, Any

from rewind_ls.core import config
from rewind_ls.core import hook_steps as steps
from rewind_ls.core.errors import BadInput, RewindError
from rewind_ls.core.hook_steps import Outcome, optional_text

if TYPE_CHECKING:
    from rewind_ls.core.capture import Recorder

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
EVENTS = steps.CLAUDE_EVENTS


def log(message: str) -> None:
    """Append to the log; never raises (the log is a courtesy, not a requirement)."""
    try:
        config.ensure_private_dir(config.home_dir())
        fd = os.open(config.log_path(), os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        with os.fdopen(fd, "a", encoding="utf-8", errors="replace") as f:
            f.write(f"{time.strftime('%Y-%m-%dT%H:%M:%S')} {message}\n")
    except OSError:
        pass


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


def handle(payload: dict[str, Any]) -> str:
    """Record one hook event. Returns a short description of what was done (for the log)."""
    return handle_event(payload).done


def handle_event(payload: dict[str, Any]) -> Outcome:
    """Record one hook event."""
    from rewind_ls.core.paths import session_workspace_root
    from rewind_ls.core.store import Store

    hook = steps.HookEvent(payload, strict_transcript=True)
    if not hook.watched(EVENTS, EDIT_TOOLS, SHELL_TOOLS):
        return Outcome(f"{hook.name}: ignored")
    file_path, skipped = steps.edit_target(hook, payload, EVENTS, EDIT_TOOLS, config.claude_dir())
    if skipped is not None:
        return skipped
    # One workspace per session, whatever folder the agent's shell has moved to since.
    root = session_workspace_root(hook.session_id, hook.cwd, os.environ.get("CLAUDE_PROJECT_DIR"))

    with Store.open(root) as store:
        rec = steps.recorder(store)
        if hook.name == EVENTS.prompt:
            return _prompt(rec, hook, payload)
        done = steps.session_event(rec, hook, EVENTS, AGENT, payload.get("source"))
        if done is not None:
            return done
        store.ensure_session(hook.session_id, "agent", AGENT, hook.transcript)
        if hook.tool in SHELL_TOOLS:
            return _shell(rec, hook, payload)
        assert file_path is not None
        return _edit(rec, hook, payload, root, file_path)


def _prompt(rec: Recorder, hook: steps.HookEvent, payload: dict[str, Any]) -> Outcome:
    """A prompt opens a turn, unless the transcript follower recorded it first."""
    prompt_id = optional_text(payload, "prompt_id")
    if prompt_id and not rec.store.claim_event(hook.session_id, "prompt", prompt_id, "hook"):
        # The transcript follower recorded this prompt first (the hook came late).
        return Outcome(f"prompt {prompt_id}: already recorded from the transcript")
    info = json.dumps({"promptId": prompt_id}) if prompt_id else None
    prompt = payload.get("prompt")
    turn = steps.open_turn(rec, hook.session_id, prompt, AGENT, hook.transcript, info)
    if prompt_id:
        rec.store.set_event_turn(hook.session_id, "prompt", prompt_id, turn)
    return Outcome(f"turn {turn} opened")


def _shell(rec: Recorder, hook: steps.HookEvent, payload: dict[str, Any]) -> Outcome:
    """A Bash call; a subagent's that changed files is noted on the turn."""
    outcome, turn, changed = steps.shell_event(
        rec,
        hook,
        EVENTS,
        steps.run_id(payload),
        lambda: rec.ensure_turn(hook.session_id, agent=AGENT),
    )
    agent_type = optional_text(payload, "agent_type")
    if agent_type and turn is not None and changed:
        rec.note_subagent(turn, agent_type, optional_text(payload, "agent_id"))
    return outcome


def _edit(
    rec: Recorder, hook: steps.HookEvent, payload: dict[str, Any], root: str, file_path: str
) -> Outcome:
    """An edit tool's file, before it runs or after; the tool call is claimed, so the transcript
    follower does not record it again."""
    done, turn = steps.record_edits(rec, hook, EVENTS, root, [file_path], AGENT)
    assert turn is not None
    done += f" in {turn}"
    tool_use_id = optional_text(payload, "tool_use_id")
    if tool_use_id:
        rec.store.claim_event(hook.session_id, "tool", tool_use_id, "hook", turn)
    agent_type = optional_text(payload, "agent_type")
    if agent_type:
        # Subagent tool calls carry agent_id/agent_type; the turn shows who did the work.
        rec.note_subagent(turn, agent_type, optional_text(payload, "agent_id"))
        done += f" (subagent: {agent_type})"
    return Outcome(done)


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
