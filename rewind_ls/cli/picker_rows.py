"""A turn picker's rows: the entries, the menu of what to do with one, and how a row is laid out in
columns. Shared by the numbered prompt (`picker`) and the full-screen picker (`picker_screen`)."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from rewind_ls.cli.style import cells, clip, fit_items, pad, safe

AGENT, EDITOR, EXTERNAL, RESTORE = "agent", "editor", "external", "rewind"


@dataclass
class Entry:
    """One row of the picker: a turn of an agent session, your saves, outside changes or a restore."""

    turn_id: str
    number: int
    session_id: str
    session_kind: str
    agent: str | None
    prompt: str
    started_at: float
    files: list[tuple[str, str]] = field(default_factory=list)  # (A/M/D, path)
    can_fork: bool = False  # the conversation can be rewound (an agent transcript is known)
    session_tag: int = 0  # sessions in order of appearance: tells them apart (colour, label)

    @property
    def is_restore(self) -> bool:
        return self.session_kind == RESTORE

    @property
    def who(self) -> str:
        if self.session_kind == AGENT:
            # "claude 5b5e": the agent's first word and the session's first characters, so two
            # sessions of one agent differ in text, not only in colour.
            name = (self.agent or "agent").split("-")[0]
            return f"{name[:7]} {self.session_id[:4]}"
        return {EDITOR: "your saves", EXTERNAL: "outside", RESTORE: "restore"}.get(
            self.session_kind, self.session_kind
        )

    @property
    def title(self) -> str:
        return safe(" ".join(self.prompt.split())) or "(no prompt)"

    def search_text(self) -> str:
        return " ".join(
            [str(self.number), self.who, self.title, *(p for _, p in self.files)]
        ).lower()


@dataclass(frozen=True)
class Action:
    """One entry of the menu shown on Enter: the command line it runs, and when it applies."""

    label: str
    argv: Callable[[Entry], list[str]]
    available: Callable[[Entry], bool]


# Table-driven so a new feature is one row. Rows for features that do not exist are not listed.
ACTIONS: tuple[Action, ...] = (
    Action(
        "code and conversation",
        lambda e: ["rewind", e.turn_id, "--scope", "both"],
        lambda e: e.can_fork,
    ),
    Action("code", lambda e: ["rewind", e.turn_id, "--scope", "code"], lambda e: bool(e.files)),
    Action(
        "conversation",
        lambda e: ["rewind", e.turn_id, "--scope", "conversation"],
        lambda e: e.can_fork,
    ),
    Action(
        "summarize from here",
        lambda e: ["summarize", e.turn_id, "--from"],
        lambda e: e.can_fork,
    ),
    Action(
        "summarize up to here",
        lambda e: ["summarize", e.turn_id, "--up-to"],
        lambda e: e.can_fork,
    ),
    Action(
        "revert this turn",
        lambda e: ["revert", e.turn_id],
        lambda e: bool(e.files) and not e.is_restore,
    ),
    Action("show diff", lambda e: ["diff", e.turn_id], lambda e: bool(e.files)),
    Action("cancel", lambda e: [], lambda e: True),
)


def actions_for(entry: Entry) -> list[Action]:
    return [a for a in ACTIONS if a.available(entry)]


def ago(ts: float, now: float | None = None) -> str:
    seconds = max(0, int((now if now is not None else time.time()) - ts))
    if seconds < 60:
        return f"{seconds}s ago"
    if seconds < 3600:
        return f"{seconds // 60}m ago"
    if seconds < 86400:
        return f"{seconds // 3600}h ago"
    return f"{seconds // 86400}d ago"


def fit_files(files: list[tuple[str, str]], room: int) -> str:
    """As many whole `M path` items as fit in `room` columns, then `+N` for the rest."""
    return fit_items([f"{mark} {path}" for mark, path in files], room) or "-"


def row_columns(entry: Entry, width: int, now: float | None = None) -> list[tuple[str, str]]:
    """A row as (style, text) parts filling exactly `width` columns: number, age, who, prompt, files.
    The style names are picker_screen's classes; the numbered prompt ignores them."""
    mark = "↶" if entry.is_restore else " "
    head = f"{mark}{entry.number:>3} {ago(entry.started_at, now):>7}  "
    who = pad(clip(entry.who, 11), 11) + "  "
    rest = max(12, width - cells(head) - cells(who))
    files_room = max(8, rest * 2 // 5)
    prompt_room = max(4, rest - files_room - 2)
    files = pad(fit_files(entry.files, files_room), files_room)
    prompt = pad(clip(entry.title, prompt_room), prompt_room) + "  "
    return [
        ("head", head),
        (f"session{entry.session_tag % 6}", who),
        ("prompt", prompt),
        ("files", files),
    ]
