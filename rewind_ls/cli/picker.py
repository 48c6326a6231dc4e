"""Choosing a turn on a terminal: the entries (every turn of every session, newest first), the menu of
what to do with one, and the numbered prompt used where a full-screen picker cannot run (TERM=dumb).
The full-screen picker itself is `picker_screen` (prompt_toolkit, imported only when it runs)."""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Callable

from rewind_ls.cli.picker_rows import (
    AGENT,
    Action,
    Entry,
    actions_for,
    row_columns,
)
from rewind_ls.cli.style import (
    CHANGE_MARKS,
    DIM,
    clip,
    colour_enabled,
    paint,
    safe,
)
from rewind_ls.core.errors import RewindError
from rewind_ls.core.model import Scope
from rewind_ls.core.store import Store


def load_entries(store: Store) -> tuple[list[Entry], str]:
    """Every turn (applied restore points included), newest first, and a line saying what state the
    workspace is in now (after which turn, or rewound by which restore)."""
    from rewind_ls.core.history.timeline import list_sessions

    listing = list_sessions(store)
    by_id = {t["id"]: (t, s) for s in listing["sessions"] for t in s["turns"]}
    tags: dict[str, int] = {}
    entries: list[Entry] = []
    for row in reversed(store.turns()):
        found = by_id.get(row.id)
        if found is None:
            continue  # a restore point that was never applied
        turn, session = found
        tag = tags.setdefault(session["id"], len(tags))
        entries.append(
            Entry(
                turn_id=turn["id"],
                number=turn["number"],
                session_id=session["id"],
                session_kind=session["kind"],
                agent=session["agent"],
                prompt=turn["prompt"],
                started_at=row.started_at,
                files=[
                    (CHANGE_MARKS.get(f["change"], "?"), safe(f["path"])) for f in turn["files"]
                ],
                can_fork=session["kind"] == AGENT and bool(session["transcript_path"]),
                session_tag=tag,
            )
        )
    if not entries:
        state = "no turns recorded yet"
    elif entries[0].is_restore:
        state = f"now: {entries[0].title}; undo: rewind-ls undo"
    else:
        state = f"now: after turn {entries[0].number} of {entries[0].who}"
    return entries, state


def numbered_pick(
    entries: list[Entry], state: str, with_menu: bool, stream_in: Callable[[str], str] = input
) -> tuple[Entry, Action | None] | None:
    """The picker as numbered prompts (TERM=dumb, or no full-screen terminal): returns the entry and,
    when asked for, the chosen action; None when cancelled. A non-number answer filters the list."""
    on = colour_enabled()
    # $COLUMNS, else the terminal's own size (a dumb terminal still has one), else 80.
    width = min(100, max(40, shutil.get_terminal_size((80, 24)).columns))
    query = ""
    while True:
        matching = [e for e in entries if query.lower() in e.search_text()]
        shown = matching[:20]
        print(state)
        if query:
            print(f"turns matching {query!r}:")
        for i, e in enumerate(shown, 1):
            text = "".join(t for _, t in row_columns(e, width - 5)).rstrip()
            print(f"{i:>3}) {text}")
        if not shown:
            print("  (no turn matches)")
        elif len(matching) > len(shown):
            print(f"  ({len(matching) - len(shown)} older not shown: type text to filter)")
        answer = stream_in("turn [number, text to filter, Enter to cancel]: ").strip()
        if not answer:
            return None
        if answer.isdigit() and 1 <= int(answer) <= len(shown):
            entry = shown[int(answer) - 1]
            break
        query = "" if answer == "*" else answer
    if not with_menu:
        return entry, None
    choices = actions_for(entry)
    print(paint(f"turn {entry.number} ({entry.who}): {clip(entry.title, 60)}", DIM, on))
    for i, a in enumerate(choices, 1):
        print(f"{i:>3}) {a.label}")
    answer = stream_in(f"action [1-{len(choices)}]: ").strip()
    if not answer.isdigit() or not 1 <= int(answer) <= len(choices):
        return None
    return entry, choices[int(answer) - 1]


def full_screen_possible() -> bool:
    term = os.environ.get("TERM", "")
    return sys.stdin.isatty() and sys.stdout.isatty() and term not in ("", "dumb", "unknown")


def pick(
    store: Store, with_menu: bool, title: str, only: Callable[[Entry], bool] | None = None
) -> tuple[Entry, Action | None] | None:
    """Ask for a turn (and with `with_menu` an action) on a terminal, full screen when possible."""
    entries, state = load_entries(store)
    if not entries:
        raise RewindError(
            "no turns recorded in this workspace yet to pick from "
            "(install an agent's hooks: rewind-ls install AGENT; `rewind-ls install` lists them)"
        )
    if only is not None:
        entries = [e for e in entries if only(e)]
    if not entries:
        raise RewindError(
            f"{title}: no recorded turn fits (`rewind-ls turns --all` lists them all)"
        )
    if full_screen_possible():
        from rewind_ls.cli.picker_screen import run_picker

        return run_picker(store, entries, state, with_menu, title)
    return numbered_pick(entries, state, with_menu)


class Cancelled(RewindError):
    exit_code = 1


# Which turns each command's picker offers: a revert or a diff needs a turn that changed files;
# a summary, or a rewind of the conversation, a turn of an agent whose conversation is known.
_OFFER: dict[str, Callable[[Entry], bool]] = {
    "rewind": lambda e: True,
    "revert": lambda e: bool(e.files) and not e.is_restore,
    "diff": lambda e: bool(e.files),
    "summarize": lambda e: e.can_fork,
    "export": lambda e: True,  # any checkpoint can be written out
}


def ask_turn(
    store: Store, command: str, interactive: bool = True, scope: Scope = Scope.CODE
) -> str:
    """The turn id for `command` when TURN was left out: picked on a terminal, otherwise an error
    naming the missing argument (what argparse would say, with what to do about it). `scope`:
    what a rewind restores (the conversation needs a turn that has one)."""
    if not (interactive and sys.stdin.isatty() and sys.stdout.isatty()):
        raise RewindError(
            f"{command}: TURN is missing (a turn number or id; `rewind-ls turns` lists them). "
            "Without it rewind-ls opens a picker, which needs a terminal."
        )
    offer = _OFFER["summarize"] if command == "rewind" and scope != Scope.CODE else _OFFER[command]
    chosen = pick(store, False, f"{command}: pick a turn", offer)
    if chosen is None:
        raise Cancelled("cancelled; nothing written")
    return chosen[0].turn_id


def ask_command(store: Store) -> list[str]:
    """`rewind-ls` alone on a terminal: a turn and what to do with it, as the command line to run."""
    chosen = pick(store, True, "pick a turn")
    if chosen is None or chosen[1] is None or not chosen[1].argv(chosen[0]):
        raise Cancelled("cancelled; nothing written")
    return chosen[1].argv(chosen[0])
