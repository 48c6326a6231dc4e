"""The server's work, independent of pygls: every method runs on the store's worker thread and takes
or returns plain data. `lsp.py` is the thin layer that receives requests, snapshots open documents,
calls these methods through the worker, and talks to the client (applyEdit, progress, messages).

A restore in the editor goes: plan against buffers (`prepare`) -> restore point recorded -> the text
part travels as a WorkspaceEdit -> the client applies it -> `verify` compares what the client reports
and the disk with the plan -> files a text edit cannot carry are written by the server (`finish`).
"""

from __future__ import annotations

import logging
import os
from typing import Any

from rewind_ls.core.apply_disk import discard_backups, recover, select, swap
from rewind_ls.core.capture import EDITOR_SESSION, Recorder, read_current
from rewind_ls.core.diff import turn_diff
from rewind_ls.core.errors import RewindError, UnknownTurn
from rewind_ls.core.faults import fault as _fault
from rewind_ls.core.model import Turn
from rewind_ls.core.paths import from_uri, relative_path, to_uri
from rewind_ls.core.plan import (
    REVERT,
    PathPlan,
    Plan,
    describe,
    plan_revert,
    plan_rewind,
    plan_undo,
    resolve_turn,
)
from rewind_ls.core.restore_point import (
    ROLLED_BACK,
    finish_restore_point,
    open_restore_point,
    update_journal,
)
from rewind_ls.core.store import ABSENT, FILE, Store, Version
from rewind_ls.core.timeline import list_sessions, timeline_text, turn_dict
from rewind_ls.server.edits import (
    UTF8_BOM,
    create_file,
    decode_text,
    delete_file,
    minimal_edit,
    text_document_edit,
)
from rewind_ls.server.workspace_view import OpenDoc, buffer_reader, open_docs_by_path


def _write_private(path: str, text: str) -> None:
    """A document the server writes in the store's folder: owner-only, like the store (source code)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.fchmod(fd, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(text)


# The timeline's buffer name: inside the workspace (so a client keeps it with this server), never on disk.
TIMELINE_NAME = ".rewind-timeline"


log = logging.getLogger("rewind_ls.server")


class ClientEditSupport:
    """What the client's WorkspaceEdit support allows (from its capabilities and our options)."""

    def __init__(
        self,
        document_changes: bool = True,
        create: bool = True,
        delete: bool = True,
        closed_files: str = "server",
        encoding: str = "utf-16",
    ) -> None:
        self.document_changes = document_changes
        self.create = create and document_changes
        self.delete = delete and document_changes
        self.closed_files = closed_files
        self.encoding = encoding


class PendingRestore:
    """A restore whose edit is out with the client."""

    def __init__(
        self,
        plan: Plan,
        items: list[PathPlan],
        point: str,
        edit: dict[str, Any] | None,
        by_edit: dict[str, str],
        by_server: list[PathPlan],
        disk_expected: dict[str, Version],
    ) -> None:
        self.plan = plan
        self.items = items
        self.point = point
        self.edit = edit
        self.by_edit = by_edit  # path -> expected text after the edit
        self.by_server = by_server
        self.disk_expected = disk_expected


