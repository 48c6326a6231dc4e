"""Gemini CLI hook payloads -> recorder calls.

Gemini CLI's hooks carry `session_id`, `transcript_path` (its chat file), `cwd`, `hook_event_name`;
BeforeAgent (`prompt`) opens a turn and AfterAgent ends it; BeforeTool runs before a tool and
AfterTool after it (`tool_name`, `tool_input`). `write_file` and `replace` name their file in
`tool_input.file_path`; `run_shell_command` goes through the workspace scan, like Claude's Bash.
The project folder is in the hook's environment as GEMINI_PROJECT_DIR (one workspace per session).
"""

from __future__ import annotations

import os
from typing import Any

from rewind_ls.core.claude_hook import (
    Outcome,
    notify_enabled,
    optional_text,
    progress_printer,
    required_text,
    turn_notice,
)
from rewind_ls.core.errors import BadInput

AGENT = "gemini"
EDIT_TOOLS = {"write_file": "file_path", "replace": "file_path"}
SHELL_TOOLS = {"run_shell_command"}


def gemini_home() -> str:
    return os.path.join(os.path.expanduser("~"), ".gemini")


def _inside_gemini_home(path: str) -> bool:
    home = os.path.realpath(gemini_home())
    return os.path.realpath(path).startswith(home.rstrip(os.sep) + os.sep)


def handle_event(payload: dict[str, Any]) -> Outcome:
    """Record one Gemini CLI hook event."""
    from rewind_ls.core.capture import Recorder
    from rewind_ls.core.paths import relative_path, session_workspace_root
    from rewind_ls.core.store import Store

    event = required_text(payload, "hook_event_name")
    session_id = required_text(payload, "session_id")
    cwd = required_text(payload, "cwd")
    if not os.path.isabs(cwd) or not os.path.isdir(cwd):
        raise BadInput(f"hook payload: cwd {cwd!r} is not an existing absolute folder")
    transcript = optional_text(payload, "transcript_path")
    tool = payload.get("tool_name")
    tool_event = event in ("BeforeTool", "AfterTool")
    watched = event in ("SessionStart", "BeforeAgent", "AfterAgent", "SessionEnd") or (
        tool_event and (tool in EDIT_TOOLS or tool in SHELL_TOOLS)
    )
    if not watched:
        return Outcome(f"{event}: ignored")
    file_path = None
    if tool_event and tool in EDIT_TOOLS:
        tool_input = payload.get("tool_input")
        field = EDIT_TOOLS[str(tool)]
        file_path = tool_input.get(field) if isinstance(tool_input, dict) else None
        if not isinstance(file_path, str) or not file_path:
            raise BadInput(f"hook payload: {tool} tool_input has no {field!r}")
        full = file_path if os.path.isabs(file_path) else os.path.join(cwd, file_path)
        if _inside_gemini_home(full):
            return Outcome(f"{tool} {file_path}: in the agent's own folder, not recorded")
    root = session_workspace_root(session_id, cwd, os.environ.get("GEMINI_PROJECT_DIR"))

    with Store.open(root) as store:
        if store.turns_in_state("rewind", "pending"):
            # A restore is running or was killed: finish or roll it back before recording.
            from rewind_ls.core.apply_disk import recover

            recover(store, wait=True)
        rec = Recorder(store)
        rec.progress = progress_printer()
        if event == "SessionStart":
            store.ensure_session(session_id, "agent", AGENT, transcript)
            rec.attribute_outside_changes()
            return Outcome(f"SessionStart {session_id}")
        if event == "BeforeAgent":
            prompt = payload.get("prompt")
            prompt = prompt if isinstance(prompt, str) else ""
            turn = rec.begin_turn(
                session_id,
                prompt.replace("\x00", "").encode("utf-8", "replace").decode("utf-8"),
                "agent",
                AGENT,
                transcript,
            )
            return Outcome(f"turn {turn} opened")
        if event in ("AfterAgent", "SessionEnd"):
            ended = rec.end_turn(session_id)
            message = None
            if ended is not None and event == "AfterAgent" and notify_enabled():
                message = turn_notice(store, ended)
            return Outcome(f"turn {ended} closed", message)
        store.ensure_session(session_id, "agent", AGENT, transcript)
        if tool in SHELL_TOOLS:
            from rewind_ls.core.scan import shell_finished, shell_started

            # Gemini's payloads carry no tool call id: one shell command at a time per session.
            run_id = "gemini-shell"
            if event == "AfterTool":
                turn = rec.ensure_turn(session_id, agent=AGENT)
                changed = rec.scan_into(turn, session_id)
                shell_finished(store, session_id, run_id)
                return Outcome(f"{tool}: {len(changed)} changed file(s)")
            shell_started(store, session_id, run_id)
            return Outcome(f"{tool}: command registered")
        assert isinstance(file_path, str)
        rel = relative_path(root, file_path, cwd)
        if event == "BeforeTool":
            turn = rec.before(session_id, rel, "tool", AGENT)
            return Outcome(f"{tool} {rel}: before recorded in {turn}")
        turn = rec.after(session_id, rel, "tool", AGENT)
        return Outcome(f"{tool} {rel}: after recorded in {turn}")
