"""`rewind-ls serve`: the language server, on stdio (or TCP for debugging)."""

from __future__ import annotations

import argparse

from rewind_ls.cli.common import Add


def cmd_serve(args: argparse.Namespace) -> int:
    from rewind_ls.server.main import serve

    return serve(tcp=args.tcp, log_level=args.log_level, log_file=args.log_file)


def register(add: Add) -> None:
    p = add(
        "serve",
        cmd_serve,
        "Run the language server on stdio (the workspace folders come from the editor).",
        workspace=False,
    )
    p.add_argument("--tcp", metavar="HOST:PORT", help="listen on TCP instead (debugging)")
    p.add_argument(
        "--log-level",
        default="info",
        choices=["debug", "info", "warning", "error"],
        help="server log detail (default: info)",
    )
    p.add_argument(
        "--log-file", metavar="PATH", help="write the log here (default: <store home>/server.log)"
    )
