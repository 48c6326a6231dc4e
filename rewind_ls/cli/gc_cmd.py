"""`rewind-ls gc`: drop old checkpoints (retention, size cap) and unused content."""

from __future__ import annotations

import argparse
from typing import Any

from rewind_ls.cli.common import JSON_HELP, Add, open_store, print_json


def cmd_gc(args: argparse.Namespace) -> int:
    from rewind_ls.core.store import gc

    kw: dict[str, Any] = {}
    if args.retention_days is not None:
        kw["retention_days"] = args.retention_days
    if args.max_bytes is not None:
        kw["max_bytes"] = args.max_bytes
    with open_store(args, collect=False) as store:
        result = gc.run(store, dry_run=args.dry_run, drop_points=args.yes, **kw)
    if args.json:
        from rewind_ls.protocol.cli_output import GcOutput, wire

        print_json(wire(GcOutput, result))
    else:
        verb = "would drop" if args.dry_run else "dropped"
        print(
            f"{verb} {result['turns_dropped']} turn(s) ({result['versions_dropped']} of your own "
            f"versions among them), {result['blobs_dropped']} stored content(s); "
            f"store {result['bytes_before']} -> {result['bytes_after']} bytes"
        )
    return 0


def register(add: Add) -> None:
    p = add("gc", cmd_gc, "Drop old checkpoints (retention, size cap) and unused content.")
    p.add_argument(
        "--retention-days",
        type=int,
        metavar="N",
        help="drop turns older than N days (default: REWIND_LS_RETENTION_DAYS, else 30)",
    )
    p.add_argument(
        "--max-bytes",
        type=int,
        metavar="N",
        help="then drop the oldest turns until the store fits N bytes (default: REWIND_LS_MAX_STORE_BYTES, else 5 GiB)",
    )
    p.add_argument("--dry-run", action="store_true", help="only say what would be dropped")
    p.add_argument(
        "--yes",
        action="store_true",
        help="also drop older restore points (what `undo` and a rewind to them bring back); "
        "the latest restore point is always kept",
    )
    p.add_argument("--json", action="store_true", help=JSON_HELP)
