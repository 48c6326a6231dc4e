"""Claude Code transcript lines -> events: a prompt, an edit-tool call that succeeded, a turn's end.

A transcript (and each subagent's file beside it) holds what rewind-ls needs, as written by the real
2.1.197 binary, and by 2.1.332 with the same fields (its Write result adds `type`, `create` for a
new file): every prompt line carries its `promptId`; every Write/Edit result line carries
`toolUseResult.filePath` and `toolUseResult.originalFile` (null for a new file) plus what was written
(`content` for Write; `oldString`/`newString`/`replaceAll` and a `structuredPatch` for Edit);
NotebookEdit's carries `original_file`/`updated_file`. Subagent files carry the tool calls and their
results but no `toolUseResult` (2.1.332 too): there the "before" is the last content rewind-ls
knows.

Background work (2.1.332): an Agent call's result line carries `toolUseResult.agentId` under the
launching prompt's id (`Launch`); a subagent's file starts with its task under that same prompt
id, while its later lines carry whatever prompt the main conversation is at (an edit under another
prompt is background work, done after its turn). A task notification's line is not a prompt
(`claude.notifications`): it is a `Notification`, credited to the turn that launched the task.

Reading only: recording the events is `claude.recorder`'s job.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from rewind_ls.core.agents.claude.notifications import is_notification_line, notification_ids
from rewind_ls.core.agents.claude.tools import EDIT_TOOLS
from rewind_ls.core.agents.claude.transcript import content_blocks, json_objects, prompt_text
from rewind_ls.core.capture.interrupts import is_interrupt, line_time
from rewind_ls.core.fs import config

# `last-prompt` names the conversation's leaf. The binary writes it when it exits, and also each
# time 32 KiB were appended since the last one (its metadata re-append, read in the 2.1.197 and
# 2.1.332 binaries): 2.1.332 writes that much inside a turn (a prompt's `prompt_snapshot`
# attachments), so the line closes the turn only when the leaf it names is one where the
# conversation rests (`rests`), not a tool call, a result or a prompt the model has yet to answer.
END_TYPES = {"last-prompt"}
# Why a model reply ends the turn (`tool_use` and `pause_turn` go on).
FINAL_STOPS = {"end_turn", "stop_sequence", "max_tokens", "refusal"}
# The binary's system lines written once the turn is over (after the Stop hooks, in the UI, after
# a local slash command).
REST_SUBTYPES = {"stop_hook_summary", "turn_duration", "local_command"}
RECENT_LINES = 256  # a `last-prompt` names one of the last lines written, or one still queued

MISSING = object()  # a side of a change the transcript does not tell


class Prompt:
    __slots__ = ("at", "prompt_id", "session_id", "text", "transcript")

    def __init__(
        self, session_id: str, prompt_id: str, text: str, at: float, transcript: str
    ) -> None:
        self.session_id = session_id
        self.prompt_id = prompt_id
        self.text = text
        self.at = at
        self.transcript = transcript


@dataclass(slots=True)
class Edit:
    """One edit-tool call that succeeded: what the file held before and what the tool wrote
    (`MISSING` when the transcript does not say; `None` for an absent file)."""

    session_id: str
    prompt_id: str
    tool_use_id: str
    tool: str
    path: str
    cwd: str | None
    before: Any
    after: Any
    at: float
    agent_type: str | None
    agent_id: Any
    cut: int = 0  # the length of its line when that line was over the cap (its texts cut)
    background: bool = False  # made after its turn: a background subagent, a notification's answer
    # An Edit's input when what it wrote is not told (a subagent's file has no `toolUseResult`):
    # the recorder replays it on the content rewind-ls knows.
    replay: dict[str, Any] | None = None


class End:
    __slots__ = ("at", "session_id")

    def __init__(self, session_id: str, at: float) -> None:
        self.session_id = session_id
        self.at = at


class Interrupt:
    """The person stopped the turn (Esc, Ctrl-C): Claude Code's `[Request interrupted by user...]`
    line. No hook fires for it; the turn ends at `at`."""

    __slots__ = ("at", "session_id")

    def __init__(self, session_id: str, at: float) -> None:
        self.session_id = session_id
        self.at = at


class Launch:
    """A subagent launched by the Agent call of prompt `prompt_id` (its result line)."""

    __slots__ = ("agent_id", "at", "prompt_id", "session_id")

    def __init__(self, session_id: str, agent_id: str, prompt_id: str, at: float) -> None:
        self.session_id = session_id
        self.agent_id = agent_id
        self.prompt_id = prompt_id
        self.at = at


class Notification:
    """A task notification (prompt id `prompt_id`): not a turn. `launched_by`: the prompt id of
    the turn that started the task, when the transcript says."""

    __slots__ = ("at", "launched_by", "prompt_id", "session_id")

    def __init__(self, session_id: str, prompt_id: str, launched_by: str | None, at: float) -> None:
        self.session_id = session_id
        self.prompt_id = prompt_id
        self.launched_by = launched_by
        self.at = at


Event = Prompt | Edit | End | Interrupt | Launch | Notification


def rests(line: dict[str, Any]) -> bool:
    """Whether the conversation is at rest after `line`: the model's last reply of a turn (no tool
    call, a final stop reason) or a system line the binary writes once the turn is over."""
    kind = line.get("type")
    if kind == "assistant":
        message = line.get("message")
        stop = message.get("stop_reason") if isinstance(message, dict) else None
        return stop in FINAL_STOPS and not content_blocks(line, "assistant", "tool_use")
    return kind == "system" and line.get("subtype") in REST_SUBTYPES


def _text_or_none(value: Any) -> Any:
    if value is None:
        return None
    return value if isinstance(value, str) else MISSING


def apply_edit(original: str, old: str, new: str, replace_all: bool) -> str | None:
    """What Claude Code's Edit wrote: `old` replaced by `new` (first or every occurrence)."""
    if not old or old not in original:
        return None
    return original.replace(old, new) if replace_all else original.replace(old, new, 1)


