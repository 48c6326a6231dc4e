"""The command line: argument parsing, rendering, confirmation. Logic lives in the core."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable
from typing import Any

from rewind_ls import __version__
from rewind_ls.cli.style import safe as _safe
from rewind_ls.core.agents import AGENTS
from rewind_ls.core.errors import ConflictError, RewindError
from rewind_ls.core.model import Turn
from rewind_ls.core.store import DatabaseError, Store

EPILOG = """\
TURN is a turn number in the current (latest) agent session, or a turn id (see `rewind-ls turns`).
Without a COMMAND, or without TURN, on a terminal: a picker of every turn (type to filter).
The store lives in $REWIND_LS_HOME (default ~/.local/share/rewind-ls), never in the workspace.
Exit codes: 0 ok, 1 cancelled, 2 error, 3 conflict (nothing written)."""


def _workspace(args: argparse.Namespace) -> str:
    from rewind_ls.core.paths import find_workspace_root

    start = args.workspace or getattr(args, "top_workspace", None) or os.getcwd()
    if not os.path.isdir(start):
        raise RewindError(f"{start}: workspace folder not found")
    return find_workspace_root(start)


def _open(args: argparse.Namespace, create: bool = False) -> Store:
    from rewind_ls.core import gc
    from rewind_ls.core.apply_disk import recover

    store = Store.open(_workspace(args), create=create)
    rolled = recover(store)
    if args.func is not cmd_gc:
        gc.maybe_run(store)
    for line in rolled:
        print(f"rewind-ls: recovered an interrupted {line}", file=sys.stderr)
    return store


def _print_json(data: Any) -> None:
    print(json.dumps(data, indent=2, ensure_ascii=False))


# --- turns ------------------------------------------------------------------------------------


def cmd_turns(args: argparse.Namespace) -> int:
    from rewind_ls.core.timeline import list_sessions

    with _open(args) as store:
        listing = list_sessions(store, args.session)
        unrecorded = _unrecorded(store)
    if not args.all and args.session is None:
        current = listing["current_session_id"]
        listing["sessions"] = [s for s in listing["sessions"] if s["id"] == current]
    listing["unrecorded"] = unrecorded
    if args.json:
        from rewind_ls.server.protocol import TurnsOutput, wire

        _print_json(wire(TurnsOutput, listing))
        return 0
    _print_unrecorded(listing["unrecorded"])
    if not listing["sessions"]:
        print(
            "no agent turns recorded in this workspace yet (install the hooks: rewind-ls install claude-code)"
        )
        return 0
    from rewind_ls.cli.style import width
    from rewind_ls.cli.turns_view import session_lines

    cols = width()
    for session in listing["sessions"]:
        for line in session_lines(session, cols):
            print(line)
    return 0


def _unrecorded(store: Store) -> list[str]:
    from rewind_ls.core.scan import unrecorded

    return unrecorded(store)


def _print_unrecorded(gaps: list[str]) -> None:
    """Files rewind-ls could not record, by name: a rewind cannot bring their content back."""
    if gaps:
        print(f"not recorded ({len(gaps)}): a rewind cannot restore these")
        for gap in gaps[:20]:
            print(f"  {_safe(gap)}")


# --- diff -------------------------------------------------------------------------------------


def cmd_diff(args: argparse.Namespace) -> int:
    from rewind_ls.cli.style import colour_diff, colour_enabled, page
    from rewind_ls.core.diff import checkpoint_diff, turn_diff
    from rewind_ls.core.plan import disk_reader

    with _open(args) as store:
        turn = _turn_arg(store, args)
        other, path = _diff_operands(store, args)
        rel = _rel(store, path) if path else None
        if other is not None or args.current:
            diffs = checkpoint_diff(store, turn, other, disk_reader(store.root), rel)
            what = f"checkpoint {turn.number} and " + (
                f"checkpoint {other.number}" if other is not None else "the files now"
            )
        else:
            diffs = turn_diff(store, turn, rel)
            what = f"turn {turn.number}"
        if rel is not None and not diffs and not _recorded(store, rel):
            raise RewindError(f"{path}: rewind-ls has no record of this path in this workspace")
        if rel is not None and not diffs and other is None and not args.current:
            changed = ", ".join(sorted({c.path for c in store.changes(turn.id)})) or "no file"
            raise RewindError(f"turn {turn.number} did not change {path} (it changed {changed})")
    if args.json:
        payload: dict[str, Any] = {"turnId": turn.id, "number": turn.number, "files": diffs}
        if other is not None or args.current:
            payload["to"] = other.id if other is not None else "current"
        from rewind_ls.server.protocol import DiffOutput, wire

        _print_json(wire(DiffOutput, payload))
        return 0
    if not diffs:
        print(f"no difference: {what}" + (f", {path}" if path else ""))
        return 0
    page(colour_diff("".join(d["diff"] for d in diffs), colour_enabled()))
    return 0


def _diff_operands(store: Store, args: argparse.Namespace) -> tuple[Turn | None, str | None]:
    """`diff TURN [TURN_B] [PATH]`: the second operand is a turn when it is a number or a turn id
    (write ./3 for a file named 3), a path otherwise."""
    from rewind_ls.core.plan import resolve_turn

    rest = list(args.rest or [])
    if len(rest) > 2:
        raise RewindError(f"diff: too many operands {rest[2:]} (diff TURN [TURN_B] [PATH])")
    other = None
    if rest and (len(rest) == 2 or rest[0].isdigit() or store.turn(rest[0]) is not None):
        other = resolve_turn(store, rest.pop(0), args.session)
    if other is not None and args.current:
        raise RewindError("diff: give a second TURN or --current, not both")
    return other, (rest[0] if rest else None)


def _recorded(store: Store, rel: str) -> bool:
    return store.known(rel) is not None or bool(store.path_history(rel))


def _turn_arg(store: Store, args: argparse.Namespace) -> Turn:
    """The TURN argument resolved; when it was left out, asked for with the picker on a terminal,
    an error naming it otherwise."""
    from rewind_ls.core.plan import resolve_turn

    if args.turn is None:
        from rewind_ls.cli.picker import ask_turn

        args.turn = ask_turn(store, args.command, interactive=not args.json)
    return resolve_turn(store, args.turn, args.session)


def _rel(store: Store, path: str) -> str:
    from rewind_ls.core.paths import relative_path

    return relative_path(store.root, path, os.getcwd())


def cmd_log(args: argparse.Namespace) -> int:
    from rewind_ls.cli.log_cmd import run_log

    with _open(args) as store:
        return run_log(store, _rel(store, args.path), args.path, args)


def cmd_pick(args: argparse.Namespace) -> int:
    """`rewind-ls` alone: on a terminal, pick a turn and what to do with it, then run that."""
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        build_parser().print_usage(sys.stderr)
        raise RewindError(
            "a COMMAND is needed (the turn picker needs a terminal); see rewind-ls --help"
        )
    from rewind_ls.cli.picker import ask_command

    with _open(args) as store:
        argv = ask_command(store)
    where = args.workspace or args.top_workspace
    return run_cli([*argv, *(["-C", where] if where else [])])


# --- restores ---------------------------------------------------------------------------------


def _render_plan(plan: Any, out: Callable[[str], None]) -> None:
    from rewind_ls.cli.style import ACTION_COLOURS, RED, colour_enabled, paint

    on = colour_enabled()
    for pp in plan.paths:
        if not pp.will_write and pp.conflict is None:
            continue
        stat = "binary" if pp.binary else f"+{pp.added} -{pp.removed}"
        action = paint(f"{pp.action:9}", ACTION_COLOURS.get(pp.action, ""), on)
        line = f"  {action} {_safe(pp.path)}  {stat}"
        if pp.conflict is not None:
            text = f"conflict ({pp.conflict.kind}): {_safe(pp.conflict.message)}"
            line += "\n            " + paint(text, RED, on)
            for hunk in pp.conflict.hunks[:3]:
                line += f"\n              base lines {hunk['base_start'] + 1}-{hunk['base_end']}"
        out(line)


def _plan_json(plan: Any) -> list[dict[str, object]]:
    from rewind_ls.core.plan import describe

    return [describe(pp) for pp in plan.shown()]


def _confirm(plan: Any, args: argparse.Namespace) -> tuple[bool, bool, bool]:
    """(proceed, force, skip_conflicts) after asking on a terminal."""
    force, skip = args.force, args.skip_conflicts
    if args.yes or args.json or not sys.stdin.isatty():
        return True, force, skip
    blocking = [p for p in plan.conflicts if not (force and p.conflict.forcible)]
    if blocking and not skip:
        answer = input(f"{len(blocking)} conflict(s). [s]kip them / [f]orce overwrite / [c]ancel? ")
        choice = answer.strip().lower()[:1]
        if choice == "s":
            return True, force, True
        if choice == "f":
            return True, True, skip
        return False, force, skip
    answer = input(f"Restore {len(plan.changes())} file(s)? [y/N] ")
    return answer.strip().lower() in ("y", "yes"), force, skip


def _restore(args: argparse.Namespace, mode: str) -> int:
    from rewind_ls.core.apply_disk import apply_to_disk
    from rewind_ls.core.plan import disk_reader, plan_revert, plan_rewind, plan_undo, restrict

    scope = getattr(args, "scope", "code")
    with _open(args) as store:
        reader = disk_reader(store.root)
        if mode == "undo":
            plan = plan_undo(store, reader)
            turn = plan.turn
        else:
            turn = _turn_arg(store, args)
            label = (
                f"{mode} to turn {turn.number} ({scope})"
                if mode == "rewind"
                else f"revert turn {turn.number}"
            )
            paths = [_rel(store, p) for p in args.path] if getattr(args, "path", None) else None
            if mode == "rewind":
                plan = plan_rewind(store, turn, reader, paths, label=label)
            else:
                plan = plan_revert(store, turn, reader, label=label)
                if paths is not None:
                    plan = restrict(plan, paths)
        code_scope = scope in ("code", "both")
        result: dict[str, Any] = {
            "mode": mode,
            "turnId": turn.id,
            "number": turn.number,
            "scope": scope,
        }
        lines: list[str] = []
        if code_scope:
            result["files"] = _plan_json(plan)
            result["notes"] = plan.notes
            result["unrecorded"] = _unrecorded(store)
            if not args.json:
                _print_unrecorded(result["unrecorded"])
                header = (
                    "undo"
                    if mode == "undo"
                    else f"{mode} turn {turn.number}: {_safe(turn.prompt[:60])}"
                )
                print(f"{header}")
                for note in plan.notes:
                    print(f"  note: {note}")
                _render_plan(plan, print)
                if not plan.changes() and not plan.conflicts:
                    print("  nothing to restore: every path already matches")
        if args.dry_run:
            result["status"] = "planned"
            if args.json:
                from rewind_ls.server.protocol import RestoreOutput, wire

                _print_json(wire(RestoreOutput, result))
            return 3 if plan.conflicts and code_scope else 0
        proceed, force, skip = (
            _confirm(plan, args)
            if code_scope and plan.changes()
            else (True, args.force, args.skip_conflicts)
        )
        if not proceed:
            print("cancelled; nothing written")
            return 1
        fork = None
        if scope in ("conversation", "both") and mode == "rewind":
            from rewind_ls.core.apply_disk import select
            from rewind_ls.core.conversation import fork_turn

            if code_scope:
                select(plan, force, skip)  # conflicts refuse before the conversation is forked
            try:
                # Forked first: a fork that fails leaves the code untouched (both or nothing).
                fork = fork_turn(store, turn)
            except RewindError as exc:
                if not code_scope:
                    raise
                raise RewindError(f"{exc}; code not restored either (--scope both)") from exc
        if code_scope:
            try:
                outcome = apply_to_disk(store, plan, force=force, skip_conflicts=skip)
            except RewindError as exc:
                if fork is None:
                    raise
                _drop_fork(fork.path)
                raise type(exc)(
                    *_with_note(exc, "; the conversation fork was removed (--scope both)")
                ) from exc
            result.update(
                status=outcome.status, message=outcome.message, restorePointId=outcome.point
            )
            lines.append(outcome.message + (" (undo: rewind-ls undo)" if outcome.point else ""))
        if fork is not None:
            result["conversation"] = {
                "sessionId": fork.session_id,
                "transcriptPath": fork.path,
                "resumeCommand": fork.resume_command,
                "prompt": fork.prompt,
            }
            result.setdefault("status", "applied")
            lines.append(f"conversation forked before turn {turn.number}: {fork.resume_command}")
            lines.append("the turn's prompt, to edit and send again:")
            lines.append("  " + fork.prompt.replace("\n", "\n  "))
    if args.json:
        from rewind_ls.server.protocol import RestoreOutput, wire

        _print_json(wire(RestoreOutput, result))
    else:
        for line in lines:
            print(line)
    return 0


def _drop_fork(path: str) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


def _with_note(exc: RewindError, note: str) -> tuple[Any, ...]:
    """The arguments to re-raise `exc` (a RewindError or ConflictError) with `note` appended."""
    if isinstance(exc, ConflictError):
        return (f"{exc}{note}", exc.paths)
    return (f"{exc}{note}",)


def cmd_rewind(args: argparse.Namespace) -> int:
    return _restore(args, "rewind")


def cmd_revert(args: argparse.Namespace) -> int:
    return _restore(args, "revert")


def cmd_undo(args: argparse.Namespace) -> int:
    return _restore(args, "undo")


# --- maintenance ------------------------------------------------------------------------------


def cmd_gc(args: argparse.Namespace) -> int:
    from rewind_ls.core import gc

    kw: dict[str, Any] = {}
    if args.retention_days is not None:
        kw["retention_days"] = args.retention_days
    if args.max_bytes is not None:
        kw["max_bytes"] = args.max_bytes
    with _open(args) as store:
        result = gc.run(store, dry_run=args.dry_run, **kw)
    if args.json:
        from rewind_ls.server.protocol import GcOutput, wire

        _print_json(wire(GcOutput, result))
    else:
        verb = "would drop" if args.dry_run else "dropped"
        print(
            f"{verb} {result['turns_dropped']} turn(s), {result['blobs_dropped']} stored content(s); "
            f"store {result['bytes_before']} -> {result['bytes_after']} bytes"
        )
    return 0


def cmd_scan(args: argparse.Namespace) -> int:
    from rewind_ls.core.capture import Recorder
    from rewind_ls.core.hook_steps import progress_printer

    with _open(args, create=True) as store:
        rec = Recorder(store)
        rec.baseline_budget = None  # asked for explicitly: finish the baseline, however long
        rec.progress = None if args.json else progress_printer()
        turn = rec.attribute_outside_changes()
        result = rec.last_scan
        if result is None:
            raise RewindError("workspace scans are turned off (REWIND_LS_SCAN=0)")
        info = {
            "files": result.files,
            "read": result.read,
            "baselineAdded": result.adopted,
            "baselineComplete": result.baseline_complete,
            "changes": [c[0] for c in result.changes],
            "turnId": turn,
            "deferred": result.deferred,
            "skipped": result.skipped,
            "seconds": round(result.elapsed, 3),
        }
    if args.json:
        from rewind_ls.server.protocol import ScanOutput, wire

        _print_json(wire(ScanOutput, info))
        return 0
    print(
        f"scanned {result.files} file(s) in {result.elapsed:.1f} s: {result.adopted} added to the "
        f"baseline, {len(result.changes)} changed outside agent turns"
        + (f" (recorded in turn {turn})" if turn else "")
    )
    for line in result.skipped[:20]:
        print(f"  skipped {_safe(line)}")
    return 0


def cmd_doctor(args: argparse.Namespace) -> int:
    from rewind_ls.core.doctor import diagnose

    report = diagnose(_workspace(args), repair=args.repair, moved_from=args.moved_from)
    if args.json:
        from rewind_ls.server.protocol import DoctorOutput, wire

        _print_json(wire(DoctorOutput, report))
    else:
        for check in report["checks"]:
            print(f"{'ok  ' if check['ok'] else 'FAIL'} {check['name']}: {_safe(check['detail'])}")
    return 0 if report["ok"] else 2


def cmd_install(args: argparse.Namespace) -> int:
    from rewind_ls.core.agents import agent
    from rewind_ls.core.claude_settings import default_command, install

    who = agent(args.agent)
    path = who.settings_path(_workspace(args), args.user)
    command = args.command or default_command(who.name)
    changed = install(path, command, args.uninstall, who.name, who.events)
    if not changed:
        print(f"{path}: already {'clean' if args.uninstall else 'installed'}, nothing changed")
    else:
        print(f"{path}: " + ", ".join(changed))
        if who.after_install and not args.uninstall:
            print(who.after_install)
    return 0


def cmd_hook(args: argparse.Namespace) -> int:
    from rewind_ls.core.hook_process import run

    return run(args.agent)


def cmd_serve(args: argparse.Namespace) -> int:
    from rewind_ls.server.main import serve

    return serve(tcp=args.tcp, log_level=args.log_level, log_file=args.log_file)


def cmd_record(args: argparse.Namespace) -> int:
    from rewind_ls.core.capture import Recorder

    with _open(args, create=True) as store:
        rec = Recorder(store)
        if args.action == "begin-turn":
            turn = rec.begin_turn(args.session, args.prompt or "", "agent", args.agent)
        elif args.action == "end-turn":
            turn = rec.end_turn(args.session) or ""
        else:
            store.ensure_session(args.session, "agent", args.agent)
            turn = ""
            for p in args.paths:
                rel = _rel(store, p)
                turn = (rec.before if args.phase == "before" else rec.after)(
                    args.session, rel, "record", args.agent
                )
        if args.json:
            _print_json({"turnId": turn})
        elif turn:
            print(turn)
    return 0


def cmd_demo(args: argparse.Namespace) -> int:
    from rewind_ls.cli.demo import run_demo

    return run_demo(keep=args.keep)


# --- parser -----------------------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="rewind-ls",
        description="Checkpoints and rewind for AI coding agents: restore code, conversation or both "
        "to the start of any turn, revert one turn, undo any rewind.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"rewind-ls {__version__}")
    workspace_help = "workspace folder (default: the current folder's git top level, or the folder)"
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("-C", "--workspace", metavar="DIR", help=workspace_help)
    # No COMMAND: the turn picker (on a terminal). -C before the command has its own dest: a
    # subcommand's default would overwrite it.
    parser.add_argument(
        "-C", "--workspace", dest="top_workspace", metavar="DIR", help=workspace_help
    )
    parser.set_defaults(func=cmd_pick, workspace=None, command=None, json=False)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    def add(
        name: str, func: Callable[[argparse.Namespace], int], help: str
    ) -> argparse.ArgumentParser:
        p = sub.add_parser(
            name,
            parents=[common],
            help=help,
            description=help,
            epilog=EPILOG,
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        p.set_defaults(func=func)
        return p

    session_help = "session of a TURN given as a number (default: the latest agent session)"
    json_help = "machine-readable output (JSON on stdout; never asks)"
    turn_help = "turn number or id (default: pick one on a terminal)"

    p = add("turns", cmd_turns, "List recorded turns (newest session by default).")
    p.add_argument("--session", help="only this session id (default: the latest agent session)")
    p.add_argument(
        "--all", action="store_true", help="every session, including your saves and restore points"
    )
    p.add_argument("--json", action="store_true", help=json_help)

    p = add(
        "diff",
        cmd_diff,
        "Show what TURN changed (before -> after); with TURN_B, the workspace at the start of TURN "
        "against the start of TURN_B; with --current, against the files now. A pager is used on a "
        "terminal ($PAGER, default less -R).",
    )
    p.add_argument("turn", metavar="TURN", nargs="?", help=turn_help)
    p.add_argument(
        "rest",
        metavar="[TURN_B] [PATH]",
        nargs="*",
        help="a second turn (a number or id) and/or one path (write ./3 for a file named 3)",
    )
    p.add_argument(
        "--current", action="store_true", help="compare the start of TURN with the files now"
    )
    p.add_argument("--session", help=session_help)
    p.add_argument("--json", action="store_true", help=json_help)

    p = add(
        "log",
        cmd_log,
        "Every recorded version of one file, newest first, across turns and sessions: turn, time, "
        "source (agent, your save, shell, outside, restore).",
    )
    p.add_argument("path", metavar="PATH", help="the file (relative to the current folder)")
    p.add_argument("--json", action="store_true", help=json_help)

    def restore_flags(p: argparse.ArgumentParser) -> None:
        p.add_argument("--dry-run", action="store_true", help="only show the preview")
        p.add_argument(
            "--force",
            action="store_true",
            help="overwrite paths changed behind rewind-ls' back (undoable)",
        )
        p.add_argument(
            "--skip-conflicts",
            action="store_true",
            help="restore the rest, leave conflicting paths alone",
        )
        p.add_argument("-y", "--yes", action="store_true", help="do not ask for confirmation")
        p.add_argument("--json", action="store_true", help=json_help)

    p = add("rewind", cmd_rewind, "Restore code, conversation or both to the start of TURN.")
    p.add_argument("turn", metavar="TURN", nargs="?", help=turn_help)
    p.add_argument(
        "--scope",
        choices=["code", "conversation", "both"],
        default="code",
        help="what to restore: the files, the agent's conversation (forked before TURN), or both "
        "(default: code)",
    )
    p.add_argument("--path", action="append", metavar="P", help="only this path (repeatable)")
    p.add_argument("--session", help=session_help)
    restore_flags(p)

    p = add(
        "revert",
        cmd_revert,
        "Undo only TURN's own changes by a three-way merge; later work survives.",
    )
    p.add_argument("turn", metavar="TURN", nargs="?", help=turn_help)
    p.add_argument(
        "--path", action="append", metavar="P", help="only this path of the turn (repeatable)"
    )
    p.add_argument("--session", help=session_help)
    restore_flags(p)

    p = add("undo", cmd_undo, "Undo the last rewind, revert or undo.")
    restore_flags(p)

    from rewind_ls.cli.summarize_cmd import register as register_summarize

    register_summarize(add, session_help, json_help, turn_help)

    p = add("gc", cmd_gc, "Drop old checkpoints (retention, size cap) and unused content.")
    p.add_argument(
        "--retention-days",
        type=int,
        metavar="N",
        help="drop turns older than N days (default: REWIND_LS_RETENTION_DAYS, else 30)",
    )
    p.add_argument(
        "--max-bytes",
        type=int,
        metavar="N",
        help="then drop the oldest turns until the store fits N bytes (default: REWIND_LS_MAX_STORE_BYTES, else 5 GiB)",
    )
    p.add_argument("--dry-run", action="store_true", help="only say what would be dropped")
    p.add_argument("--json", action="store_true", help=json_help)

    p = add(
        "scan",
        cmd_scan,
        "Record the workspace now: take its baseline (the first checkpoint) if it is not complete, "
        "and record changes made outside agent turns. Hooks do this at every turn boundary, with "
        "the baseline bounded by REWIND_LS_BASELINE_SECONDS.",
    )
    p.add_argument("--json", action="store_true", help=json_help)

    p = add(
        "doctor",
        cmd_doctor,
        "Check the store, its permissions and the hooks; --repair fixes what it can.",
    )
    p.add_argument(
        "--repair", action="store_true", help="fix what can be fixed (default: only check)"
    )
    p.add_argument(
        "--moved-from",
        metavar="OLD",
        help="re-attach the history recorded for folder OLD (this workspace before a move/rename)",
    )
    p.add_argument("--json", action="store_true", help=json_help)

    p = add("install", cmd_install, "Add rewind-ls' hooks to an agent's settings (idempotent).")
    p.add_argument("agent", choices=list(AGENTS), help="the agent whose hooks to set up")
    p.add_argument(
        "--user",
        action="store_true",
        help="the user's settings (~/.claude/settings.json, $CODEX_HOME/hooks.json) instead of the "
        "project's",
    )
    p.add_argument("--uninstall", action="store_true", help="remove only rewind-ls' hooks")
    p.add_argument("--command", help="hook command (default: this rewind-ls by absolute path)")

    p = add("hook", cmd_hook, "Record one agent hook payload read from stdin (used by the agent).")
    p.add_argument("agent", choices=list(AGENTS), help="the agent sending the payload")

    p = add("serve", cmd_serve, "Run the language server on stdio.")
    p.add_argument("--tcp", metavar="HOST:PORT", help="listen on TCP instead (debugging)")
    p.add_argument(
        "--log-level",
        default="info",
        choices=["debug", "info", "warning", "error"],
        help="server log detail (default: info)",
    )
    p.add_argument("--log-file", help="default: <store home>/server.log")

    p = add("record", cmd_record, "Record turns for an agent that is not Claude Code.")
    actions = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    for name, text in (
        ("begin-turn", "open a turn (the user's prompt) in SESSION"),
        ("edit", "record PATHs before or after the agent changes them"),
        ("end-turn", "close SESSION's turn (changed files are re-checked)"),
    ):
        a = actions.add_parser(name, parents=[common], help=text, description=text)
        a.add_argument("--session", required=True, help="the agent's session id")
        a.add_argument(
            "--agent", default="other", help="agent name shown in listings (default: other)"
        )
        a.add_argument("--json", action="store_true", help=json_help)
        if name == "begin-turn":
            a.add_argument("--prompt", default="", help="the user's prompt (default: empty)")
        if name == "edit":
            a.add_argument("paths", nargs="+", metavar="PATH", help="files the agent edits")
            a.add_argument(
                "--phase",
                choices=["before", "after"],
                default="before",
                help="before or after the agent's change (default: before)",
            )

    from rewind_ls.cli.import_cmd import register as register_import

    register_import(add, json_help)

    p = add(
        "demo", cmd_demo, "Record a scripted agent session in a temporary workspace and rewind it."
    )
    p.add_argument("--keep", action="store_true", help="keep the temporary workspace and store")
    return parser


def _store_db(args: argparse.Namespace) -> str:
    from rewind_ls.core.store import DB_NAME, store_dir_for

    try:
        return os.path.join(store_dir_for(_workspace(args)), DB_NAME)
    except RewindError:
        return "the store"


def run_cli(argv: list[str]) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        code: int = args.func(args)
        return code
    except ConflictError as exc:
        if getattr(args, "json", False):
            _print_json({"status": "conflict", "message": str(exc), "paths": exc.paths})
        else:
            print(f"rewind-ls: {exc}", file=sys.stderr)
        return exc.exit_code
    except RewindError as exc:
        if getattr(args, "json", False):
            _print_json({"status": "error", "message": str(exc)})
        print(f"rewind-ls: {exc}", file=sys.stderr)
        return exc.exit_code
    except DatabaseError as exc:
        # Damage or a full disk met after opening: the same message as at opening, with its step.
        from rewind_ls.core.store import store_error

        error = store_error(exc, _store_db(args))
        if getattr(args, "json", False):
            _print_json({"status": "error", "message": str(error)})
        print(f"rewind-ls: {error}", file=sys.stderr)
        return error.exit_code
    except KeyboardInterrupt:
        print("rewind-ls: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
