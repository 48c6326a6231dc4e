"""`rewind-ls export TURN --to DIR [--after]` and `rewind-ls export --git BRANCH [--session ID]`:
the workspace at a turn written to a new folder, or a session written as commits on a branch.
Neither touches the workspace (`core/history/export.py`, `core/history/git_export.py`)."""

from __future__ import annotations

import argparse

from rewind_ls.cli.common import (
    JSON_HELP,
    SESSION_HELP,
    TURN_HELP,
    Add,
    open_store,
    print_json,
    session_arg,
    turn_arg,
)
from rewind_ls.cli.style import safe
from rewind_ls.core.errors import RewindError
from rewind_ls.core.store import Store


def cmd_export(args: argparse.Namespace) -> int:
    if args.git is not None:
        if args.turn is not None or args.to is not None or args.after:
            raise RewindError(
                "export --git BRANCH exports a whole session: no TURN, --to or --after"
            )
        with open_store(args) as store:
            _refuse_while_first_checkpoint(store)
            return _export_git(store, args)
    if args.to is None:
        raise RewindError("export: name the folder (--to DIR) or a branch (--git BRANCH)")
    if args.force:
        raise RewindError("export --to: --force is for --git (DIR must be new or empty)")
    from rewind_ls.core.history.export import check_destination, export_snapshot
    from rewind_ls.core.history.snapshot import state_of_turn

    with open_store(args) as store:
        turn = turn_arg(store, args)
        check_destination(args.to, store.root)  # before any work: a typo fails at once
        _refuse_while_first_checkpoint(store)
        done = export_snapshot(store, state_of_turn(store, turn, args.after), args.to)
    side = "end" if args.after else "start"
    if args.json:
        from rewind_ls.protocol.cli_output import ExportOutput, wire

        payload = {
            "turn_id": turn.id,
            "number": turn.number,
            "side": side,
            "folder": done.folder,
            "files": done.written,
            "bytes": done.bytes,
            "unwritable": done.unwritable,
        }
        print_json(wire(ExportOutput, payload))
        return 0
    print(
        f"exported the workspace at the {side} of turn {turn.number} ({safe(turn.prompt[:60])}): "
        f"{done.written} file(s), {done.bytes} bytes, into {safe(done.folder)}"
    )
    _print_unwritable(done.unwritable)
    return 0


def _export_git(store: Store, args: argparse.Namespace) -> int:
    from rewind_ls.core.history.git_export import export_git
    from rewind_ls.core.restore.plan import current_session

    sid = session_arg(store, args.session) or current_session(store)
    session = store.session(sid) if sid is not None else None
    if session is None:
        raise RewindError("export --git: no agent session has been recorded in this workspace")
    done = export_git(store, session, args.git, force=args.force)
    if args.json:
        from rewind_ls.protocol.cli_output import GitExportOutput, wire

        print_json(wire(GitExportOutput, done._asdict()))
        return 0
    if done.previous == done.tip:
        how = "already up to date"
    elif done.previous is None:
        how = "created"
    elif done.fast_forward:
        how = f"fast-forwarded from {done.previous[:10]}"
    else:
        how = f"rewritten (the old tip {done.previous[:10]} stays in `git reflog {done.branch}`)"
    print(
        f"{safe(done.branch)}: {how}; {done.commits} commits (the start and turns "
        f"{_numbers(done.turns)} of session {session.id[:8]}), tip {done.tip[:10]}"
    )
    if done.running:
        print(f"not exported yet, still running: turn {_numbers(done.running)}")
    _print_unwritable(done.unwritable)
    print(f"see it: git log --stat {safe(done.branch)}")
    return 0


def _numbers(numbers: list[int]) -> str:
    if len(numbers) > 2 and numbers == list(range(numbers[0], numbers[-1] + 1)):
        return f"{numbers[0]}-{numbers[-1]}"
    return ", ".join(str(n) for n in numbers)


def _print_unwritable(paths: list[str]) -> None:
    if paths:
        print(f"not written ({len(paths)}): rewind-ls does not hold their content (size cap)")
        for path in paths[:20]:
            print(f"  {safe(path)}")


def _refuse_while_first_checkpoint(store: Store) -> None:
    """While the first checkpoint is being taken, files it has not read yet have no record: an
    export would leave them out without a word."""
    from rewind_ls.core.capture.baseline_spawn import progress

    running = progress(store.path)
    if running is not None:
        raise RewindError(
            f"the first checkpoint of {store.root} is still being taken ({running[0]} of "
            f"{running[1]} files): run the export again when it is done (`rewind-ls turns` says)"
        )


def register(add: Add) -> None:
    p = add(
        "export",
        cmd_export,
        "Write the workspace as it was at the start of TURN (--after: its end) into a new folder, "
        "or a whole session as commits on a git branch (--git); the workspace, HEAD, the index "
        "and your branches are never touched.",
    )
    p.add_argument("turn", nargs="?", metavar="TURN", help=TURN_HELP)
    p.add_argument("--to", metavar="DIR", help="the folder to write (new, or empty)")
    p.add_argument("--after", action="store_true", help="the end of TURN, not its start")
    p.add_argument(
        "--git",
        metavar="BRANCH",
        help="write the session as commits on BRANCH (made or fast-forwarded with git plumbing)",
    )
    p.add_argument("--session", metavar="ID", help=SESSION_HELP)
    p.add_argument(
        "--force",
        action="store_true",
        help="--git: replace a BRANCH that another export or you wrote (its old tip stays in the "
        "reflog)",
    )
    p.add_argument("--json", action="store_true", help=JSON_HELP)
