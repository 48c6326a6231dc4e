"""`rewind-ls serve`: imports the server only when asked, so the CLI stays quick to start.

`serve` for `rewind-ls serve`: imports the server (`app.py`) only when called, so the CLI stays
quick to start; the one server module the CLI imports.
"""

from __future__ import annotations


def serve(tcp: str | None = None, log_level: str = "info", log_file: str | None = None) -> int:
    from rewind_ls.server.app import serve as run

    return run(tcp=tcp, log_level=log_level, log_file=log_file)
