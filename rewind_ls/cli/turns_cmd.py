"""`rewind-ls turns`: the recorded turns, newest session by default."""

from __future__ import annotations

import argparse

from rewind_ls.cli.common import (
    JSON_HELP,
    Add,
    open_store,
    print_json,
    print_unrecorded,
    session_arg,
    unrecorded,
)


def cmd_turns(args: argparse.Namespace) -> int:
    from rewind_ls.core.timeline import list_sessions

    with open_store(args) as store:
        args.session = session_arg(store, args.session)
        listing = list_sessions(store, args.session)
        gaps = unrecorded(store)
    if not args.all and args.session is None:
        current = listing["current_session_id"]
        listing["sessions"] = [s for s in listing["sessions"] if s["id"] == current]
    listing["unrecorded"] = gaps
    if args.json:
        from rewind_ls.server.protocol import TurnsOutput, wire

        print_json(wire(TurnsOutput, listing))
        return 0
    print_unrecorded(listing["unrecorded"])
    if not listing["sessions"]:
        print(
            "no agent turns recorded in this workspace yet (install the hooks: rewind-ls install claude-code)"
        )
        return 0
    from rewind_ls.cli.style import width
    from rewind_ls.cli.turns_view import session_lines

    cols = width()
    for session in listing["sessions"]:
        for line in session_lines(session, cols):
            print(line)
    return 0


def register(add: Add) -> None:
    p = add("turns", cmd_turns, "List recorded turns (newest session by default).")
    p.add_argument(
        "--session",
        help="only this session (its id or the start of it; default: the latest agent session)",
    )
    p.add_argument(
        "--all", action="store_true", help="every session, including your saves and restore points"
    )
    p.add_argument("--json", action="store_true", help=JSON_HELP)
