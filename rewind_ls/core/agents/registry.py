"""The agents rewind-ls records, by name: where each one's hooks are installed, which module turns its
hook payloads into recorder calls, and which module forks its conversation.

Adding an agent is one new module (its hook handler, exporting `handle_event(payload) -> Outcome`,
and if it can, a conversation forker exporting `fork_turn(store, turn) -> Fork`) plus one entry here.
The hook process imports this module, so it names modules as strings and imports only the stdlib.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable
from typing import Any, NamedTuple

from rewind_ls.core.errors import BadInput


class Agent(NamedTuple):
    """(A NamedTuple, not a dataclass: the hook process must not pay for importing dataclasses.)"""

    name: str  # as in `rewind-ls hook NAME` and the store's sessions.agent
    title: str  # for people
    hook_module: str  # module with `handle_event(payload) -> Outcome`
    fork_module: str | None  # module with `fork_turn(store, turn) -> Fork`, None: no conversation
    # Hook events to install and the tool matcher of each (None: the event takes no matcher).
    events: dict[str, str | None]
    settings_path: Callable[[str, bool], str]  # (workspace, user) -> the hooks file
    after_install: str  # what the person must still do for the hooks to run ("" nothing)
    # Module with `install(path, command, uninstall, agent, events) -> changes` and
    # `hook_commands(path, agent) -> commands`: the JSON hooks file most agents share, or the
    # agent's own form (OpenCode's plugin).
    hooks_module: str = "rewind_ls.core.agents.settings"
    # The project's per-person hooks file, not committed (Claude Code's .claude/settings.local.json);
    # None when the agent has none.
    local_settings_path: Callable[[str], str] | None = None

    def handler(self) -> Callable[[dict[str, Any]], Any]:
        handle: Callable[[dict[str, Any]], Any] = importlib.import_module(
            self.hook_module
        ).handle_event
        return handle

    def forker(self) -> Callable[[Any, Any], Any] | None:
        if self.fork_module is None:
            return None
        fork: Callable[[Any, Any], Any] = importlib.import_module(self.fork_module).fork_turn
        return fork

    def hooks_file(self) -> Any:
        """The module that writes and reads this agent's hooks file (`hooks_module`)."""
        return importlib.import_module(self.hooks_module)


def _claude_settings(workspace: str, user: bool) -> str:
    from rewind_ls.core.fs.config import claude_dir

    return os.path.join(
        claude_dir() if user else os.path.join(workspace, ".claude"), "settings.json"
    )


def _claude_local_settings(workspace: str) -> str:
    from rewind_ls.core.fs.paths import main_checkout  # a worktree's is its main checkout's

    return os.path.join(main_checkout(workspace), ".claude", "settings.local.json")


def codex_home() -> str:
    """Codex's own folder: $CODEX_HOME, else ~/.codex."""
    return os.environ.get("CODEX_HOME") or os.path.join(os.path.expanduser("~"), ".codex")


def _codex_hooks(workspace: str, user: bool) -> str:
    return os.path.join(codex_home() if user else os.path.join(workspace, ".codex"), "hooks.json")


def _gemini_settings(workspace: str, user: bool) -> str:
    from rewind_ls.core.agents.gemini.hook import gemini_home

    return os.path.join(
        gemini_home() if user else os.path.join(workspace, ".gemini"), "settings.json"
    )


def _copilot_hooks(workspace: str, user: bool) -> str:
    from rewind_ls.core.agents.copilot.hook import copilot_home

    folder = (
        os.path.join(copilot_home(), "hooks")
        if user
        else os.path.join(workspace, ".github", "hooks")
    )
    # Copilot CLI reads every *.json there: this file is rewind-ls' own.
    return os.path.join(folder, "rewind-ls.json")


def _opencode_plugin(workspace: str, user: bool) -> str:
    """The plugin file (`opencode.plugin`): the project's `.opencode/plugins/`, or the user's
    config folder's."""
    if user:
        config = os.environ.get("XDG_CONFIG_HOME") or os.path.join(
            os.path.expanduser("~"), ".config"
        )
        return os.path.join(config, "opencode", "plugins", "rewind-ls.js")
    return os.path.join(workspace, ".opencode", "plugins", "rewind-ls.js")


