"""The server assembled: a `RewindServer` with every handler of `handlers/` registered
(`lsp.install`), and `serve`, which `rewind-ls serve` runs (through `main.py`, imported lazily)."""

from __future__ import annotations

import logging
import os

from rewind_ls.core.errors import BadInput
from rewind_ls.server.handlers import documents, lifecycle, restore, review, turns
from rewind_ls.server.lsp import RewindServer, install

# Importing a handler module registers its handlers with `lsp`'s routes.
HANDLER_MODULES = (lifecycle, documents, turns, restore, review)


def build() -> RewindServer:
    server = RewindServer()
    install(server)
    return server


def serve(tcp: str | None = None, log_level: str = "info", log_file: str | None = None) -> int:
    from rewind_ls.core.fs import config

    server = build()  # before the log is set up, as when the server was made at import
    config.ensure_private_dir(config.home_dir())
    path = log_file or os.path.join(config.home_dir(), "server.log")
    # The log can hold source code (debug level logs every message): owner-only, like the store.
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600))
        os.chmod(path, 0o600)
    except OSError:
        pass
    level = getattr(logging, log_level.upper(), logging.INFO)
    logging.basicConfig(
        filename=path, level=level, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    if level > logging.DEBUG:
        # pygls logs every message it sends, whole, at INFO ("Sending data: ..."): a 40 KB turn
        # page written to the log on every refresh (6x the page's own time with 10k turns, and
        # source code in the log). Its warnings and errors still reach the log; debug keeps all.
        logging.getLogger("pygls").setLevel(logging.WARNING)
    if tcp:
        host, _, port = tcp.rpartition(":")
        try:
            server.start_tcp(host or "127.0.0.1", int(port))
        except OSError as exc:  # the address cannot be listened on (not this machine's, taken)
            raise BadInput(f"--tcp {tcp}: cannot listen there: {exc.strerror or exc}") from None
    else:
        server.start_io()
    return 0
