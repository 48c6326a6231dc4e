"""`rewind-ls revert TURN -p`: walk the turn's changes hunk by hunk, like `git checkout -p`, and
revert only the chosen hunks (one restore: one preview, one restore point, `undo` brings them all
back). Hunks edited since the turn cannot be reverted alone: they are shown, said, and skipped."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

from rewind_ls.core.errors import RewindError
from rewind_ls.core.model import Turn
from rewind_ls.core.store import Store

HELP = """\
y - revert this hunk
n - do not revert this hunk
q - quit; do not revert this hunk or any of the remaining ones
a - revert this hunk and all later hunks in the file
d - do not revert this hunk or any of the later hunks in the file
? - print help"""

CONTEXT = 3  # lines shown around a hunk

Ask = Callable[[str], str]


class _Unit:
    """One question of the walk: a hunk, or a whole file that has no line hunks."""

    def __init__(self, path: str, index: int | None, lines: list[str], note: str | None) -> None:
        self.path = path
        self.index = index  # None: the whole file
        self.lines = lines  # what is shown
        self.note = note  # set: it cannot be reverted alone (said, and skipped)


def _units(store: Store, turn: Turn, reader: Any, paths: list[str] | None) -> list[list[_Unit]]:
    """Per file the turn changed (or of `paths`), its questions in file order."""
    from rewind_ls.core.restore.hunks import EDITED, REVERTED, turn_file

    files: list[list[_Unit]] = []
    for change in store.changes(turn.id):
        path = change.path
        if paths is not None and path not in paths:
            continue
        tf = turn_file(store, turn, path)
        _, data = reader(path)
        if tf is None:
            what = {"created": "created", "deleted": "deleted"}.get(str(change.kind), "changed")
            files.append([_Unit(path, None, [f"(turn {turn.number} {what} this file)"], None)])
            continue
        if data is None:
            files.append([_Unit(path, None, ["(deleted since the turn)"], None)])
            continue
        now = data.splitlines(True)
        units = []
        states = tf.states(data)
        for s in states:
            start, end = s.start, s.end
            lines = [f"@@ hunk {s.hunk.idx + 1}/{len(states)}, line {start + 1} now @@"]
            lines += [" " + _text(x) for x in now[max(0, start - CONTEXT) : start]]
            lines += ["-" + _text(x) for x in s.removed]
            lines += ["+" + _text(x) for x in s.added]
            lines += [" " + _text(x) for x in now[end : end + CONTEXT]]
            note = None
            if s.status == EDITED:
                note = "edited since the turn: cannot be reverted alone; skipped"
            elif s.status == REVERTED:
                note = "already as it was before the turn; skipped"
            units.append(_Unit(path, s.hunk.idx, lines, note))
        files.append(units)
    return files


def _text(line: bytes) -> str:
    from rewind_ls.cli.style import safe

    return safe(line.decode("utf-8", "replace").rstrip("\r\n"))


def choose(
    files: list[list[_Unit]], ask: Ask, out: Callable[[str], None]
) -> dict[str, list[int] | None]:
    """The walk: per file, per hunk, the person's answer. Returns path -> hunk indexes (None: the
    whole file)."""
    from rewind_ls.cli.style import colour_diff, colour_enabled

    on = colour_enabled()
    chosen: dict[str, list[int] | None] = {}
    for units in files:
        take_rest: bool | None = None  # a / d: the rest of this file is decided
        for n, unit in enumerate(units):
            out(colour_diff(f"diff rewind-ls {unit.path}\n", on).rstrip("\n"))
            out(colour_diff("\n".join(unit.lines) + "\n", on).rstrip("\n"))
            if unit.note is not None:
                out(f"({unit.note})")
                continue
            if take_rest is not None:
                answer = "y" if take_rest else "n"
            else:
                answer = _ask(ask, unit, n, len(units), out)
            if answer == "q":
                return chosen
            if answer in ("a", "d"):
                take_rest = answer == "a"
                answer = "y" if take_rest else "n"
            if answer == "y":
                if unit.index is None:
                    chosen[unit.path] = None
                else:
                    picked = chosen.setdefault(unit.path, [])
                    assert picked is not None
                    picked.append(unit.index)
    return chosen


def _ask(ask: Ask, unit: _Unit, n: int, total: int, out: Callable[[str], None]) -> str:
    what = "this file" if unit.index is None else "this hunk"
    while True:
        try:
            answer = ask(f"({n + 1}/{total}) Revert {what} [y,n,q,a,d,?]? ").strip().lower()
        except EOFError:
            return "q"
        if answer[:1] in ("y", "n", "q", "a", "d"):
            return answer[:1]
        out(HELP)


def revert_patch(args: argparse.Namespace, store: Store, turn: Turn, ask: Ask = input) -> int:
    """The -p walk, then one restore of the chosen hunks (the plan shown, the restore point
    recorded, all or nothing on disk)."""
    from rewind_ls.cli.common import rel
    from rewind_ls.cli.plan_view import render_plan
    from rewind_ls.core.model import RestoreMode
    from rewind_ls.core.restore.flow import RestoreFlow
    from rewind_ls.core.restore.plan import disk_reader
    from rewind_ls.core.restore.planner import plan_hunks
    from rewind_ls.core.restore.request import RestoreRequest

    if args.json or args.yes or args.dry_run:
        raise RewindError("revert -p asks about each hunk: it takes no --json, --yes or --dry-run")
    reader = disk_reader(store.root)
    paths = [rel(store, p) for p in args.path] if args.path else None
    files = _units(store, turn, reader, paths)
    if not files:
        print(f"turn {turn.number} changed no file" + (" of those paths" if paths else ""))
        return 0
    print(f"revert turn {turn.number}, hunk by hunk: {' '.join(turn.prompt.split())[:60]}")
    chosen = choose(files, ask, print)
    if not chosen:
        print("nothing chosen; nothing written")
        return 0
    plan = plan_hunks(store, turn, reader, chosen)
    render_plan(plan, print)
    request = RestoreRequest(
        RestoreMode.REVERT, turn.id, force=args.force, skip_conflicts=args.skip_conflicts
    )
    flow = RestoreFlow(store, request, turn)
    outcome = flow.apply_to_disk(plan)
    if outcome is not None:
        print(outcome.message + (" (undo: rewind-ls undo)" if outcome.point else ""))
    return 0
