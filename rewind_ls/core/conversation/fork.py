"""Conversation rewinds for any agent: the turn's session names its agent, the agent registry names
the module that forks that agent's conversation (`conversation_source`, `fork_turn`)."""

from __future__ import annotations

import importlib
from typing import Any

from rewind_ls.core.agents.registry import AGENTS
from rewind_ls.core.errors import RewindError
from rewind_ls.core.model import Turn


def _module(store: Any, turn: Turn) -> tuple[Any, str | None]:
    session = store.session(turn.session_id)
    if session is None or session.kind != "agent":
        return None, "only agent sessions have a conversation"
    agent = AGENTS.get(session.agent)
    if agent is None or agent.fork_module is None:
        return None, f"conversation rewind is not supported for {session.agent}"
    return importlib.import_module(agent.fork_module), None


def conversation_source(store: Any, turn: Turn) -> tuple[str | None, str | None]:
    """(the conversation file of the turn's session, reason it cannot be forked)."""
    module, reason = _module(store, turn)
    if module is None:
        return None, reason
    source: tuple[str | None, str | None] = module.conversation_source(store, turn)
    return source


def fork_turn(store: Any, turn: Turn) -> Any:
    """Fork the turn's conversation before it (a `transcript.Fork`)."""
    module, reason = _module(store, turn)
    if module is None:
        raise RewindError(f"conversation: {reason}")
    return module.fork_turn(store, turn)


def fork_message(fork: Any, number: int) -> str:
    """What a person reads about the conversation part of turn `number`'s restore."""
    if not fork.session_id:
        return (
            f"conversation: turn {number} is the session's first prompt, so nothing comes "
            f"before it to fork; start a new conversation: {fork.resume_command}"
        )
    return f"conversation forked before turn {number}: {fork.resume_command}"


def fork_fields(fork: Any) -> dict[str, Any]:
    """A conversation fork or summary (any agent's: they share these attributes) as the data of
    the protocol's `conversation` object (the CLI's `--json` and the server: camelCase at the edge)."""
    return {
        "session_id": fork.session_id,
        "transcript_path": fork.path,
        "resume_command": fork.resume_command,
        "prompt": fork.prompt,
    }
