"""Claude Code hook payloads -> recorder calls.

Runs in the hook process (`hook_process`) on every agent edit, so it imports only the core (stdlib
+ the store).
"""

from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING, Any

from rewind_ls.core.agents import hook_steps as steps
from rewind_ls.core.agents.claude.tools import EDIT_TOOLS, SHELL_TOOLS
from rewind_ls.core.agents.hook_steps import Outcome, optional_text
from rewind_ls.core.fs import config
from rewind_ls.core.model import BACKGROUND_AGENT

if TYPE_CHECKING:
    from rewind_ls.core.capture.recorder import Recorder

AGENT = "claude-code"

BASH_DEFAULT_MS = 120_000  # Claude Code's Bash time limit when the call names none
BASH_MAX_MS = 600_000  # and the longest it accepts
EVENTS = steps.CLAUDE_EVENTS
# Hooked only to close an isolated subagent's turn in its worktree (`worktree.py`).
SUBAGENT_STOP = "SubagentStop"
# A subagent starts: its payload names its `agent_id` and the `prompt_id` of the turn that launched
# it (2.1.332), which its later hooks no longer carry once the person has sent another prompt.
SUBAGENT_START = "SubagentStart"


def handle_event(payload: dict[str, Any]) -> Outcome:
    """Record one hook event."""
    from rewind_ls.core.fs.paths import session_workspace_root
    from rewind_ls.core.store import Store, has_store

    hook = steps.HookEvent(payload, strict_transcript=True, names=EVENTS)
    subagent_stop = hook.raw_name == SUBAGENT_STOP
    started = hook.raw_name == SUBAGENT_START
    if not (subagent_stop or started) and not hook.watched(EVENTS, EDIT_TOOLS, SHELL_TOOLS):
        return Outcome(f"{hook.name}: ignored")
    file_path, skipped = steps.edit_target(hook, payload, EVENTS, EDIT_TOOLS, config.claude_dir())
    if skipped is not None:
        return skipped
    # One workspace per session, whatever folder the agent's shell has moved to since.
    root = session_workspace_root(hook.session_id, hook.cwd, os.environ.get("CLAUDE_PROJECT_DIR"))
    if started:  # noted in the session's own workspace, where its launching turn is
        with Store.open(root) as store:
            return _subagent_start(steps.recorder(store), hook, payload)
    folder = launch = None
    if optional_text(payload, "agent_id"):  # (the main agent's events skip the import)
        from rewind_ls.core.agents.claude import worktree

        # A subagent in a worktree of its own: its work goes to that checkout's workspace.
        folder = worktree.agent_folder(root, hook, payload, file_path)
        if folder is not None and not subagent_stop:
            launch = worktree.note_launch(root, folder, hook, payload)
    if subagent_stop and (folder is None or not has_store(folder)):
        # (no store: the subagent recorded nothing there, and Claude Code removes such a worktree)
        return Outcome(f"{hook.raw_name}: ignored")

    with Store.open(folder or root) as store:
        rec = steps.recorder(store)
        if folder is not None:
            from rewind_ls.core.agents.claude import worktree

            done = worktree.enter(rec, hook, payload, root, launch, AGENT, subagent_stop)
            if done is not None:
                return done
            root = folder
        if hook.name == EVENTS.prompt:
            with steps.PromptLock(store, hook.session_id):  # a doubled hook: one turn
                return _prompt(rec, hook, payload)
        done = steps.session_event(rec, hook, EVENTS, AGENT, payload.get("source"))
        if done is not None:
            return done
        if hook.tool in SHELL_TOOLS:
            store.ensure_session(hook.session_id, "agent", AGENT, hook.transcript)
            return _shell(rec, hook, payload)
        assert file_path is not None
        nested = steps.in_other_checkout(root, file_path, hook.cwd)
        if nested is not None:
            return Outcome(f"{hook.tool} {file_path}: in another checkout ({nested}), not recorded")
        return _edit(rec, hook, payload, root, file_path)


