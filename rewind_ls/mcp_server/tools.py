"""The work of each MCP tool on plain data, with no MCP in it: the same core calls as the CLI's
commands (the timeline, the turn's diff and hunks, blame, the one restore flow), one store opened
per call (after any interrupted restore is finished, as every CLI command does).

A tool's answer is an `Answer`: the words for the model (`text`) and the object the CLI's `--json`
prints for the same question (`data`, checked and camelCased by `protocol.cli_output.wire`).
Anything the tool cannot do raises `RewindError` (the app turns it into an `isError` result);
a restore that would overwrite what is not the agent's raises `Refused`.

The agent's guardrails, on top of the person's rules (`flow.RestoreFlow`):
- never forced, never "restore the rest": any conflict refuses the whole restore, nothing written;
  the refusal names each conflict and the terminal command with which the person can decide;
- a file an editor holds unsaved is a conflict (`editor_traces`: Vim/Neovim swap files, Emacs lock
  files);
- every restore point is labelled "... (by AGENT via MCP)" and is undoable like any restore;
- a restore in progress in the workspace (another process holding the restore lock, or an editor
  restore whose server is still applying it) is waited for, up to `BUSY_WAIT` seconds, then the
  call says so and writes nothing.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, NamedTuple

from rewind_ls.core.errors import ConflictError, RewindError
from rewind_ls.core.model import RestoreMode, RestoreStatus, Scope, Turn, TurnState
from rewind_ls.core.restore.plan import Plan
from rewind_ls.core.restore.request import RestoreRequest
from rewind_ls.core.store import Store
from rewind_ls.mcp_server import text
from rewind_ls.mcp_server.session import Caller, session_of

# How long a restore waits for one already running in the workspace before it gives up.
BUSY_WAIT = 30.0


class Answer(NamedTuple):
    text: str
    data: dict[str, Any]


class Refused(RewindError):
    """A restore the agent may not make (conflicts, or a restore in progress): nothing written.
    `data`: the preview that shows why (the CLI's --json object, status "refused")."""

    exit_code = 3

    def __init__(self, message: str, data: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.data = data


class Tools:
    """The tools of one workspace (`root`) for one caller."""

    def __init__(self, root: str, caller: Caller, busy_wait: float = BUSY_WAIT) -> None:
        self.root = root
        self.caller = caller
        self.busy_wait = busy_wait

    @contextmanager
    def store(self) -> Iterator[Store]:
        from rewind_ls.core.restore.recovery import recover

        with Store.open(self.root, create=True) as store:
            recover(store)
            yield store

    def session(self, store: Store, spec: str | None) -> str:
        sid = session_of(store, self.caller, spec)
        if sid is None:
            who = self.caller.agent or "agent"
            raise RewindError(
                f"no {who} session is recorded in {store.root} yet (are rewind-ls' hooks "
                f"installed? `rewind-ls install {self.caller.agent or 'claude-code'}`)"
            )
        return sid

    def turn(self, store: Store, spec: int | str, session: str | None) -> Turn:
        from rewind_ls.core.restore.plan import resolve_turn

        return resolve_turn(store, str(spec), self.session(store, session))

    def path(self, store: Store, path: str) -> str:
        from rewind_ls.core.fs.paths import relative_path

        return relative_path(store.root, path, store.root)

    # --- reading --------------------------------------------------------------------------------

    def list_turns(self, session: str | None, all: bool, limit: int) -> Answer:
        from rewind_ls.core.capture.scan import unrecorded
        from rewind_ls.core.history.timeline import list_sessions
        from rewind_ls.protocol.cli_output import TurnsOutput, wire

        with self.store() as store:
            sid = None if all else self.session(store, session)
            listing = list_sessions(store, sid, limit or None)
            # What a bare turn number means for this caller (every session listed or not).
            listing["current_session_id"] = sid or session_of(store, self.caller, session)
            listing["unrecorded"] = unrecorded(store)
        return Answer(text.turns(listing), wire(TurnsOutput, listing))

    def show_turn(self, turn: int | str, path: str | None, session: str | None) -> Answer:
        from rewind_ls.core.capture.recorder import read_current
        from rewind_ls.core.history.diff import turn_diff
        from rewind_ls.core.history.review import turn_files
        from rewind_ls.protocol.cli_output import wire
        from rewind_ls.protocol.mcp_output import ShowTurnOutput

        with self.store() as store:
            t = self.turn(store, turn, session)
            rel = self.path(store, path) if path else None
            diffs = turn_diff(store, t, rel)
            if rel is not None and not diffs:
                changed = ", ".join(sorted({c.path for c in store.changes(t.id)})) or "no file"
                raise RewindError(f"turn {t.number} did not change {rel} (it changed {changed})")
            hunks = {
                f["path"]: f
                for f in turn_files(store, t, lambda p: read_current(store.root, p)[1], rel)
            }
        files = [
            {
                **d,
                "hunks": hunks.get(d["path"], {}).get("hunks", []),
                "note": hunks.get(d["path"], {}).get("note"),
            }
            for d in diffs
        ]
        data = {
            "turn_id": t.id,
            "number": t.number,
            "session_id": t.session_id,
            "prompt": t.prompt,
            "files": files,
        }
        return Answer(text.shown_turn(data), wire(ShowTurnOutput, data))

    def blame(self, path: str, start: int | None, end: int | None) -> Answer:
        from rewind_ls.core.capture.recorder import read_current
        from rewind_ls.core.fs.paths import to_uri
        from rewind_ls.core.history.blame import Blamer
        from rewind_ls.core.history.review import runs
        from rewind_ls.protocol.cli_output import BlameOutput, wire

        if (start is not None and start < 1) or (end is not None and end < (start or 1)):
            raise RewindError(f"lines {start}..{end}: line numbers start at 1 and end >= start")
        with self.store() as store:
            rel = self.path(store, path)
            _, data, _ = read_current(store.root, rel)
            if data is None:
                raise RewindError(f"{path}: no such file (or not readable as one)")
            if store.known(rel) is None and not store.path_history(rel):
                raise RewindError(f"{path}: rewind-ls has no record of this path in this workspace")
            attribution = Blamer(store).blame(rel, data)
            uri = to_uri(store.root, rel)
        lo, hi = (start or 1) - 1, min(end or len(attribution.lines), len(attribution.lines))
        shown = [
            {**r, "start": max(r["start"], lo), "end": min(r["end"], hi)}
            for r in runs(attribution)
            if r["end"] > lo and r["start"] < hi
        ]
        out = {"path": rel, "uri": uri, "line_count": len(attribution.lines), "runs": shown}
        return Answer(text.blamed(rel, attribution.lines, shown), wire(BlameOutput, out))

    # --- restoring ------------------------------------------------------------------------------

    def preview(
        self,
        mode: str,
        turn: int | str | None,
        paths: list[str] | None,
        hunks: list[int] | None,
        session: str | None,
    ) -> Answer:
        """What `mode` would write, with its conflicts; nothing is written."""
        with self.store() as store:
            request, t = self._request(store, mode, turn, paths, hunks, session, apply=False)
            _, plan, result = self._plan(store, request, t)
            refusal = self._refusal(plan)
        result["status"] = RestoreStatus.PLANNED
        result["next"] = text.after_preview(refusal)
        return Answer(text.previewed(result), self._wire(result))

    def restore(
        self,
        mode: str,
        turn: int | str | None,
        paths: list[str] | None,
        hunks: list[int] | None,
        session: str | None,
    ) -> Answer:
        """The restore, all or nothing, or `Refused` with nothing written."""
        with self.store() as store:
            self._wait_for_restores(store)
            request, t = self._request(store, mode, turn, paths, hunks, session, apply=True)
            flow, plan, result = self._plan(store, request, t)
            refusal = self._refusal(plan)
            if refusal is not None:
                raise self._refused(result, plan, refusal)
            try:
                outcome = flow.apply_to_disk(plan)
            except ConflictError as exc:
                # A file changed between the plan and the swap (the swap's own check): refused too.
                raise self._refused(result, plan, str(exc)) from exc
        assert outcome is not None
        result.update(
            status=outcome.status,
            message=outcome.message,
            restore_point_id=outcome.point,
            next=text.after_restore(outcome.point),
        )
        return Answer(text.restored(result), self._wire(result))

    def _refused(self, result: dict[str, Any], plan: Plan, reason: str) -> Refused:
        result["status"] = "refused"
        result["next"] = text.refusal_advice(result, plan)
        return Refused(text.refused(result, plan, reason), self._wire(result))

    def _request(
        self,
        store: Store,
        mode: str,
        turn: int | str | None,
        paths: list[str] | None,
        hunks: list[int] | None,
        session: str | None,
        apply: bool,
    ) -> tuple[RestoreRequest, Turn | None]:
        if mode not in ("rewind", "revert", "undo"):
            raise RewindError(f"mode must be rewind, revert or undo, not {mode!r}")
        t = None
        if mode != "undo":
            if turn is None:
                raise RewindError(f"{mode}: a turn is needed (list_turns shows them)")
            t = self.turn(store, turn, session)
        elif turn is not None:
            raise RewindError("undo takes no turn: it undoes the latest rewind, revert or undo")
        rels = [self.path(store, p) for p in paths] if paths else None
        if hunks is not None and (mode != "revert" or rels is None or len(rels) != 1):
            raise RewindError("hunks: only a revert of one turn in one path reverts hunks")
        if hunks is not None and any(h < 0 for h in hunks):
            raise RewindError(f"hunks {hunks}: hunk indexes start at 0 (show_turn lists them)")
        request = RestoreRequest(
            RestoreMode(mode),
            t.id if t is not None else None,
            Scope.CODE,
            rels,
            hunks=hunks,
            apply=apply,
            by=self.caller.label,
        )
        return request, t

    def _plan(
        self, store: Store, request: RestoreRequest, turn: Turn | None
    ) -> tuple[Any, Plan, dict[str, Any]]:
        from rewind_ls.core.capture.scan import unrecorded
        from rewind_ls.core.restore.flow import RestoreFlow
        from rewind_ls.core.restore.plan import disk_reader
        from rewind_ls.core.restore.preview import build_preview

        flow = RestoreFlow(store, request, turn)
        plan = flow.plan(disk_reader(store.root))
        preview = build_preview(store, request, plan.turn, plan)
        result: dict[str, Any] = {
            "mode": request.mode,
            "turn_id": plan.turn.id,
            "number": plan.turn.number,
            "scope": request.scope,
            "files": preview.files,
            "notes": plan.notes,
            "unrecorded": unrecorded(store),
            "label": plan.label,
        }
        return flow, plan, result

    def _refusal(self, plan: Plan) -> str | None:
        """Why the agent may not make this restore (None: it may): every conflict refuses it,
        whatever its kind; the person can still choose in a terminal."""
        from rewind_ls.core.restore.planner import select

        try:
            select(plan, force=False, skip_conflicts=False)
        except ConflictError as exc:
            return str(exc)
        return None

    def _wait_for_restores(self, store: Store) -> None:
        """Wait (up to `busy_wait`) while another restore runs in this workspace; `Refused` after."""
        from rewind_ls.core.capture.recorder import REWIND_SESSION
        from rewind_ls.core.restore.recovery import recover
        from rewind_ls.core.restore.swap import restore_lock

        deadline = time.monotonic() + self.busy_wait
        while True:
            with restore_lock(store, blocking=False) as free:
                # A pending restore point that recovery left alone belongs to a live process (an
                # editor's restore its language server is still applying).
                busy = not free or bool(store.turns_in_state(REWIND_SESSION, TurnState.PENDING))
            if not busy:
                return
            if time.monotonic() >= deadline:
                raise Refused(
                    f"another restore is in progress in {store.root} (still running after "
                    f"{self.busy_wait:.0f} s); nothing written: call again once it is done"
                )
            time.sleep(0.1)
            recover(store)

    @staticmethod
    def _wire(result: dict[str, Any]) -> dict[str, Any]:
        from rewind_ls.protocol.cli_output import wire
        from rewind_ls.protocol.mcp_output import McpRestoreOutput

        return wire(McpRestoreOutput, result)
