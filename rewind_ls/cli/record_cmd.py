"""`rewind-ls record begin-turn | edit | end-turn`: turns recorded by an agent without hooks of
its own (a script, another tool)."""

from __future__ import annotations

import argparse

from rewind_ls.cli.common import JSON_HELP, Add, open_store, print_json, rel, workspace_parent


def cmd_record(args: argparse.Namespace) -> int:
    from rewind_ls.core.capture.recorder import Recorder

    with open_store(args, create=True) as store:
        rec = Recorder(store)
        if args.action == "begin-turn":
            turn = rec.begin_turn(args.session, args.prompt or "", "agent", args.agent)
        elif args.action == "end-turn":
            turn = rec.end_turn(args.session) or ""
        else:
            store.ensure_session(args.session, "agent", args.agent)
            turn = ""
            for p in args.paths:
                turn = (rec.before if args.phase == "before" else rec.after)(
                    args.session, rel(store, p), "record", args.agent
                )
        if args.json:
            print_json({"turnId": turn})
        elif turn:
            print(turn)
    return 0


ACTIONS = (
    ("begin-turn", "open a turn (the user's prompt) in SESSION"),
    ("edit", "record PATHs before or after the agent changes them"),
    ("end-turn", "close SESSION's turn (changed files are re-checked)"),
)


def register(add: Add) -> None:
    p = add("record", cmd_record, "Record turns for an agent that is not Claude Code.")
    actions = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    common = workspace_parent()
    for name, text in ACTIONS:
        a = actions.add_parser(name, parents=[common], help=text, description=text)
        a.add_argument("--session", required=True, help="the agent's session id")
        a.add_argument(
            "--agent", default="other", help="agent name shown in listings (default: other)"
        )
        a.add_argument("--json", action="store_true", help=JSON_HELP)
        if name == "begin-turn":
            a.add_argument("--prompt", default="", help="the user's prompt (default: empty)")
        if name == "edit":
            a.add_argument("paths", nargs="+", metavar="PATH", help="files the agent edits")
            a.add_argument(
                "--phase",
                choices=["before", "after"],
                default="before",
                help="before or after the agent's change (default: before)",
            )
