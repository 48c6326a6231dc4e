"""`rewind-ls rewind | revert | undo | restore`: the restore commands (`restore PATH --version
HASH`: one file back to one recorded version, local history). The restore itself is the core's
(`core.restore.flow`); here: the preview, the question on a terminal, the outcome's lines."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from rewind_ls.cli.common import (
    JSON_HELP,
    SESSION_HELP,
    TURN_HELP,
    Add,
    open_store,
    print_json,
    print_unrecorded,
    rel,
    turn_arg,
    unrecorded,
)
from rewind_ls.cli.plan_view import render_plan
from rewind_ls.cli.style import safe
from rewind_ls.core.capture.recorder import REWIND_SESSION
from rewind_ls.core.model import RestoreMode, RestoreStatus, Scope
from rewind_ls.core.restore.planner import restore_label
from rewind_ls.core.store import Store

if TYPE_CHECKING:
    from rewind_ls.core.model import Turn
    from rewind_ls.core.restore.flow import Forker
    from rewind_ls.core.restore.request import RestoreRequest


def cmd_rewind(args: argparse.Namespace) -> int:
    return restore(args, "rewind")


def cmd_revert(args: argparse.Namespace) -> int:
    if args.patch:
        from rewind_ls.cli.revert_patch import revert_patch

        with open_store(args) as store:
            return revert_patch(args, store, turn_arg(store, args))
    return restore(args, "revert")


def cmd_undo(args: argparse.Namespace) -> int:
    return restore(args, "undo")


def cmd_restore(args: argparse.Namespace) -> int:
    return restore(args, RestoreMode.VERSION)


def restore(args: argparse.Namespace, mode: str) -> int:
    """One restore from the command line: plan, preview, ask (on a terminal), apply, report."""
    from rewind_ls.core.restore.flow import RestoreFlow
    from rewind_ls.core.restore.plan import UNDO, disk_reader
    from rewind_ls.core.restore.preview import build_preview

    with open_store(args) as store:
        turn: Turn | None
        if mode == RestoreMode.VERSION:
            request, turn = _version_request(store, args)
        else:
            turn = None if mode == UNDO else turn_arg(store, args)
            request = _request(args, store, mode, turn)
        flow = RestoreFlow(store, request, turn, _forker(Scope(request.scope)))
        plan = flow.plan(disk_reader(store.root)) if flow.code else None
        turn = plan.turn if plan is not None else turn
        assert turn is not None
        result: dict[str, Any] = {
            "mode": request.mode,
            "turnId": turn.id,
            "number": turn.number,
            "scope": request.scope,
        }
        if plan is not None:
            _show_plan(store, build_preview(store, request, turn, plan), result, args.json)
        if not request.apply:
            result["status"] = RestoreStatus.PLANNED
            _print_result(result, [], args.json)
            return 3 if plan is not None and plan.conflicts else 0
        if plan is not None and plan.changes():
            proceed, force, skip = _confirm(plan, args)
            if not proceed:
                print("cancelled; nothing written")
                return 1
            flow.request = flow.request._replace(force=force, skip_conflicts=skip)
        outcome = flow.apply_to_disk(plan)
        lines = _outcome_lines(flow, outcome, result)
        if outcome is not None and plan is not None:
            lines.extend(_marker_lines(plan))
    _print_result(result, lines, args.json)
    return 0


def _forker(scope: Scope) -> Forker | None:
    """The conversation's forker when the scope takes the conversation (the core's restore flow
    knows no agent: it is handed this)."""
    if not scope.conversation:
        return None
    from rewind_ls.core.conversation.fork import fork_turn

    return fork_turn


def _request(
    args: argparse.Namespace, store: Store, mode: str, turn: Turn | None
) -> RestoreRequest:
    """The command line's restore, as the one request the core's flow takes."""
    from rewind_ls.core.restore.request import RestoreRequest

    return RestoreRequest(
        RestoreMode(mode),
        turn.id if turn is not None else None,
        Scope(getattr(args, "scope", Scope.CODE)),
        [rel(store, p) for p in args.path] if getattr(args, "path", None) else None,
        merge=bool(getattr(args, "merge", False)),
        force=args.force,
        skip_conflicts=args.skip_conflicts,
        apply=not args.dry_run,
    )


def _print_result(result: dict[str, Any], lines: list[str], as_json: bool) -> None:
    """The outcome: `result` as JSON with --json, else the terminal's lines."""
    if as_json:
        from rewind_ls.protocol.cli_output import RestoreOutput, wire

        print_json(wire(RestoreOutput, result))
        return
    for line in lines:
        print(line)


def _version_request(store: Store, args: argparse.Namespace) -> tuple[RestoreRequest, Turn]:
    """`restore PATH --version HASH`: the request and the turn that recorded that version."""
    from rewind_ls.core.restore.request import RestoreRequest
    from rewind_ls.core.restore.version_plan import find_version

    path = rel(store, args.path)
    found = find_version(store, path, args.version)
    request = RestoreRequest(
        RestoreMode.VERSION,
        found.turn.id,
        Scope.CODE,
        [path],
        force=args.force,
        skip_conflicts=args.skip_conflicts,
        apply=not args.dry_run,
        version=found.version.hash,
    )
    return request, found.turn


