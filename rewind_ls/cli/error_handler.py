"""The one place where a command's errors become messages and exit codes: every error rewind-ls
reports is a `RewindError` (its `exit_code`: 2, 3 for a conflict); store damage met after opening
becomes one; an interrupt exits 130, a closed pipe 0."""

from __future__ import annotations

import argparse
import os
import sys

from rewind_ls.cli.common import Command, print_json, workspace
from rewind_ls.core.errors import ConflictError, RewindError
from rewind_ls.core.model import RestoreStatus
from rewind_ls.core.store import DatabaseError


def run(func: Command, args: argparse.Namespace) -> int:
    """Run one command; what it raises is reported (on stderr, or as JSON with --json)."""
    try:
        return func(args)
    except RewindError as exc:
        return report(exc, getattr(args, "json", False))
    except DatabaseError as exc:
        # Damage or a full disk met after opening: the same message as at opening, with its step.
        from rewind_ls.core.store import store_error

        return report(store_error(exc, _store_db(args)), getattr(args, "json", False))
    except KeyboardInterrupt:
        print("rewind-ls: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0


def report(exc: RewindError, as_json: bool) -> int:
    """Say what went wrong; the exit code of the error's kind. A conflict says how to go on from
    here (its `cli_hint`: the flags), which an editor's message never does."""
    text = str(exc) + (exc.cli_hint if isinstance(exc, ConflictError) else "")
    if isinstance(exc, ConflictError) and as_json:
        print_json({"status": RestoreStatus.CONFLICT, "message": text, "paths": exc.paths})
        return exc.exit_code
    if as_json:
        print_json({"status": "error", "message": text})
    from rewind_ls.cli.style import safe

    # Each line escaped: a path or argument in the message can hold control characters.
    print("rewind-ls: " + "\n".join(safe(line) for line in text.split("\n")), file=sys.stderr)
    return exc.exit_code


def _store_db(args: argparse.Namespace) -> str:
    from rewind_ls.core.store import DB_NAME, store_dir_for

    try:
        return os.path.join(store_dir_for(workspace(args)), DB_NAME)
    except RewindError:
        return "the store"
