"""Turns and edit-tool changes reconstructed from Claude Code transcripts, for when hooks do not fire.

A transcript (and each subagent's file beside it) holds what rewind-ls needs, as written by the real
2.1.197 binary: every prompt line carries its `promptId`; every Write/Edit result line carries
`toolUseResult.filePath` and `toolUseResult.originalFile` (null for a new file) plus what was written
(`content` for Write; `oldString`/`newString`/`replaceAll` and a `structuredPatch` for Edit);
NotebookEdit's carries `original_file`/`updated_file`. Subagent files carry the tool calls and their
results but no `toolUseResult`: there the "before" is the last content rewind-ls knows.

Everything is recorded through the store, each prompt id and tool_use id once: the hooks claim the
same ids (`Store.claim_event`), so whichever records first wins and the other skips. A tool call the
hook recorded without its before (no PreToolUse) gets the transcript's before.

`import_transcripts` records past sessions (no workspace scan: shell side effects of those turns may
be missing, and the turn says so); `TranscriptFollower` follows the workspace's transcripts while the
language server runs, reading only appended bytes, and scans the workspace at the prompt boundaries
it sees (as the hooks would have).
"""

from __future__ import annotations

import json
import os
import re
import stat as stat_mod
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from rewind_ls.core import config
from rewind_ls.core.capture import Recorder, read_current, turn_info
from rewind_ls.core.errors import BadPath, OutsideWorkspace
from rewind_ls.core.store import ABSENT_VERSION, FILE, UNKNOWN, Store, Version
from rewind_ls.core.transcript import prompt_text, timestamp

AGENT = "claude-code"
SOURCE = "transcript"
PLACEHOLDER_PROMPT = "(edits outside a recorded prompt)"
EDIT_TOOLS = {"Write", "Edit", "MultiEdit", "NotebookEdit"}
# Lines that close the agent's turn (written when the agent stops and waits for the person).
END_TYPES = {"last-prompt"}

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


class End:
    __slots__ = ("at", "session_id")

    def __init__(self, session_id: str, at: float) -> None:
        self.session_id = session_id
        self.at = at


Event = Prompt | Edit | End


def project_slug(folder: str) -> str:
    """Claude Code's folder name for a project under `projects/`: non-alphanumerics become '-'."""
    return re.sub(r"[^A-Za-z0-9]", "-", folder)


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


