"""A fourth agent, written as the agent registry says one is added: this one module (hook payloads ->
recorder through `core.agents.hook_steps`, and its conversation fork) plus one `Agent` entry (`register`).
Nothing else in rewind-ls knows it. Its made-up shapes: events Start/Ask/Done/Pre/Post, an edit tool
`put {target}`, a shell tool `sh`, and a conversation file of JSON lines `{"id", "role", "text"}`
whose first line is `{"session": ID}`; `toy --resume ID` continues a session.

`python -m tests.support.toy_agent ARGS...` is `rewind-ls ARGS...` with the toy agent registered
(the hook process and the CLI are separate processes, so each one registers it)."""

from __future__ import annotations

import os
import sys
import uuid
from typing import Any

from rewind_ls.core.agents import hook_steps as steps
from rewind_ls.core.agents.claude.transcript import (
    Fork,
    adopt_fork,
    read_lines,
    stage_session,
)
from rewind_ls.core.agents.hook_steps import Outcome
from rewind_ls.core.errors import RewindError
from rewind_ls.core.model import Turn

AGENT = "toy"
EDIT_TOOLS = {"put": "target"}
SHELL_TOOLS = {"sh"}
EVENTS = steps.EventNames("Start", "Ask", "Done", "Bye", "Pre", "Post")


def handle_event(payload: dict[str, Any]) -> Outcome:
    from rewind_ls.core.fs.paths import session_workspace_root
    from rewind_ls.core.store import Store

    hook = steps.HookEvent(payload)
    if not hook.watched(EVENTS, EDIT_TOOLS, SHELL_TOOLS):
        return Outcome(f"{hook.name}: ignored")
    file_path, _ = steps.edit_target(hook, payload, EVENTS, EDIT_TOOLS, "/nonexistent-toy-home")
    root = session_workspace_root(hook.session_id, hook.cwd, None)
    with Store.open(root) as store:
        rec = steps.recorder(store)
        if hook.name == EVENTS.prompt:
            turn = steps.open_turn(
                rec, hook.session_id, payload.get("prompt"), AGENT, hook.transcript
            )
            return Outcome(f"turn {turn} opened")
        done = steps.session_event(rec, hook, EVENTS, AGENT)
        if done is not None:
            return done
        store.ensure_session(hook.session_id, "agent", AGENT, hook.transcript)
        if hook.tool in SHELL_TOOLS:
            turn_of = lambda: rec.ensure_turn(hook.session_id, agent=AGENT)  # noqa: E731
            return steps.shell_event(rec, hook, EVENTS, "toy-shell", turn_of)[0]
        assert file_path is not None
        recorded, _ = steps.record_edits(rec, hook, EVENTS, root, [file_path], AGENT)
        return Outcome(recorded)


def conversation_source(store: Any, turn: Turn) -> tuple[str | None, str | None]:
    session = store.session(turn.session_id)
    path = None if session is None else session.transcript_path
    return (path, None) if path else (None, "the toy never reported its conversation file")


def fork_turn(store: Any, turn: Turn) -> Fork:
    path, reason = conversation_source(store, turn)
    if path is None:
        raise RewindError(f"conversation: {reason}")
    lines = read_lines(path)
    starts = [
        i
        for i, ln in enumerate(lines)
        if ln.get("role") == "user" and ln.get("text") == turn.prompt
    ]
    if not starts:
        raise RewindError(f"conversation: the prompt {turn.prompt!r} is not in {path}")
    new_id = str(uuid.uuid4())
    keep = [{"session": new_id}, *lines[1 : starts[-1]]]
    staged = stage_session(os.path.dirname(path), new_id, keep, set_session_id=False)
    fork = Fork(new_id, staged, turn.prompt, len(keep))
    fork.resume_command = f"toy --resume {new_id}"
    adopt_fork(store, turn, fork)
    return fork


def register() -> None:
    from rewind_ls.core.agents.registry import AGENTS, Agent

    AGENTS[AGENT] = Agent(
        name=AGENT,
        title="Toy agent",
        hook_module="tests.support.toy_agent",
        fork_module="tests.support.toy_agent",
        events={"Start": None, "Ask": None, "Pre": "put|sh", "Post": "put|sh", "Done": None},
        settings_path=lambda ws, user: os.path.join(ws, ".toy", "hooks.json"),
        after_install="Restart the toy.",
    )


if __name__ == "__main__":
    register()
    from rewind_ls.cli import main

    sys.exit(main(sys.argv[1:]))