def apply_patch(original: str, hunks: Any) -> str | None:
    """`structuredPatch` applied to `original` (hunks of ' ', '-', '+' lines), or None."""
    if not isinstance(hunks, list):
        return None
    lines = original.split("\n")
    out: list[str] = []
    pos = 0
    try:
        for hunk in hunks:
            start = int(hunk["oldStart"]) - 1
            start = max(start, 0)
            out.extend(lines[pos:start])
            pos = start
            for ln in hunk["lines"]:
                mark, body = ln[:1], ln[1:]
                if mark == " ":
                    if lines[pos] != body:
                        return None
                    out.append(body)
                    pos += 1
                elif mark == "-":
                    if lines[pos] != body:
                        return None
                    pos += 1
                elif mark == "+":
                    out.append(body)
                elif mark != "\\":
                    return None
    except (KeyError, IndexError, TypeError, ValueError):
        return None
    out.extend(lines[pos:])
    return "\n".join(out)


def edits_applied(tool: str, tool_input: dict[str, Any], before: str, result: Any) -> Any:
    """What an Edit or MultiEdit wrote over `before`: its replacements in order, else the result's
    `structuredPatch`; MISSING when neither applies."""
    edits = tool_input.get("edits") if tool == "MultiEdit" else [tool_input]
    text: str | None = before
    for e in edits if isinstance(edits, list) else []:
        if text is None or not isinstance(e, dict):
            break
        text = apply_edit(
            text,
            str(e.get("old_string", "")),
            str(e.get("new_string", "")),
            bool(e.get("replace_all")),
        )
    if text is None:
        text = apply_patch(before, result.get("structuredPatch"))
    return text if text is not None else MISSING


def _notebook_sides(tool_input: dict[str, Any], result: dict[str, Any]) -> tuple[Any, Any, Any]:
    """(path, before, after) of a NotebookEdit call."""
    path = result.get("notebook_path") or tool_input.get("notebook_path")
    before = _text_or_none(result.get("original_file")) if "original_file" in result else MISSING
    after = result["updated_file"] if isinstance(result.get("updated_file"), str) else MISSING
    return path, before, after


def _file_sides(
    tool: str, tool_input: dict[str, Any], result: dict[str, Any], block: dict[str, Any]
) -> tuple[Any, Any, Any]:
    """(path, before, after) of a Write, Edit or MultiEdit call."""
    path = result.get("filePath") or tool_input.get("file_path")
    before = _text_or_none(result.get("originalFile")) if "originalFile" in result else MISSING
    after: Any = MISSING
    if tool == "Write":
        written = result.get("content", tool_input.get("content"))
        after = written if isinstance(written, str) else MISSING
        if before is MISSING and str(block.get("content", "")).startswith(
            "File created successfully"
        ):
            before = None  # a subagent's Write of a new file (no toolUseResult)
    elif isinstance(before, str):
        after = edits_applied(tool, tool_input, before, result)
    return path, before, after