class TranscriptParser:
    """Events of one transcript file, line by line (keeps the tool calls still waiting for their
    result across calls, so it can be fed appended lines)."""

    def __init__(self, path: str, agent_type: str | None = None) -> None:
        self.path = path
        self.agent_type = agent_type
        self.pending: dict[str, tuple[str, dict[str, Any]]] = {}
        self.prompts_seen: set[str] = set()
        self.session_id: str | None = None
        self.cwd: str | None = None
        self.last_at = 0.0

    def feed(self, line: dict[str, Any]) -> list[Event]:
        session_id = line.get("sessionId")
        if isinstance(session_id, str) and session_id:
            self.session_id = session_id
        cwd = line.get("cwd")
        if isinstance(cwd, str) and os.path.isabs(cwd):
            self.cwd = cwd
        sid = self.session_id
        if sid is None:
            return []
        # `last-prompt` lines carry no timestamp: they take the time of the line before them, so a
        # turn's end sorts after its own prompt and edits when one poll reads them together.
        stamped = timestamp(line)
        if stamped is not None:
            self.last_at = stamped
        at = self.last_at
        kind = line.get("type")
        if kind in END_TYPES and self.agent_type is None:
            return [End(sid, at)]
        message = line.get("message")
        content = message.get("content") if isinstance(message, dict) else None
        if kind == "assistant" and isinstance(content, list):
            for block in content:
                if (
                    isinstance(block, dict)
                    and block.get("type") == "tool_use"
                    and block.get("name") in EDIT_TOOLS
                    and isinstance(block.get("id"), str)
                    and isinstance(block.get("input"), dict)
                ):
                    self.pending[block["id"]] = (block["name"], block["input"])
            return []
        if kind != "user":
            return []
        prompt_id = line.get("promptId")
        if not isinstance(prompt_id, str) or not prompt_id:
            return []
        if self.agent_type is None and not line.get("isMeta"):
            text = prompt_text(line)
            if text is not None and prompt_id not in self.prompts_seen:
                self.prompts_seen.add(prompt_id)
                return [Prompt(sid, prompt_id, text, at, self.path)]
        if not isinstance(content, list):
            return []
        out: list[Event] = []
        for block in content:
            if not isinstance(block, dict) or block.get("type") != "tool_result":
                continue
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
        call: tuple[str, dict[str, Any]],
        prompt_id: str,
        at: float,
    ) -> Edit | None:
        tool, tool_input = call
        result = line.get("toolUseResult")
        result = result if isinstance(result, dict) else {}
        before: Any = MISSING
        after: Any = MISSING
        path: Any = None
        if tool == "NotebookEdit":
            path = result.get("notebook_path") or tool_input.get("notebook_path")
            if "original_file" in result:
                before = _text_or_none(result.get("original_file"))
            if isinstance(result.get("updated_file"), str):
                after = result["updated_file"]
        else:
            path = result.get("filePath") or tool_input.get("file_path")
            if "originalFile" in result:
                before = _text_or_none(result.get("originalFile"))
            if tool == "Write":
                written = result.get("content", tool_input.get("content"))
                after = written if isinstance(written, str) else MISSING
                if before is MISSING and str(block.get("content", "")).startswith(
                    "File created successfully"
                ):
                    before = None  # a subagent's Write of a new file (no toolUseResult)
            elif isinstance(before, str):
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
                after = text if text is not None else MISSING
        if not isinstance(path, str) or not path:
            return None
        assert self.session_id is not None
        return Edit(
            session_id=self.session_id,
            prompt_id=prompt_id,
            tool_use_id=str(block.get("tool_use_id")),
            tool=tool,
            path=path,
            cwd=line.get("cwd") if isinstance(line.get("cwd"), str) else self.cwd,
            before=before,
            after=after,
            at=at,
            agent_type=self.agent_type,
            agent_id=line.get("agentId") if self.agent_type else None,
        )


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


def parse_lines(data: bytes) -> list[dict[str, Any]]:
    out = []
    for raw in data.split(b"\n"):
        try:
            obj = json.loads(raw)
        except (ValueError, UnicodeDecodeError, RecursionError):
            continue  # a damaged or partial line is skipped, never fatal
        if isinstance(obj, dict):
            out.append(obj)
    return out


# --- recording --------------------------------------------------------------------------------


def is_reconstructed(turn: Any) -> bool:
    return turn_info(turn).get("reconstructed") == SOURCE


def reconstructed_note(turn: Any) -> str | None:
    """What a preview and `turns` say of a turn rebuilt from the transcript (None otherwise)."""
    info = turn_info(turn)
    if info.get("reconstructed") != SOURCE:
        return None
    note = "reconstructed from the agent's transcript (its hooks did not record it)"
    if not info.get("scanned"):
        note += "; shell side effects of this turn may be missing (no workspace scan ran then)"
    return note


