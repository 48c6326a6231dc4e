"""`rewind-ls diff TURN [TURN_B] [PATH]`: what a turn changed, or the workspace between two
checkpoints (or a checkpoint and now)."""

from __future__ import annotations

import argparse
from typing import Any

from rewind_ls.cli.common import (
    JSON_HELP,
    SESSION_HELP,
    TURN_HELP,
    Add,
    open_store,
    print_json,
    rel,
    turn_arg,
)
from rewind_ls.core.errors import RewindError
from rewind_ls.core.store import Store


def cmd_diff(args: argparse.Namespace) -> int:
    from rewind_ls.cli.style import colour_diff, colour_enabled, page
    from rewind_ls.core.history.diff import checkpoint_diff, turn_diff
    from rewind_ls.core.restore.plan import disk_reader

    with open_store(args) as store:
        turn = turn_arg(store, args)
        other, path = _operands(store, args)
        relpath = rel(store, path) if path else None
        if other is not None or args.current:
            diffs = checkpoint_diff(store, turn, other, disk_reader(store.root), relpath)
            what = f"checkpoint {turn.number} and " + (
                f"checkpoint {other.number}" if other is not None else "the files now"
            )
        else:
            diffs = turn_diff(store, turn, relpath)
            what = f"turn {turn.number}"
        if relpath is not None and not diffs:
            _explain_empty(store, turn, relpath, path, other is None and not args.current)
    if args.json:
        payload: dict[str, Any] = {"turnId": turn.id, "number": turn.number, "files": diffs}
        if other is not None or args.current:
            payload["to"] = other.id if other is not None else "current"
        from rewind_ls.protocol.cli_output import DiffOutput, wire

        print_json(wire(DiffOutput, payload))
        return 0
    if not diffs:
        print(f"no difference: {what}" + (f", {path}" if path else ""))
        return 0
    page(colour_diff("".join(d["diff"] for d in diffs), colour_enabled()))
    return 0


def _explain_empty(store: Store, turn: Any, relpath: str, path: Any, one_turn: bool) -> None:
    """No diff for PATH: an error when rewind-ls never saw it, or the turn did not change it."""
    if store.known(relpath) is None and not store.path_history(relpath):
        raise RewindError(f"{path}: rewind-ls has no record of this path in this workspace")
    if one_turn:
        changed = ", ".join(sorted({c.path for c in store.changes(turn.id)})) or "no file"
        raise RewindError(f"turn {turn.number} did not change {path} (it changed {changed})")


def _operands(store: Store, args: argparse.Namespace) -> tuple[Any, str | None]:
    """`diff TURN [TURN_B] [PATH]`: the second operand is a turn when it is a number or a turn id
    (write ./3 for a file named 3), a path otherwise."""
    from rewind_ls.core.restore.plan import resolve_turn

    rest = list(args.rest or [])
    if len(rest) > 2:
        raise RewindError(f"diff: too many operands {rest[2:]} (diff TURN [TURN_B] [PATH])")
    other = None
    if rest and (len(rest) == 2 or rest[0].isdigit() or store.turn(rest[0]) is not None):
        other = resolve_turn(store, rest.pop(0), args.session)
    if other is not None and args.current:
        raise RewindError("diff: give a second TURN or --current, not both")
    return other, (rest[0] if rest else None)


def register(add: Add) -> None:
    p = add(
        "diff",
        cmd_diff,
        "Show what TURN changed (before -> after); with TURN_B, the workspace at the start of TURN "
        "against the start of TURN_B; with --current, against the files now. A pager is used on a "
        "terminal ($PAGER, default less -R).",
    )
    p.add_argument("turn", metavar="TURN", nargs="?", help=TURN_HELP)
    p.add_argument(
        "rest",
        metavar="[TURN_B] [PATH]",
        nargs="*",
        help="a second turn (a number or id) and/or one path (write ./3 for a file named 3)",
    )
    p.add_argument(
        "--current", action="store_true", help="compare the start of TURN with the files now"
    )
    p.add_argument("--session", help=SESSION_HELP)
    p.add_argument("--json", action="store_true", help=JSON_HELP)
