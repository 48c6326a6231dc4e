"""Gemini CLI hook payloads -> recorder calls.

Gemini CLI's hooks carry `session_id`, `transcript_path` (its chat file), `cwd`, `hook_event_name`;
BeforeAgent (`prompt`) opens a turn and AfterAgent ends it; BeforeTool runs before a tool and
AfterTool after it (`tool_name`, `tool_input`). `write_file` and `replace` name their file in
`tool_input.file_path`; `run_shell_command` goes through the workspace scan, like Claude's Bash.
The project folder is in the hook's environment as GEMINI_PROJECT_DIR (one workspace per session).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from rewind_ls.core.agents import hook_steps as steps
from rewind_ls.core.agents.hook_steps import Outcome

if TYPE_CHECKING:
    pass

AGENT = "gemini"
EDIT_TOOLS = {"write_file": "file_path", "replace": "file_path"}
SHELL_TOOLS = {"run_shell_command"}
EVENTS = steps.EventNames(
    "SessionStart", "BeforeAgent", "AfterAgent", "SessionEnd", "BeforeTool", "AfterTool"
)
# Gemini's payloads carry no tool call id: one shell command at a time per session.
SHELL_RUN = "gemini-shell"


def gemini_home() -> str:
    return os.path.join(os.path.expanduser("~"), ".gemini")


def handle_event(payload: dict[str, Any]) -> Outcome:
    """Record one Gemini CLI hook event."""
    from rewind_ls.core.fs.paths import session_workspace_root
    from rewind_ls.core.store import Store

    hook = steps.HookEvent(payload, names=EVENTS)
    if not hook.watched(EVENTS, EDIT_TOOLS, SHELL_TOOLS):
        return Outcome(f"{hook.name}: ignored")
    file_path, skipped = steps.edit_target(hook, payload, EVENTS, EDIT_TOOLS, gemini_home())
    if skipped is not None:
        return skipped
    root = session_workspace_root(hook.session_id, hook.cwd, os.environ.get("GEMINI_PROJECT_DIR"))

    with Store.open(root) as store:
        rec = steps.recorder(store)
        if hook.name == EVENTS.prompt:
            with steps.PromptLock(store, hook.session_id):  # a doubled hook: one turn
                return steps.open_stamped_prompt(rec, hook, payload, AGENT)
        done = steps.session_event(rec, hook, EVENTS, AGENT)
        if done is not None:
            return done
        if hook.tool in SHELL_TOOLS:  # an edit's session activity is in record_edits' transaction
            store.ensure_session(hook.session_id, "agent", AGENT, hook.transcript)
            outcome, _, _ = steps.shell_event(
                rec, hook, EVENTS, SHELL_RUN, lambda: rec.ensure_turn(hook.session_id, agent=AGENT)
            )
            return outcome
        assert file_path is not None
        nested = steps.in_other_checkout(root, file_path, hook.cwd)
        if nested is not None:
            return Outcome(f"{hook.tool} {file_path}: in another checkout ({nested}), not recorded")
        recorded, turn = steps.record_edits(rec, hook, EVENTS, root, [file_path], AGENT)
        return Outcome(f"{recorded} in {turn}")