class TranscriptParser:
    """Events of one transcript file, line by line (keeps the tool calls still waiting for their
    result across calls, so it can be fed appended lines)."""

    def __init__(self, path: str, agent_type: str | None = None) -> None:
        self.path = path
        self.agent_type = agent_type
        # tool_use_id -> (tool, input, whether its line was cut)
        self.pending: dict[str, tuple[str, dict[str, Any], bool]] = {}
        self.prompts_seen: set[str] = set()
        # Background work: agent id or tool_use id -> the prompt id that launched it; the task
        # notifications' prompt ids; a subagent file's launching prompt id (its first line's).
        self.launched: dict[str, str] = {}
        self.notifications: set[str] = set()
        self.launch_prompt: str | None = None
        self.session_id: str | None = None
        self.cwd: str | None = None
        self.last_at = 0.0
        # uuid -> `rests` of the last lines read (what a `last-prompt` may name), oldest first.
        self.recent: dict[str, bool] = {}

    def feed(self, line: dict[str, Any]) -> list[Event]:
        sid = self._follow_context(line)
        if sid is None:
            return []
        at = self.last_at
        kind = line.get("type")
        if kind in END_TYPES and self.agent_type is None:
            return [End(sid, at)] if self._leaf_rests(line) else []
        self._remember_line(line)
        if self.agent_type is None and is_interrupt(line):
            return [Interrupt(sid, at)]
        if kind == "assistant":
            self._remember_calls(line)
            return []
        prompt_id = line.get("promptId")
        if kind != "user" or not isinstance(prompt_id, str) or not prompt_id:
            return []
        if self.launch_prompt is None:
            self.launch_prompt = prompt_id
        if self.agent_type is None and is_notification_line(line):
            return self._notification(line, sid, prompt_id, at)
        prompt = self._prompt(line, sid, prompt_id, at)
        if prompt is not None:
            return [prompt]
        return [*self._launches(line, sid, prompt_id, at), *self._results(line, prompt_id, at)]

    def _notification(
        self, line: dict[str, Any], sid: str, prompt_id: str, at: float
    ) -> list[Event]:
        """A task notification's line, the first time its prompt id is seen."""
        if prompt_id in self.notifications:
            return []
        self.notifications.add(prompt_id)
        task_id, tool_use_id = notification_ids(prompt_text(line) or "")
        launched_by = self.launched.get(task_id or "") or self.launched.get(tool_use_id or "")
        return [Notification(sid, prompt_id, launched_by, at)]

    def _launches(self, line: dict[str, Any], sid: str, prompt_id: str, at: float) -> list[Event]:
        """The subagent an Agent call's result line launched (`toolUseResult.agentId`)."""
        result = line.get("toolUseResult")
        agent_id = result.get("agentId") if isinstance(result, dict) else None
        if self.agent_type is not None or not isinstance(agent_id, str) or not agent_id:
            return []
        self.launched[agent_id] = prompt_id
        for block in content_blocks(line, "user", "tool_result"):
            self.launched[str(block.get("tool_use_id"))] = prompt_id
        return [Launch(sid, agent_id, prompt_id, at)]

    def _follow_context(self, line: dict[str, Any]) -> str | None:
        """Keep the session id, cwd and time the lines so far have given; returns the session id."""
        session_id = line.get("sessionId")
        if isinstance(session_id, str) and session_id:
            self.session_id = session_id
        cwd = line.get("cwd")
        if isinstance(cwd, str) and os.path.isabs(cwd):
            self.cwd = cwd
        if self.session_id is None:
            return None
        # `last-prompt` lines carry no timestamp: they take the time of the line before them, so a
        # turn's end sorts after its own prompt and edits when one poll reads them together.
        stamped = line_time(line)
        if stamped is not None:
            self.last_at = stamped
        return self.session_id

    def _remember_line(self, line: dict[str, Any]) -> None:
        """Keep whether the conversation rests at this main-chain line, for a later `last-prompt`."""
        uid = line.get("uuid")
        if self.agent_type is None and isinstance(uid, str) and not line.get("isSidechain"):
            self.recent.pop(uid, None)
            # An attachment (a hook's output, a reminder) rests where the line it hangs under
            # does: 2.1.197's last line after the Stop hooks is their `hook_system_message`.
            parent = line.get("parentUuid")
            if line.get("type") == "attachment" and isinstance(parent, str):
                self.recent[uid] = self.recent.get(parent, False)
            else:
                self.recent[uid] = rests(line)
            if len(self.recent) > RECENT_LINES:
                del self.recent[next(iter(self.recent))]

    def _leaf_rests(self, line: dict[str, Any]) -> bool:
        """Whether a `last-prompt` line ends the turn: it names no leaf (older binaries), or a
        leaf among the last lines read where the conversation rests. A leaf not read yet is still
        queued for the file: the turn goes on (one read long ago: the next prompt closes it)."""
        leaf = line.get("leafUuid")
        if not isinstance(leaf, str):
            return True
        return self.recent.get(leaf, False)

    def _remember_calls(self, line: dict[str, Any]) -> None:
        """An assistant line's edit-tool calls wait for their results."""
        for block in content_blocks(line, "assistant", "tool_use"):
            if (
                block.get("name") in EDIT_TOOLS
                and isinstance(block.get("id"), str)
                and isinstance(block.get("input"), dict)
            ):
                self.pending[block["id"]] = (block["name"], block["input"], CUT_KEY in line)

    def _prompt(self, line: dict[str, Any], sid: str, prompt_id: str, at: float) -> Prompt | None:
        """The main agent's prompt line, the first time its prompt id is seen."""
        if self.agent_type is not None or line.get("isMeta"):
            return None
        text = prompt_text(line)
        if text is None or prompt_id in self.prompts_seen:
            return None
        self.prompts_seen.add(prompt_id)
        return Prompt(sid, prompt_id, text, at, self.path)

    def _results(self, line: dict[str, Any], prompt_id: str, at: float) -> list[Event]:
        """The edits of a user line's tool results that answer a waiting edit-tool call."""
        out: list[Event] = []
        for block in content_blocks(line, "user", "tool_result"):
            call = self.pending.pop(str(block.get("tool_use_id")), None)
            if call is None or block.get("is_error"):
                continue  # not an edit tool, or it failed (denied, string not found)
            edit = self._edit(line, block, call, prompt_id, at)
            if edit is not None:
                out.append(edit)
        return out

    def _edit(
        self,
        line: dict[str, Any],
        block: dict[str, Any],
        call: tuple[str, dict[str, Any], bool],
        prompt_id: str,
        at: float,
    ) -> Edit | None:
        tool, tool_input, call_cut = call
        result = line.get("toolUseResult")
        result = result if isinstance(result, dict) else {}
        if tool == "NotebookEdit":
            path, before, after = _notebook_sides(tool_input, result)
        else:
            path, before, after = _file_sides(tool, tool_input, result, block)
        if not isinstance(path, str) or not path:
            return None
        cut = int(line.get(CUT_KEY, 0)) or (1 if call_cut else 0)
        if cut:
            # A cut line's texts are not the file's: such a side is not told (the follower then
            # takes the disk, as for a subagent's edit), never a cut text as the content.
            before = MISSING if isinstance(before, str) else before
            after = MISSING
        assert self.session_id is not None
        # A subagent's edit belongs to its launching prompt; under another prompt id (the main
        # conversation went on) it is background work, as is the answer to a notification.
        launched = self.launch_prompt if self.agent_type is not None else None
        background = prompt_id in self.notifications or (launched or prompt_id) != prompt_id
        return Edit(
            session_id=self.session_id,
            prompt_id=launched or prompt_id,
            tool_use_id=str(block.get("tool_use_id")),
            tool=tool,
            path=path,
            cwd=line.get("cwd") if isinstance(line.get("cwd"), str) else self.cwd,
            before=before,
            after=after,
            at=at,
            agent_type=self.agent_type,
            agent_id=line.get("agentId") if self.agent_type else None,
            cut=cut,
            background=background,
            replay=tool_input if after is MISSING and tool in ("Edit", "MultiEdit") else None,
        )


