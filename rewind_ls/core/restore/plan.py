"""Planning a restore: for each path, the content to reach, the content expected now, and conflicts.

The planner knows nothing of who applies the plan: the CLI writes it to disk (`apply_disk`), the
language server turns it into a WorkspaceEdit. Both pass a `reader` that returns a path's current
content (the server's reader prefers the editor's buffer), so compare-and-swap sees what the person sees.

Semantics (DESIGN.md):
- rewind to T: every path changed in T or later turns of T's session goes back to its content at the
  start of T (the `before` of the first change to it after T began, in any session);
- revert T: T's own changes are undone by a three-way merge (base = after T, ours = now, theirs = before T);
- undo: rewind to the latest restore point.
Conflicts: `modified-outside` (the content now is not what rewind-ls last saw), `other-session` (another
session or the person changed the path after T's session last did), `merge`, `not-restorable`.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from rewind_ls.core.capture.recorder import REWIND_SESSION, read_current, reconstructed_note
from rewind_ls.core.errors import BadPath, CorruptBlob, RewindError, UnknownTurn
from rewind_ls.core.fs.paths import check_not_nested
from rewind_ls.core.model import (
    ABSENT,
    FILE,
    OTHER,
    TOO_LARGE,
    Action,
    ConflictKind,
    PathChange,
    RestoreMode,
    SessionKind,
    Turn,
    TurnState,
    Version,
    is_background,
    shared_turns,
)
from rewind_ls.core.restore.kept_partners import kept_partner
from rewind_ls.core.store import Store, digest
from rewind_ls.core.text.merge import diffstat, is_binary, merge3, merge3_markers

Reader = Callable[[str], "tuple[Version, bytes | None]"]

REWIND = RestoreMode.REWIND
REVERT = RestoreMode.REVERT
UNDO = RestoreMode.UNDO


class Conflict:
    __slots__ = ("hunks", "kind", "message")

    def __init__(
        self, kind: ConflictKind, message: str, hunks: list[dict[str, object]] | None = None
    ) -> None:
        self.kind = kind
        self.message = message
        self.hunks = hunks or []

    @property
    def forcible(self) -> bool:
        """Whether --force may overwrite it (a merge conflict or missing content cannot be forced)."""
        return self.kind in (ConflictKind.MODIFIED_OUTSIDE, ConflictKind.OTHER_SESSION)


class PathPlan:
    """One path of a restore."""

    __slots__ = (
        "action",
        "added",
        "binary",
        "conflict",
        "current",
        "current_data",
        "held",
        "markers",
        "path",
        "removed",
        "saved",
        "saved_data",
        "target",
        "target_data",
    )

    def __init__(self, path: str, current: Version, current_data: bytes | None) -> None:
        self.path = path
        self.current = current
        self.current_data = current_data
        self.target: Version = current
        self.target_data: bytes | None = current_data
        self.action = Action.UNCHANGED
        self.conflict: Conflict | None = None
        self.added = 0
        self.removed = 0
        self.binary = False
        self.markers = 0  # conflicts written with markers (revert --merge)
        # An undo of a restore that ran over an unsaved buffer: the disk content to bring back
        # under the buffer's unsaved text (`target`). Set by the editor's applier only.
        self.saved: Version | None = None
        self.saved_data: bytes | None = None
        # A current content over the size cap (`too-large`, known by its stat signature) that the
        # restore point read and stored anyway (`point.hold_too_large`): its whole version.
        self.held: Version | None = None

    def set_target(self, target: Version, data: bytes | None) -> None:
        self.target = target
        self.target_data = data
        if target == self.current:
            self.action = Action.UNCHANGED
        elif target.kind == ABSENT:
            self.action = Action.DELETE
        elif self.current.kind == ABSENT:
            self.action = Action.CREATE
        else:
            self.action = Action.MODIFY
        old = self.current_data or b""
        new = data or b""
        self.binary = is_binary(old) or is_binary(new)
        if not self.binary:
            self.added, self.removed = diffstat(old, new)

    @property
    def will_write(self) -> bool:
        return self.action != Action.UNCHANGED


def describe(pp: PathPlan) -> dict[str, object]:
    """One path of a plan as plain data (the CLI's --json and the protocol's FilePreview share it)."""
    return {
        "path": pp.path,
        "action": pp.action,
        "added": pp.added,
        "removed": pp.removed,
        "binary": pp.binary,
        "markers": pp.markers,
        "conflict": None
        if pp.conflict is None
        else {"kind": pp.conflict.kind, "message": pp.conflict.message, "hunks": pp.conflict.hunks},
    }


class Plan:
    def __init__(self, mode: RestoreMode, turn: Turn, label: str) -> None:
        self.mode = mode
        self.turn = turn
        self.label = label
        self.paths: list[PathPlan] = []
        self.notes: list[str] = []  # said with every preview (turns rebuilt from a transcript)

    @property
    def conflicts(self) -> list[PathPlan]:
        return [p for p in self.paths if p.conflict is not None]

    def changes(self) -> list[PathPlan]:
        return [p for p in self.paths if p.will_write]

    def shown(self) -> list[PathPlan]:
        """The paths a preview lists: those that would change and those in conflict."""
        return [p for p in self.paths if p.will_write or p.conflict is not None]


def disk_reader(root: str) -> Reader:
    nested: dict[str, bool] = {}  # folder -> holds a .git: asked once per folder, not per path

    def read(rel: str) -> tuple[Version, bytes | None]:
        why = _parent_not_a_folder(root, rel)
        if why is not None:
            raise BadPath(rel, why)
        check_not_nested(root, rel, nested)  # another checkout's file, recorded before it was one
        version, data, _ = read_current(root, rel)
        return version, data

    return read


def _parent_not_a_folder(root: str, rel: str) -> str | None:
    """Why a restore cannot write `rel`: one of its parents is a file or a link now where a folder
    was (a restore never replaces either, nor writes through a link); None when each is a folder
    or missing."""
    import stat

    parts = rel.split("/")[:-1]
    probe = root
    for i, part in enumerate(parts):
        probe = os.path.join(probe, part)
        try:
            st = os.lstat(probe)
        except OSError:
            return None
        what = "a symbolic link" if stat.S_ISLNK(st.st_mode) else "a file"
        if not stat.S_ISDIR(st.st_mode):
            return f"{'/'.join(parts[: i + 1])} is {what} now where a folder was"
    return None


def _content(
    store: Store, version: Version, path: str, blobs: dict[str, bytes] | None = None
) -> tuple[bytes | None, Conflict | None]:
    """The content of `version` (from `blobs` when read ahead), or the conflict saying why not."""
    if version.kind == ABSENT:
        return None, None
    if version.kind != FILE or version.hash is None:
        why = "was larger than the size cap" if version.kind == TOO_LARGE else "was never seen"
        return None, Conflict(
            ConflictKind.NOT_RESTORABLE, f"{path}: the content needed {why}; not restorable"
        )
    if blobs is not None and version.hash in blobs:
        return blobs[version.hash], None
    try:
        return store.get_blob(version.hash), None
    except CorruptBlob as exc:
        return None, Conflict(ConflictKind.NOT_RESTORABLE, f"{path}: {exc}")


def _describe(store: Store, change: PathChange) -> str:
    """Who made `change`, in the person's words."""
    if change.session_kind == SessionKind.EDITOR:
        return "your save in the editor"
    if change.session_kind == SessionKind.EXTERNAL:
        return "a change made outside agent turns"
    turn = store.turn(change.turn_id)
    number = turn.number if turn is not None else "?"
    work = "background work of turn" if is_background(change.source) else "turn"
    return f"{work} #{number} of session {change.session_id[:8]}"


