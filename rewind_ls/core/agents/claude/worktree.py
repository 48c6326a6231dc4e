"""A subagent Claude Code runs in a worktree of its own (the Agent tool's `isolation: "worktree"`).

What Claude Code 2.1.332 does (seen with a logging hook): it makes a git worktree at
`<project>/.claude/worktrees/agent-<agent id>` and starts the agent there; the agent's hooks carry
its `agent_id` and that folder as `cwd` (CLAUDE_PROJECT_DIR stays the main project). That checkout
is a workspace of its own (another checkout, never the main one's: `paths.nested_checkout`), so the
agent's edits and shell commands are recorded in its store: in a turn of the same session, named
by the launching prompt (its text, `promptId`, and `launchedFrom`: the main workspace, turn id and
number), closed at `SubagentStop`. The launching turn in the main workspace names the worktree
among its subagents ("general-purpose in .claude/worktrees/agent-…").

The `WorktreeCreate` and `WorktreeRemove` hooks are not used: a `WorktreeCreate` hook REPLACES
Claude Code's own git worktree creation (the hook must make the folder and print its path, or the
worktree fails), and `WorktreeRemove` runs only for worktrees such a hook made; neither fires for
the git worktrees Claude Code makes itself.
"""

from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING, Any, NamedTuple

from rewind_ls.core.agents import hook_steps as steps
from rewind_ls.core.agents.hook_steps import Outcome, optional_text

if TYPE_CHECKING:
    from rewind_ls.core.capture.recorder import Recorder

# Where Claude Code puts the worktrees of `claude -w NAME` and of isolated subagents.
WORKTREES = (".claude", "worktrees")


class Launch(NamedTuple):
    """The main workspace's turn that started a subagent (found by the prompt id its hooks carry)."""

    turn_id: str
    number: int
    prompt: str


def claude_worktree(root: str, path: str) -> str | None:
    """The Claude Code worktree (`<root>/.claude/worktrees/NAME`, a linked git worktree:
    `paths.main_checkout`) holding `path`, as a real path; None when `path` is elsewhere."""
    from rewind_ls.core.fs.paths import is_within, main_checkout

    root_real = os.path.realpath(root)
    folder_of_all = os.path.join(root_real, *WORKTREES)
    full = os.path.realpath(path)
    if not full.startswith(folder_of_all + os.sep):
        return None
    name = os.path.relpath(full, folder_of_all).split(os.sep)[0]
    folder = os.path.join(folder_of_all, name)
    if not is_within(full, folder) or main_checkout(folder) == folder:
        return None  # not a linked worktree (a clone of its own, a submodule)
    return folder


def agent_folder(
    root: str, hook: steps.HookEvent, payload: dict[str, Any], file_path: str | None
) -> str | None:
    """The worktree a subagent's event belongs to: an edit's by the file it names, a shell
    command's or the subagent's stop by the `cwd` it runs in. None for the main agent's events and
    a subagent's outside any Claude Code worktree (recorded in `root` as before)."""
    from rewind_ls.core.fs.paths import main_checkout

    if not optional_text(payload, "agent_id"):
        return None
    target = hook.cwd
    if file_path is not None:
        target = file_path if os.path.isabs(file_path) else os.path.join(hook.cwd, file_path)
    # A session in a worktree itself (`claude -w`) gets its subagents' worktrees beside its own,
    # in the main checkout's `.claude/worktrees/` (seen with 2.1.332).
    for base in dict.fromkeys((root, main_checkout(root))):
        found = claude_worktree(base, target)
        if found is not None:
            # (the session's own worktree is its workspace already: nothing to route)
            return found if found != os.path.realpath(root) else None
    return None


def note_launch(
    root: str, folder: str, hook: steps.HookEvent, payload: dict[str, Any]
) -> Launch | None:
    """The launching turn in the main workspace `root`, which now names the worktree among its
    subagents (what a person listing the main session's turns sees); None when that prompt was
    not recorded there (hooks installed mid-session)."""
    from rewind_ls.core.capture.recorder import Recorder
    from rewind_ls.core.fs.paths import is_below
    from rewind_ls.core.store import Store

    prompt_id = optional_text(payload, "prompt_id")
    if not prompt_id:
        return None
    root_real = os.path.realpath(root)
    # Below the workspace: relative to it; beside it (a `claude -w` session's subagent): whole.
    where = (
        os.path.relpath(folder, root_real).replace(os.sep, "/")
        if is_below(folder, root_real)
        else folder
    )
    label = f"{optional_text(payload, 'agent_type') or 'subagent'} in {where}"
    with Store.open(root) as store:
        event = store.event(hook.session_id, "prompt", prompt_id)
        turn = store.turn(event.turn_id) if event is not None and event.turn_id else None
        if turn is None:
            return None
        with store.transaction():  # the main session's own hooks may note its turn meanwhile
            Recorder(store).note_subagent(turn.id, label, optional_text(payload, "agent_id"))
        return Launch(turn.id, turn.number, turn.prompt)


def enter(
    rec: Recorder,
    hook: steps.HookEvent,
    payload: dict[str, Any],
    root: str,
    launch: Launch | None,
    agent: str,
    stop: bool,
) -> Outcome | None:
    """In the worktree's store: the subagent's stop (`stop`: its SubagentStop) closes its turn
    (the Outcome); any other event finds the turn of its launching prompt open, opening it (and
    closing an older one) first."""
    if stop:
        return steps.close_turn(rec, hook.session_id, notify=False)
    prompt_id = optional_text(payload, "prompt_id")
    open_turn = rec.open_turn_id(hook.session_id)
    if open_turn is not None and _prompt_of(rec, open_turn) == prompt_id:
        return None
    info: dict[str, Any] = {}
    if prompt_id:
        info["promptId"] = prompt_id
    if launch is not None:
        info["launchedFrom"] = {
            "workspace": os.path.realpath(root),
            "turn": launch.turn_id,
            "number": launch.number,
        }
    prompt = launch.prompt if launch is not None else "(a subagent's work in its worktree)"
    steps.open_turn(rec, hook.session_id, prompt, agent, hook.transcript, json.dumps(info))
    return None


def _prompt_of(rec: Recorder, turn_id: str) -> str | None:
    from rewind_ls.core.capture.recorder import turn_info

    found = turn_info(rec.store.turn(turn_id)).get("promptId")
    return found if isinstance(found, str) else None
