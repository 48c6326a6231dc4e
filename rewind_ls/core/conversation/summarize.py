"""Summarize a Claude Code conversation from a turn, or up to a turn, into a new session.

- from T: the conversation before T is kept verbatim; T and everything after it is replaced by a
  summary.
- up to T: everything before T is replaced by a summary; T onward is kept verbatim.

The new session is written in the binary's own compaction form, as 2.1.197 writes its own
"Summarize from here / up to here" (its partial compaction, read from the binary): a
`compact_boundary` system line (no parent; `logicalParentUuid` = the last message before the
summarized part's end; `compactMetadata` with `messagesSummarized`, the person's `userContext` and
the `preservedSegment` the loader re-links), the summary user line (`isCompactSummary`,
`summarizeMetadata`, the text `/compact` writes: preamble, the tools the summarized part called
as 2.1.332 lists them, `Summary:`, where the full transcript is), and the kept lines verbatim. Up
to: boundary, summary, kept lines (the first one re-parented onto the summary). From: boundary,
kept lines (the first re-parented onto the boundary), summary.

The original transcript is never edited. The summarizer is a command the person chose:
`REWIND_LS_SUMMARIZER` (a shell command; the conversation as text on stdin, the summary on
stdout; the person's extra instructions in `REWIND_LS_SUMMARY_INSTRUCTIONS`), else the agent's
own CLI in print mode with no tools (`claude -p --tools ""`). `REWIND_LS_SUMMARIZER_TIMEOUT`
(seconds, default 300) bounds it. The new session is written only once the summary is in hand,
under a temporary name renamed at the end: a failure leaves no session behind.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable
from datetime import datetime, timezone
from typing import Any

from rewind_ls.core.agents.claude import transcript
from rewind_ls.core.errors import RewindError
from rewind_ls.core.model import Turn

DIRECTIONS = ("from", "upTo")
DEFAULT_TIMEOUT = 300
PROGRESS_EVERY = 5.0  # seconds between "still summarizing" lines on stderr

PROMPT = (
    "Summarize the conversation between a user and an AI coding assistant given on stdin, so the "
    "assistant can continue the work from the summary alone. Keep: the user's requests and "
    "intent, decisions taken, files and code touched (paths, names), errors met and how they "
    "were fixed, and what is still pending. Answer with the summary only."
)
# The binary's own compact-summary text (2.1.197, 2.1.332): what `/compact` and its partial
# compaction write around the summary, so the agent reads ours as one of its own.
PREAMBLE = (
    "This session is being continued from a previous conversation that ran out of context. "
    "The summary below covers the earlier portion of the conversation.\n\n"
)
TRANSCRIPT_NOTE = (
    "\n\nIf you need specific details from before compaction (like exact code snippets, error "
    "messages, or content you generated), read the full transcript at: "
)
# 2.1.332 adds, between the preamble and the summary, the tools the summarized part called
# (sorted, ", "-joined; its /compact writes it, read in the binary's summary builder).
TOOLS_USED = (
    "<system-reminder>\n<tools-used-before-summary>{}</tools-used-before-summary>\n"
    "</system-reminder>\n"
)
TOOL_NAME = re.compile(r"[A-Za-z0-9_.:-]{1,256}")  # the names the binary prints there


class Summary:
    """A summarized conversation. Its file is `staged` until `Source.adopt` publishes it."""

    __slots__ = (
        "direction",
        "lines",
        "prompt",
        "resume_command",
        "session_id",
        "staged",
        "summary",
    )

    def __init__(
        self,
        session_id: str,
        staged: transcript.StagedSession,
        prompt: str,
        direction: str,
        summary: str,
        lines: int,
        start_dir: str | None,
    ) -> None:
        self.session_id = session_id
        self.staged = staged
        self.prompt = prompt
        self.direction = direction
        self.summary = summary
        self.lines = lines
        self.resume_command = transcript.resume_command(session_id, start_dir)

    @property
    def path(self) -> str:
        return self.staged.path


# --- the conversation as text -----------------------------------------------------------------


def _block_text(block: Any) -> str:
    if isinstance(block, str):
        return block
    if not isinstance(block, dict):
        return ""
    kind = block.get("type")
    if kind == "text":
        return str(block.get("text", ""))
    if kind == "tool_use":
        return (
            f"[tool call {block.get('name')}: {json.dumps(block.get('input'), ensure_ascii=False)}]"
        )
    if kind == "tool_result":
        content = block.get("content")
        if isinstance(content, list):
            content = "\n".join(_block_text(b) for b in content)
        return f"[tool result: {content}]"
    return ""  # thinking, images: not carried into the summary text


def conversation_text(lines: list[dict[str, Any]]) -> str:
    """The user and assistant messages of `lines` as plain text, one paragraph each."""
    out: list[str] = []
    for ln in lines:
        if ln.get("type") not in ("user", "assistant") or ln.get("isMeta"):
            continue
        message = ln.get("message")
        if not isinstance(message, dict):
            continue
        content = message.get("content")
        blocks = content if isinstance(content, list) else [content]
        body = "\n".join(t for t in (_block_text(b) for b in blocks) if t)
        if body.strip():
            who = "User" if ln["type"] == "user" else "Assistant"
            out.append(f"{who}: {body}")
    return "\n\n".join(out) + "\n"


# --- the summarizer ---------------------------------------------------------------------------


def timeout_seconds() -> float:
    from rewind_ls.core.fs.config import env_positive

    return env_positive("REWIND_LS_SUMMARIZER_TIMEOUT", float(DEFAULT_TIMEOUT))


def summarizer_command(instructions: str | None) -> tuple[list[str] | str, str]:
    """(what to run, its name for errors): the person's shell command, else `claude -p`."""
    custom = os.environ.get("REWIND_LS_SUMMARIZER", "").strip()
    if custom:
        return custom, custom
    prompt = PROMPT + (f"\n\nAlso: {instructions}" if instructions else "")
    # No tools, no hooks (the project's rewind-ls hooks would record the summary run as a turn),
    # no session file of its own.
    argv = [
        os.environ.get("REWIND_LS_CLAUDE", "claude"),
        "-p",
        prompt,
        "--tools",
        "",
        "--no-session-persistence",
        "--settings",
        '{"disableAllHooks": true}',
    ]
    return argv, shlex.join([*argv[:2], "<summarizing prompt>", *argv[3:]])


