"""`rewind-ls turns`: the recorded turns, newest session by default."""

from __future__ import annotations

import argparse
from typing import Any

from rewind_ls.cli.common import (
    JSON_HELP,
    Add,
    open_store,
    print_json,
    print_unrecorded,
    session_arg,
    short_id,
    unrecorded,
)


def cmd_turns(args: argparse.Namespace) -> int:
    from rewind_ls.core.history.timeline import list_sessions

    with open_store(args) as store:
        session = session_arg(store, args.session)
        if session is None and not args.all:
            from rewind_ls.core.restore.plan import current_session

            session = current_session(store)  # the latest agent session only: read only its page
        if session is None and not args.all:
            listing: dict[str, Any] = {"workspace": store.root, "current_session_id": None}
            listing["sessions"] = []
        else:
            listing = list_sessions(store, session, args.limit or None)
        gaps = unrecorded(store)
        from rewind_ls.core.capture.baseline_spawn import progress

        first = progress(store.path)
        others: list[dict[str, Any]] = []
        if not args.all and args.session is None:
            # Another agent working here too: its newest turn (a page of one) says if it is live.
            others = live_others(list_sessions(store, None, 1)["sessions"], session)
        ids = [s.id for s in store.sessions()] if others or listing["sessions"] else []
    listing["unrecorded"] = gaps
    if args.json:
        from rewind_ls.protocol.cli_output import TurnsOutput, wire

        print_json(wire(TurnsOutput, listing))
        return 0
    print_unrecorded(listing["unrecorded"])
    if first is not None:
        done, total = first
        counted = f"{done} of {total} files" if total else "listing the files"
        print(
            f"first checkpoint of this workspace in progress ({counted}), in the background: "
            "a rewind keeps every file not recorded yet as it is"
        )
    if not listing["sessions"]:
        print(
            "no agent turns recorded in this workspace yet (install the hooks: rewind-ls install claude-code)"
        )
        return 0
    from rewind_ls.cli.style import width
    from rewind_ls.cli.turns_view import session_lines

    cols = width()
    for session in listing["sessions"]:
        older = session["turn_count"] - len(session["turns"])
        if older > 0:
            print(
                f"({older} older turns of session {short_id(session['id'], ids)} not shown:"
                " --limit 0 lists every turn)"
            )
        for line in session_lines(session, cols):
            print(line)
    for other in others:
        # Another agent works in this workspace too: its turns are not listed above.
        # A prefix no other session shares, so the hint works as printed (UUIDv7 ids).
        short = short_id(other["id"], ids)
        print(
            f"also active here: session {short} ({other['agent'] or 'agent'}, "
            f"{other['turn_count']} turn(s)); see it with: rewind-ls turns --session "
            f"{short}  (or --all)"
        )
    return 0


LIVE_SECONDS = 30 * 60  # a session active this recently may still be working


def live_others(sessions: list[dict[str, Any]], current: str | None) -> list[dict[str, Any]]:
    """Agent sessions other than `current` that are still live: a turn open, or active within
    `LIVE_SECONDS`."""
    import time
    from datetime import datetime

    now = time.time()
    found = []
    for s in sessions:
        if s["kind"] != "agent" or s["id"] == current:
            continue
        last = s.get("last_activity_at")
        try:
            recent = (
                last is not None
                and now - datetime.fromisoformat(last.replace("Z", "+00:00")).timestamp()
                < LIVE_SECONDS
            )
        except ValueError:
            recent = False
        open_turn = any(t.get("ended_at") is None for t in s["turns"])
        if recent or open_turn:
            found.append(s)
    return found


def register(add: Add) -> None:
    p = add("turns", cmd_turns, "List recorded turns (newest session by default).")
    p.add_argument(
        "--session",
        help="only this session (its id or the start of it; default: the latest agent session)",
    )
    p.add_argument(
        "--all", action="store_true", help="every session, including your saves and restore points"
    )
    p.add_argument(
        "--limit",
        type=_limit,
        default=TURNS_PAGE,
        metavar="N",
        help=f"the newest N turns of each session (default {TURNS_PAGE}; 0: every turn)",
    )
    p.add_argument("--json", action="store_true", help=JSON_HELP)


# `turns` shows a page: a session of ten thousand turns is read and printed in a blink.
TURNS_PAGE = 100


def _limit(text: str) -> int:
    import argparse

    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of turns: {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 (every turn) or more, got {value}")
    return value
