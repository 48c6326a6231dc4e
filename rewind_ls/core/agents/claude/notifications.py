"""Claude Code's task notifications: the message the agent sends itself when background work it
started (a subagent, a background shell) is done. It fires `UserPromptSubmit` as a person's
prompt does, but it is not one: no turn is opened for it, and what the agent does in answer is
credited to the turn that started the work.

How 2.1.332 tells it apart (read in the binary, seen running): the transcript's prompt line
carries `origin: {"kind": "task-notification", ...}` (a person's prompt has no `origin`, or kind
`human`). The hook payload carries only the text (`prompt`), and the hook runs before that line is
written, so the hook goes by the text: the whole prompt is one `<task-notification>` element, as
the binary builds it. A person who typed exactly that would be taken for the agent.

Runs in the hook process: stdlib only.
"""

from __future__ import annotations

import re
from typing import Any

_OPEN = "<task-notification>"
_CLOSE = "</task-notification>"
_TASK_ID = re.compile(r"<task-id>([^<\n]+)</task-id>")
_TOOL_USE_ID = re.compile(r"<tool-use-id>([^<\n]+)</tool-use-id>")


def is_notification_line(line: dict[str, Any]) -> bool:
    """A transcript line the binary wrote for a task notification (its `origin`)."""
    origin = line.get("origin")
    return isinstance(origin, dict) and origin.get("kind") == "task-notification"


def is_notification_text(prompt: Any) -> bool:
    """A hook's prompt that is a task notification (see the module docstring: by its text)."""
    if not isinstance(prompt, str):
        return False
    text = prompt.strip()
    return text.startswith(_OPEN) and text.endswith(_CLOSE)


def notification_ids(prompt: str) -> tuple[str | None, str | None]:
    """The notification's task id (a subagent's agent id, a shell's id) and the tool call that
    started the task, when it names them."""
    task = _TASK_ID.search(prompt)
    tool = _TOOL_USE_ID.search(prompt)
    return (task.group(1) if task else None, tool.group(1) if tool else None)
