"""Copilot CLI's hooks file: `.github/hooks/rewind-ls.json` (or `~/.copilot/hooks/rewind-ls.json`),
rewind-ls' own file in a folder whose every `*.json` Copilot CLI reads. It holds Claude Code's
`{"hooks": ...}` shape, so `settings` writes and reads it; uninstalling removes the file once
nothing else is left in it, rather than leave Copilot an empty hooks file to load."""

from __future__ import annotations

import contextlib
import json
import os

from rewind_ls.core.agents import settings
from rewind_ls.core.agents.settings import hook_commands, hooked_events

__all__ = ["hook_commands", "hooked_events", "install"]


def install(
    path: str,
    command: str,
    uninstall: bool = False,
    agent: str = "copilot",
    events: dict[str, str | None] | None = None,
) -> list[str]:
    """`settings.install`, then the file removed when uninstalling left it empty."""
    changed = settings.install(path, command, uninstall, agent, events)
    if uninstall and changed:
        with open(path, encoding="utf-8") as f:
            left = json.load(f)
        if left == {}:
            with contextlib.suppress(FileNotFoundError):
                os.remove(path)
            changed.append("removed the empty file")
    return changed
