"""`rewind-ls doctor [--repair] [--moved-from OLD]`: check (and repair) the store and the hooks."""

from __future__ import annotations

import argparse

from rewind_ls.cli.common import JSON_HELP, Add, print_json, workspace
from rewind_ls.cli.style import safe


def cmd_doctor(args: argparse.Namespace) -> int:
    from rewind_ls.core.agents.doctor import diagnose

    report = diagnose(workspace(args), repair=args.repair, moved_from=args.moved_from)
    if args.json:
        from rewind_ls.protocol.cli_output import DoctorOutput, wire

        print_json(wire(DoctorOutput, report))
    else:
        for check in report["checks"]:
            print(f"{'ok  ' if check['ok'] else 'FAIL'} {check['name']}: {safe(check['detail'])}")
    return 0 if report["ok"] else 2


def register(add: Add) -> None:
    p = add(
        "doctor",
        cmd_doctor,
        "Check the store, its permissions and the hooks; --repair fixes what it can.",
    )
    p.add_argument(
        "--repair", action="store_true", help="fix what can be fixed (default: only check)"
    )
    p.add_argument(
        "--moved-from",
        metavar="OLD",
        help="re-attach the history recorded for folder OLD (this workspace before a move/rename)",
    )
    p.add_argument("--json", action="store_true", help=JSON_HELP)
