"""Codex CLI hook payloads -> recorder calls.

Codex sends Claude-shaped payloads plus a `turn_id` on every event of a turn. Its one edit tool is
`apply_patch` (`tool_input.command` holds the patch): every path the patch names is captured before
it applies (PreToolUse) and after (PostToolUse). Shell commands (`tool_name` "Bash") go through the
workspace scan, like Claude Code's. A turn is opened by UserPromptSubmit and keyed by `turn_id`
(kept in the turn's info): a tool call whose `turn_id` is not the open turn's opens a new turn, so a
missed prompt hook never merges two Codex turns into one.
"""

from __future__ import annotations

import json
import os
from typing import Any

from rewind_ls.core.agents import hook_steps as steps
from rewind_ls.core.agents.hook_steps import Outcome, optional_text
from rewind_ls.core.errors import BadInput

AGENT = "codex"
PATCH_TOOLS = {"apply_patch"}
SHELL_TOOLS = {"Bash"}
EVENTS = steps.CODEX_EVENTS  # Claude's event names, and its own Interrupt


def patch_paths(tool_input: Any, cwd: str) -> list[str]:
    """The absolute paths an apply_patch call touches (relative headers are relative to `cwd`)."""
    from rewind_ls.core.agents.codex.apply_patch import touched_paths

    patch = tool_input.get("command") if isinstance(tool_input, dict) else None
    if not isinstance(patch, str):
        raise BadInput("hook payload: apply_patch tool_input has no 'command' string (the patch)")
    return [p if os.path.isabs(p) else os.path.join(cwd, p) for p in touched_paths(patch)]


def _open_turn_of(rec: Any, session_id: str, turn_id: str | None) -> str | None:
    """The open turn, when it is Codex turn `turn_id`'s."""
    from rewind_ls.core.capture.recorder import turn_info

    open_turn = rec.open_turn_id(session_id)
    if open_turn is None or not turn_id:
        return None
    return str(open_turn) if turn_info(rec.store.turn(open_turn)).get("turnId") == turn_id else None


def _turn_for(rec: Any, session_id: str, turn_id: str | None) -> str:
    """The recorder turn of Codex turn `turn_id`, opening one when it is not the open turn."""
    from rewind_ls.core.capture.recorder import turn_info

    open_turn = rec.open_turn_id(session_id)
    if open_turn is not None:
        known = turn_info(rec.store.turn(open_turn)).get("turnId")
        if turn_id is None or known in (None, turn_id):
            return str(open_turn)
    return str(
        rec.begin_turn(
            session_id,
            "(edits outside a recorded prompt)",
            "agent",
            AGENT,
            info=json.dumps({"turnId": turn_id}) if turn_id else None,
        )
    )


def _prompt(
    rec: Any, hook: steps.HookEvent, payload: dict[str, Any], turn_id: str | None
) -> Outcome:
    """A prompt opens the turn of its `turn_id`, unless it is open already."""
    opened = _open_turn_of(rec, hook.session_id, turn_id)
    if opened is not None:
        # Its turn is open already: the same hook delivered twice (two installs), or this hook
        # ran before and died after opening it (a hook server's child killed before its reply,
        # run again by the hook command).
        return Outcome(f"turn {opened} opened (codex turn {turn_id})")
    info = json.dumps({"turnId": turn_id}) if turn_id else None
    prompt = payload.get("prompt")
    turn = steps.open_turn(rec, hook.session_id, prompt, AGENT, hook.transcript, info)
    return Outcome(f"turn {turn} opened (codex turn {turn_id})")


def handle_event(payload: dict[str, Any]) -> Outcome:
    """Record one Codex hook event."""
    from rewind_ls.core.agents.registry import codex_home
    from rewind_ls.core.fs.paths import session_workspace_root
    from rewind_ls.core.store import Store

    hook = steps.HookEvent(payload, names=EVENTS)
    turn_id = optional_text(payload, "turn_id")
    if not hook.watched(EVENTS, PATCH_TOOLS, SHELL_TOOLS):
        return Outcome(f"{hook.name}: ignored")
    files: list[str] = []
    if hook.is_tool_event(EVENTS, PATCH_TOOLS):
        files = [
            p
            for p in patch_paths(payload.get("tool_input"), hook.cwd)
            if not steps.inside_folder(p, hook.cwd, codex_home())
        ]
    root = session_workspace_root(hook.session_id, hook.cwd, None)
    # Files of another checkout below the workspace (a git worktree there) are its own.
    files = [p for p in files if steps.in_other_checkout(root, p, hook.cwd) is None]

    with Store.open(root) as store:
        rec = steps.recorder(store)
        if hook.name == EVENTS.prompt:
            with steps.PromptLock(store, hook.session_id):  # a doubled hook: one turn
                return _prompt(rec, hook, payload, turn_id)
        done = steps.session_event(rec, hook, EVENTS, AGENT, payload.get("source"))
        if done is not None:
            return done
        if hook.tool in SHELL_TOOLS:  # an edit's session activity is in record_edits' transaction
            store.ensure_session(hook.session_id, "agent", AGENT, hook.transcript)
        turn = _turn_for(rec, hook.session_id, turn_id)
        if hook.tool in SHELL_TOOLS:
            return steps.shell_event(rec, hook, EVENTS, steps.run_id(payload), lambda: turn)[0]
        recorded, _ = steps.record_edits(rec, hook, EVENTS, root, files, AGENT)
        return Outcome(f"{recorded} in {turn}")