class TranscriptRecorder:
    """Records transcript events in one workspace store. `live`: the events are happening now,
    and the workspace is scanned once the batch is recorded (`finish`), into the batch's latest
    reconstructed turn, as the hooks scan at turn boundaries. The edits are recorded first, from
    the transcript's exact contents: a scan run at each boundary would find the later turns'
    files already written (the follower reads after the fact) and misattribute them. Not live:
    past events, no scan (today's disk says nothing of that time)."""

    def __init__(self, store: Store, live: bool) -> None:
        self.store = store
        self.live = live
        self.rec = Recorder(store)
        self.turns = 0
        self.changes = 0
        self.filled = 0
        self.skipped: list[str] = []
        self.tools_of: dict[tuple[str, str], list[str]] = {}
        self.scan_turns: dict[str, str] = {}

    def finish(self) -> None:
        """Live: shell side effects, found by a workspace scan, go to the batch's latest turn."""
        if not self.live:
            return
        for sid, turn in self.scan_turns.items():
            self.changes += len(self.rec.scan_into(turn, sid))
        self.scan_turns = {}

    def record(self, events: Iterable[Event]) -> None:
        ordered = sorted(events, key=lambda e: e.at)
        self.tools_of = {}
        for ev in ordered:
            if isinstance(ev, Edit):
                key = (ev.session_id, ev.prompt_id)
                self.tools_of.setdefault(key, []).append(ev.tool_use_id)
        for ev in ordered:
            if isinstance(ev, Prompt):
                self._prompt(ev)
            elif isinstance(ev, Edit):
                self._edit(ev)
            else:
                self._end(ev.session_id, ev.at)

    def close_sessions(self, session_ids: Iterable[str], at: float | None) -> None:
        for sid in session_ids:
            self._end(sid, at)

    def _open_turn(self, session_id: str) -> str | None:
        row = self.store.session(session_id)
        return None if row is None else row["open_turn"]

    def _prompt(self, ev: Prompt) -> None:
        sid = ev.session_id
        self.store.ensure_session(sid, "agent", AGENT, ev.transcript)
        if not self.store.claim_event(sid, "prompt", ev.prompt_id, SOURCE):
            return  # the hook recorded it
        info = {"promptId": ev.prompt_id, "reconstructed": SOURCE, "scanned": self.live}
        row = self._hook_placeholder(sid, ev.prompt_id)
        if row is not None:
            # A hook saw this prompt's edits but not the prompt itself: that turn is this one.
            merged = {**turn_info(row), "promptId": ev.prompt_id, "promptFrom": SOURCE}
            self.store.set_turn_prompt(row["id"], ev.text, json.dumps(merged))
            self.store.set_event_turn(sid, "prompt", ev.prompt_id, row["id"])
            return
        open_turn = self._open_turn(sid)
        if open_turn is not None:
            self.store.end_turn(open_turn, ended_at=ev.at)
        turn = self.store.begin_turn(sid, ev.text, info=json.dumps(info), started_at=ev.at)
        self.scan_turns[sid] = turn
        self.store.set_event_turn(sid, "prompt", ev.prompt_id, turn)
        self.turns += 1

    def _hook_placeholder(self, session_id: str, prompt_id: str) -> Any:
        """The turn a hook opened for this prompt's tool calls without seeing the prompt itself
        (no UserPromptSubmit): the session's open unlabelled turn, or the turn a hook recorded
        one of the prompt's tool calls in. None when there is none."""
        candidates = []
        open_turn = self._open_turn(session_id)
        if open_turn:
            candidates.append(open_turn)
        for tool_use_id in self.tools_of.get((session_id, prompt_id), []):
            row = self.store.event(session_id, "tool", tool_use_id)
            if row is not None and row["source"] == "hook" and row["turn_id"]:
                candidates.append(row["turn_id"])
        for turn_id in reversed(candidates):
            row = self.store.turn(turn_id)
            if (
                row is not None
                and row["prompt"] == PLACEHOLDER_PROMPT
                and not turn_info(row).get("promptId")
            ):
                return row
        return None

    def _end(self, session_id: str, at: float | None) -> None:
        open_turn = self._open_turn(session_id)
        row = self.store.turn(open_turn) if open_turn else None
        if row is None or not is_reconstructed(row):
            return  # the hooks' turn: their Stop (or the next prompt) closes it
        self.store.end_turn(row["id"], ended_at=at)
        if self.live:
            self.scan_turns[session_id] = row["id"]

    def _version(self, rel: str, text: Any, known: Version | None) -> Version | None:
        """The Version of content `text` (None: absent; MISSING: what rewind-ls last knew)."""
        if text is MISSING:
            return known
        if text is None:
            return ABSENT_VERSION
        data = str(text).encode("utf-8", "surrogateescape")
        h = self.store.put_blob(data)
        mode = 0o644
        try:
            mode = stat_mod.S_IMODE(
                os.lstat(os.path.join(self.store.root, *rel.split("/"))).st_mode
            )
        except OSError:
            if known is not None and known.mode is not None:
                mode = known.mode
        return Version(FILE, h, mode, len(data))

    def _fill_gap(self, ev: Edit, rel: str) -> None:
        """A hook recorded this call, maybe without its before (no PreToolUse): then it kept the
        before as unknown, or, when a scan had already seen the new content, dropped the change
        as no change at all. The transcript knows both sides: fill them in."""
        row = self.store.event(ev.session_id, "tool", ev.tool_use_id)
        if row is None or not row["turn_id"] or ev.before is MISSING:
            return
        turn = row["turn_id"]
        before = self._version(rel, ev.before, None)
        assert before is not None
        change = self.store.change(turn, rel)
        if change is not None:
            if self.store.set_before(turn, rel, before):
                self.filled += 1
            return
        after = self._version(rel, ev.after, None)
        if after is not None and after != before:
            self.rec.record_known_change(turn, rel, before, after, SOURCE)
            self.filled += 1

    def _edit(self, ev: Edit) -> None:
        from rewind_ls.core.claude_hook import _inside_agent_folder
        from rewind_ls.core.paths import relative_path

        sid = ev.session_id
        try:
            if _inside_agent_folder(ev.path, ev.cwd or self.store.root):
                return
            rel = relative_path(self.store.root, ev.path, ev.cwd or self.store.root)
        except (OutsideWorkspace, BadPath):
            return
        known_row = self.store.known(rel)
        known = None if known_row is None else known_row[0]
        if self.store.event(sid, "tool", ev.tool_use_id) is not None:
            self._fill_gap(ev, rel)
            return
        self.store.ensure_session(sid, "agent", AGENT)
        prompt = self.store.event(sid, "prompt", ev.prompt_id) if ev.prompt_id else None
        turn = prompt["turn_id"] if prompt is not None and prompt["turn_id"] else None
        if turn is None:
            turn = self._open_turn(sid)
        hook_change = self.store.change(turn, rel) if turn is not None else None
        if hook_change is not None and hook_change["source"] == "tool":
            # An edit-tool hook recorded this path in this turn (a store from before tool ids
            # were kept): its record stands; it is the hook's call.
            self.store.claim_event(sid, "tool", ev.tool_use_id, "hook", turn)
            self._fill_gap(ev, rel)
            return
        if not self.store.claim_event(sid, "tool", ev.tool_use_id, SOURCE):
            self._fill_gap(ev, rel)
            return
        if turn is None:
            turn = self.store.begin_turn(
                sid,
                PLACEHOLDER_PROMPT,
                info=json.dumps({"reconstructed": SOURCE}),
                started_at=ev.at,
            )
        self.store.set_event_turn(sid, "tool", ev.tool_use_id, turn)
        before = self._version(rel, ev.before, known)
        after = self._version(rel, ev.after, None)
        if after is None and self.live:
            after = self.rec.snapshot(rel, known)  # happening now: the disk holds what it wrote
        if before is None:
            before = Version(UNKNOWN)
        if after is None:
            self.skipped.append(f"{ev.tool} {rel}: what it wrote is not in the transcript")
            return
        self.rec.record_known_change(turn, rel, before, after, SOURCE)
        self.changes += 1
        # The disk still holds what the tool wrote: remember it, so a scan does not report it again.
        try:
            now, _data, st = read_current(self.store.root, rel)
        except (BadPath, OSError):
            now, st = None, None
        if now is not None and now == after and after.kind == FILE and now.hash == after.hash:
            self.store.set_known(rel, now, st)
        if ev.agent_type:
            self.rec.note_subagent(turn, ev.agent_type, ev.agent_id)