def _read_path(reader: Reader, path: str) -> PathPlan:
    """The path's plan with its current content; a path that cannot be read (no permission, a link
    or folder where a file was) is a conflict naming it, so `--skip-conflicts` restores the rest."""
    try:
        current, current_data = reader(path)
    except (BadPath, OSError) as exc:
        why = str(exc) if isinstance(exc, BadPath) else f"{path!r}: {exc.strerror or exc}"
        pp = PathPlan(path, Version(OTHER), None)
        pp.action = Action.MODIFY
        pp.conflict = Conflict(ConflictKind.UNREADABLE, f"{why}; left alone")
        return pp
    return PathPlan(path, current, current_data)


def read_path_plan(reader: Reader, path: str) -> PathPlan:
    """A path's plan with its current content, or the `unreadable` conflict naming it (one-hunk
    reverts plan their paths with it)."""
    return _read_path(reader, path)


_LOOK_UP = object()


def check_cas(store: Store, pp: PathPlan, known: Any = _LOOK_UP) -> None:
    """`known`: the path's `known` row when the caller read it ahead (None: never seen)."""
    if known is _LOOK_UP:
        known = store.known(pp.path)
    if known is None or pp.action == Action.UNCHANGED:
        return
    if known[0] != pp.current:
        pp.conflict = Conflict(
            ConflictKind.MODIFIED_OUTSIDE,
            f"{pp.path}: changed since rewind-ls last saw it (an unsaved buffer, or an edit it did "
            "not record)",
        )


