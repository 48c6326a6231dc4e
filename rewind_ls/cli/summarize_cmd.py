"""`rewind-ls summarize TURN --from | --up-to`: a new session of the agent's conversation with
the part from TURN on (or before TURN) replaced by a summary; the files are left alone."""

from __future__ import annotations

import argparse

from rewind_ls.cli.common import (
    JSON_HELP,
    SESSION_HELP,
    TURN_HELP,
    Add,
    open_store,
    print_json,
    turn_arg,
)
from rewind_ls.core.conversation.fork import fork_fields
from rewind_ls.core.model import RestoreStatus


def cmd_summarize(args: argparse.Namespace) -> int:
    from rewind_ls.core.conversation.summarize import summarize_turn

    direction = "from" if args.from_turn else "upTo"
    with open_store(args) as store:
        turn = turn_arg(store, args)
        result = summarize_turn(store, turn, direction, args.instructions)
    if args.json:
        out = {
            "mode": "summarize",
            "direction": direction,
            "turnId": turn.id,
            "number": turn.number,
            "status": RestoreStatus.APPLIED,
            "conversation": fork_fields(result),
        }
        from rewind_ls.protocol.cli_output import SummarizeOutput, wire

        print_json(wire(SummarizeOutput, out))
        return 0
    what = "from" if direction == "from" else "up to"
    print(f"conversation summarized {what} turn {turn.number}: {result.resume_command}")
    if direction == "from":
        print("the turn's prompt, to edit and send again:")
        print("  " + result.prompt.replace("\n", "\n  "))
    return 0


def register(add: Add) -> None:
    p = add(
        "summarize",
        cmd_summarize,
        "Write a new session of the agent's conversation with TURN and after (--from) or "
        "everything before TURN (--up-to) replaced by a summary; prints the resume command. The "
        "original session and the files are left alone. Summarizer: REWIND_LS_SUMMARIZER (a shell "
        "command, conversation on stdin, summary on stdout), else `claude -p` with no tools; "
        "time limit REWIND_LS_SUMMARIZER_TIMEOUT (seconds, default 300).",
    )
    p.add_argument("turn", metavar="TURN", nargs="?", help=TURN_HELP)
    which = p.add_mutually_exclusive_group(required=True)
    which.add_argument(
        "--from",
        dest="from_turn",
        action="store_true",
        help="keep the conversation before TURN, summarize TURN and after",
    )
    which.add_argument(
        "--up-to",
        dest="up_to",
        action="store_true",
        help="summarize everything before TURN, keep TURN and after",
    )
    p.add_argument("--instructions", metavar="TEXT", help="what the summary should focus on")
    p.add_argument("--session", help=SESSION_HELP)
    p.add_argument("--json", action="store_true", help=JSON_HELP)