def read_file_events(path: str, agent_type: str | None = None) -> tuple[list[Event], str | None]:
    """Every event of one transcript file, and its session id."""
    parser = TranscriptParser(path, agent_type)
    with open(path, "rb") as f:
        data = f.read()
    events: list[Event] = []
    for line in parse_lines(data):
        events.extend(parser.feed(line))
    return events, parser.session_id


def session_events(transcript: str) -> tuple[list[Event], str | None]:
    """The events of a session's transcript and of its subagents' files."""
    events, sid = read_file_events(transcript)
    for path, agent_type in subagent_files(transcript):
        more, _ = read_file_events(path, agent_type)
        events.extend(more)
    return events, sid


def workspace_transcripts(root: str, seen: dict[str, bool] | None = None) -> list[str]:
    """The transcripts of sessions started in `root` or a folder below it. `seen` remembers which
    files were already looked at (the follower lists the folder every poll; a file's first line
    is read once)."""
    projects = os.path.join(config.claude_dir(), "projects")
    slug = project_slug(os.path.realpath(root))
    try:
        names = sorted(os.listdir(projects))
    except OSError:
        return []
    out: list[str] = []
    for name in names:
        if name != slug and not name.startswith(slug + "-"):
            continue
        folder = os.path.join(projects, name)
        try:
            files = sorted(os.listdir(folder))
        except OSError:
            continue
        for f in files:
            full = os.path.join(folder, f)
            if not f.endswith(".jsonl"):
                continue
            belongs = None if seen is None else seen.get(full)
            if belongs is None:
                belongs = _belongs(full, root) if os.path.isfile(full) else False
                if seen is not None and belongs is not None:
                    seen[full] = belongs  # no `cwd` yet (a new file): asked again next time
            if belongs:
                out.append(full)
    return out


