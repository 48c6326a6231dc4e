"""Terminal presentation for the CLI: colour (NO_COLOR and non-terminals respected), the terminal's
width, fitting text to it without splitting words, and a pager for long output."""

from __future__ import annotations

import os
import shutil
import sys
import unicodedata
from typing import TextIO

RESET = "\x1b[0m"
BOLD = "\x1b[1m"
DIM = "\x1b[2m"
RED = "\x1b[31m"
GREEN = "\x1b[32m"
YELLOW = "\x1b[33m"
BLUE = "\x1b[34m"
MAGENTA = "\x1b[35m"
CYAN = "\x1b[36m"


def colour_enabled(stream: TextIO | None = None) -> bool:
    """Colour only on a terminal that can show it, and never when NO_COLOR is set (no-color.org)."""
    stream = stream or sys.stdout
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("TERM", "") == "dumb":
        return False
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def safe(text: str) -> str:
    """Paths and prompts can hold newlines or control characters: show them escaped."""
    if text.isprintable():  # most are: no walk character by character
        return text
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def paint(text: str, code: str, on: bool) -> str:
    return f"{code}{text}{RESET}" if on and text else text


def colour_diff(text: str, on: bool) -> str:
    """A unified diff with git's colours: headers bold, hunks cyan, removals red, additions green."""
    if not on:
        return text
    out = []
    for line in text.splitlines(keepends=True):
        body = line.rstrip("\n")
        end = line[len(body) :]
        if body.startswith("diff rewind-ls "):
            out.append(paint(body, BOLD + YELLOW, on) + end)
        elif body.startswith(("--- ", "+++ ")):
            out.append(paint(body, BOLD, on) + end)
        elif body.startswith("@@"):
            out.append(paint(body, CYAN, on) + end)
        elif body.startswith("+"):
            out.append(paint(body, GREEN, on) + end)
        elif body.startswith("-"):
            out.append(paint(body, RED, on) + end)
        else:
            out.append(line)
    return "".join(out)


ACTION_COLOURS = {"create": GREEN, "delete": RED, "modify": YELLOW}
CHANGE_MARKS = {"created": "A", "deleted": "D", "modified": "M"}
CHANGE_COLOURS = {"A": GREEN, "D": RED, "M": YELLOW}


def width(stream: TextIO | None = None) -> int | None:
    """Columns of the terminal `stream` writes to, or None when it is not a terminal (a pipe gets
    whole lines). $COLUMNS wins, as for every other program."""
    stream = stream or sys.stdout
    try:
        tty = stream.isatty()
    except (AttributeError, ValueError):
        tty = False
    if not tty and not os.environ.get("COLUMNS"):
        return None
    return max(20, shutil.get_terminal_size((80, 24)).columns)


def cells(text: str) -> int:
    """Terminal columns `text` takes (wide East Asian characters and emoji take two)."""
    if text.isascii():  # no ASCII character is wide or combining: one column each
        return len(text)
    return sum(
        0 if unicodedata.combining(c) else 2 if unicodedata.east_asian_width(c) in ("W", "F") else 1
        for c in text
    )


def clip(text: str, limit: int) -> str:
    """`text` cut to `limit` columns at a word boundary when one is near, ending with `…`."""
    if cells(text) <= limit:
        return text
    if limit <= 1:
        return "…"[:limit]
    out, used = [], 0
    for c in text:
        w = cells(c)
        if used + w > limit - 1:
            break
        out.append(c)
        used += w
    cut = "".join(out)
    space = cut.rfind(" ")
    if space >= max(1, len(cut) * 2 // 3):
        cut = cut[:space]
    return cut.rstrip() + "…"


def fit_items(items: list[str], room: int, sep: str = " ") -> str:
    """As many whole items as fit in `room` columns, then `+N` for the rest; a first item too long
    on its own is clipped. Never splits an item in the middle otherwise."""
    out: list[str] = []
    for i, item in enumerate(items):
        rest = len(items) - i - 1
        tail = f" +{rest}" if rest else ""
        if cells(sep.join([*out, item]) + tail) <= room:
            out.append(item)
            continue
        if not out:
            more = f" +{len(items) - 1}" if len(items) > 1 else ""
            return clip(item, max(1, room - cells(more))) + more
        return sep.join(out) + f" +{len(items) - i}"
    return sep.join(out)


def pad(text: str, size: int) -> str:
    return text + " " * max(0, size - cells(text))


def page(text: str) -> None:
    """Show `text` through $PAGER (default `less -R`, which keeps colour and leaves short output on
    screen with -F -X) when stdout is a terminal; print it otherwise."""
    if not sys.stdout.isatty() or not sys.stdin.isatty():
        sys.stdout.write(text)
        return
    pager = os.environ.get("PAGER")
    if pager is None:
        pager = "less -R" if shutil.which("less") else ""
    if not pager.strip() or pager.strip() == "cat":
        sys.stdout.write(text)
        return
    import subprocess  # only here: 14 ms of imports every other command would pay

    env = {**os.environ}
    env.setdefault("LESS", "FRX")
    sys.stdout.flush()
    try:
        proc = subprocess.Popen(pager, shell=True, stdin=subprocess.PIPE, env=env)
    except OSError:
        sys.stdout.write(text)
        return
    assert proc.stdin is not None
    try:
        proc.stdin.write(text.encode("utf-8", "replace"))
        proc.stdin.close()
    except BrokenPipeError:
        pass  # the person quit the pager before the end
    proc.wait()
