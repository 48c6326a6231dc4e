"""Doctor's check on Claude Code's hooks: sessions with prompts or tool calls that only the
transcript reported (recorded by `transcript_recorder`), whose hooks are therefore not firing."""

from __future__ import annotations

from typing import Any

from rewind_ls.core.store import Store
from rewind_ls.core.transcript_recorder import SOURCE


def hooks_not_firing(store: Store) -> list[dict[str, Any]]:
    """Agent sessions with prompts or tool calls that only the transcript reported: their hooks
    are not firing (not installed, turned off, timed out, or the agent's UI does not run them)."""
    out = []
    for sid, counts in store.event_counts().items():
        missed = counts.get(f"prompt:{SOURCE}", 0) + counts.get(f"tool:{SOURCE}", 0)
        if missed:
            out.append(
                {
                    "session_id": sid,
                    "prompts_from_transcript": counts.get(f"prompt:{SOURCE}", 0),
                    "tool_calls_from_transcript": counts.get(f"tool:{SOURCE}", 0),
                    "prompts_from_hooks": counts.get("prompt:hook", 0),
                    "tool_calls_from_hooks": counts.get("tool:hook", 0),
                }
            )
    return out


def transcript_check(store: Store) -> dict[str, Any]:
    """Doctor's check: sessions whose hooks are not firing (turns seen only in the transcript)."""
    missed = hooks_not_firing(store)
    if not missed:
        return {
            "name": "claude code transcripts",
            "ok": True,
            "detail": "every prompt and tool call seen in a transcript was reported by a hook",
        }
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
