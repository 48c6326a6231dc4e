"""`rewind-ls` entry point. `hook` is dispatched before argparse is even imported: it runs on every
agent edit, and Python start-up is most of its cost. Any other command line goes to the per-user
command-line server when one answers (`server_client.py`: this process then imports nothing of the
store, argparse or the command), else runs here and starts one."""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if sys.platform in ("win32", "cygwin"):  # one line, not an ImportError on fcntl later
        from rewind_ls.core.fs.disk_sync import check_supported

        print(f"rewind-ls: {check_supported()}", file=sys.stderr)
        return 2
    if len(args) == 2 and args[0] == "hook" and not args[1].startswith("-"):
        from rewind_ls.core.agents.hook_process import run

        return run(args[1])
    start = False
    if argv is None:  # this process's own command line: the command-line server may run it
        from rewind_ls.cli import server_client

        if server_client.served(args):
            # Ends this process when the server ran the command; else it runs here.
            start = server_client.through_server(sys.argv) in ("absent", "stale")
    from rewind_ls.cli.app import run_cli

    try:
        return run_cli(args)
    finally:
        if start:  # after the command (its output is the person's first concern)
            sys.stdout.flush()
            server_client.start_server()
