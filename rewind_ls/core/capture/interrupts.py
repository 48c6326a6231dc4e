"""When the person stopped a turn, as Claude Code's transcript says it.

Esc or Ctrl-C in Claude Code's UI (during a Bash, an edit, or while the model thinks) fires no hook
(2.1.197): the turn just stops, and the next hook is the next prompt's. The transcript does say
it: a user line whose text is `[Request interrupted by user]` or `[Request interrupted by user for
tool use]`, with its `timestamp`. Changes made after that moment are the person's, not the
turn's. Read by the hook at the turn's next boundary and by the server's transcript follower.

On the hook path: stdlib only, and only the file's tail is read.
"""

from __future__ import annotations

import json
import os
from typing import Any

INTERRUPT_TEXT = "[Request interrupted by user"
_MARK = INTERRUPT_TEXT.encode()
_TAIL_BYTES = 1 << 20  # the interrupt line is the last thing before the next prompt


def is_interrupt(line: dict[str, Any]) -> bool:
    """Whether a transcript line is Claude Code's note that the person stopped the turn."""
    if line.get("type") != "user" or line.get("isSidechain"):
        return False
    message = line.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, str):
        return content.startswith(INTERRUPT_TEXT)
    if isinstance(content, list):
        for block in content:
            if isinstance(block, dict) and block.get("type") == "text":
                text = block.get("text")
                return isinstance(text, str) and text.startswith(INTERRUPT_TEXT)
    return False


def line_time(line: dict[str, Any]) -> float | None:
    """A transcript line's `timestamp` (ISO 8601) as epoch seconds, or None."""
    stamp = line.get("timestamp")
    if not isinstance(stamp, str):
        return None
    from datetime import datetime

    try:
        return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def interrupted_at(transcript: str | None, since: float) -> float | None:
    """The time of the first interrupt line at or after `since` (epoch seconds) in the tail of the
    transcript at `transcript`, None when there is none (or no readable transcript)."""
    if not transcript:
        return None
    try:
        with open(transcript, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            f.seek(max(0, size - _TAIL_BYTES))
            data = f.read(_TAIL_BYTES)
    except OSError:
        return None
    if _MARK not in data:
        return None
    found: float | None = None
    for raw in data.split(b"\n"):
        if _MARK not in raw:
            continue
        try:
            line = json.loads(raw)
        except ValueError:
            continue
        if not isinstance(line, dict) or not is_interrupt(line):
            continue
        at = line_time(line)
        if at is not None and at >= since and (found is None or at < found):
            found = at
    return found
