"""Whose turns a tool's numbers are: the calling agent's own session.

Decided in this order, the first that applies:

1. the tool call's `session` argument (a session id or the start of one);
2. the agent's session id in the server's environment: Claude Code (2.1.197, read in its binary)
   starts a stdio MCP server with `CLAUDE_CODE_SESSION_ID` set to the session it runs, so the
   numbers are those of the very conversation that calls; it is used only when the store knows
   that session (a session with no hook recorded yet is not guessed at);
3. the latest live session of that agent in the workspace (a turn open, else the most recent
   activity): what Codex and Gemini CLI give, which pass no session id to MCP servers;
4. the latest agent session of any agent (an MCP server started with no agent named).

Which agent is calling: `rewind-ls mcp --agent NAME` (what `install` writes), else the agent's
own marker in the environment (`CLAUDECODE=1`, `GEMINI_CLI=1`, `CODEX_HOME`... see `AGENT_MARKERS`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import NamedTuple

from rewind_ls.core.errors import RewindError
from rewind_ls.core.model import SessionKind
from rewind_ls.core.store import Store

# The variable each agent sets to its session id in an MCP server's environment.
SESSION_VARS: dict[str, str] = {"claude-code": "CLAUDE_CODE_SESSION_ID"}

# A variable each agent sets in the processes it starts, naming the agent when `--agent` is absent.
AGENT_MARKERS: tuple[tuple[str, str], ...] = (
    ("CLAUDECODE", "claude-code"),
    ("CLAUDE_CODE_SESSION_ID", "claude-code"),
    ("GEMINI_CLI", "gemini"),
    ("CODEX_SANDBOX", "codex"),
    ("CODEX_HOME", "codex"),
)


class Caller(NamedTuple):
    """The agent that started this server (None: not known) and its session id from the
    environment (None: the agent gives none)."""

    agent: str | None
    env_session: str | None

    @property
    def label(self) -> str:
        """Who a restore point says made it: "claude-code via MCP"."""
        return f"{self.agent or 'an agent'} via MCP"


def caller_of(agent: str | None, env: Mapping[str, str]) -> Caller:
    """The caller from `--agent` (or the environment's markers) and the environment."""
    if agent is None:
        agent = next((name for var, name in AGENT_MARKERS if env.get(var)), None)
    var = SESSION_VARS.get(agent or "")
    return Caller(agent, (env.get(var) or None) if var else None)


def session_of(store: Store, caller: Caller, spec: str | None = None) -> str | None:
    """The session whose turn numbers a call means (see the module's docstring); None when the
    workspace has no agent session at all."""
    sessions = [s for s in store.sessions() if s.kind == SessionKind.AGENT]
    if spec:
        spec = spec.strip()
        exact = [s.id for s in sessions if s.id == spec]
        matches = exact or [s.id for s in sessions if s.id.startswith(spec)]
        if len(matches) == 1:
            return matches[0]
        what = "matches several sessions" if matches else "no such agent session in this workspace"
        raise RewindError(f"session {spec!r}: {what} (list_turns with all=true lists them)")
    if caller.env_session and any(s.id == caller.env_session for s in sessions):
        return caller.env_session
    mine = [s for s in sessions if caller.agent is None or s.agent == caller.agent]
    if not mine:
        return store.latest_agent_session() if caller.agent is None else None
    # A live one first (a turn open: the agent is working in it now), then the latest activity.
    mine.sort(key=lambda s: (s.open_turn is not None, s.last_activity_at))
    return mine[-1].id
