"""OpenCode hook payloads -> recorder calls.

OpenCode has no hook commands; its plugins get events in-process. The plugin `rewind-ls install
opencode` writes (`opencode.plugin`) turns each into a payload of the common shape on the hook
command's stdin, the event named as OpenCode names it: `session.created` (a session starts),
`chat.message` (the person's message: a turn opens, `prompt`), `tool.execute.before` /
`tool.execute.after` (`tool_name`, `tool_input` = the tool's args, `tool_use_id` = its callID),
`session.idle` (the agent finished answering: the turn closes), `session.deleted`. A subagent's
(`task` tool) child session is folded into the person's session by the plugin, `agent_id` naming
the child, so its edits belong to the turn that started it.

Edit tools (1.18): `write` and `edit` name their file in `filePath`; `apply_patch` (what OpenCode
offers GPT models instead) carries Codex's patch format in `patchText`, paths relative to the
project folder. `bash` goes through the workspace scan like Claude's Bash. The workspace is the
folder OpenCode runs in (the plugin's `directory`), the same for every event of a session. A tool
that fails (an edit whose `oldString` is missing) gets no `tool.execute.after`: its `before` alone
records nothing as changed; a command exiting non-zero still gets its `after` (seen with 1.18.33).
"""

from __future__ import annotations

import os
from typing import Any

from rewind_ls.core.agents import hook_steps as steps
from rewind_ls.core.agents.hook_steps import Outcome
from rewind_ls.core.errors import BadInput

AGENT = "opencode"
EDIT_TOOLS = {"write": "filePath", "edit": "filePath"}
PATCH_TOOLS = {"apply_patch"}
SHELL_TOOLS = {"bash"}
EVENTS = steps.EventNames(
    "session.created",
    "chat.message",
    "session.idle",
    "session.deleted",
    "tool.execute.before",
    "tool.execute.after",
)


def opencode_data() -> str:
    """OpenCode's own data folder (its database, snapshots, tool output): never the project's."""
    base = os.environ.get("XDG_DATA_HOME") or os.path.join(
        os.path.expanduser("~"), ".local", "share"
    )
    return os.path.join(base, "opencode")


def patch_paths(tool_input: Any, cwd: str) -> list[str]:
    """The absolute paths an apply_patch call touches (relative headers: relative to `cwd`)."""
    from rewind_ls.core.agents.codex.apply_patch import touched_paths

    patch = tool_input.get("patchText") if isinstance(tool_input, dict) else None
    if not isinstance(patch, str):
        raise BadInput("hook payload: apply_patch tool_input has no 'patchText' string")
    return [p if os.path.isabs(p) else os.path.join(cwd, p) for p in touched_paths(patch)]


def _files(hook: steps.HookEvent, payload: dict[str, Any]) -> list[str]:
    """The files an edit tool's event names, without those in OpenCode's own folder."""
    if hook.tool in EDIT_TOOLS:
        paths = [steps.tool_file(payload, hook.tool, EDIT_TOOLS[hook.tool])]
    else:
        paths = patch_paths(payload.get("tool_input"), hook.cwd)
    return [p for p in paths if not steps.inside_folder(p, hook.cwd, opencode_data())]


def handle_event(payload: dict[str, Any]) -> Outcome:
    """Record one OpenCode plugin event."""
    from rewind_ls.core.fs.paths import session_workspace_root
    from rewind_ls.core.store import Store

    hook = steps.HookEvent(payload, names=EVENTS)
    if not hook.watched(EVENTS, EDIT_TOOLS, PATCH_TOOLS, SHELL_TOOLS):
        return Outcome(f"{hook.name}: ignored")
    files: list[str] = []
    if hook.is_tool_event(EVENTS, {**EDIT_TOOLS, **dict.fromkeys(PATCH_TOOLS)}):
        files = _files(hook, payload)
        if not files:
            return Outcome(f"{hook.tool}: in OpenCode's own folder, not recorded")
    # The plugin's `directory` is the folder OpenCode runs in: the session's one workspace.
    root = session_workspace_root(hook.session_id, hook.cwd, hook.cwd)

    with Store.open(root) as store:
        rec = steps.recorder(store)
        if hook.name == EVENTS.prompt:
            opened = steps.open_turn(rec, hook.session_id, payload.get("prompt"), AGENT, None)
            return Outcome(f"turn {opened} opened")
        done = steps.session_event(rec, hook, EVENTS, AGENT)
        if done is not None:
            return done
        if hook.tool in SHELL_TOOLS:  # an edit's session activity is in record_edits' transaction
            store.ensure_session(hook.session_id, "agent", AGENT, None)
            outcome, _, _ = steps.shell_event(
                rec,
                hook,
                EVENTS,
                steps.run_id(payload),
                lambda: rec.ensure_turn(hook.session_id, agent=AGENT),
            )
            return outcome
        recorded, turn = steps.record_edits(rec, hook, EVENTS, root, files, AGENT)
        return Outcome(f"{recorded} in {turn}")