def plan_rewind(
    store: Store, turn: Turn, reader: Reader, paths: list[str] | None = None, label: str = ""
) -> Plan:
    plan = Plan(REWIND if turn.session_id != REWIND_SESSION else UNDO, turn, label)
    session_turns = [t.id for t in store.turns(turn.session_id) if t.seq >= turn.seq]
    candidates = sorted({c.path for c in store.changes_of_turns(session_turns)})
    _note_reconstructed(plan, [store.turn(t) for t in session_turns])
    if paths is not None:
        missing = sorted(set(paths) - set(candidates))
        if missing:
            # A typo must not pass for "nothing to restore".
            changed = ", ".join(candidates[:20]) or "no file"
            more = f" and {len(candidates) - 20} more" if len(candidates) > 20 else ""
            raise RewindError(
                f"turn {turn.number}: no turn from it on changed {', '.join(missing)} "
                f"(they changed {changed}{more}); nothing written"
            )
        wanted = set(paths)
        candidates = [p for p in candidates if p in wanted]
    # Read ahead in a few queries what each path needs (its history, what was last seen, the
    # target content): a large restore plans thousands of paths.
    histories = store.path_histories(candidates, after_seq=turn.seq)
    knowns = store.known_many(candidates)
    blobs = _read_ahead(store, [h[0].before for h in histories.values() if h])
    for path in candidates:
        history = histories[path]
        if not history:
            continue
        target = history[0].before
        pp = _read_path(reader, path)
        plan.paths.append(pp)
        if pp.conflict is not None:
            continue
        current = pp.current
        data, problem = _content(store, target, path, blobs)
        if problem is not None:
            if not target.same_content(current):
                pp.action = Action.MODIFY if target.kind != ABSENT else Action.DELETE
                pp.conflict = problem
            continue
        pp.set_target(target, data)
        check_cas(store, pp, knowns.get(path))
        if pp.conflict is None and pp.will_write:
            _check_others(store, pp, turn, history)
    _folders_where_files_were(store, plan)
    return plan