def _belongs(transcript: str, root: str) -> bool | None:
    """Whether the session started inside `root` (its first line with a `cwd`); None when no
    line has one yet."""
    real_root = os.path.realpath(root)
    try:
        with open(transcript, "rb") as f:
            for raw in f:
                try:
                    cwd = json.loads(raw).get("cwd")
                except (ValueError, AttributeError, UnicodeDecodeError, RecursionError):
                    continue
                if isinstance(cwd, str):
                    real = os.path.realpath(cwd)
                    return real == real_root or real.startswith(real_root.rstrip(os.sep) + os.sep)
    except OSError:
        return False
    return None


def import_transcripts(store: Store, transcripts: list[str]) -> dict[str, Any]:
    """Record past sessions from their transcripts (nothing already recorded is recorded again)."""
    rec = TranscriptRecorder(store, live=False)
    sessions = []
    for path in transcripts:
        events, sid = session_events(path)
        if sid is None:
            continue
        before = rec.turns, rec.changes
        rec.record(events)
        last = max((e.at for e in events), default=None)
        rec.close_sessions([sid], last)
        sessions.append(
            {
                "session_id": sid,
                "transcript": path,
                "turns": rec.turns - before[0],
                "changes": rec.changes - before[1],
            }
        )
    return {
        "sessions": sessions,
        "turns": rec.turns,
        "changes": rec.changes,
        "filled_befores": rec.filled,
        "skipped": rec.skipped,
    }


class TranscriptFollower:
    """Follows a workspace's transcripts (and their subagents' files): each `poll` reads only the
    bytes appended since the last one and records what no hook recorded."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.offsets: dict[str, int] = {}
        self.seen: dict[str, bool] = {}
        self.parsers: dict[str, TranscriptParser] = {}
        self.recorded = 0

    def _files(self) -> list[tuple[str, str | None]]:
        out: list[tuple[str, str | None]] = []
        for transcript in workspace_transcripts(self.store.root, self.seen):
            out.append((transcript, None))
            out.extend(subagent_files(transcript))
        return out

    def poll(self) -> int:
        """Record what was appended since the last poll; returns how many turns and changes
        were recorded (0: nothing new)."""
        events: list[Event] = []
        for path, agent_type in self._files():
            try:
                size = os.path.getsize(path)
            except OSError:
                continue
            offset = self.offsets.get(path, 0)
            if size <= offset:
                continue
            with open(path, "rb") as f:
                f.seek(offset)
                data = f.read(size - offset)
            end = data.rfind(b"\n")
            if end < 0:
                continue  # a line still being written: wait for its end
            self.offsets[path] = offset + end + 1
            parser = self.parsers.setdefault(path, TranscriptParser(path, agent_type))
            for line in parse_lines(data[: end + 1]):
                events.extend(parser.feed(line))
        if not events:
            return 0
        rec = TranscriptRecorder(self.store, live=True)
        rec.record(events)
        rec.finish()
        done = rec.turns + rec.changes + rec.filled
        self.recorded += done
        return done


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
