"""Recording what files looked like: turns, first-touch snapshots, after-contents, workspace scans.

Every recorder (the Claude Code hook, `rewind-ls record`, the language server's saves) goes through
`Recorder`, so the rules live in one place:
- a turn's `before` for a path is the content when the path is first touched in that turn;
- its `after` is the content the last time it was seen in that turn;
- at turn boundaries and after shell commands, the workspace is scanned (`core.capture.scan`): every
  non-ignored file whose metadata changed since rewind-ls last saw it is read again, and files
  created or deleted behind its back are found, so a change made by a shell command is not missed.
"""

from __future__ import annotations

import json
import os
import stat as stat_mod
import time
from collections.abc import Callable, Iterable
from typing import Any, NamedTuple

from rewind_ls.core.capture.file_reader import same_signature
from rewind_ls.core.errors import BadPath
from rewind_ls.core.fs import config

# The fixed sessions, re-exported for the modules that took them from here (new code: `model`).
from rewind_ls.core.model import EDITOR_SESSION as EDITOR_SESSION
from rewind_ls.core.model import EXTERNAL_SESSION as EXTERNAL_SESSION
from rewind_ls.core.model import REWIND_SESSION as REWIND_SESSION
from rewind_ls.core.model import Turn
from rewind_ls.core.store import (
    ABSENT,
    ABSENT_VERSION,
    FILE,
    UNKNOWN,
    Store,
    Version,
    digest,
    too_large,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from rewind_ls.core.capture.scan import ScanResult


# "Not set": the scan module (imported only when a scan runs) reads the environment's default.
_DEFAULT_BUDGET = -1.0


# A file's modification time this close to a turn's start or end still counts as the turn's: the
# agent's timestamps and the file system's clock differ by the write's latency and its granularity.
TIME_SLACK = 1.0
# The external turns that share a shell command's changes, by how the command ended.
_KILLED = "changes made after an agent was killed during a shell command"
_ENDED_BY_NOTHING = "changes made during a shell command that no event of its own ended"


class TurnWindow(NamedTuple):
    """When a turn ran, for attributing changes by time (`Recorder.scan_by_time`). (A named
    tuple: the hook imports this module, and `dataclasses` costs its start-up.)"""

    turn: str
    session_id: str
    start: float
    end: float | None  # still open


def _window_of(mtime: float, windows: list[TurnWindow]) -> TurnWindow | None:
    """The latest turn whose window holds the modification time `mtime` (None: none does)."""
    holding = [
        w
        for w in windows
        if w.start - TIME_SLACK <= mtime and (w.end is None or mtime <= w.end + TIME_SLACK)
    ]
    return max(holding, key=lambda w: w.start) if holding else None


def read_current(
    root: str, rel: str, max_bytes: int | None = None
) -> tuple[Version, bytes | None, os.stat_result | None]:
    """The path's content now: (version, bytes or None, lstat or None)."""
    full = os.path.join(root, *rel.split("/"))
    try:
        st = os.lstat(full)
    except (FileNotFoundError, NotADirectoryError):
        return ABSENT_VERSION, None, None
    if stat_mod.S_ISLNK(st.st_mode):
        raise BadPath(rel, "is a symbolic link; rewind-ls records regular files only")
    if not stat_mod.S_ISREG(st.st_mode):
        raise BadPath(rel, "is not a regular file")
    limit = config.max_file_bytes() if max_bytes is None else max_bytes
    mode = stat_mod.S_IMODE(st.st_mode)
    if st.st_size > limit:
        return too_large(st), None, st
    with open(full, "rb") as f:
        data = f.read()
    return Version(FILE, digest(data), mode, len(data)), data, st


def _unchanged(
    st: os.stat_result | None, known: Version, mtime_ns: int | None, ino: int | None
) -> bool:
    """Whether the path's lstat (None: gone) still matches what was last seen of it."""
    if st is None:
        return known.kind == ABSENT
    return known.kind != ABSENT and same_signature(st, known.size, mtime_ns, ino, known.mode)


def turn_info(row: Turn | None) -> dict[str, Any]:
    """An agent turn's `info` JSON (prompt id, subagents); {} when absent or not ours."""
    raw = None if row is None else row.info
    if not raw:
        return {}
    try:
        info = json.loads(raw)
    except ValueError:
        return {}
    return info if isinstance(info, dict) else {}


# A turn's `info` "reconstructed" value when it was rebuilt from the agent's transcript (its hooks
# did not record it); the Claude transcript recorder writes it, previews and listings read it.
TRANSCRIPT_SOURCE = "transcript"


def is_reconstructed(turn: Turn | None) -> bool:
    return turn_info(turn).get("reconstructed") == TRANSCRIPT_SOURCE


def reconstructed_note(turn: Turn | None) -> str | None:
    """What a preview and `turns` say of a turn rebuilt from the transcript (None otherwise)."""
    info = turn_info(turn)
    if info.get("reconstructed") != TRANSCRIPT_SOURCE:
        return None
    note = "reconstructed from the agent's transcript (its hooks did not record it)"
    if not info.get("scanned"):
        note += "; shell side effects of this turn may be missing (no workspace scan ran then)"
    return note


def turn_label(row: Turn) -> str:
    """'turn 3', or 'turn 3 (subagent: general-purpose)' when a subagent edited in it."""
    agents = turn_info(row).get("subagents") or []
    label = f"turn {row.number}"
    return f"{label} (subagent: {', '.join(map(str, agents))})" if agents else label


def shared_with_outside(
    store: Store,
    turn: str,
    found: list[tuple[str, Version, Version]],
    why: str = "changes made outside agent turns",
) -> None:
    """Record `found` as shared between `turn` and a new turn of the external session: no one
    can say whether the turn or the person made them."""
    store.ensure_session(EXTERNAL_SESSION, "external", "workspace")
    outside = store.begin_turn(EXTERNAL_SESSION, why)
    for rel, old, new in found:
        store.record_shared([turn, outside], rel, old, new)
    store.end_turn(outside)


class Recorder:
    """Records turns and changes for one workspace store."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.root = store.root
        # Workspace scans: how long a scan may spend adding files to an unfinished baseline (None:
        # no limit; default from REWIND_LS_BASELINE_SECONDS), and who hears about its progress.
        self.baseline_budget: float | None = _DEFAULT_BUDGET
        self.progress: Callable[[str, int, int], None] | None = None
        self.last_scan: ScanResult | None = None
        self._closing = False  # inside close_abandoned

    # --- content -------------------------------------------------------------------------------

    def snapshot(self, rel: str, previous: Version | None = None) -> Version:
        """Read `rel` now, keep its content in the store, remember it as the path's known
        content."""
        version, data, st = read_current(self.root, rel)
        if data is not None and version.hash is not None:
            prev_hash = previous.hash if previous is not None and previous.kind == FILE else None
            self.store.put_blob(data, previous=prev_hash, h=version.hash)
        self.store.set_known(rel, version, st)
        return version

    def current_version(self, rel: str) -> Version:
        """The path's content now, reading it only when its metadata changed since last seen."""
        known = self.store.known(rel)
        if known is not None:
            full = os.path.join(self.root, *rel.split("/"))
            try:
                st: os.stat_result | None = os.lstat(full)
            except (FileNotFoundError, NotADirectoryError):
                st = None
            if _unchanged(st, *known):
                return known[0]
        return self.snapshot(rel, None if known is None else known[0])

    # --- turns ---------------------------------------------------------------------------------

    def open_turn_id(self, session_id: str) -> str | None:
        row = self.store.session(session_id)
        return None if row is None else row.open_turn

    def begin_turn(
        self,
        session_id: str,
        prompt: str,
        kind: str = "agent",
        agent: str | None = None,
        transcript: str | None = None,
        info: str | None = None,
    ) -> str:
        """Close the session's open turn (as if it had stopped), attribute changes made since the
        last boundary, and open a new turn. `info`: JSON kept with the turn (the agent's prompt
        id)."""
        self.store.ensure_session(session_id, kind, agent, transcript)
        open_turn = self.open_turn_id(session_id)
        if open_turn is not None:
            self.end_turn(session_id, by_next_prompt=True)
        else:
            self.attribute_outside_changes()
        return self.store.begin_turn(session_id, prompt, info=info)

    def note_subagent(self, turn: str, agent_type: str, agent_id: str | None = None) -> None:
        """Remember that a subagent (`agent_type`; its `agent_id`) edited in `turn`."""
        info = turn_info(self.store.turn(turn))
        agents = info.setdefault("subagents", [])
        ids = info.setdefault("agentIds", [])
        changed = False
        if agent_type not in agents:
            agents.append(agent_type)
            changed = True
        if agent_id and agent_id not in ids:
            ids.append(agent_id)
            changed = True
        if changed:
            self.store.set_turn_info(turn, json.dumps(info))

    def ensure_turn(self, session_id: str, kind: str = "agent", agent: str | None = None) -> str:
        """The session's open turn, opening an unlabelled one if edits arrive outside any turn."""
        turn = self.open_turn_id(session_id)
        if turn is not None:
            return turn
        return self.begin_turn(session_id, "(edits outside a recorded prompt)", kind, agent)

    def end_turn(
        self, session_id: str, ended_at: float | None = None, by_next_prompt: bool = False
    ) -> str | None:
        """Close the session's open turn, with what changed in it. `ended_at`: when it really
        ended, if before now (changes made after that are someone else's); otherwise the end is
        what the agent's transcript says (the person stopped it) or, when a shell command's run
        registered in it is over without any hook saying so, that run's end. A run whose agent
        process is gone cannot be told apart from the person's edits after the kill: what changed
        is shared between the turn and the external session. So is what changed during a run
        that nothing of its own ended (`by_next_prompt`: no PostToolUse, no Stop, no interrupt
        in the transcript, only the session's next prompt)."""
        from rewind_ls.core.capture import shell_runs

        self.close_abandoned(except_session=session_id)
        turn = self.open_turn_id(session_id)
        if turn is None:
            return None
        row = self.store.turn(turn)
        runs = shell_runs.session_runs(self.store, session_id)
        if any(not shell_runs.agent_alive(r.agent) for r in runs):
            self._close_killed(turn, session_id)
            return turn
        if ended_at is None and row is not None:
            ended_at = self.interrupted_at(session_id, row.started_at)
        if ended_at is None:
            now = time.time_ns()
            over = [r.ended_at(now) for r in runs if r.over(now)]
            ended_at = max(over) / 1e9 if over else None
            if by_next_prompt and runs and not over:
                # Still registered, not over, not interrupted: no event of its own ended it.
                self._close_killed(turn, session_id, _ENDED_BY_NOTHING)
                return turn
        if ended_at is None or row is None:
            self.scan_into(turn, session_id)
        else:
            window = TurnWindow(turn, session_id, row.started_at, ended_at)
            self.scan_by_time([window], share_deletions=True)
        self.store.end_turn(turn, ended_at=ended_at)
        # The turn is over, so are its shell commands: other sessions need not wait for them.
        shell_runs.shell_finished(self.store, session_id)
        return turn

    def interrupted_at(self, session_id: str, since: float) -> float | None:
        """When the person stopped the session's turn begun at `since`, as its transcript says
        (Claude Code's; None: not stopped, or no such transcript)."""
        session = self.store.session(session_id)
        if session is None or session.agent != "claude-code" or not session.transcript_path:
            return None
        from rewind_ls.core.capture.interrupts import interrupted_at

        return interrupted_at(session.transcript_path, since - TIME_SLACK)

    def close_abandoned(self, except_session: str | None = None) -> None:
        """Close the open turns of other sessions whose shell command is over although no hook
        said so (`shell_runs.abandoned_sessions`): the agent was killed during it (what changed
        since is shared with the external session), or the person stopped it (the turn ends when
        the transcript says, else at the command's deadline; what changed later is external)."""
        from rewind_ls.core.capture import shell_runs

        if self._closing:
            return  # closing one already (its end_turn comes back here)
        found = shell_runs.abandoned_sessions(self.store, time.time_ns())
        found.pop(except_session or "", None)
        if found:
            self._closing = True
            try:
                self._close_all(found)
            finally:
                self._closing = False

    def _close_all(self, found: dict[str, Any]) -> None:
        from rewind_ls.core.capture import shell_runs

        for session_id, run in found.items():
            session = self.store.session(session_id)
            turn = None if session is None else session.open_turn
            if turn is not None and not shell_runs.agent_alive(run.agent):
                self._close_killed(turn, session_id)
            elif turn is not None:
                self.end_turn(session_id)
            else:
                shell_runs.shell_finished(self.store, session_id)

    def _close_killed(self, turn: str, session_id: str, why: str = _KILLED) -> None:
        """Close the turn of an agent killed during a shell command (or of a command that nothing
        ended: `why`): what changed since the last scan may be the command's or the person's
        after it (no time tells them apart), so it is recorded as shared between the turn and a
        turn of the external session."""
        from rewind_ls.core.capture.shell_runs import shell_finished

        def attribute(found: list[tuple[str, Version, Version]]) -> str:
            shared_with_outside(self.store, turn, found, why)
            return turn

        result = self._scan(attribute, session_id)
        if result is None:
            changed = self.changed_since_seen()
            if changed:
                attribute(changed)
        self.store.end_turn(turn)
        shell_finished(self.store, session_id)

    # --- changes -------------------------------------------------------------------------------

    def before(
        self,
        session_id: str,
        rel: str,
        source: str = "tool",
        agent: str | None = None,
        turn: str | None = None,
    ) -> str:
        """First touch of `rel` in the session's turn (or `turn`): keep what it holds now."""
        turn = turn or self.ensure_turn(session_id, agent=agent)
        if self.store.change(turn, rel) is None:
            version = self.current_version(rel)
            self.store.record_before(turn, rel, version, source)
        return turn

    def after(
        self,
        session_id: str,
        rel: str,
        source: str = "tool",
        agent: str | None = None,
        turn: str | None = None,
    ) -> str:
        """`rel` was just changed in the session's turn (or `turn`): keep what it holds now."""
        self.last_scan = None
        turn = turn or self.ensure_turn(session_id, agent=agent)
        known = self.store.known(rel)
        previous = None if known is None else known[0]
        if self.store.change(turn, rel) is None:
            # No before was seen (hook installed mid-edit, or no PreToolUse): the last known
            # content is the best truth, unless the scan that just opened this turn found this
            # very change: then it is this edit's, not someone else's, and its old side is the
            # before.
            taken = self._take_from_opening_scan(turn, rel)
            before = taken if taken is not None else previous or Version(UNKNOWN)
            self.store.record_before(turn, rel, before, source)
        version = self.snapshot(rel, previous)
        self._settle(turn, rel, version)
        return turn

    def _take_from_opening_scan(self, turn: str, rel: str) -> Version | None:
        scan = self.last_scan
        if scan is None or scan.turn is None or scan.turn == turn:
            return None
        for path, old, _new in scan.changes:
            if path == rel:
                self.store.drop_change(scan.turn, rel)
                return old
        return None

    def _settle(self, turn: str, rel: str, after: Version) -> None:
        row = self.store.change(turn, rel)
        if row is None:
            return
        if row.before == after:
            # Touched but back to where it started (a failed or undone edit): not a change.
            self.store.drop_change(turn, rel)
        else:
            self.store.record_after(turn, rel, after)

    def record_known_change(
        self, turn: str, rel: str, old: Version, new: Version, source: str
    ) -> None:
        """Record in `turn` that `rel` went from `old` to `new` (both already seen)."""
        with self.store.transaction():
            self.store.record_before(turn, rel, old, source)
            self._settle(turn, rel, new)

    def changed_since_seen(
        self, paths: Iterable[str] | None = None
    ) -> list[tuple[str, Version, Version]]:
        """Known paths whose content differs from what rewind-ls last saw: (path, old, new).

        Only paths whose metadata changed are read. Paths an open turn of any session is editing
        right now (before recorded, after not yet) are left to that turn.
        """
        busy = self.store.paths_in_flight()
        found: list[tuple[str, Version, Version]] = []
        entries = self.store.known_paths()
        wanted = None if paths is None else set(paths)
        for rel, version, mtime_ns, ino in entries:
            if rel in busy or (wanted is not None and rel not in wanted):
                continue
            full = os.path.join(self.root, *rel.split("/"))
            try:
                st: os.stat_result | None = os.lstat(full)
            except (FileNotFoundError, NotADirectoryError):
                st = None
            if _unchanged(st, version, mtime_ns, ino):
                continue
            try:
                new = self.snapshot(rel, version)
            except (BadPath, OSError):
                continue
            if not new.same_content(version) or (new.mode or 0) != (version.mode or 0):
                found.append((rel, version, new))
        return found

    def attribute_outside_changes(self) -> str | None:
        """Changes made between turns (the person, a tool) go into a turn of the external session,
        so they are part of the timeline and a later rewind knows they are someone's work. The
        first call in a workspace takes its baseline (see `core.capture.scan`)."""

        self.close_abandoned()
        result = self._scan(self._record_outside, None)
        if result is None:
            changed = self.changed_since_seen()
            return self._record_outside(changed) if changed else None
        return result.turn

    def _record_outside(self, found: list[tuple[str, Version, Version]]) -> str:
        """Record `found` in a new turn of the external session (someone's work between turns)."""
        self.store.ensure_session(EXTERNAL_SESSION, "external", "workspace")
        turn = self.store.begin_turn(EXTERNAL_SESSION, "changes made outside agent turns")
        for rel, old, new in found:
            self.record_known_change(turn, rel, old, new, "scan")
        self.store.end_turn(turn)
        return turn

    def scan_by_time(
        self, windows: list[TurnWindow], share_deletions: bool = False
    ) -> list[tuple[str, Version, Version]]:
        """Record every change since rewind-ls last saw the workspace in the turn whose time window
        holds the file's modification time. For a recorder that learns of turns after the fact
        (the transcript follower): by then the disk also holds what the person did before and
        after those turns, which is not the agent's. A change outside every window is someone's
        work between turns (the external session); a deleted file has no time and goes to the
        latest turn, or, `share_deletions` (a turn that ended before now), is shared between that
        turn and the external session. Returns the changes."""
        latest = max(windows, key=lambda w: w.start)

        def attribute(found: list[tuple[str, Version, Version]]) -> str:
            outside: list[tuple[str, Version, Version]] = []
            for rel, old, new in found:
                try:
                    mtime = os.lstat(os.path.join(self.root, *rel.split("/"))).st_mtime
                    window = _window_of(mtime, windows)
                except OSError:
                    if share_deletions:
                        # Deleted by the turn before it ended, or by the person after: no time
                        # tells which (`model.SHARED_SOURCE`).
                        shared_with_outside(self.store, latest.turn, [(rel, old, new)])
                        continue
                    window = latest  # deleted (or gone since the scan): no time to go by
                if window is None:
                    outside.append((rel, old, new))
                else:
                    self.record_known_change(window.turn, rel, old, new, "scan")
            if outside:
                self._record_outside(outside)
            return latest.turn

        result = self._scan(attribute, latest.session_id)
        if result is None:
            changed = self.changed_since_seen()
            if changed:
                attribute(changed)
            return changed
        return result.changes

    def scan_into(
        self, turn: str, session_id: str | None = None, source: str = "scan"
    ) -> list[tuple[str, Version, Version]]:
        """Record in `turn` every change in the workspace since rewind-ls last saw it (a shell
        command's effects); `session_id` owns the turn. Returns the changes."""

        def attribute(found: list[tuple[str, Version, Version]]) -> str:
            for rel, old, new in found:
                self.record_known_change(turn, rel, old, new, source)
            return turn

        self.close_abandoned(except_session=session_id)
        result = self._scan(attribute, session_id)
        if result is None:
            changed = self.changed_since_seen()
            for rel, old, new in changed:
                self.record_known_change(turn, rel, old, new, source)
            return changed
        return result.changes

    def _scan(
        self,
        attribute: Callable[[list[tuple[str, Version, Version]]], str | None],
        session_id: str | None,
    ) -> ScanResult | None:
        """A workspace scan, or None when scans are turned off (then only known paths are
        re-checked)."""
        from rewind_ls.core.capture.scan import scan
        from rewind_ls.core.capture.scan_settings import (
            baseline_worker,
            hook_baseline_budget,
            scans_enabled,
        )

        if not scans_enabled():
            return None
        budget = self.baseline_budget
        background = False
        if budget is _DEFAULT_BUDGET:
            budget = hook_baseline_budget()
            background = baseline_worker()
        self.last_scan = scan(
            self.store,
            attribute,
            session_id,
            budget=budget,
            progress=self.progress,
            background=background,
        )
        return self.last_scan
