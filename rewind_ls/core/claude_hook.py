"""Claude Code hook payloads -> recorder calls.

Runs in its own process on every agent edit, so it imports only the core (stdlib + the store) and
never fails the agent: `run()` turns every error into a message on stderr and in the log, exit 0.
"""

from __future__ import annotations

import json
import os
import sys
import time
from typing import Any

from rewind_ls.core import config
from rewind_ls.core import hook_steps as steps
from rewind_ls.core.errors import BadInput, RewindError
from rewind_ls.core.hook_steps import Outcome, optional_text

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
TURN_EVENTS = ("SessionStart", "UserPromptSubmit", "Stop", "SessionEnd")
TOOL_EVENTS = ("PreToolUse", "PostToolUse")


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


def _inside_agent_folder(path: str, cwd: str) -> bool:
    """A path in the agent's own folder (plans, todos): the agent's business, not the project's."""
    return steps.inside_folder(path, cwd, config.claude_dir())


def handle(payload: dict[str, Any]) -> str:
    """Record one hook event. Returns a short description of what was done (for the log)."""
    return handle_event(payload).done


def handle_event(payload: dict[str, Any]) -> Outcome:
    """Record one hook event."""
    from rewind_ls.core.paths import relative_path, session_workspace_root
    from rewind_ls.core.store import Store

    hook = steps.HookEvent(payload, strict_transcript=True)
    event, session_id, cwd, transcript, tool = hook.parts()
    if not hook.watched(TURN_EVENTS, TOOL_EVENTS, EDIT_TOOLS, SHELL_TOOLS):
        return Outcome(f"{event}: ignored")
    file_path = None
    if tool in EDIT_TOOLS and event in TOOL_EVENTS:
        file_path = steps.tool_file(payload, tool, EDIT_TOOLS[tool])
        if _inside_agent_folder(file_path, cwd):
            return Outcome(f"{tool} {file_path}: in the agent's own folder, not recorded")
    # One workspace per session, whatever folder the agent's shell has moved to since.
    root = session_workspace_root(session_id, cwd, os.environ.get("CLAUDE_PROJECT_DIR"))

    with Store.open(root) as store:
        rec = steps.recorder(store)
        if event == "SessionStart":
            source = payload.get("source")
            return steps.session_start(rec, session_id, AGENT, transcript, source)
        if event == "UserPromptSubmit":
            prompt_id = optional_text(payload, "prompt_id")
            if prompt_id and not store.claim_event(session_id, "prompt", prompt_id, "hook"):
                # The transcript follower recorded this prompt first (the hook came late).
                return Outcome(f"prompt {prompt_id}: already recorded from the transcript")
            info = json.dumps({"promptId": prompt_id}) if prompt_id else None
            prompt = payload.get("prompt")
            turn = steps.open_turn(rec, session_id, prompt, AGENT, transcript, info)
            if prompt_id:
                store.set_event_turn(session_id, "prompt", prompt_id, turn)
            return Outcome(f"turn {turn} opened")
        if event in ("Stop", "SessionEnd"):
            return steps.close_turn(rec, session_id, notify=event == "Stop")
        store.ensure_session(session_id, "agent", AGENT, transcript)
        agent_type = optional_text(payload, "agent_type")
        agent_id = optional_text(payload, "agent_id")
        if tool in SHELL_TOOLS:
            tool_use_id = payload.get("tool_use_id")
            run_id = tool_use_id if isinstance(tool_use_id, str) and tool_use_id else "-"
            if event == "PostToolUse":
                turn = rec.ensure_turn(session_id, agent=AGENT)
                changed = steps.shell_finished(rec, session_id, run_id, turn)
                if agent_type and changed:
                    rec.note_subagent(turn, agent_type, agent_id)
                return Outcome(f"{tool}: {len(changed)} changed file(s)")
            steps.shell_started(rec, session_id, run_id)
            return Outcome(f"{tool}: command registered")
        assert isinstance(file_path, str)
        rel = relative_path(root, file_path, cwd)
        when = "before" if event == "PreToolUse" else "after"
        turn = steps.record_path(rec, session_id, rel, event == "PreToolUse", AGENT)
        done = f"{tool} {rel}: {when} recorded in {turn}"
        tool_use_id = optional_text(payload, "tool_use_id")
        if tool_use_id:
            # So the transcript follower does not record this tool call again.
            store.claim_event(session_id, "tool", tool_use_id, "hook", turn)
        if agent_type:
            # Subagent tool calls carry agent_id/agent_type; the turn shows who did the work.
            rec.note_subagent(turn, agent_type, agent_id)
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