def _folders_where_files_were(store: Store, plan: Plan) -> None:
    """A folder that now stands where rewind-ls last knew a file (the agent's `rm f; mkdir f`,
    which a scan cannot record) is a conflict of the rewind that empties it: restoring only the
    files inside would report success and leave an empty folder where the person's file was."""
    have = {pp.path for pp in plan.paths}
    looked: set[str] = set()  # each folder asked about once, not once per file inside it
    for pp in list(plan.paths):
        parts = pp.path.split("/")[:-1]
        for i in range(1, len(parts) + 1):
            folder = "/".join(parts[:i])
            if folder in have or folder in looked:
                continue
            looked.add(folder)
            known = store.known(folder)
            if known is None or known[0].kind != FILE:
                continue
            have.add(folder)
            conflict = PathPlan(folder, Version(OTHER), None)
            conflict.action = Action.MODIFY
            conflict.conflict = Conflict(
                ConflictKind.UNREADABLE,
                f"{folder}: a folder now where a file was (rewind-ls last knew a file there); "
                "a restore never replaces a folder with a file; left alone",
            )
            plan.paths.append(conflict)


def _read_ahead(store: Store, versions: list[Version]) -> dict[str, bytes]:
    """The contents of `versions` in one pass over their packs; empty if any is damaged (each
    path then reads its own, and a damaged one becomes that path's conflict)."""
    hashes = [v.hash for v in versions if v.kind == FILE and v.hash is not None]
    try:
        return store.get_blobs(hashes)
    except CorruptBlob:
        return {}


def _check_others(store: Store, pp: PathPlan, turn: Turn, history: list[PathChange]) -> None:
    """Any change by someone else after T began (another session, the person's save, an external
    change) would be discarded, even one followed by this session's own edits (sessions A, B, A
    on one file): a conflict, as the README states. A forked conversation inherits copies of its
    parent's changes (same `seq`): the same edit seen from two sessions, not someone else's work.
    Nor is a change that only put back content this session had there (the agent's own restore,
    Claude Code's /rewind or Gemini's /restore, which no hook reports: a scan sees it as an
    outside change): the rewind discards nothing but the session's own version."""
    # An earlier turn's change made after T began (its background work) is not T's own either.
    same = [h for h in history if h.session_id == turn.session_id != REWIND_SESSION]
    earlier = {h.seq for h in same if (store.turn(h.turn_id) or turn).seq < turn.seq}
    own = {h.seq for h in history if h.session_id == turn.session_id and h.seq not in earlier}
    # What the session had at the path: at T's start, and what each of its changes wrote.
    mine = [history[0].before, *(h.after for h in history if h.seq in own and h.after)]
    later = [
        h
        for h in history
        if (h.session_id not in (turn.session_id, REWIND_SESSION) or h.seq in earlier)
        and h.turn_state != TurnState.ROLLED_BACK
        and h.seq not in own
        and not _undone_before_fork(store, turn.session_id, h, history)
        and (shared_turns(h.source) or not (h.after and any(map(h.after.same_content, mine))))
    ]
    shared = [h for h in later if shared_turns(h.source)]
    if shared:
        pp.conflict = _shared_conflict(store, pp.path, shared[-1])
    elif later:
        pp.conflict = Conflict(
            ConflictKind.OTHER_SESSION,
            f"{pp.path}: also changed by {_describe(store, later[-1])} after this turn "
            "began; restoring would discard that work",
        )
    elif why := kept_partner(store, pp.path, turn, history):
        pp.conflict = Conflict(ConflictKind.OTHER_SESSION, why)


def _undone_before_fork(
    store: Store, session_id: str, h: PathChange, history: list[PathChange]
) -> bool:
    """Whether `h` is a change of the turns a fork (`session_id`) was cut before, which a restore
    undid afterwards (`rewind N --scope both` undoes them and forks): the fork never contained
    them and that work is already in the restore point, so it is not someone else's work the
    fork's rewind would discard. A fork that left them on disk (`--scope conversation`) still
    conflicts."""
    fork_seqs = {t.seq for t in store.turns(session_id)}
    source = store.turns(h.session_id)
    shared = [t.seq for t in source if t.seq in fork_seqs]
    h_turn = next((t for t in source if t.id == h.turn_id), None)
    if not shared or h_turn is None or h_turn.seq <= max(shared):
        return False
    # The source's first change to the path that the fork does not contain: a restore that put the
    # path back to what it held before that change undid all of them.
    cut = max(shared)
    uncontained = {t.id for t in source if t.seq > cut}
    first = next(c for c in history if c.turn_id in uncontained)
    return any(
        r.session_id == REWIND_SESSION
        and r.seq > h.seq
        and r.turn_state in (TurnState.APPLIED, TurnState.PARTIAL)
        and r.after is not None
        and r.after.same_content(first.before)
        for r in history
    )