def _show_plan(store: Store, preview: Any, result: dict[str, Any], as_json: bool) -> None:
    """The preview of the code part (`preview.build_preview`): into `result`, and on stdout
    unless --json."""
    plan, turn, mode = preview.plan, preview.turn, preview.request.mode
    result["files"] = preview.files
    result["notes"] = plan.notes
    result["unrecorded"] = unrecorded(store)
    if as_json:
        return
    print_unrecorded(result["unrecorded"])
    if mode == RestoreMode.UNDO:
        header = "undo"
    elif mode == RestoreMode.VERSION:
        header = safe(plan.label)
    elif turn.session_id == REWIND_SESSION:
        header = safe(restore_label(mode, turn))  # a restore point's number is not a turn's
    else:
        header = f"{mode} turn {turn.number}: {safe(turn.prompt[:60])}"
    print(header)
    for note in plan.notes:
        print(f"  note: {note}")
    render_plan(plan, print)
    if not plan.changes() and not plan.conflicts:
        print("  nothing to restore: every path already matches")


def _confirm(plan: Any, args: argparse.Namespace) -> tuple[bool, bool, bool]:
    """(proceed, force, skip_conflicts) after asking on a terminal."""
    force, skip = args.force, args.skip_conflicts
    if args.yes or args.json or not sys.stdin.isatty():
        return True, force, skip
    blocking = [p for p in plan.conflicts if not (force and p.conflict.forcible)]
    if blocking and not skip:
        answer = input(f"{len(blocking)} conflict(s). [s]kip them / [f]orce overwrite / [c]ancel? ")
        choice = answer.strip().lower()[:1]
        if choice == "s":
            return True, force, True
        if choice == "f":
            return True, True, skip
        return False, force, skip
    answer = input(f"Restore {len(plan.changes())} file(s)? [y/N] ")
    return answer.strip().lower() in ("y", "yes"), force, skip


def _outcome_lines(flow: Any, outcome: Any, result: dict[str, Any]) -> list[str]:
    """The restore's outcome into `result`, and as lines for the terminal."""
    from rewind_ls.core.conversation.fork import fork_fields, fork_message

    lines: list[str] = []
    if outcome is not None:
        result.update(status=outcome.status, message=outcome.message, restorePointId=outcome.point)
        lines.append(outcome.message + (" (undo: rewind-ls undo)" if outcome.point else ""))
    fork = flow.fork
    if fork is not None:
        result["conversation"] = fork_fields(fork)
        result.setdefault("status", RestoreStatus.APPLIED)
        lines.append(fork_message(fork, flow.turn.number))
        lines.append("the turn's prompt, to edit and send again:")
        lines.append("  " + fork.prompt.replace("\n", "\n  "))
    return lines


def _marker_lines(plan: Any) -> list[str]:
    """What to do next after a revert that wrote conflict markers (--merge)."""
    marked = [pp for pp in plan.paths if pp.markers]
    if not marked:
        return []
    names = ", ".join(f"{safe(pp.path)} ({pp.markers})" for pp in marked)
    return [
        f"conflicts written with markers in {names}: edit each <<<<<<< now ... >>>>>>> "
        f"before turn #{plan.turn.number} block to what you want, then save",
        "(`git diff` or your editor's merge view shows them; `rewind-ls undo` takes the revert back)",
    ]


def _restore_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument("--dry-run", action="store_true", help="only show the preview")
    p.add_argument(
        "--force",
        action="store_true",
        help="overwrite paths changed behind rewind-ls' back (undoable)",
    )
    p.add_argument(
        "--skip-conflicts",
        action="store_true",
        help="restore the rest, leave conflicting paths alone",
    )
    p.add_argument("-y", "--yes", action="store_true", help="do not ask for confirmation")
    p.add_argument("--json", action="store_true", help=JSON_HELP)


def register(add: Add) -> None:
    p = add("rewind", cmd_rewind, "Restore code, conversation or both to the start of TURN.")
    p.add_argument("turn", metavar="TURN", nargs="?", help=TURN_HELP)
    p.add_argument(
        "--scope",
        choices=[str(s) for s in Scope],
        default=Scope.CODE,
        help="what to restore: the files, the agent's conversation (forked before TURN), or both "
        "(default: code)",
    )
    p.add_argument("--path", action="append", metavar="P", help="only this path (repeatable)")
    p.add_argument("--session", help=SESSION_HELP)
    _restore_flags(p)

    p = add(
        "revert",
        cmd_revert,
        "Undo only TURN's own changes by a three-way merge; later work survives.",
    )
    p.add_argument("turn", metavar="TURN", nargs="?", help=TURN_HELP)
    p.add_argument(
        "--path", action="append", metavar="P", help="only this path of the turn (repeatable)"
    )
    p.add_argument(
        "-p",
        "--patch",
        action="store_true",
        help="walk the turn's hunks like `git checkout -p` (y/n/q/a/d, ? for help) and revert "
        "only those you choose",
    )
    p.add_argument("--session", help=SESSION_HELP)
    p.add_argument(
        "--merge",
        action="store_true",
        help="where later edits overlap the turn's changes, write the revert with conflict markers "
        "(diff3 style: now / the turn / before the turn) to resolve, instead of refusing",
    )
    _restore_flags(p)

    p = add("undo", cmd_undo, "Undo the last rewind, revert or undo.")
    _restore_flags(p)

    p = add(
        "restore",
        cmd_restore,
        "Write one recorded version of a file back (hashes from `rewind-ls log PATH`), even a file "
        "that no longer exists; undoable.",
    )
    p.add_argument("path", metavar="PATH", help="the file (relative to the current folder)")
    p.add_argument(
        "--version",
        required=True,
        metavar="HASH",
        help="the version's hash, or its first 4+ hex digits (rewind-ls log PATH)",
    )
    _restore_flags(p)