class Service:
    def __init__(self, root: str) -> None:
        self.root = os.path.realpath(root)
        self.store = Store.open(self.root)
        self.recorder = Recorder(self.store)
        self.pre_save: dict[str, Version] = {}
        recover(self.store)
        from rewind_ls.core import gc

        gc.maybe_run(self.store)
        # Baseline now, so a turn recorded right after start-up is reported by the first poll.
        self._data_version = self.store.data_version()
        self._turn_mark = self._mark()
        from rewind_ls.core.transcript_follower import TranscriptFollower

        # When the agent's hooks do not fire, its transcript still says what it did.
        self.follower = TranscriptFollower(self.store)
        self._warned: set[str] = set()

    def close(self) -> None:
        self.store.close()

    # --- paths ---------------------------------------------------------------------------------

    def rel_of(self, uri_or_path: str) -> str:
        path = from_uri(uri_or_path) if "://" in uri_or_path else uri_or_path
        return relative_path(self.root, path, self.root)

    def uri(self, rel: str) -> str:
        return to_uri(self.root, rel)

    def turn(self, turn_ref: str | int) -> Turn:
        """A turn id, or a turn number of the current agent session (as the CLI takes them)."""
        return resolve_turn(self.store, str(turn_ref))

    # --- listing -------------------------------------------------------------------------------

    def list_turns(self, session_id: str | None) -> dict[str, Any]:
        if session_id is not None and self.store.session(session_id) is None:
            raise UnknownTurn(session_id, "no session with that id in this workspace")
        return list_sessions(self.store, session_id)

    def turn_info(self, turn: Turn) -> dict[str, Any]:
        session = self.store.session(turn.session_id)
        kind = session.kind if session is not None else "agent"
        return turn_dict(self.store, turn, kind, self.store.changes(turn.id))

    def timeline(self, session_id: str | None) -> dict[str, Any]:
        """The timeline text and the URI a client shows it under: a name inside the workspace that
        is never written to disk, so a client keeps it in this server's workspace (a file in the
        store folder made lsp-mode start a second server there)."""
        if session_id is not None and self.store.session(session_id) is None:
            raise UnknownTurn(session_id, "no session with that id in this workspace")
        return {"uri": self.uri(TIMELINE_NAME), "text": timeline_text(self.store, session_id)}

    def file_at(self, turn_ref: str, uri: str, side: str) -> dict[str, Any]:
        turn = self.turn(turn_ref)
        turn_id = turn.id
        rel = self.rel_of(uri)
        change = self.store.change(turn_id, rel)
        if change is None:
            # Not changed in this turn: its content at the turn's start is what the next change saw.
            history = [h for h in self.store.path_history(rel) if h.seq > turn.seq]
            if not history:
                version, data, _ = read_current(self.root, rel)
            else:
                version = history[0].before
                data = None
        else:
            version = change.before if side == "before" or change.after is None else change.after
            data = None
        if version.kind == ABSENT:
            return {"uri": uri, "exists": False, "text": None, "binary": False, "tooLarge": False}
        if version.kind != FILE or version.hash is None:
            return {"uri": uri, "exists": True, "text": None, "binary": False, "tooLarge": True}
        if data is None:
            data = self.store.get_blob(version.hash)
        text = decode_text(data)
        return {"uri": uri, "exists": True, "text": text, "binary": text is None, "tooLarge": False}

    def diff_document(self, turn_ref: str, uri: str | None) -> tuple[str, str]:
        turn = self.turn(turn_ref)
        turn_id = turn.id
        rel = self.rel_of(uri) if uri else None
        diffs = turn_diff(self.store, turn, rel)
        text = "".join(d["diff"] for d in diffs) or f"turn {turn.number} changed no file\n"
        directory = os.path.join(self.store.path, "diffs")
        os.makedirs(directory, mode=0o700, exist_ok=True)
        path = os.path.join(directory, f"turn-{turn.number}-{turn_id}.diff")
        _write_private(path, text)
        return "file://" + path, text

    # --- planning ------------------------------------------------------------------------------

    def plan(
        self,
        mode: str,
        turn_id: str | None,
        docs: dict[str, OpenDoc],
        paths: list[str] | None = None,
    ) -> Plan:
        reader = buffer_reader(self.root, open_docs_by_path(self.root, docs))
        if mode == "undo":
            return plan_undo(self.store, reader)
        assert turn_id is not None
        turn = self.turn(turn_id)
        rels = [self.rel_of(p) for p in paths] if paths else None
        if mode == REVERT:
            return plan_revert(self.store, turn, reader, label=f"revert turn {turn.number}")
        return plan_rewind(self.store, turn, reader, rels, label=f"rewind to turn {turn.number}")

    def preview(self, plan: Plan) -> list[dict[str, Any]]:
        return [{**describe(pp), "uri": self.uri(pp.path)} for pp in plan.shown()]

    def conversation_preview(self, turn: Turn) -> dict[str, Any]:
        from rewind_ls.core.conversation import conversation_source

        path, reason = conversation_source(self.store, turn)
        return {"available": path is not None, "reason": reason, "prompt": turn.prompt}

    def fork_conversation(self, turn: Turn) -> dict[str, Any]:
        from rewind_ls.core.conversation import fork_turn

        fork = fork_turn(self.store, turn)
        return {
            "sessionId": fork.session_id,
            "transcriptPath": fork.path,
            "resumeCommand": fork.resume_command,
            "prompt": fork.prompt,
        }

    def summarize_source(self, turn: Turn) -> Any:
        from rewind_ls.core.summarize import Source

        return Source(self.store, turn)

    def adopt_summary(self, source: Any, result: Any) -> dict[str, Any]:
        source.adopt(self.store, result)
        return {
            "sessionId": result.session_id,
            "transcriptPath": result.path,
            "resumeCommand": result.resume_command,
            "prompt": result.prompt,
        }

    def drop_fork(self, fork: dict[str, Any]) -> None:
        """Remove a conversation fork whose code part failed (`--scope both`: both or neither)."""
        try:
            os.unlink(fork["transcriptPath"])
        except FileNotFoundError:
            pass

    # --- restoring -----------------------------------------------------------------------------

    def prepare(
        self,
        plan: Plan,
        docs: dict[str, OpenDoc],
        support: ClientEditSupport,
        force: bool,
        skip_conflicts: bool,
    ) -> PendingRestore | None:
        """Choose the paths, record the restore point, build the WorkspaceEdit. None: nothing to do."""
        items = select(plan, force, skip_conflicts)
        if not items:
            return None
        by_path = open_docs_by_path(self.root, docs)
        changes: list[dict[str, Any]] = []
        by_edit: dict[str, str] = {}
        by_server: list[PathPlan] = []
        disk_expected: dict[str, Version] = {}
        for pp in items:
            uri = self.uri(pp.path)
            doc = by_path.get(pp.path)
            disk, disk_data, _ = read_current(self.root, pp.path)
            disk_expected[pp.path] = disk
            target_text = decode_text(pp.target_data) if pp.target_data is not None else None
            mode_changes = (
                pp.target.kind == FILE
                and disk.kind == FILE
                and (pp.target.mode or 0) & 0o111 != (disk.mode or 0) & 0o111
            )
            # A text edit cannot add or remove a UTF-8 BOM (it is not part of the text): the server
            # writes such a file itself.
            bom_changes = pp.target_data is not None and pp.target_data.startswith(UTF8_BOM) != (
                disk_data is not None and disk_data.startswith(UTF8_BOM)
            )
            if pp.target.kind == ABSENT:
                if support.delete and (doc is not None or support.closed_files == "edit"):
                    changes.append(delete_file(uri))
                    by_edit[pp.path] = ""
                else:
                    by_server.append(pp)
                continue
            if target_text is None:
                by_server.append(pp)  # binary, not UTF-8, or too large for a text edit
                continue
            if doc is not None:
                edit = minimal_edit(doc.text, target_text, support.encoding)
                if edit is not None:
                    changes.append(text_document_edit(uri, doc.version, edit))
                by_edit[pp.path] = target_text
                if edit is None or mode_changes or bom_changes or disk.kind == ABSENT:
                    # The buffer already shows it, but the disk does not (or the mode differs).
                    by_server.append(pp)
                continue
            disk_text = decode_text(disk_data) if disk_data is not None else ""
            if support.closed_files != "edit" or disk_text is None or mode_changes or bom_changes:
                by_server.append(pp)
                continue
            if disk.kind == ABSENT:
                if not support.create:
                    by_server.append(pp)
                    continue
                changes.append(create_file(uri))
            edit = minimal_edit(disk_text, target_text, support.encoding)
            if edit is not None:
                changes.append(text_document_edit(uri, None, edit))
            by_edit[pp.path] = target_text
        edit_json: dict[str, Any] | None = None
        if changes:
            if support.document_changes:
                edit_json = {"documentChanges": changes}
            else:
                flat: dict[str, list[dict[str, Any]]] = {}
                for c in changes:
                    flat.setdefault(c["textDocument"]["uri"], []).extend(c["edits"])
                edit_json = {"changes": flat}
        # The pid tells other processes' recovery that this restore is live, not abandoned.
        point = open_restore_point(
            self.store, plan, items, {"applier": "editor", "pid": os.getpid()}
        )
        return PendingRestore(plan, items, point, edit_json, by_edit, by_server, disk_expected)

    def edit_reached(self, pending: PendingRestore, docs: dict[str, OpenDoc]) -> list[str]:
        """Paths of the text part that do not (yet) hold their planned content."""
        by_path = open_docs_by_path(self.root, docs)
        plans = {p.path: p for p in pending.items}
        missing = []
        for path, text in pending.by_edit.items():
            doc = by_path.get(path)
            pp = plans[path]
            if pp.target.kind == ABSENT:
                if os.path.lexists(os.path.join(self.root, *path.split("/"))):
                    missing.append(path)
                continue
            if doc is not None and doc.text == text:
                continue
            version, _, _ = read_current(self.root, path)
            if version.same_content(pp.target):
                continue
            missing.append(path)
        return missing

    def finish(self, pending: PendingRestore, applied: bool, missing: list[str]) -> dict[str, Any]:
        """After the client answered: write the server's part, record the outcome."""
        if not applied:
            self.store.set_turn_state(pending.point, ROLLED_BACK)
            return {"status": "failed", "failed": sorted(pending.by_edit), "written": []}
        written: list[str] = []
        failed = list(missing)
        reached: dict[str, tuple[Version, os.stat_result | None]] = {}
        ops: list[dict[str, Any]] = []
        server_items = [p for p in pending.by_server if p.path not in missing]
        if server_items:
            # From here on the client holds the text part: a server killed while writing its own
            # part is finished by the next start's recovery (rolled forward, not back).
            update_journal(
                self.store,
                pending.point,
                editApplied=True,
                failed=sorted(missing),
                serverPaths=[p.path for p in server_items],
            )
            _fault("before-server-writes", 1)
            try:
                got, ops = swap(self.store, pending.point, server_items, pending.disk_expected)
                reached.update(got)
                written = [p.path for p in server_items]
            except RewindError:
                failed.extend(p.path for p in server_items)
        for pp in pending.items:
            if pp.path in pending.by_edit and pp.path not in failed and pp.path not in reached:
                reached[pp.path] = (pp.target, None)
        state = finish_restore_point(self.store, pending.point, reached, sorted(set(failed)))
        discard_backups(ops)
        return {
            "status": "applied" if state == "applied" else "partial",
            "failed": sorted(set(failed)),
            "written": written,
        }

    # --- recording from the editor ---------------------------------------------------------------

    def _editor_turn(self) -> str:
        self.store.ensure_session(EDITOR_SESSION, "editor", "editor")
        open_turn = self.recorder.open_turn_id(EDITOR_SESSION)
        latest = self.store.latest_turn_seq()
        if open_turn is not None:
            turn = self.store.turn(open_turn)
            if turn is not None and turn.seq == latest:
                return open_turn
            self.store.end_turn(open_turn)
        return self.store.begin_turn(EDITOR_SESSION, "your edits, saved in the editor")

    def will_save(self, uri: str) -> None:
        """Keep what is on disk just before the editor overwrites it."""
        try:
            rel = self.rel_of(uri)
        except RewindError:
            return
        if rel == TIMELINE_NAME:
            return
        version, data, _ = read_current(self.root, rel)
        if data is not None and version.hash is not None:
            known = self.store.known(rel)
            prev = known[0].hash if known is not None else None
            self.store.put_blob(data, previous=prev, h=version.hash)
        self.pre_save[rel] = version

    def did_save(self, uri: str) -> bool:
        """Record a save as the person's change, unless it only persists content rewind-ls knows
        (a restore applied to a buffer, then saved). Returns True when a change was recorded."""
        try:
            rel = self.rel_of(uri)
        except RewindError:
            return False
        if rel == TIMELINE_NAME:
            return False  # someone saved the timeline buffer: not a change of theirs to record
        known = self.store.known(rel)
        base = self.pre_save.pop(rel, None) or (known[0] if known is not None else None)
        post = self.recorder.snapshot(rel, known[0] if known is not None else None)
        if known is not None and post == known[0]:
            return False
        if base is None or post == base:
            return False
        turn = self._editor_turn()
        self.recorder.record_known_change(turn, rel, base, post, "save")
        return True

    # --- recording for an agent in the editor ----------------------------------------------------

    def begin_turn(self, session_id: str, prompt: str, agent: str | None) -> dict[str, Any]:
        turn = self.recorder.begin_turn(session_id, prompt, "agent", agent or "editor-agent")
        return self.turn_info(self.turn(turn))

    def record_edit(
        self, session_id: str, uri: str, phase: str, text: str | None
    ) -> dict[str, Any]:
        rel = self.rel_of(uri)
        if self.store.session(session_id) is None:
            raise UnknownTurn(session_id, "no such session; call rewind/beginTurn first")
        if text is None:
            turn = (self.recorder.before if phase == "before" else self.recorder.after)(
                session_id, rel, "record"
            )
            return {"turnId": turn, "recorded": True}
        # The agent gave the content: it may differ from the disk (an unsaved buffer).
        from rewind_ls.core.store import digest

        data = text.encode("utf-8")
        version = Version(FILE, digest(data), 0o644, len(data))
        self.store.put_blob(data, h=version.hash)
        turn = self.recorder.ensure_turn(session_id)
        if phase == "before":
            self.store.record_before(turn, rel, version, "record")
        else:
            if self.store.change(turn, rel) is None:
                known = self.store.known(rel)
                self.store.record_before(
                    turn, rel, known[0] if known else Version(ABSENT), "record"
                )
            self.store.record_after(turn, rel, version)
        return {"turnId": turn, "recorded": True}

    def end_turn(self, session_id: str) -> dict[str, Any]:
        if self.store.session(session_id) is None:
            raise UnknownTurn(session_id, "no such session")
        turn = self.recorder.end_turn(session_id)
        if turn is None:
            raise RewindError(f"session {session_id}: no open turn to end")
        return self.turn_info(self.turn(turn))

    # --- other processes -----------------------------------------------------------------------

    def _mark(self) -> tuple[int, int, int]:
        return self.store.activity_mark()

    def follow_transcripts(self) -> int:
        """Record what the agents' transcripts show and no hook recorded; never fails the poll."""
        try:
            return self.follower.poll()
        except Exception:
            log.exception("following the transcripts failed")
            return 0

    def hook_warnings(self) -> list[str]:
        """Once per session, when the transcript showed turns no hook reported: a line for the
        client's log (VS Code shows it in the output channel)."""
        from rewind_ls.core.transcript_check import hooks_not_firing

        if not self.follower.recorded:
            return []
        out = []
        for m in hooks_not_firing(self.store):
            if m["session_id"] in self._warned:
                continue
            self._warned.add(m["session_id"])
            out.append(
                f"rewind-ls: Claude Code session {m['session_id']}: its hooks are not firing "
                f"({m['prompts_from_transcript']} prompt(s), {m['tool_calls_from_transcript']} tool "
                "call(s) no hook reported); the transcript is being followed instead (run "
                "`rewind-ls doctor` for details)"
            )
        return out

    def changed_sessions(self) -> list[str] | None:
        """Sessions whose turns changed (new turn, new or settled change, turn ended) since the last
        call, or since the service opened: None when nothing did. Cheap when nothing was committed:
        `PRAGMA data_version` only moves when another connection commits."""
        followed = self.follow_transcripts()
        version = self.store.data_version()
        if version == self._data_version and not followed:
            return None
        self._data_version = version
        mark = self._mark()
        if mark == self._turn_mark:
            return None
        self._turn_mark = mark
        return self.store.recent_session_ids(5)
