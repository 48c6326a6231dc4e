"""Claude Code transcripts: finding a turn's prompt line and forking the conversation before it.

The original transcript is never edited. A fork is a new session file beside it holding every line
Claude Code's loader needs to rebuild the conversation as it stood before the prompt: the prompt's
`parentUuid` chain (so a branch left by the agent's own /rewind is followed correctly), the tool
results of parallel tool calls (stored as sibling branches, each under its own assistant line),
and the messages a `compact_boundary` preserved (its preserved segment, re-attached by the loader).
Lines keep their file order; `sessionId` is rewritten. `claude --resume <new id>`, run in the
folder the session started in, continues from there; the fork carries the turns before it (their
numbers and checkpoints) so the next prompt continues the numbering.
"""

from __future__ import annotations

import json
import os
import shlex
import uuid
from collections.abc import Callable, Iterable
from typing import Any

from rewind_ls.core.capture.interrupts import line_time
from rewind_ls.core.errors import BadInput, RewindError
from rewind_ls.core.fs import config
from rewind_ls.core.model import Turn


class Fork:
    """A conversation forked before a prompt. Its file is `staged` until `adopt_fork` publishes
    it; none when there was nothing before the prompt to fork."""

    __slots__ = ("lines", "prompt", "resume_command", "session_id", "staged")

    def __init__(
        self,
        session_id: str,
        staged: StagedSession | None,
        prompt: str,
        lines: int,
        start_dir: str | None = None,
    ) -> None:
        self.session_id = session_id
        self.staged = staged
        self.prompt = prompt
        self.lines = lines
        self.resume_command = resume_command(session_id if lines else None, start_dir)

    @property
    def path(self) -> str:
        return "" if self.staged is None else self.staged.path


def resume_command(session_id: str | None, start_dir: str | None) -> str:
    """The command that continues Claude Code session `session_id` (None: starts a new one).
    `--resume ID` looks for the file under the CURRENT folder's project slug, so the command
    starts in the folder the session was started in: it then works from anywhere, and the
    resumed agent runs in the project, with the project's hooks."""
    resume = f"claude --resume {session_id}" if session_id else "claude"
    return f"cd {shlex.quote(start_dir)} && {resume}" if start_dir else resume


def check_transcript_path(path: str) -> str:
    """The transcript must be a .jsonl file inside Claude Code's projects folder."""
    real = os.path.realpath(path)
    projects = os.path.realpath(os.path.join(config.claude_dir(), "projects"))
    if not real.startswith(projects + os.sep):
        raise BadInput(
            f"{path}: transcript is outside Claude Code's projects folder ({projects}); refused"
        )
    if not real.endswith(".jsonl"):
        raise BadInput(f"{path}: not a .jsonl transcript")
    if not os.path.isfile(real):
        raise BadInput(f"{path}: transcript not found")
    return real


def json_objects(raws: Iterable[bytes]) -> list[dict[str, Any]]:
    """Every JSON object among `raws` (one line each); damaged or partial lines are skipped, never
    fatal."""
    out: list[dict[str, Any]] = []
    for raw in raws:
        try:
            obj = json.loads(raw)
        except (ValueError, UnicodeDecodeError, RecursionError):
            continue  # RecursionError: nested deeper than the parser allows
        if isinstance(obj, dict):
            out.append(obj)
    return out


def read_lines(path: str) -> list[dict[str, Any]]:
    """Every parseable JSON object line; damaged lines are skipped, not fatal."""
    with open(path, "rb") as f:
        return json_objects(f)


def content_blocks(line: dict[str, Any], line_type: str, block_type: str) -> list[dict[str, Any]]:
    """The `block_type` blocks of a `line_type` line's message content (none for other lines)."""
    message = line.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    if line.get("type") != line_type or not isinstance(content, list):
        return []
    return [b for b in content if isinstance(b, dict) and b.get("type") == block_type]