def run_summarizer(
    text: str,
    instructions: str | None = None,
    progress: Callable[[str], None] | None = None,
) -> str:
    """The summary of `text`; RewindError naming the command when it fails, times out or prints
    nothing."""
    command, name = summarizer_command(instructions)
    env = dict(os.environ)
    if instructions:
        env["REWIND_LS_SUMMARY_INSTRUCTIONS"] = instructions
    say = progress or (lambda msg: print(msg, file=sys.stderr, flush=True))
    with tempfile.TemporaryDirectory(prefix="rewind-ls-summarize-") as cwd:
        proc = _start(command, name, cwd, env)
        out, err = _communicate(proc, name, text, say)
    stderr = err.decode("utf-8", "replace").strip()
    if proc.returncode != 0:
        raise RewindError(
            f"summarizer {name!r} failed (exit {proc.returncode}): {stderr[-500:] or 'no output'}"
            "; no session written"
        )
    summary = out.decode("utf-8", "replace").strip()
    if not summary:
        raise RewindError(f"summarizer {name!r} printed nothing; no session written")
    return summary


def _start(
    command: str | list[str], name: str, cwd: str, env: dict[str, str]
) -> subprocess.Popen[bytes]:
    """The summarizer's process, in `cwd`, in a session of its own (so a timeout kills it all)."""
    try:
        return subprocess.Popen(
            command,
            shell=isinstance(command, str),
            cwd=cwd,  # not the project: its settings and hooks stay out of the summary run
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
    except OSError as exc:
        raise RewindError(f"summarizer {name!r} could not start: {exc}") from exc


def _communicate(
    proc: subprocess.Popen[bytes], name: str, text: str, say: Callable[[str], None]
) -> tuple[bytes, bytes]:
    """Feed `text` to the summarizer and collect (stdout, stderr) within the time limit, saying
    every PROGRESS_EVERY seconds that it still runs."""
    limit = timeout_seconds()
    done = threading.Event()
    started = time.monotonic()

    def report() -> None:
        while not done.wait(PROGRESS_EVERY):
            say(f"summarizing with {name}: {time.monotonic() - started:.0f}s ...")

    ticker = threading.Thread(target=report, daemon=True)
    ticker.start()
    try:
        return proc.communicate(text.encode("utf-8"), timeout=limit)
    except subprocess.TimeoutExpired as exc:
        _kill(proc)
        raise RewindError(
            f"summarizer {name!r} timed out after {limit:g}s "
            "(REWIND_LS_SUMMARIZER_TIMEOUT); no session written"
        ) from exc
    finally:
        done.set()


def _kill(proc: subprocess.Popen[bytes]) -> None:
    """The summarizer and anything it started (its own process group)."""
    import signal

    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except OSError:
        proc.kill()
    proc.communicate()


# --- the new session --------------------------------------------------------------------------


def _now() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def _envelope(reference: dict[str, Any]) -> dict[str, Any]:
    """The fields every message line of the binary carries, taken from a line of the session."""
    keys = ("userType", "entrypoint", "cwd", "sessionId", "version", "gitBranch")
    return {k: reference[k] for k in keys if k in reference}


def tools_used(lines: list[dict[str, Any]]) -> list[str]:
    """The tools the lines' assistant messages called, sorted, each once (a name the binary would
    not print is left out)."""
    names = {
        block.get("name")
        for ln in lines
        for block in transcript.content_blocks(ln, "assistant", "tool_use")
    }
    return sorted(n for n in names if isinstance(n, str) and TOOL_NAME.fullmatch(n))


def summary_text(summary: str, transcript_path: str, tools: list[str] | None = None) -> str:
    """The summary line's text as the binary writes it: the preamble, the tools the summarized
    part called (`tools`), the summary (an `<analysis>` dropped, a `<summary>` block as
    `Summary:`, blank runs squeezed, as the binary cleans its model's answer), and where the full
    (original) transcript is."""
    text = re.sub(r"<analysis>[\s\S]*?</analysis>", "", summary)
    wrapped = re.search(r"<summary>([\s\S]*?)</summary>", text)
    body = (wrapped.group(1) if wrapped else text).strip()
    body = re.sub(r"\n\n+", "\n\n", "Summary:\n" + body).strip()
    used = TOOLS_USED.format(", ".join(tools or []))
    return PREAMBLE + used + body + TRANSCRIPT_NOTE + transcript_path


def _messages(lines: list[dict[str, Any]]) -> int:
    return sum(1 for ln in lines if ln.get("type") in ("user", "assistant"))


class Kept:
    """The lines kept verbatim, re-parented where their parent is not kept (the first of them
    onto the compaction's anchor, as the binary's loader re-links a preserved segment)."""

    __slots__ = ("head", "lines", "tail")

    def __init__(self, lines: list[dict[str, Any]], anchor: str, tail: str | None) -> None:
        kept_uuids = {ln["uuid"] for ln in lines if isinstance(ln.get("uuid"), str)}
        self.head: str | None = None
        self.tail = tail
        self.lines: list[dict[str, Any]] = []
        for ln in lines:
            parent = ln.get("parentUuid")
            # The conversation's first line, or one whose parent was summarized (a compaction
            # boundary of the original keeps its own null parent).
            first_root = (
                self.head is None and parent is None and ln.get("subtype") != "compact_boundary"
            )
            moves = isinstance(parent, str) and parent not in kept_uuids
            if isinstance(ln.get("uuid"), str) and (moves or first_root):
                ln = {**ln, "parentUuid": anchor}
                if isinstance(parent, str):
                    ln["logicalParentUuid"] = parent
                self.head = self.head or ln["uuid"]
            self.lines.append(ln)


def _boundary(
    target: dict[str, Any],
    uid: str,
    logical: Any,
    messages: int,
    instructions: str | None,
    segment: dict[str, Any] | None,
) -> dict[str, Any]:
    """The compact_boundary line of a partial compaction (2.1.197's fields, in its order)."""
    meta: dict[str, Any] = {"trigger": "manual", "preTokens": 0}
    if instructions:
        meta["userContext"] = instructions
    meta["messagesSummarized"] = messages
    if segment:
        meta["preservedSegment"] = segment
    return {
        "parentUuid": None,
        "logicalParentUuid": logical,
        "isSidechain": False,
        "type": "system",
        "subtype": "compact_boundary",
        "content": "Conversation compacted",
        "isMeta": False,
        "timestamp": _now(),
        "uuid": uid,
        "level": "info",
        "compactMetadata": meta,
        **_envelope(target),
    }


def _summary_line(
    target: dict[str, Any],
    uid: str,
    parent: Any,
    text: str,
    messages: int,
    instructions: str | None,
    direction: str | None,
) -> dict[str, Any]:
    """The compact-summary user line; `direction` None: nothing kept (the binary's full form)."""
    line: dict[str, Any] = {
        "parentUuid": parent,
        "isSidechain": False,
        "type": "user",
        "message": {"role": "user", "content": text},
        "isCompactSummary": True,
        "uuid": uid,
        "timestamp": _now(),
        **_envelope(target),
    }
    if direction is None:
        line["isVisibleInTranscriptOnly"] = True
    else:
        line["summarizeMetadata"] = {
            "messagesSummarized": messages,
            **({"userContext": instructions} if instructions else {}),
            "direction": direction,
        }
    return line


def _segment(kept: Kept, anchor: str) -> dict[str, Any] | None:
    if kept.head is None or kept.tail is None:
        return None
    return {"headUuid": kept.head, "anchorUuid": anchor, "tailUuid": kept.tail}


def build_from(
    lines: list[dict[str, Any]],
    target: dict[str, Any],
    text: str,
    messages: int,
    instructions: str | None = None,
) -> list[dict[str, Any]]:
    """Boundary, everything before `target` verbatim, then the summary of `target` onward."""
    boundary_id, summary_id = str(uuid.uuid4()), str(uuid.uuid4())
    tail = target.get("parentUuid")
    kept = Kept(transcript.lines_before(lines, target), boundary_id, tail)
    segment = _segment(kept, boundary_id)
    boundary = _boundary(target, boundary_id, tail, messages, instructions, segment)
    parent = tail if segment else boundary_id
    line = _summary_line(
        target, summary_id, parent, text, messages, instructions, "from" if segment else None
    )
    return [boundary, *kept.lines, line]


def build_up_to(
    lines: list[dict[str, Any]],
    target: dict[str, Any],
    text: str,
    messages: int,
    instructions: str | None = None,
) -> list[dict[str, Any]]:
    """Boundary, the summary of what came before `target`, then `target` onward verbatim."""
    boundary_id, summary_id = str(uuid.uuid4()), str(uuid.uuid4())
    tail = transcript.leaf_under(lines, target["uuid"])
    kept = Kept(_from_target(lines, target), summary_id, tail)
    segment = _segment(kept, summary_id)
    logical = target.get("parentUuid")
    boundary = _boundary(target, boundary_id, logical, messages, instructions, segment)
    head = _summary_line(target, summary_id, boundary_id, text, messages, instructions, "up_to")
    return [boundary, head, *kept.lines]


def _from_target(lines: list[dict[str, Any]], target: dict[str, Any]) -> list[dict[str, Any]]:
    """`target` and every line after it on its conversation (to the end that continued from it)."""
    before = {id(ln) for ln in transcript.lines_before(lines, target)}
    everything = transcript.lines_through(lines, transcript.leaf_under(lines, target["uuid"]))
    return [ln for ln in everything if id(ln) not in before]


def summarize(
    transcript_path: str,
    prompt: str,
    started_at: float,
    direction: str,
    prompt_id: str | None = None,
    instructions: str | None = None,
    progress: Callable[[str], None] | None = None,
) -> Summary:
    if direction not in DIRECTIONS:
        raise RewindError(f"summarize: direction must be 'from' or 'upTo', not {direction!r}")
    path = transcript.check_transcript_path(transcript_path)
    lines = transcript.read_lines(path)
    target = transcript.find_prompt(lines, prompt, started_at, prompt_id)
    part_lines = (
        _from_target(lines, target)
        if direction == "from"
        else transcript.lines_before(lines, target)
    )
    text = conversation_text(part_lines)
    if not text.strip():
        raise RewindError(
            f"{path}: nothing to summarize {'from' if direction == 'from' else 'before'} this turn"
        )
    summary = run_summarizer(text, instructions, progress)
    build = build_from if direction == "from" else build_up_to
    said = summary_text(summary, path, tools_used(part_lines))
    new_lines = build(lines, target, said, _messages(part_lines), instructions)
    new_id = str(uuid.uuid4())
    staged = transcript.stage_session(os.path.dirname(path), new_id, new_lines)
    return Summary(
        new_id, staged, prompt, direction, summary, len(new_lines), transcript.start_folder(lines)
    )


class Source:
    """What `summarize` needs of a turn, read from the store (so the summarizer itself can run
    away from the store's thread)."""

    __slots__ = ("number", "path", "prompt", "prompt_id", "session_id", "started_at")

    def __init__(self, store: object, turn: Turn) -> None:
        from rewind_ls.core.capture.recorder import turn_info
        from rewind_ls.core.store import Store

        assert isinstance(store, Store)
        path, reason = transcript.session_transcript(store, turn)
        if path is None:
            raise RewindError(f"summarize: {reason}")
        prompt_id = turn_info(turn).get("promptId")
        self.path = path
        self.prompt: str = turn.prompt
        self.started_at: float = turn.started_at
        self.prompt_id = prompt_id if isinstance(prompt_id, str) else None
        self.session_id: str = turn.session_id
        self.number: int = turn.number

    def run(
        self,
        direction: str,
        instructions: str | None = None,
        progress: Callable[[str], None] | None = None,
    ) -> Summary:
        return summarize(
            self.path,
            self.prompt,
            self.started_at,
            direction,
            self.prompt_id,
            instructions,
            progress,
        )

    def adopt(self, store: object, result: Summary) -> None:
        """The new session inherits the turns it still holds (before the turn for `from`, all of
        them for `upTo`), so rewinds keep working in it; then its file is published."""
        from rewind_ls.core.store import Store

        assert isinstance(store, Store)
        below = self.number if result.direction == "from" else 1 << 30
        result.staged.adopt_then_publish(
            lambda: store.inherit_turns(self.session_id, result.session_id, below, result.path)
        )


def summarize_turn(
    store: object,
    turn: Turn,
    direction: str,
    instructions: str | None = None,
    progress: Callable[[str], None] | None = None,
) -> Summary:
    """Summarize `turn`'s session from / up to it, in one go (the CLI)."""
    source = Source(store, turn)
    result = source.run(direction, instructions, progress)
    source.adopt(store, result)
    return result