def _shared_conflict(store: Store, path: str, other: PathChange) -> Conflict:
    """A change recorded as shared (`model.SHARED_SOURCE`): nobody can say whose it is."""
    return Conflict(
        ConflictKind.OTHER_SESSION,
        f"{path}: shared with {_describe(store, other)}: changed while both ran shell commands "
        "(or after an agent was killed), so rewind-ls cannot tell whose change it is; restoring "
        "could discard that work",
    )


def _check_shared(store: Store, pp: PathPlan, turn: Turn, source: str) -> None:
    """Revert of a change shared with other turns (`model.SHARED_SOURCE`) that still stand: a
    conflict naming them."""
    partners = set(shared_turns(source))
    if not partners:
        return
    for h in reversed(store.path_history(pp.path)):
        # A partner of the same session too: a background job's turn and a later one's command.
        if h.turn_id in partners and h.turn_state != TurnState.ROLLED_BACK:
            pp.conflict = _shared_conflict(store, pp.path, h)
            return


def _note_reconstructed(plan: Plan, turns: list[Turn | None]) -> None:
    """A preview says when a turn it restores was rebuilt from the agent's transcript."""
    notes = {n for n in (reconstructed_note(t) for t in turns if t is not None) if n}
    for note in sorted(notes):
        plan.notes.append(note)
        plan.label = f"{plan.label} [{note}]" if plan.label else note


def plan_revert(
    store: Store, turn: Turn, reader: Reader, label: str = "", markers: bool = False
) -> Plan:
    """`markers`: where later changes overlap the turn's, write the revert with conflict markers
    (diff3 style: "now", the turn, before the turn) instead of refusing the path."""
    plan = Plan(REVERT, turn, label)
    _note_reconstructed(plan, [turn])
    for change in store.changes(turn.id):
        path = change.path
        theirs = change.before
        base = change.after
        pp = _read_path(reader, path)
        plan.paths.append(pp)
        if pp.conflict is not None:
            continue
        current = pp.current
        if base is None:
            known = store.known(path)
            base = known[0] if known is not None else current
        theirs_data, problem = _content(store, theirs, path)
        if problem is not None:
            pp.action, pp.conflict = Action.MODIFY, problem
            continue
        if current == base:
            pp.set_target(theirs, theirs_data)
            _check_shared(store, pp, turn, change.source)
            continue
        if current == theirs:
            continue  # already as it was before the turn
        base_data, problem = _content(store, base, path)
        if problem is not None:
            pp.action, pp.conflict = Action.MODIFY, problem
            continue
        _merge(pp, base, base_data, theirs, theirs_data, turn.number if markers else None)
        if pp.markers:
            plan.notes.append(
                f"{path}: {pp.markers} conflict(s) written with markers (<<<<<<< now / ||||||| "
                f"turn #{turn.number} / ======= / >>>>>>> before turn #{turn.number}); resolve them "
                "and save"
            )
        if pp.conflict is None and pp.will_write:
            _check_shared(store, pp, turn, change.source)
    return plan