def prompt_text(line: dict[str, Any]) -> str | None:
    """The user's prompt if `line` is a prompt (not a tool result, not a meta line), else None."""
    if line.get("type") != "user" or line.get("isMeta") or line.get("isSidechain"):
        return None
    message = line.get("message")
    if not isinstance(message, dict):
        return None
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = []
        for block in content:
            if not isinstance(block, dict):
                continue
            if block.get("type") == "tool_result":
                return None
            if block.get("type") == "text" and isinstance(block.get("text"), str):
                texts.append(block["text"])
        return "\n".join(texts) if texts else None
    return None


def find_prompt(
    lines: list[dict[str, Any]], prompt: str, started_at: float, prompt_id: str | None = None
) -> dict[str, Any]:
    """The prompt line of a turn. By the hook's `prompt_id` when known (a slash command's line holds
    the expanded command, not the typed text): the first non-meta user line of that prompt id.
    Otherwise by text: the same text, the nearest in time (several branches may repeat it)."""
    if prompt_id:
        for ln in lines:
            if ln.get("promptId") == prompt_id and ln.get("uuid") and prompt_text(ln) is not None:
                return ln
    wanted = prompt.strip()
    candidates = [
        ln for ln in lines if (prompt_text(ln) or "").strip() == wanted and ln.get("uuid")
    ]
    if not candidates:
        raise RewindError(f"the turn's prompt {prompt[:60]!r} is not in the transcript")

    def distance(line: dict[str, Any]) -> float:
        ts = line_time(line)
        return abs(ts - started_at) if ts is not None else float("inf")

    return min(candidates, key=distance)


def _tool_use_ids(line: dict[str, Any]) -> set[str]:
    return {
        b["id"]
        for b in content_blocks(line, "assistant", "tool_use")
        if isinstance(b.get("id"), str)
    }


def _tool_result_ids(line: dict[str, Any]) -> set[str]:
    return {
        b["tool_use_id"]
        for b in content_blocks(line, "user", "tool_result")
        if isinstance(b.get("tool_use_id"), str)
    }


def lines_before(lines: list[dict[str, Any]], target: dict[str, Any]) -> list[dict[str, Any]]:
    """Every line the loader needs for the conversation as it stood before `target`, in file
    order (see the module docstring)."""
    return lines_through(lines, target.get("parentUuid"))


def _binary_leaf(lines: list[dict[str, Any]]) -> tuple[str, int] | None:
    """The leaf the binary's last `last-prompt` line names (when it names a line of the file),
    and that line's index."""
    uuids = {ln["uuid"] for ln in lines if isinstance(ln.get("uuid"), str)}
    for i in range(len(lines) - 1, -1, -1):
        ln = lines[i]
        if ln.get("type") == "last-prompt" and ln.get("leafUuid") in uuids:
            return str(ln["leafUuid"]), i
    return None


def _below(children: dict[str, list[str]], start: str) -> set[str]:
    """`start` and every line that descends from it."""
    below: set[str] = set()
    todo = [start]
    while todo:
        cur = todo.pop()
        if cur in below:
            continue
        below.add(cur)
        todo.extend(children.get(cur, ()))
    return below


def leaf_under(lines: list[dict[str, Any]], start: str) -> str:
    """The uuid of the latest message that descends from the line `start` (itself when none does):
    the end of the conversation that continued from it, even when the agent's own /rewind left
    it on a branch the session's latest leaf is not on. The binary's `last-prompt` leaf wins when
    it descends from `start`, followed to the latest line written after that `last-prompt` line
    that descends from it: the binary also writes one as a checkpoint each time 32 KiB were
    appended (inside a turn too, often on 2.1.332), and the conversation goes on after it, while
    a branch its /rewind left behind was written before its `last-prompt`."""
    children: dict[str, list[str]] = {}
    order: dict[str, int] = {}
    known = {ln["uuid"] for ln in lines if isinstance(ln.get("uuid"), str)}
    latest: str | None = None  # the conversation's leaf so far, in file order
    for i, ln in enumerate(lines):
        uid, parent = ln.get("uuid"), ln.get("parentUuid")
        if ln.get("type") == "last-prompt" and ln.get("leafUuid") in known:
            latest = ln["leafUuid"]
        if not isinstance(uid, str) or ln.get("isSidechain"):
            continue
        order[uid] = i
        if parent is None and ln.get("subtype") == "compact_boundary":
            # The conversation went on after a /compact: its logical parent (2.1.197 may name a
            # line it never wrote; then the leaf the conversation had reached).
            logical = ln.get("logicalParentUuid")
            parent = logical if logical in known else latest
        if isinstance(parent, str):
            children.setdefault(parent, []).append(uid)
        latest = uid
    below = _below(children, start)
    found = _binary_leaf(lines)
    if found is not None and found[0] in below:
        leaf, written = found
        went_on = [u for u in _below(children, leaf) if order.get(u, -1) > written]
        return max(went_on, key=lambda u: order[u]) if went_on else leaf
    return max(below, key=lambda u: order.get(u, -1))


