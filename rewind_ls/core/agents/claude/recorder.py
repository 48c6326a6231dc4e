"""Recording Claude Code transcript events (from `claude.events`) in a workspace store, for
when hooks do not fire.

Everything is recorded through the store, each prompt id and tool_use id once: the hooks claim the
same ids (`Store.claim_event`), so whichever records first wins and the other skips. A tool call the
hook recorded without its before (no PreToolUse) gets the transcript's before.

`import_transcripts` records past sessions (no workspace scan: shell side effects of those turns may
be missing, and the turn says so); `claude.follower` records them live.
"""

from __future__ import annotations

import json
import os
import stat as stat_mod
from collections.abc import Iterable
from typing import Any

from rewind_ls.core.agents.claude.events import (
    MISSING,
    Edit,
    Event,
    Interrupt,
    Launch,
    Notification,
    Prompt,
    edits_applied,
    session_events,
)
from rewind_ls.core.agents.hook_steps import inside_folder
from rewind_ls.core.capture.recorder import (
    TIME_SLACK,
    TRANSCRIPT_SOURCE,
    Recorder,
    TurnWindow,
    is_reconstructed,
    read_current,
    turn_info,
)
from rewind_ls.core.errors import BadPath, OutsideWorkspace, RewindError
from rewind_ls.core.fs import config
from rewind_ls.core.model import BACKGROUND_AGENT, Turn
from rewind_ls.core.store import ABSENT_VERSION, FILE, UNKNOWN, Store, Version

AGENT = "claude-code"
SOURCE = TRANSCRIPT_SOURCE
PLACEHOLDER_PROMPT = "(edits outside a recorded prompt)"