def _prompt(rec: Recorder, hook: steps.HookEvent, payload: dict[str, Any]) -> Outcome:
    """A prompt opens a turn, unless the transcript follower recorded it first."""
    prompt_id = optional_text(payload, "prompt_id")
    if prompt_id and not rec.store.claim_event(hook.session_id, "prompt", prompt_id, "hook"):
        earlier = rec.store.event(hook.session_id, "prompt", prompt_id)
        # A hook's claim without its turn: that hook died between the two (killed, or a hook
        # server's child killed before its reply, whose hook command runs it again here); the
        # prompt would be lost if this run gave up on it too.
        if earlier is None or earlier.source != "hook" or earlier.turn_id is not None:
            # The transcript follower recorded this prompt first (the hook came late), or the
            # same hook delivered twice (two installs) did, under the same `PromptLock`.
            source = earlier.source if earlier is not None else "elsewhere"
            return Outcome(f"prompt {prompt_id}: already recorded (by the {source})")
        opened = _turn_of_prompt(rec, hook.session_id, prompt_id)
        if opened is not None:  # it died after opening the turn: only the link was missing
            rec.store.set_event_turn(hook.session_id, "prompt", prompt_id, opened)
            return Outcome(f"turn {opened} opened")
    from rewind_ls.core.agents.claude.notifications import is_notification_text

    prompt = payload.get("prompt")
    if isinstance(prompt, str) and is_notification_text(prompt):
        return _notification(rec, hook, prompt, prompt_id)
    info = json.dumps({"promptId": prompt_id}) if prompt_id else None
    turn = steps.open_turn(rec, hook.session_id, prompt, AGENT, hook.transcript, info)
    if prompt_id:
        rec.store.set_event_turn(hook.session_id, "prompt", prompt_id, turn)
    return Outcome(f"turn {turn} opened")


def _notification(
    rec: Recorder, hook: steps.HookEvent, prompt: str, prompt_id: str | None
) -> Outcome:
    """A task notification (`claude.notifications`) opens no turn: its prompt id is claimed for
    the turn that started the task (its subagent's, by the task id), so what the agent does in
    answer is credited there; when that turn is not known, the session's latest turn."""
    from rewind_ls.core.agents.claude.notifications import notification_ids

    sid = hook.session_id
    task_id, tool_use_id = notification_ids(prompt)
    turn = None
    for kind, key in (("agent", task_id), ("tool", tool_use_id)):
        found = rec.store.event(sid, kind, key) if key else None
        if found is not None and found.turn_id:
            turn = found.turn_id
            break
    if turn is None:
        latest = rec.store.latest_turn(sid)
        turn = latest.id if latest is not None else None
    if prompt_id and turn is not None:  # claimed by `_prompt` already
        rec.store.set_event_turn(sid, "prompt", prompt_id, turn)
    if rec.open_turn_id(sid) is None:
        # The work just ended: what it wrote is recorded now, as a person's prompt records what
        # changed since the last turn (a background job's writes go to its turn, the person's
        # edits meanwhile are theirs), not left for a next prompt that may never come.
        rec.attribute_outside_changes()
    return Outcome(f"task notification {task_id or '-'}: no turn opened; its work goes to {turn}")


def _subagent_start(rec: Recorder, hook: steps.HookEvent, payload: dict[str, Any]) -> Outcome:
    """Remember which turn launched the subagent (its prompt's turn, else the open one): its
    edits go there, even after that turn ended (a background subagent)."""
    agent_id = optional_text(payload, "agent_id")
    prompt_id = optional_text(payload, "prompt_id")
    sid = hook.session_id
    prompt = rec.store.event(sid, "prompt", prompt_id) if prompt_id else None
    turn = prompt.turn_id if prompt is not None and prompt.turn_id else rec.open_turn_id(sid)
    if agent_id is None or turn is None:
        return Outcome(f"{SUBAGENT_START}: no agent id or no turn, not recorded")
    rec.store.claim_event(sid, "agent", agent_id, "hook", turn)
    return Outcome(f"subagent {agent_id} started in {turn}")


def _background_turn(rec: Recorder, hook: steps.HookEvent, payload: dict[str, Any]) -> str | None:
    """The turn that started this work, when it is not the session's open turn: a subagent's
    launching turn (`_subagent_start`), or, for the main agent's answer to a task notification, the
    turn its prompt id was claimed for. None: the open turn's work, as usual."""
    sid = hook.session_id
    agent_id = optional_text(payload, "agent_id")
    prompt_id = optional_text(payload, "prompt_id")
    found = rec.store.event(sid, "agent", agent_id) if agent_id else None
    if found is None and prompt_id:
        found = rec.store.event(sid, "prompt", prompt_id)
    turn = found.turn_id if found is not None else None
    return turn if turn is not None and turn != rec.open_turn_id(sid) else None


