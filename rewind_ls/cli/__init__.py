"""`rewind-ls` entry point. `hook` is dispatched before argparse is even imported: it runs on every
agent edit, and Python start-up is most of its cost. Any other command line runs in this process,
the person's own: its namespaces, credentials, limits, signals and end of output are theirs
(docs/servers.md says why there is no command-line server)."""

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
    from rewind_ls.cli.app import run_cli

    return run_cli(args)