class TranscriptRecorder:
    """Records transcript events in one workspace store. `live`: the events are happening now,
    and the workspace is scanned once the batch is recorded (`finish`), as the hooks scan at turn
    boundaries; each change found goes to the batch's turn that was running when the file changed
    (its modification time), a change made before or after them to the external session. The
    edits are recorded first, from the transcript's exact contents: a scan run at each boundary
    would find the later turns' files already written (the follower reads after the fact, and at
    its start reads sessions that ended long ago) and misattribute them. Not live:
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
        self.scan_turns: list[str] = []  # the batch's turns (begun or ended), for its scan

    def finish(self) -> None:
        """Live: shell side effects, found by a workspace scan, go to the batch's turn that was
        running when each file changed; what changed before or after them is someone else's."""
        if not self.live:
            return
        windows = []
        for turn_id in dict.fromkeys(self.scan_turns):
            row = self.store.turn(turn_id)
            if row is not None:
                windows.append(TurnWindow(row.id, row.session_id, row.started_at, row.ended_at))
        self.scan_turns = []
        if windows:
            self.changes += len(self.rec.scan_by_time(windows))

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
            elif isinstance(ev, Interrupt):
                self._interrupt(ev)
            elif isinstance(ev, Launch):
                self._launch(ev)
            elif isinstance(ev, Notification):
                self._notification(ev)
            else:
                self._end(ev.session_id, ev.at)

    def close_sessions(self, session_ids: Iterable[str], at: float | None) -> None:
        for sid in session_ids:
            self._end(sid, at)

    def _open_turn(self, session_id: str) -> str | None:
        row = self.store.session(session_id)
        return None if row is None else row.open_turn

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
            self.store.set_turn_prompt(row.id, ev.text, json.dumps(merged))
            self.store.set_event_turn(sid, "prompt", ev.prompt_id, row.id)
            return
        open_turn = self._open_turn(sid)
        if open_turn is not None:
            self.store.end_turn(open_turn, ended_at=ev.at)
        turn = self.store.begin_turn(sid, ev.text, info=json.dumps(info), started_at=ev.at)
        self.scan_turns.append(turn)
        self.store.set_event_turn(sid, "prompt", ev.prompt_id, turn)
        self.turns += 1

    def _launch(self, ev: Launch) -> None:
        """Remember the turn that launched a subagent (as the hook's SubagentStart does)."""
        prompt = self.store.event(ev.session_id, "prompt", ev.prompt_id)
        if prompt is not None and prompt.turn_id:
            self.store.claim_event(ev.session_id, "agent", ev.agent_id, SOURCE, prompt.turn_id)

    def _notification(self, ev: Notification) -> None:
        """A task notification opens no turn (`claude.notifications`): the agent was idle, so the
        open turn ends here, and the notification's prompt id is claimed for the turn that
        launched the task (else the session's latest turn), where its answer's edits go."""
        sid = ev.session_id
        self._end(sid, ev.at)
        launched = self.store.event(sid, "prompt", ev.launched_by) if ev.launched_by else None
        turn = launched.turn_id if launched is not None else None
        if turn is None:
            latest = self.store.latest_turn(sid)
            turn = latest.id if latest is not None else None
        if turn is not None:
            self.store.claim_event(sid, "prompt", ev.prompt_id, SOURCE, turn)

    def _hook_placeholder(self, session_id: str, prompt_id: str) -> Turn | None:
        """The turn a hook opened for this prompt's tool calls without seeing the prompt itself
        (no UserPromptSubmit): the session's open unlabelled turn, or the turn a hook recorded
        one of the prompt's tool calls in. None when there is none."""
        candidates = []
        open_turn = self._open_turn(session_id)
        if open_turn:
            candidates.append(open_turn)
        for tool_use_id in self.tools_of.get((session_id, prompt_id), []):
            row = self.store.event(session_id, "tool", tool_use_id)
            if row is not None and row.source == "hook" and row.turn_id:
                candidates.append(row.turn_id)
        for turn_id in reversed(candidates):
            turn = self.store.turn(turn_id)
            if (
                turn is not None
                and turn.prompt == PLACEHOLDER_PROMPT
                and not turn_info(turn).get("promptId")
            ):
                return turn
        return None

    def _end(self, session_id: str, at: float | None) -> None:
        open_turn = self._open_turn(session_id)
        row = self.store.turn(open_turn) if open_turn else None
        if row is None or not is_reconstructed(row):
            return  # the hooks' turn: their Stop (or the next prompt) closes it
        self.store.end_turn(row.id, ended_at=at)
        if self.live:
            self.scan_turns.append(row.id)

    def _interrupt(self, ev: Interrupt) -> None:
        """The person stopped the turn: a reconstructed turn ends like any other; a hook's turn
        gets no hook for it (Claude Code fires none), so, live, it is closed here at that time:
        what changes after it is the person's, not the turn's."""
        open_turn = self._open_turn(ev.session_id)
        row = self.store.turn(open_turn) if open_turn else None
        if row is None or is_reconstructed(row):
            self._end(ev.session_id, ev.at)
            return
        if self.live and row.started_at <= ev.at + TIME_SLACK:
            self.rec.end_turn(ev.session_id, ended_at=ev.at)

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
        if row is None or not row.turn_id or ev.before is MISSING:
            return
        turn = row.turn_id
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
        rel = self._relative(ev)
        if rel is None:
            return
        sid = ev.session_id
        known_row = self.store.known(rel)
        known = None if known_row is None else known_row[0]
        if self.store.event(sid, "tool", ev.tool_use_id) is not None:
            self._fill_gap(ev, rel)
            return
        self.store.ensure_session(sid, "agent", AGENT)
        turn = self._turn_of(ev)
        if not self._claim(ev, rel, turn):
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
        if after is None and ev.replay is not None and before is not None:
            after = self._replayed(ev, rel, before)
        if after is None and self.live:
            after = self.rec.snapshot(rel, known)  # happening now: the disk holds what it wrote
        if before is None:
            before = Version(UNKNOWN)
        if after is None:
            why = (
                "its transcript line is over the cap (REWIND_LS_MAX_LINE_BYTES), read cut"
                if ev.cut
                else "what it wrote is not in the transcript"
            )
            self.skipped.append(f"{ev.tool} {rel}: {why}")
            return
        source = BACKGROUND_AGENT if ev.background else SOURCE
        self.rec.record_known_change(turn, rel, before, after, source)
        self.changes += 1
        self._remember_disk(rel, after)
        if ev.agent_type:
            self.rec.note_subagent(turn, ev.agent_type, ev.agent_id)

    def _replayed(self, ev: Edit, rel: str, before: Version) -> Version | None:
        """What a subagent's Edit wrote (its file tells no content): its replacements applied to
        the content it started from, when rewind-ls has it; None otherwise."""
        if before.kind != FILE or before.hash is None or ev.replay is None:
            return None
        try:
            text = self.store.get_blob(before.hash).decode("utf-8", "surrogateescape")
        except RewindError:
            return None
        done = edits_applied(ev.tool, ev.replay, text, {})
        return None if done is MISSING else self._version(rel, done, None)

    def _relative(self, ev: Edit) -> str | None:
        """The edit's workspace-relative path; None for a file outside the workspace or in the
        agent's own folder."""
        from rewind_ls.core.fs.paths import relative_path

        cwd = ev.cwd or self.store.root
        try:
            if inside_folder(ev.path, cwd, config.claude_dir()):
                return None
            return relative_path(self.store.root, ev.path, cwd)
        except (OutsideWorkspace, BadPath):
            return None

    def _turn_of(self, ev: Edit) -> str | None:
        """The turn of the edit's prompt when it is recorded, else the session's open turn."""
        sid = ev.session_id
        prompt = self.store.event(sid, "prompt", ev.prompt_id) if ev.prompt_id else None
        if prompt is not None and prompt.turn_id:
            return str(prompt.turn_id)
        return self._open_turn(sid)

    def _claim(self, ev: Edit, rel: str, turn: str | None) -> bool:
        """Claim the edit's tool call for the transcript; False when a hook recorded it."""
        sid = ev.session_id
        hook_change = self.store.change(turn, rel) if turn is not None else None
        if hook_change is not None and hook_change.source == "tool":
            # An edit-tool hook recorded this path in this turn (a store from before tool ids
            # were kept): its record stands; it is the hook's call.
            self.store.claim_event(sid, "tool", ev.tool_use_id, "hook", turn)
            return False
        return self.store.claim_event(sid, "tool", ev.tool_use_id, SOURCE)

    def _remember_disk(self, rel: str, after: Version) -> None:
        """The disk still holds what the tool wrote: remember it, so a scan does not report it
        again. It does not: remember what the tool wrote (no stat, so a scan reads the file
        again), so the later change on disk is a conflict for a rewind (compare-and-swap against
        what the tool wrote, not against today's disk), unless a recorded change of someone else
        (a hook, a save, a scan) wrote what rewind-ls last saw: that is newer than this past edit.
        A content only adopted by a baseline taken after the session is not: kept, it would let a
        rewind of this turn overwrite the person's later edit without a conflict."""
        try:
            now, _data, st = read_current(self.store.root, rel)
        except (BadPath, OSError):
            now, st = None, None
        if now is not None and now == after and after.kind == FILE and now.hash == after.hash:
            self.store.set_known(rel, now, st)
            return
        known = self.store.known(rel)
        if known is None or not self._witnessed(rel, known[0]):
            self.store.set_known(rel, after)

    def _witnessed(self, rel: str, seen: Version) -> bool:
        """Whether a recorder other than a transcript recorded `seen` as a change's result."""
        return any(
            h.source != SOURCE and h.after is not None and h.after.same_content(seen)
            for h in self.store.path_history(rel)
        )


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
