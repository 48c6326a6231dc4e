"""What every command module shares: the workspace and store of a command, its TURN argument,
JSON output, the help texts several commands use, and `Add` (how a module registers its
subcommand)."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable
from typing import Any, Protocol

from rewind_ls.cli.style import safe
from rewind_ls.core.errors import EXIT_CODES, RewindError
from rewind_ls.core.store import Store

EPILOG = (
    """\
TURN is a turn number in the current (latest) agent session, or a turn id (see `rewind-ls turns`).
Without a COMMAND, or without TURN, on a terminal: a picker of every turn (type to filter).
The store lives in $REWIND_LS_HOME (default ~/.local/share/rewind-ls), never in the workspace.
Exit codes: """
    + ", ".join(f"{code} {word}" for code, (word, _) in EXIT_CODES.items())
    + "."
)

WORKSPACE_HELP = "workspace folder (default: the current folder's git top level, or the folder)"
SESSION_HELP = (
    "session of a TURN given as a number: its id or the start of it (default: the latest agent "
    "session)"
)
JSON_HELP = "machine-readable output (JSON on stdout; never asks)"
TURN_HELP = "turn number or id (default: pick one on a terminal)"

Command = Callable[[argparse.Namespace], int]


class Add(Protocol):
    """`add(name, func, help)`: a subcommand with the common options (-C) and the shared epilog;
    `workspace=False` for a command whose workspace comes from elsewhere (the hook's payload, the
    editor, a temporary folder), so its help offers no -C it would ignore."""

    def __call__(
        self, name: str, func: Command, help: str, workspace: bool = True
    ) -> argparse.ArgumentParser: ...


def workspace_parent() -> argparse.ArgumentParser:
    """The options every subcommand takes (a parent parser)."""
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("-C", "--workspace", metavar="DIR", help=WORKSPACE_HELP)
    return common


def workspace(args: argparse.Namespace) -> str:
    """The workspace a command works on; never the filesystem root (a store for `/` would record
    the whole machine, and every agent session anywhere would share it)."""
    from rewind_ls.core.fs.paths import find_workspace_root

    start = args.workspace or getattr(args, "top_workspace", None) or os.getcwd()
    if not os.path.isdir(start):
        gone = _recorded_but_gone(start)
        if gone is None:
            raise RewindError(f"{start}: workspace folder not found")
        return gone
    root = find_workspace_root(start)
    if os.path.dirname(root) == root:
        raise RewindError(
            f"{root}: the filesystem root is not a workspace; run rewind-ls in your project "
            "folder, or name it with -C DIR"
        )
    return root


def _recorded_but_gone(start: str) -> str | None:
    """A folder that no longer exists but has a store (a removed `git worktree`, Claude Code's
    `.claude/worktrees/NAME`): its history stays readable with `-C DIR` (turns, diff, log,
    export); a restore into it refuses, its files being outside any folder that exists."""
    from rewind_ls.core.store import has_store

    real = os.path.realpath(start)
    return real if has_store(real) else None


def open_store(args: argparse.Namespace, create: bool = False, collect: bool = True) -> Store:
    """The workspace's store, after finishing any interrupted restore; `collect`: run the
    retention pass when it is due (not for `gc` itself)."""
    from rewind_ls.core.restore.recovery import recover
    from rewind_ls.core.store import gc

    store = Store.open(workspace(args), create=create)
    rolled = recover(store)
    if collect:
        gc.maybe_run(store)
    for line in rolled:
        print(f"rewind-ls: recovered an interrupted {line}", file=sys.stderr)
    return store


def print_json(data: Any) -> None:
    print(json.dumps(data, indent=2, ensure_ascii=False))


def turn_arg(store: Store, args: argparse.Namespace) -> Any:
    """The TURN argument resolved; when it was left out, asked for with the picker on a terminal,
    an error naming it otherwise."""
    from rewind_ls.core.restore.plan import resolve_turn

    if args.turn is None:
        from rewind_ls.cli.picker import ask_turn
        from rewind_ls.core.model import Scope

        scope = Scope(getattr(args, "scope", Scope.CODE))
        args.turn = ask_turn(store, args.command, interactive=not args.json, scope=scope)
    args.session = session_arg(store, args.session)
    return resolve_turn(store, args.turn, args.session)


def session_arg(store: Store, spec: str | None) -> str | None:
    """A --session value: a session id, or the start of one that only one session has (listings
    show the first 4 or 8 characters)."""
    if spec is None:
        return None
    ids = [s.id for s in store.sessions()]
    if spec in ids:
        return spec
    matches = [i for i in ids if spec and i.startswith(spec)]
    if len(matches) == 1:
        return matches[0]
    what = "matches several sessions" if matches else "no such session in this workspace"
    raise RewindError(f"--session {spec}: {what} (`rewind-ls turns --all` lists them)")


def short_id(session_id: str, ids: list[str], least: int = 8) -> str:
    """The shortest start of `session_id`, `least` characters at least, that no other of `ids`
    shares: what a hint can print for `--session`. Codex's ids are UUIDv7 (time first): two
    sessions a minute apart share their first 8 characters."""
    size = least
    while size < len(session_id) and any(
        other != session_id and other.startswith(session_id[:size]) for other in ids
    ):
        size += 1
    return session_id[:size]


def rel(store: Store, path: str) -> str:
    """A path given on the command line, relative to the workspace."""
    from rewind_ls.core.fs.paths import relative_path

    return relative_path(store.root, path, os.getcwd())


def unrecorded(store: Store) -> list[str]:
    from rewind_ls.core.capture.scan import unrecorded

    return unrecorded(store)


def print_unrecorded(gaps: list[str]) -> None:
    """Files rewind-ls could not record, by name: a rewind cannot bring their content back."""
    if gaps:
        print(f"not recorded ({len(gaps)}): a rewind cannot restore these")
        for gap in gaps[:20]:
            print(f"  {safe(gap)}")
