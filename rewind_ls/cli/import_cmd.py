"""`rewind-ls import claude-code [TRANSCRIPT...]`: record past Claude Code sessions from their
transcripts (sessions run without hooks, or before `rewind-ls install`), so they can be rewound."""

from __future__ import annotations

import argparse
import os
from typing import Any

from rewind_ls.cli.common import JSON_HELP, Add, open_store, print_json, workspace


def cmd_import(args: argparse.Namespace) -> int:
    from rewind_ls.core.agents.claude.follower import workspace_transcripts
    from rewind_ls.core.agents.claude.recorder import import_transcripts
    from rewind_ls.core.agents.claude.transcript import check_transcript_path
    from rewind_ls.core.errors import BadInput

    root = workspace(args)
    if args.transcripts:
        files = [check_transcript_path(p) for p in args.transcripts]
    else:
        files = workspace_transcripts(root)
        if not files:
            raise BadInput(
                f"{root}: no Claude Code transcripts of this workspace under "
                f"{os.path.join('$CLAUDE_CONFIG_DIR', 'projects')}"
            )
    with open_store(args, create=True) as store:
        report = import_transcripts(store, files)
    if args.json:
        from rewind_ls.protocol.cli_output import ImportOutput, wire

        print_json(wire(ImportOutput, report))
        return 0
    for s in report["sessions"]:
        print(
            f"session {s['session_id']}: {s['turns']} turn(s), {s['changes']} change(s) "
            f"imported from {s['transcript']}"
        )
    if report["turns"] or report["changes"]:
        print(
            "imported turns are reconstructed from the transcript: edit-tool changes are exact; "
            "shell side effects of those turns may be missing (no workspace scan ran then)"
        )
    else:
        print("nothing new: every prompt and tool call was already recorded")
    for line in report["skipped"]:
        print(f"not imported: {line}")
    return 0


def register(add: Add) -> None:
    p: Any = add(
        "import",
        cmd_import,
        "Record past agent sessions from their transcripts (sessions run without rewind-ls' "
        "hooks); prompts and tool calls already recorded are not recorded again.",
    )
    p.add_argument("agent", choices=["claude-code"], help="the agent whose transcripts to read")
    p.add_argument(
        "transcripts",
        nargs="*",
        metavar="TRANSCRIPT",
        help="transcript files (default: every session of this workspace, from "
        "$CLAUDE_CONFIG_DIR/projects/<folder>/*.jsonl)",
    )
    p.add_argument("--json", action="store_true", help=JSON_HELP)
