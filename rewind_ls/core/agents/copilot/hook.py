"""GitHub Copilot CLI hook payloads -> recorder calls.

Copilot CLI (1.0.102) reads hook files from `.github/hooks/*.json` in a trusted project and from
`~/.copilot/hooks/*.json`. Besides its own camelCase form it takes Claude Code's: events named
`SessionStart`, `UserPromptSubmit`, `PreToolUse`, `PostToolUse`, `PostToolUseFailure`, `Stop`,
`SessionEnd`, `{matcher, hooks: [{type: "command", command}]}` groups; hooks so configured get
Claude-shaped payloads (`hook_event_name`, `session_id`, `cwd`, `tool_name`, `tool_input`,
`transcript_path` on Stop), which is the form `rewind-ls install copilot` writes. Its tools appear
under Claude's names there: `create` as `Write` and `edit` as `Edit`, both naming their file in
`tool_input.path`, and the shell as `Bash`. The payloads carry no tool call id: one shell command
at a time per session. A shell command exiting non-zero still fires PostToolUse (its exit code in
`tool_result`); a tool that fails (an edit whose `old_str` is missing) fires PostToolUseFailure with
an `error` instead. The project folder is in the hook's environment as COPILOT_PROJECT_DIR.
"""

from __future__ import annotations

import os
from typing import Any

from rewind_ls.core.agents import hook_steps as steps
from rewind_ls.core.agents.hook_steps import Outcome

AGENT = "copilot"
EDIT_TOOLS = {"Write": "path", "Edit": "path"}
SHELL_TOOLS = {"Bash"}
EVENTS = steps.CLAUDE_EVENTS  # Claude's names, its PostToolUseFailure included
SHELL_RUN = "copilot-shell"


def copilot_home() -> str:
    """Copilot CLI's own folder: $COPILOT_HOME, else ~/.copilot."""
    return os.environ.get("COPILOT_HOME") or os.path.join(os.path.expanduser("~"), ".copilot")


def handle_event(payload: dict[str, Any]) -> Outcome:
    """Record one Copilot CLI hook event."""
    from rewind_ls.core.fs.paths import session_workspace_root
    from rewind_ls.core.store import Store

    hook = steps.HookEvent(payload, names=EVENTS)
    if not hook.watched(EVENTS, EDIT_TOOLS, SHELL_TOOLS):
        return Outcome(f"{hook.name}: ignored")
    file_path, skipped = steps.edit_target(hook, payload, EVENTS, EDIT_TOOLS, copilot_home())
    if skipped is not None:
        return skipped
    root = session_workspace_root(hook.session_id, hook.cwd, os.environ.get("COPILOT_PROJECT_DIR"))

    with Store.open(root) as store:
        rec = steps.recorder(store)
        if hook.name == EVENTS.prompt:
            with steps.PromptLock(store, hook.session_id):  # a doubled hook: one turn
                return steps.open_stamped_prompt(rec, hook, payload, AGENT)
        done = steps.session_event(rec, hook, EVENTS, AGENT, payload.get("source"))
        if done is not None:
            return done
        if hook.tool in SHELL_TOOLS:  # an edit's session activity is in record_edits' transaction
            store.ensure_session(hook.session_id, "agent", AGENT, hook.transcript)
            outcome, _, _ = steps.shell_event(
                rec, hook, EVENTS, SHELL_RUN, lambda: rec.ensure_turn(hook.session_id, agent=AGENT)
            )
            return outcome
        assert file_path is not None
        recorded, turn = steps.record_edits(rec, hook, EVENTS, root, [file_path], AGENT)
        return Outcome(f"{recorded} in {turn}")
