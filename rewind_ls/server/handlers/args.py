"""Positional arguments of workspace/executeCommand commands (as code lenses send them)."""

from __future__ import annotations

from typing import Any

from pygls.exceptions import JsonRpcInvalidParams


def turn_arg(command: str, args: tuple[Any, ...], usage: str) -> str:
    """A turn id or number: "t…", "2" or 2."""
    if args and isinstance(args[0], (str, int)) and not isinstance(args[0], bool):
        return str(args[0])
    raise JsonRpcInvalidParams(f"{command}: arguments are {usage} (a turn number or id)")


def uri_arg(command: str, args: tuple[Any, ...], at: int, usage: str) -> str:
    if len(args) > at and isinstance(args[at], str) and args[at]:
        return str(args[at])
    raise JsonRpcInvalidParams(f"{command}: arguments are {usage} (the file's URI)")
