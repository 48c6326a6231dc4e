"""The OpenCode plugin `rewind-ls install opencode` writes: a small JavaScript module in OpenCode's
plugin folder (`.opencode/plugins/` of the project, or `~/.config/opencode/plugins/` with --user),
which OpenCode loads at start-up and runs in its own process.

OpenCode (1.18) awaits a plugin's `tool.execute.before` before the tool runs and its
`tool.execute.after` once it ran, and calls `chat.message` when the person's message is created; it
passes every bus event (`session.created`, `session.idle`, ...) to the plugin's `event`. The plugin
runs the hook command (`/bin/sh -c COMMAND`, as the other agents run theirs) with one JSON payload on
stdin per event and waits for it, so a file is recorded before the tool writes it. A failure is
never the tool's: the plugin swallows every error (rewind-ls logs its own).

A child session (the `task` tool's subagent) is folded into its parent's: its tool events carry the
parent session's id and `agent_id` = the child's, and its own prompt and idle are not the person's.

Everything else in the folder is the person's: only a file holding our marker is replaced or removed.
"""

from __future__ import annotations

import json
import os

from rewind_ls.core.errors import BadInput

MARKER = "// rewind-ls plugin for OpenCode"

_TEMPLATE = """\
MARKER (written by `rewind-ls install opencode`; `rewind-ls install opencode --uninstall` removes it).
// Records OpenCode's edits and shell commands as rewind-ls turns: each event below runs the hook
// command with one JSON payload on stdin, and OpenCode waits for it before the tool runs.
import { spawn } from "node:child_process"

const COMMAND = COMMAND_JSON
const EVENTS = EVENTS_JSON
const TOOLS = TOOLS_JSON

function send(payload) {
  return new Promise((resolve) => {
    try {
      const child = spawn("/bin/sh", ["-c", COMMAND], {
        cwd: payload.cwd,
        stdio: ["pipe", "ignore", "ignore"],
      })
      child.on("error", () => resolve())
      child.on("close", () => resolve())
      child.stdin.on("error", () => {})
      child.stdin.end(JSON.stringify(payload))
    } catch {
      resolve()
    }
  })
}

export const RewindLs = async ({ directory }) => {
  const parents = new Map() // a subagent's session -> the session that started it
  const top = (id) => {
    let s = id
    while (parents.has(s)) s = parents.get(s)
    return s
  }
  const base = (name, sessionID) => {
    const session = top(sessionID)
    const out = { hook_event_name: name, session_id: session, cwd: directory }
    if (session !== sessionID) out.agent_id = sessionID
    return out
  }
  return {
    event: async ({ event }) => {
      const props = event.properties || {}
      if (event.type === "session.created" && props.info && props.info.parentID) {
        parents.set(props.info.id, props.info.parentID)
        return
      }
      if (!EVENTS.includes(event.type)) return
      const id = props.sessionID || (props.info && props.info.id)
      if (!id || parents.has(id)) return
      await send(base(event.type, id))
    },
    "chat.message": async (input, output) => {
      if (parents.has(input.sessionID)) return
      const parts = (output && output.parts) || []
      const prompt = parts
        .filter((p) => p.type === "text" && !p.synthetic)
        .map((p) => p.text)
        .join("\\n")
      await send({ ...base("chat.message", input.sessionID), prompt })
    },
    "tool.execute.before": async (input, output) => {
      if (!TOOLS.includes(input.tool)) return
      await send({
        ...base("tool.execute.before", input.sessionID),
        tool_name: input.tool,
        tool_input: output.args,
        tool_use_id: input.callID,
      })
    },
    "tool.execute.after": async (input) => {
      if (!TOOLS.includes(input.tool)) return
      await send({
        ...base("tool.execute.after", input.sessionID),
        tool_name: input.tool,
        tool_input: input.args,
        tool_use_id: input.callID,
      })
    },
  }
}
"""


def plugin_text(command: str, events: dict[str, str | None]) -> str:
    """The plugin's source for the hook `command` and the registry's `events` (tool events carry
    their tools joined by `|`)."""
    session_events = [e for e in events if not e.startswith(("tool.", "chat."))]
    tools: list[str] = []
    for event, matcher in events.items():
        for tool in (matcher or "").split("|") if event.startswith("tool.") else []:
            if tool and tool not in tools:
                tools.append(tool)
    return (
        _TEMPLATE.replace("MARKER", MARKER)
        .replace("COMMAND_JSON", json.dumps(command))
        .replace("EVENTS_JSON", json.dumps(session_events))
        .replace("TOOLS_JSON", json.dumps(tools))
    )


def _read(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise BadInput(f"{path}: cannot be read ({exc}); nothing was changed") from None


def hook_commands(path: str, agent: str = "opencode") -> list[str]:
    """The hook command our plugin at `path` runs ([] when there is none, or it is not ours)."""
    try:
        text = _read(path)
    except BadInput:
        return []
    if text is None or not text.startswith(MARKER):
        return []
    for line in text.splitlines():
        if line.startswith("const COMMAND = "):
            try:
                command = json.loads(line[len("const COMMAND = ") :])
            except ValueError:
                return []
            return [command] if isinstance(command, str) else []
    return []


def install(
    path: str,
    command: str,
    uninstall: bool = False,
    agent: str = "opencode",
    events: dict[str, str | None] | None = None,
) -> list[str]:
    """Write (or remove) our plugin. Returns what changed (empty: nothing to do). A file of that
    name that is not ours is never touched."""
    if events is None:
        from rewind_ls.core.agents.registry import AGENTS

        events = AGENTS[agent].events
    old = _read(path)
    if old is not None and not old.startswith(MARKER):
        raise BadInput(f"{path}: exists and is not rewind-ls' plugin; nothing was changed")
    if uninstall:
        if old is None:
            return []
        os.remove(path)
        return ["removed the plugin"]
    new = plugin_text(command, events)
    if old == new:
        return []
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = path + ".rewind-ls.tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(new)
    os.replace(tmp, path)  # OpenCode never loads half a plugin
    return ["replaced the plugin" if old is not None else "added the plugin"]