# Set on a line recording read with its long strings cut (Claude Code writes no such key).
CUT_KEY = "rewindLsCut"
KEEP_BYTES = 32 * 1024  # of each string of a line over the cap (under the stored prompt cap)


def _whole_escapes(body: bytes) -> bytes:
    """`body` without a trailing escape sequence cut in half (so the JSON stays valid)."""
    k = body.rfind(b"\\", max(0, len(body) - 6))
    if k >= 0:
        run = 0
        while k - run >= 0 and body[k - run] == 0x5C:
            run += 1
        if run % 2 == 1 and len(body) - k < (6 if body[k + 1 : k + 2] == b"u" else 2):
            return body[:k]
    return body


def cut_line(raw: bytes, keep: int = KEEP_BYTES) -> dict[str, Any] | None:
    """A line over the cap as an object whose strings longer than `keep` bytes are cut, each
    saying how much was left out, and marked with `CUT_KEY` (its length): its structure (type,
    ids, times) is kept, the huge string is never decoded whole. None when it is not JSON."""
    out: list[bytes] = []
    pos = 0
    while True:
        start = raw.find(b'"', pos)
        if start < 0:
            out.append(raw[pos:].rstrip(b"\n"))
            break
        end = start + 1
        while True:  # the closing quote: one after an even run of backslashes
            end = raw.find(b'"', end)
            if end < 0:
                return None
            b = end - 1
            while raw[b] == 0x5C:
                b -= 1
            if (end - 1 - b) % 2 == 0:
                break
            end += 1
        if end - start - 1 <= keep:
            out.append(raw[pos : end + 1])
        else:
            out.append(raw[pos : start + 1])
            out.append(_whole_escapes(raw[start + 1 : start + 1 + keep]))
            out.append(b' [rewind-ls: %d more bytes cut]"' % (end - start - 1 - keep))
        pos = end + 1
    try:
        obj = json.loads(b"".join(out).decode("utf-8", "replace"))
    except (ValueError, RecursionError):
        return None
    if not isinstance(obj, dict):
        return None
    obj[CUT_KEY] = len(raw)
    return obj


