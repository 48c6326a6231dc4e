"""`rewind-ls serve`: the language server, on stdio (or TCP for debugging)."""

from __future__ import annotations

import argparse

from rewind_ls.cli.common import Add


def tcp_address(text: str) -> tuple[str, int]:
    """(host, port) of `--tcp HOST:PORT` (`:PORT` or `PORT` alone: 127.0.0.1); BadInput naming
    what is wrong, checked before anything starts."""
    import ipaddress

    from rewind_ls.core.errors import BadInput

    host, _, port_text = text.rpartition(":")
    host = host.strip("[]") or "127.0.0.1"
    if not port_text.isdigit() or not 0 < int(port_text) < 65536:
        raise BadInput(f"--tcp {text!r}: the port must be a number from 1 to 65535 (HOST:PORT)")
    try:
        ipaddress.ip_address(host)
    except ValueError:
        labels = host.split(".")
        if not all(lab and len(lab) < 64 and lab.replace("-", "").isalnum() for lab in labels) or (
            labels[-1].isdigit()
        ):
            raise BadInput(f"--tcp {text!r}: {host!r} is not an IP address or host name") from None
    return host, int(port_text)


def cmd_serve(args: argparse.Namespace) -> int:
    from rewind_ls.server.main import serve

    if args.tcp is not None:
        host, port = tcp_address(args.tcp)
        args.tcp = f"{host}:{port}"
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