def _merge(
    pp: PathPlan,
    base: Version,
    base_data: bytes | None,
    theirs: Version,
    theirs_data: bytes | None,
    marked_turn: int | None = None,
) -> None:
    """Revert one path changed since the turn: three-way merge of base (after the turn), ours
    (now) and theirs (before the turn); a conflict when it cannot apply, or, given the turn's
    number (`marked_turn`), the merge with its conflicts written between markers."""
    path, current = pp.path, pp.current
    if ABSENT in (current.kind, base.kind, theirs.kind):
        pp.action = Action.MODIFY
        pp.conflict = Conflict(
            ConflictKind.MERGE,
            f"{path}: created or deleted by the turn and changed since; cannot merge",
        )
        return
    assert base_data is not None and theirs_data is not None
    ours = pp.current_data or b""
    if is_binary(base_data) or is_binary(ours) or is_binary(theirs_data):
        pp.action = Action.MODIFY
        pp.conflict = Conflict(
            ConflictKind.MERGE, f"{path}: binary file changed since the turn; cannot merge"
        )
        return
    result = merge3(base_data, ours, theirs_data)
    if result.merged is None and marked_turn is not None:
        labels = ("now", f"turn #{marked_turn}", f"before turn #{marked_turn}")
        marked, pp.markers = merge3_markers(base_data, ours, theirs_data, labels)
        result = type(result)(marked, [])
    if result.merged is None:
        pp.action = Action.MODIFY
        pp.conflict = Conflict(
            ConflictKind.MERGE,
            f"{path}: later changes overlap this turn's changes ({len(result.conflicts)} hunk(s))",
            [
                {
                    "base_start": c.base_start,
                    "base_end": c.base_end,
                    "ours": [line.decode("utf-8", "replace") for line in c.ours],
                    "theirs": [line.decode("utf-8", "replace") for line in c.theirs],
                }
                for c in result.conflicts
            ],
        )
        return
    # Mode: keep the person's mode if they changed it since the turn, else the one before the turn.
    mode = current.mode if (current.mode or 0) != (base.mode or 0) else theirs.mode
    merged = result.merged
    pp.set_target(Version(FILE, digest(merged), mode, len(merged)), merged)


def latest_restore_point(store: Store) -> Turn:
    point = store.latest_applied_turn(REWIND_SESSION)
    if point is None:
        raise RewindError("nothing to undo: no rewind, revert or undo has been applied here")
    turn = store.turn(point)
    assert turn is not None
    return turn


def plan_undo(store: Store, reader: Reader) -> Plan:
    point = latest_restore_point(store)
    return plan_rewind(store, point, reader, label=f"undo of: {point.prompt}")


def resolve_turn(store: Store, spec: str, session_id: str | None = None) -> Turn:
    """A turn from a number (in `session_id`, default the latest agent session) or a turn id."""
    spec = spec.strip()
    if not spec:
        raise UnknownTurn(spec, "empty turn")
    if not spec.isdigit():
        turn = store.turn(spec)
        if turn is None:
            raise UnknownTurn(spec, "no turn with that id in this workspace")
        return turn
    sid = session_id or current_session(store)
    if sid is None:
        raise UnknownTurn(spec, "no agent session has been recorded in this workspace")
    number = int(spec)
    turn = store.turn_by_number(sid, number) if number < 2**63 else None  # SQLite's integers
    if turn is None:
        low, high = store.turn_number_range(sid)
        have = f"has turns {low}..{high}" if low is not None else "has no turns"
        raise UnknownTurn(spec, f"session {sid[:8]} {have} (older ones may have been pruned by gc)")
    return turn


def current_session(store: Store) -> str | None:
    return store.latest_agent_session()


def restrict(plan: Plan, paths: list[str]) -> Plan:
    """`plan` limited to `paths` (revert --path); a path the turn did not change is an error, so a
    typo never passes for "nothing to do"."""
    have = {pp.path for pp in plan.paths}
    missing = [p for p in paths if p not in have]
    if missing:
        changed = ", ".join(sorted(have)) or "no file"
        raise RewindError(
            f"turn {plan.turn.number}: did not change {', '.join(missing)} (it changed {changed})"
        )
    wanted = set(paths)
    plan.paths = [pp for pp in plan.paths if pp.path in wanted]
    return plan