def lines_through(lines: list[dict[str, Any]], last: Any) -> list[dict[str, Any]]:
    """Every line the loader needs for the conversation ending at the line `last` (a uuid),
    that line included, in file order."""
    by_uuid = {ln["uuid"]: ln for ln in lines if isinstance(ln.get("uuid"), str)}
    keep: dict[int, dict[str, Any]] = {}

    def walk(start: Any, stop: Any = None) -> None:
        seen: set[str] = set()
        cur = start
        while isinstance(cur, str) and cur in by_uuid and cur not in seen:
            seen.add(cur)
            line = by_uuid[cur]
            keep[id(line)] = line
            if line.get("type") == "system" and line.get("subtype") == "compact_boundary":
                preserved(line)
            if cur == stop:
                return
            cur = line.get("parentUuid")

    def preserved(boundary: dict[str, Any]) -> None:
        meta = boundary.get("compactMetadata")
        if not isinstance(meta, dict):
            return
        segment = meta.get("preservedSegment")
        if isinstance(segment, dict):
            walk(segment.get("tailUuid"), segment.get("headUuid"))

    walk(last)
    # Parallel tool calls: each result hangs under its own assistant line, off the main chain.
    while True:
        kept_uuids = {ln["uuid"] for ln in keep.values() if isinstance(ln.get("uuid"), str)}
        asked: set[str] = set()
        for ln in keep.values():
            asked |= _tool_use_ids(ln)
        answered: set[str] = set()
        for ln in keep.values():
            answered |= _tool_result_ids(ln)
        added = False
        for ln in lines:
            parent = ln.get("parentUuid")
            if id(ln) in keep or ln.get("isSidechain") or not isinstance(parent, str):
                continue
            if parent not in kept_uuids:
                continue
            results = _tool_result_ids(ln)
            if results and results <= asked and not results & answered:
                keep[id(ln)] = ln
                added = True
        if not added:
            break
    return [ln for ln in lines if id(ln) in keep]


def _dump(line: dict[str, Any]) -> bytes:
    """One JSON line. A lone surrogate (valid JSON, not UTF-8) is written as its escape, as it
    was in the original: the line is kept, not lost, and the fork does not fail on it."""
    try:
        return (json.dumps(line, ensure_ascii=False) + "\n").encode("utf-8")
    except UnicodeEncodeError:
        return (json.dumps(line) + "\n").encode("ascii")


def start_folder(lines: list[dict[str, Any]]) -> str | None:
    """The folder the session started in (its first line's `cwd`): `--resume` finds the session
    from there."""
    for ln in lines:
        cwd = ln.get("cwd")
        if isinstance(cwd, str) and os.path.isabs(cwd):
            return cwd
    return None


