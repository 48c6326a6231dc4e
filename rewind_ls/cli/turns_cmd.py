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
    with open_store(args) as store:
        listing, others = _listing(store, args)
        listing["unrecorded"] = unrecorded(store)
        from rewind_ls.core.capture.baseline_spawn import progress

        first = progress(store.path)
        notices = [] if args.json else _overwritten(store)
        # Session hints print a prefix no other session shares (Codex's UUIDv7 ids share 8 chars).
        ids = [s.id for s in store.sessions()] if others or listing["sessions"] else []
    if args.json:
        from rewind_ls.protocol.cli_output import TurnsOutput, wire

        print_json(wire(TurnsOutput, listing))
        return 0
    print_unrecorded(listing["unrecorded"])
    for line in notices:
        print(line)
    if first is not None:
        done, total = first
        counted = f"{done} of {total} files" if total else "listing the files"
        print(
            f"first checkpoint of this workspace in progress ({counted}), in the background: "
            "a rewind keeps every file not recorded yet as it is"
        )
    if not listing["sessions"]:
        print(
            "no agent turns recorded in this workspace yet (install an agent's hooks: rewind-ls install AGENT; `rewind-ls install` lists them)"
        )
        return 0
    _print_sessions(listing["sessions"], others, ids)
    return 0


def _listing(store: Any, args: argparse.Namespace) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The sessions to list (the latest agent session's page by default, `--session`, `--all`)
    and the other agent sessions still live here."""
    from rewind_ls.core.history.timeline import list_sessions

    session = session_arg(store, args.session)
    if session is None and not args.all:
        from rewind_ls.core.restore.plan import current_session

        session = current_session(store)  # the latest agent session only: read only its page
    if session is None and not args.all:
        listing: dict[str, Any] = {"workspace": store.root, "current_session_id": None}
        listing["sessions"] = []
    else:
        listing = list_sessions(store, session, args.limit or None)
    others: list[dict[str, Any]] = []
    if not args.all and args.session is None:
        # Another agent working here too: its newest turn (a page of one) says if it is live.
        others = live_others(list_sessions(store, None, 1)["sessions"], session)
    return listing, others


def _overwritten(store: Any) -> list[str]:
    """Each of the person's versions something else overwrote since `turns` last said so
    (`core.history.overwritten`), said once."""
    from rewind_ls.core.history.overwritten import new_notices

    return [o.message() for o in new_notices(store, "cli")]


def _print_sessions(
    sessions: list[dict[str, Any]], others: list[dict[str, Any]], ids: list[str]
) -> None:
    from rewind_ls.cli.style import width
    from rewind_ls.cli.turns_view import session_lines

    cols = width()
    for session in sessions:
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
