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

from rewind_ls.core import hook_steps as steps
from rewind_ls.core.hook_steps import Outcome

AGENT = "gemini"
EDIT_TOOLS = {"write_file": "file_path", "replace": "file_path"}
SHELL_TOOLS = {"run_shell_command"}
TURN_EVENTS = ("SessionStart", "BeforeAgent", "AfterAgent", "SessionEnd")
TOOL_EVENTS = ("BeforeTool", "AfterTool")


def gemini_home() -> str:
    return os.path.join(os.path.expanduser("~"), ".gemini")


def handle_event(payload: dict[str, Any]) -> Outcome:
    """Record one Gemini CLI hook event."""
    from rewind_ls.core.paths import relative_path, session_workspace_root
    from rewind_ls.core.store import Store

    hook = steps.HookEvent(payload)
    event, session_id, cwd, transcript, tool = hook.parts()
    if not hook.watched(TURN_EVENTS, TOOL_EVENTS, EDIT_TOOLS, SHELL_TOOLS):
        return Outcome(f"{event}: ignored")
    file_path = None
    if tool in EDIT_TOOLS and event in TOOL_EVENTS:
        file_path = steps.tool_file(payload, tool, EDIT_TOOLS[tool])
        if steps.inside_folder(file_path, cwd, gemini_home()):
            return Outcome(f"{tool} {file_path}: in the agent's own folder, not recorded")
    root = session_workspace_root(session_id, cwd, os.environ.get("GEMINI_PROJECT_DIR"))

    with Store.open(root) as store:
        rec = steps.recorder(store)
        if event == "SessionStart":
            return steps.session_start(rec, session_id, AGENT, transcript, None)
        if event == "BeforeAgent":
            turn = steps.open_turn(rec, session_id, payload.get("prompt"), AGENT, transcript)
            return Outcome(f"turn {turn} opened")
        if event in ("AfterAgent", "SessionEnd"):
            return steps.close_turn(rec, session_id, notify=event == "AfterAgent")
        store.ensure_session(session_id, "agent", AGENT, transcript)
        if tool in SHELL_TOOLS:
            # Gemini's payloads carry no tool call id: one shell command at a time per session.
            run_id = "gemini-shell"
            if event == "AfterTool":
                turn = rec.ensure_turn(session_id, agent=AGENT)
                changed = steps.shell_finished(rec, session_id, run_id, turn)
                return Outcome(f"{tool}: {len(changed)} changed file(s)")
            steps.shell_started(rec, session_id, run_id)
            return Outcome(f"{tool}: command registered")
        assert isinstance(file_path, str)
        rel = relative_path(root, file_path, cwd)
        when = "before" if event == "BeforeTool" else "after"
        turn = steps.record_path(rec, session_id, rel, event == "BeforeTool", AGENT)
        return Outcome(f"{tool} {rel}: {when} recorded in {turn}")
