"""Doctor's check on Claude Code's hooks: sessions with prompts or tool calls that only the
transcript reported (recorded by `claude.recorder`), whose hooks are therefore not firing.

A session recorded from its transcript alone is not evidence of broken hooks when it ran before
the hooks were installed (a past session imported, or read by the language server at its start):
only a session that the hooks partly reported, or that began after they were installed (with no
hooks installed: that the language server followed as it ran), is."""

from __future__ import annotations

import os
from typing import Any

from rewind_ls.core.agents.claude.recorder import SOURCE
from rewind_ls.core.capture.recorder import is_reconstructed, turn_info
from rewind_ls.core.store import Store

AGENT = "claude-code"


def hooks_installed_since(root: str) -> float | None:
    """When Claude Code's hooks were installed for `root` (project or user settings), as far as
    can be known: the settings file's last change, which is never earlier than the install, so a
    session it wrongly exempts ran between the two. None: not installed."""
    from rewind_ls.core.agents.settings import installed_hooks

    times = []
    for path, _commands in installed_hooks(root, AGENT):
        try:
            times.append(os.stat(path).st_mtime)
        except OSError:
            continue
    return min(times) if times else None


def transcript_only_sessions(store: Store) -> list[tuple[dict[str, Any], bool]]:
    """Agent sessions with prompts or tool calls that only the transcript reported, with their
    counts, and whether the hooks should have reported them."""
    since = hooks_installed_since(store.root)
    out = []
    for sid, counts in store.event_counts().items():
        prompts = counts.get(f"prompt:{SOURCE}", 0)
        tools = counts.get(f"tool:{SOURCE}", 0)
        if not prompts and not tools:
            continue
        hooked = counts.get("prompt:hook", 0) + counts.get("tool:hook", 0)
        # Not installed: a session the language server followed as it ran should have had them.
        after_install = any(
            bool(turn_info(t).get("scanned")) if since is None else t.started_at > since
            for t in store.turns(sid)
            if is_reconstructed(t)
        )
        out.append(
            (
                {
                    "session_id": sid,
                    "prompts_from_transcript": prompts,
                    "tool_calls_from_transcript": tools,
                    "prompts_from_hooks": counts.get("prompt:hook", 0),
                    "tool_calls_from_hooks": counts.get("tool:hook", 0),
                },
                bool(hooked) or after_install,
            )
        )
    return out


def hooks_not_firing(store: Store) -> list[dict[str, Any]]:
    """Agent sessions whose hooks are not firing (not installed when they should be, turned off,
    timed out, or the agent's UI does not run them): prompts or tool calls only the transcript
    reported, in a session the hooks partly reported or that began after they were installed."""
    return [s for s, missed in transcript_only_sessions(store) if missed]


def transcript_check(store: Store) -> dict[str, Any]:
    """Doctor's check: sessions whose hooks are not firing (turns seen only in the transcript)."""
    sessions = transcript_only_sessions(store)
    missed = [s for s, hooks_missed in sessions if hooks_missed]
    if not missed:
        detail = "every prompt and tool call seen in a transcript was reported by a hook"
        if sessions:
            detail = (
                f"{len(sessions)} session(s) recorded from their transcripts only, all from "
                "before Claude Code's hooks were installed (imported, or read by the language "
                "server)"
            )
        return {"name": "claude code transcripts", "ok": True, "detail": detail}
    parts = [
        f"session {m['session_id']}: {m['prompts_from_transcript']} prompt(s) and "
        f"{m['tool_calls_from_transcript']} tool call(s) that no hook reported"
        for m in missed[:5]
    ]
    return {
        "name": "claude code transcripts",
        "ok": False,
        "detail": "; ".join(parts)
        + ". Its hooks are not firing (not installed, turned off, timed out, or not run by the "
        "agent's UI); the transcript is being followed instead: the language server records "
        "such turns while it runs, `rewind-ls import claude-code` otherwise. Shell side effects "
        "are found only by a workspace scan at the turn boundaries the transcript shows.",
        "sessions": missed,
    }


def managed_settings() -> str:
    """Claude Code's managed (administrator) settings file on this platform."""
    import sys

    if sys.platform == "darwin":
        return "/Library/Application Support/ClaudeCode/managed-settings.json"
    return "/etc/claude-code/managed-settings.json"


def hooks_switched_off(root: str) -> list[str]:
    """Why Claude Code would run none of the hooks installed for `root` (read in 2.1.332's
    settings schema): `disableAllHooks` in any settings file it reads there (project, the
    per-person file, the user's, managed), or `allowManagedHooksOnly` in the managed one. One
    line per file that says so; empty when the hooks would run."""
    from rewind_ls.core.agents.settings import load_json, settings_files
    from rewind_ls.core.errors import BadInput

    managed = managed_settings()
    out = []
    for path in [*(path for path, _flag in settings_files(root, AGENT)), managed]:
        try:
            data = load_json(path)
        except BadInput:
            continue  # unreadable or not JSON: Claude Code says so itself
        keys = ["disableAllHooks"] + (["allowManagedHooksOnly"] if path == managed else [])
        out += [f"{path} sets {key}: true" for key in keys if data.get(key) is True]
    return out