def parse_lines(data: bytes | Iterable[bytes], cap: int | None = None) -> list[dict[str, Any]]:
    """The JSON objects of a transcript's lines (`data` whole, or its lines one by one, as a file
    gives them), for recording. A line over `cap` bytes
    (`config.max_line_bytes`) is read with its long strings cut (`cut_line`), never parsed whole.
    Recording only: forks copy every line whole (`transcript.read_lines`)."""
    limit = config.max_line_bytes() if cap is None else cap
    out: list[dict[str, Any]] = []
    for raw in data.split(b"\n") if isinstance(data, bytes) else data:
        if len(raw) - raw.endswith(b"\n") > limit:  # no rstrip: it would copy a huge line
            obj = cut_line(raw)
            if obj is not None:
                out.append(obj)
        else:
            out.extend(json_objects((raw,)))
    return out


def subagent_files(transcript: str) -> list[tuple[str, str | None]]:
    """(path, agent type) of the subagents' transcripts of a session (`<id>/subagents/`)."""
    folder = os.path.join(transcript[: -len(".jsonl")], "subagents")
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return []
    out: list[tuple[str, str | None]] = []
    for name in names:
        if not name.endswith(".jsonl"):
            continue
        agent_type = "subagent"
        try:
            with open(os.path.join(folder, name[: -len(".jsonl")] + ".meta.json"), "rb") as f:
                meta = json.load(f)
            if isinstance(meta, dict) and isinstance(meta.get("agentType"), str):
                agent_type = meta["agentType"]
        except (OSError, ValueError):
            pass
        out.append((os.path.join(folder, name), agent_type))
    return out


def read_file_events(path: str, agent_type: str | None = None) -> tuple[list[Event], str | None]:
    """Every event of one transcript file, and its session id."""
    parser = TranscriptParser(path, agent_type)
    events: list[Event] = []
    with open(path, "rb") as f:  # line by line: one huge line is held once, never split again
        for line in parse_lines(f):
            events.extend(parser.feed(line))
    return events, parser.session_id


def session_events(transcript: str) -> tuple[list[Event], str | None]:
    """The events of a session's transcript and of its subagents' files."""
    events, sid = read_file_events(transcript)
    for path, agent_type in subagent_files(transcript):
        more, _ = read_file_events(path, agent_type)
        events.extend(more)
    return events, sid