class StagedSession:
    """A new session file written and synced under a temporary name, not yet visible to the
    agent's resume nor to a transcript follower. The store adopts the session first
    (`Store.inherit_turns`), then `publish` renames it into place: a follower polling in between
    would otherwise read the copied lines as turns no hook reported, and the session it made of
    them would keep the inherited turns out."""

    __slots__ = ("path", "tmp")

    def __init__(self, tmp: str, path: str) -> None:
        self.tmp = tmp
        self.path = path

    def publish(self) -> str:
        os.rename(self.tmp, self.path)
        return self.path

    def discard(self) -> None:
        try:
            os.unlink(self.tmp)
        except OSError:
            pass

    def adopt_then_publish(self, adopt: Callable[[], object]) -> str:
        """Run `adopt` (the store's side), then publish; a failed adopt leaves no session file."""
        try:
            adopt()
        except BaseException:
            self.discard()
            raise
        return self.publish()


def stage_session(
    folder: str,
    new_id: str,
    lines: list[dict[str, Any]],
    name: str | None = None,
    set_session_id: bool = True,
) -> StagedSession:
    """Write `lines` as the new session `new_id` in `folder`, to become file `name` (default
    `<new_id>.jsonl`; each line's `sessionId` rewritten unless `set_session_id` is false: the
    caller renamed them itself) when published. Under a temporary name until then: a failure
    leaves no session file that the agent's resume would offer half-written."""
    out = os.path.join(folder, name or f"{new_id}.jsonl")
    tmp = os.path.join(folder, f".{new_id}.jsonl.rewind-ls-tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    staged = StagedSession(tmp, out)
    try:
        with os.fdopen(fd, "wb") as f:
            for line in lines:
                if set_session_id and "sessionId" in line:
                    line = {**line, "sessionId": new_id}
                f.write(_dump(line))
            f.flush()
            os.fsync(f.fileno())
    except BaseException:
        staged.discard()
        raise
    return staged


def fork(
    transcript_path: str, prompt: str, started_at: float, prompt_id: str | None = None
) -> Fork:
    path = check_transcript_path(transcript_path)
    lines = read_lines(path)
    target = find_prompt(lines, prompt, started_at, prompt_id)
    chain = lines_before(lines, target)
    if not chain:
        # The session's first prompt: nothing comes before it, so there is no conversation to
        # fork (an empty session file would only be offered by the agent's resume as blank).
        return Fork("", None, prompt, 0, start_folder(lines))
    new_id = str(uuid.uuid4())
    staged = stage_session(os.path.dirname(path), new_id, chain)
    return Fork(new_id, staged, prompt, len(chain), start_folder(lines))


def session_transcript(store: object, turn: Turn) -> tuple[str | None, str | None]:
    """(transcript path, reason it cannot be used) for a turn's session."""
    from rewind_ls.core.store import Store

    assert isinstance(store, Store)
    session = store.session(turn.session_id)
    if session is None or session.kind != "agent":
        return None, "only agent sessions have a conversation"
    if session.agent != "claude-code":
        return None, f"conversation rewind is supported for Claude Code, not {session.agent}"
    path = session.transcript_path
    if not path:
        return None, "the session's transcript path was never reported by the agent"
    try:
        return check_transcript_path(path), None
    except BadInput as exc:
        return None, str(exc)


conversation_source = session_transcript  # the agent registry's name for it


def fork_turn(store: object, turn: Turn) -> Fork:
    """Fork the conversation before `turn`; the fork session inherits the turns before it."""
    from rewind_ls.core.capture.recorder import turn_info
    from rewind_ls.core.store import Store

    assert isinstance(store, Store)
    path, reason = session_transcript(store, turn)
    if path is None:
        raise RewindError(f"conversation: {reason}")
    prompt_id = turn_info(turn).get("promptId")
    result = fork(
        path, turn.prompt, turn.started_at, prompt_id if isinstance(prompt_id, str) else None
    )
    if result.staged is not None:
        adopt_fork(store, turn, result)
    return result


def adopt_fork(store: Any, turn: Turn, result: Fork) -> None:
    """The fork inherits the turns before `turn` (its earlier turns can be rewound, its next one
    continues the numbering), then its file is published (`StagedSession`)."""
    assert result.staged is not None
    result.staged.adopt_then_publish(
        lambda: store.inherit_turns(turn.session_id, result.session_id, turn.number, result.path)
    )
