"""`rewind-ls log PATH`: every recorded version of one file, across turns and sessions;
`rewind-ls show PATH --version HASH`: one of them, its bytes on stdout."""

from __future__ import annotations

import argparse
import json

from rewind_ls.cli.common import JSON_HELP, Add, open_store, rel
from rewind_ls.cli.style import (
    CHANGE_COLOURS,
    CHANGE_MARKS,
    DIM,
    clip,
    colour_enabled,
    paint,
    width,
)
from rewind_ls.core.errors import RewindError
from rewind_ls.core.store import Store


def where(entry: dict[str, object]) -> str:
    kind = entry["session_kind"]
    if kind is None:
        return "-"
    if kind == "agent":
        # "turn 3 claude 5b5e", as the picker names a session: room is left for the prompt.
        name = str(entry["agent"] or "agent").split("-")[0]
        return f"turn {entry['number']} {name} {str(entry['session_id'])[:4]}"
    if kind == "rewind":
        return f"restore point {entry['number']}"
    if kind == "editor":
        return f"saves {entry['number']}"
    return f"outside changes {entry['number']}"


def cmd_log(args: argparse.Namespace) -> int:
    with open_store(args) as store:
        return run_log(store, rel(store, args.path), args.path, args)


def run_log(store: Store, rel: str, shown: str, args: argparse.Namespace) -> int:
    from rewind_ls.core.history.versions import file_log

    versions = file_log(store, rel)
    if not versions and store.known(rel) is None:
        raise RewindError(f"{shown}: rewind-ls has no record of this path in this workspace")
    if args.json:
        from rewind_ls.protocol.cli_output import LogOutput, wire

        output = wire(LogOutput, {"path": rel, "versions": versions})
        print(json.dumps(output, indent=2, ensure_ascii=False))
        return 0
    if not versions:
        print(f"{shown}: one version, as first seen; no turn changed it")
        return 0
    on = colour_enabled()
    cols = width()
    for v in versions:
        mark = CHANGE_MARKS.get(str(v["change"]), " ")
        when = str(v["time"] or "").replace("T", " ").rstrip("Z")[:16]
        digest = str(v["hash"] or v["kind"] or "")[:10]
        head = f"{paint(mark, CHANGE_COLOURS.get(mark, ''), on)} {when:16}  {v['source']:10}  {digest:10}  "
        tail = where(v)
        if v["prompt"]:
            tail += f": {' '.join(str(v['prompt']).split())}"
        if cols:
            tail = clip(tail, max(10, cols - 44))
        print(head + (paint(tail, DIM, on) if v["session_kind"] is None else tail))
    return 0


def cmd_show(args: argparse.Namespace) -> int:
    import sys

    from rewind_ls.core.restore.version_plan import find_version

    with open_store(args) as store:
        found = find_version(store, rel(store, args.path), args.version)
        assert found.version.hash is not None
        data = store.get_blob(found.version.hash)
    sys.stdout.buffer.write(data)
    sys.stdout.buffer.flush()
    return 0


def register(add: Add) -> None:
    p = add(
        "log",
        cmd_log,
        "Every recorded version of one file, newest first, across turns and sessions: turn, time, "
        "source (agent, your save, shell, outside, restore).",
    )
    p.add_argument("path", metavar="PATH", help="the file (relative to the current folder)")
    p.add_argument("--json", action="store_true", help=JSON_HELP)

    p = add(
        "show",
        cmd_show,
        "Print one recorded version of a file (hashes from `rewind-ls log PATH --json`).",
    )
    p.add_argument("path", metavar="PATH", help="the file (relative to the current folder)")
    p.add_argument(
        "--version",
        required=True,
        metavar="HASH",
        help="the version's hash, or its first 4+ hex digits",
    )
