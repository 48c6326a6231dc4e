"""`rewind-ls scan`: record the workspace now (its baseline, changes made outside agent turns)."""

from __future__ import annotations

import argparse

from rewind_ls.cli.common import JSON_HELP, Add, open_store, print_json
from rewind_ls.cli.style import safe
from rewind_ls.core.errors import RewindError


def cmd_scan(args: argparse.Namespace) -> int:
    from rewind_ls.core.agents.hook_steps import progress_printer
    from rewind_ls.core.capture.recorder import Recorder

    with open_store(args, create=True) as store:
        rec = Recorder(store)
        rec.baseline_budget = None  # asked for explicitly: finish the baseline, however long
        rec.progress = None if args.json else progress_printer()
        turn = rec.attribute_outside_changes()
        result = rec.last_scan
        if result is None:
            raise RewindError("workspace scans are turned off (REWIND_LS_SCAN=0)")
        info = {
            "files": result.files,
            "read": result.read,
            "baselineAdded": result.adopted,
            "baselineComplete": result.baseline_complete,
            "changes": [c[0] for c in result.changes],
            "turnId": turn,
            "deferred": result.deferred,
            "skipped": result.skipped,
            "seconds": round(result.elapsed, 3),
        }
    if args.json:
        from rewind_ls.protocol.cli_output import ScanOutput, wire

        print_json(wire(ScanOutput, info))
        return 0
    print(
        f"scanned {result.files} file(s) in {result.elapsed:.1f} s: {result.adopted} added to the "
        f"baseline, {len(result.changes)} changed outside agent turns"
        + (f" (recorded in turn {turn})" if turn else "")
    )
    for line in result.skipped[:20]:
        print(f"  skipped {safe(line)}")
    return 0


def register(add: Add) -> None:
    p = add(
        "scan",
        cmd_scan,
        "Record the workspace now: take its baseline (the first checkpoint) if it is not complete, "
        "and record changes made outside agent turns. Hooks do this at every turn boundary, with "
        "the baseline bounded by REWIND_LS_BASELINE_SECONDS.",
    )
    p.add_argument("--json", action="store_true", help=JSON_HELP)