def _turn_of_prompt(rec: Recorder, session_id: str, prompt_id: str) -> str | None:
    """The session's latest turn, when it is the one opened for `prompt_id`."""
    turn = rec.store.latest_turn(session_id)
    if turn is None or not turn.info:
        return None
    try:
        info = json.loads(turn.info)
    except ValueError:
        return None
    return turn.id if isinstance(info, dict) and info.get("promptId") == prompt_id else None


def _shell(rec: Recorder, hook: steps.HookEvent, payload: dict[str, Any]) -> Outcome:
    """A Bash call; a subagent's that changed files is noted on the turn. One of a background
    subagent (or of the answer to a task notification) goes to the turn that started it. One that
    went on in the background (its result names a `backgroundTaskId`, 2.1.332) is registered as a
    job once its scan recorded what it wrote so far (`core.capture.background_shell`)."""
    background = _background_turn(rec, hook, payload) if hook.name == EVENTS.after_tool else None
    task = _background_task(payload) if hook.name == EVENTS.after_tool else None
    seq = rec.store.seq_now() if task is not None else 0
    outcome, turn, changed = steps.shell_event(
        rec,
        hook,
        EVENTS,
        steps.run_id(payload),
        lambda: background or rec.ensure_turn(hook.session_id, agent=AGENT),
        bash_limit(payload.get("tool_input")),
        BACKGROUND_AGENT if background else "scan",
    )
    agent_type = optional_text(payload, "agent_type")
    if agent_type and turn is not None and changed:
        rec.note_subagent(turn, agent_type, optional_text(payload, "agent_id"))
    if task is not None and turn is not None:
        from rewind_ls.core.capture import background_shell

        tool_input = payload.get("tool_input")
        command = tool_input.get("command") if isinstance(tool_input, dict) else None
        done = background_shell.started(
            rec.store, hook.session_id, task, turn, str(command or ""), seq
        )
        outcome = Outcome(f"{outcome.done}; {done}", outcome.message)
    return outcome


def _background_task(payload: dict[str, Any]) -> str | None:
    """The task id of a Bash that runs on in the background (`tool_response.backgroundTaskId`)."""
    response = payload.get("tool_response")
    task = response.get("backgroundTaskId") if isinstance(response, dict) else None
    return task if isinstance(task, str) and task else None


def bash_limit(tool_input: Any) -> float:
    """The longest a Bash call can run, in seconds: its `timeout` (ms), else Claude Code's
    default of 2 minutes, never more than its maximum of 10 (the binary kills it then)."""
    limit = tool_input.get("timeout") if isinstance(tool_input, dict) else None
    if not isinstance(limit, (int, float)) or isinstance(limit, bool) or limit <= 0:
        return BASH_DEFAULT_MS / 1000
    return min(float(limit), BASH_MAX_MS) / 1000


def _edit(
    rec: Recorder, hook: steps.HookEvent, payload: dict[str, Any], root: str, file_path: str
) -> Outcome:
    """An edit tool's file, before it runs or after; the tool call is claimed (in the same
    transaction), so the transcript follower does not record it again."""
    tool_use_id = optional_text(payload, "tool_use_id")
    agent_type = optional_text(payload, "agent_type")

    def claim(turn: str) -> None:
        if tool_use_id:
            rec.store.claim_event(hook.session_id, "tool", tool_use_id, "hook", turn)
        if agent_type:
            # Subagent tool calls carry agent_id/agent_type; the turn shows who did the work.
            rec.note_subagent(turn, agent_type, optional_text(payload, "agent_id"))

    background = _background_turn(rec, hook, payload)
    source = BACKGROUND_AGENT if background else "tool"
    done, turn = steps.record_edits(
        rec, hook, EVENTS, root, [file_path], AGENT, claim, background, source
    )
    assert turn is not None
    done += f" in {turn}" + (" (background)" if background else "")
    if agent_type:
        done += f" (subagent: {agent_type})"
    return Outcome(done)