AGENTS: dict[str, Agent] = {
    a.name: a
    for a in (
        Agent(
            name="claude-code",
            title="Claude Code",
            hook_module="rewind_ls.core.agents.claude.hook",
            fork_module="rewind_ls.core.agents.claude.transcript",
            events={
                "SessionStart": None,
                "UserPromptSubmit": None,
                "PreToolUse": "Write|Edit|NotebookEdit|Bash",
                "PostToolUse": "Write|Edit|NotebookEdit|Bash",
                # A failed tool (a Bash exiting non-zero) fires this instead of PostToolUse.
                "PostToolUseFailure": "Write|Edit|NotebookEdit|Bash",
                "Stop": None,
                "StopFailure": None,  # the turn ended on an API error
                "SubagentStop": None,  # closes an isolated subagent's turn in its worktree
                "SessionEnd": None,
                "SubagentStart": None,  # which turn launched a (background) subagent
            },
            settings_path=_claude_settings,
            local_settings_path=_claude_local_settings,
            after_install="",
        ),
        Agent(
            name="codex",
            title="Codex CLI",
            hook_module="rewind_ls.core.agents.codex.hook",
            fork_module="rewind_ls.core.agents.codex.rollout",
            events={
                "SessionStart": None,
                "UserPromptSubmit": None,
                "PreToolUse": "apply_patch|Bash",
                "PostToolUse": "apply_patch|Bash",
                "Stop": None,
                "Interrupt": None,  # the person stopped the turn
                "SessionEnd": None,
            },
            settings_path=_codex_hooks,
            after_install=(
                "Codex runs new or changed hooks only once you trust them: start `codex` in this "
                'project and choose "Trust all and continue" when it says "Hooks need review" '
                "(project hooks also need the project to be trusted)."
            ),
        ),
        Agent(
            name="gemini",
            title="Gemini CLI",
            hook_module="rewind_ls.core.agents.gemini.hook",
            fork_module="rewind_ls.core.agents.gemini.chat",
            events={
                "SessionStart": None,
                "BeforeAgent": None,
                "BeforeTool": "^(write_file|replace|run_shell_command)$",
                "AfterTool": "^(write_file|replace|run_shell_command)$",
                "AfterAgent": None,
                "SessionEnd": None,
            },
            settings_path=_gemini_settings,
            after_install=(
                "Gemini CLI runs a project's hooks only in a trusted folder: start `gemini` in this "
                'project and choose "Trust folder" when it asks "Do you trust the files in this '
                'folder?" (it then lists the new hooks in a warning once and runs them; user hooks, '
                "--user, run in every folder)."
            ),
        ),
        Agent(
            name="opencode",
            title="OpenCode",
            hook_module="rewind_ls.core.agents.opencode.hook",
            # Through its own `opencode export` / `opencode import` (its database is its own).
            fork_module="rewind_ls.core.agents.opencode.session",
            # The plugin forwards these; a tool event only for these tools.
            events={
                "session.created": None,
                "chat.message": None,
                "tool.execute.before": "write|edit|apply_patch|bash",
                "tool.execute.after": "write|edit|apply_patch|bash",
                "session.idle": None,
                "session.deleted": None,
            },
            settings_path=_opencode_plugin,
            after_install="OpenCode loads plugins when it starts: restart a running `opencode`.",
            hooks_module="rewind_ls.core.agents.opencode.plugin",
        ),
        Agent(
            name="copilot",
            title="GitHub Copilot CLI",
            hook_module="rewind_ls.core.agents.copilot.hook",
            fork_module="rewind_ls.core.agents.copilot.session",
            # Claude Code's form, which Copilot CLI also reads (its tools then go by Claude's names).
            events={
                "SessionStart": None,
                "UserPromptSubmit": None,
                "PreToolUse": "Write|Edit|Bash",
                "PostToolUse": "Write|Edit|Bash",
                "PostToolUseFailure": "Write|Edit|Bash",
                "Stop": None,
                "SessionEnd": None,
            },
            settings_path=_copilot_hooks,
            after_install=(
                "Copilot CLI runs a project's hooks only in a trusted folder: start `copilot` in "
                'this project and choose "Yes" when it asks whether you trust the files in this '
                "folder (user hooks, --user, run in every folder)."
            ),
            hooks_module="rewind_ls.core.agents.copilot.hooks_file",
        ),
    )
}


def agent(name: str) -> Agent:
    found = AGENTS.get(name)
    if found is None:
        raise BadInput(f"unknown agent {name!r} (supported: {', '.join(AGENTS)})")
    return found
