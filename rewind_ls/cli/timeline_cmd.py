"""`rewind-ls timeline [--html FILE] [--session S | --all]`: the timeline as text, or as a picture
(one self-contained HTML page: turns left to right, files top to bottom, who changed what;
`core/history/activity.py`, `activity_page.py`)."""

from __future__ import annotations

import argparse
import os
import tempfile

from rewind_ls.cli.common import SESSION_HELP, Add, open_store, session_arg
from rewind_ls.cli.style import safe
from rewind_ls.core.errors import RewindError


def cmd_timeline(args: argparse.Namespace) -> int:
    from rewind_ls.core.restore.plan import current_session

    with open_store(args) as store:
        sid = session_arg(store, args.session)
        if args.html is None:
            from rewind_ls.core.history.timeline import timeline_text

            if args.all and sid is not None:
                raise RewindError("timeline: --session or --all, not both")
            print(timeline_text(store, None if args.all else sid), end="")
            return 0
        from rewind_ls.core.history.activity import activity
        from rewind_ls.core.history.activity_page import render

        if args.all and sid is not None:
            raise RewindError("timeline: --session or --all, not both")
        if not args.all:
            sid = sid or current_session(store)
            if sid is None:
                raise RewindError("timeline: no agent session has been recorded here (try --all)")
        grid = activity(store, sid, every_session=args.all)
    _write(args.html, render(grid))
    cells = len(grid.cells)
    print(
        f"wrote {safe(os.path.abspath(args.html))}: {len(grid.columns)} turns, "
        f"{len(grid.paths)} files, {cells} changes (open it in a browser; it loads nothing)"
    )
    return 0


def _write(path: str, text: str) -> None:
    """The page replaces FILE in one rename: a reader never sees half of it."""
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise RewindError(f"{path}: its folder {folder} does not exist")
    if os.path.isdir(path):
        raise RewindError(f"{path}: a folder; name the page's file")
    fd, tmp = tempfile.mkstemp(prefix=".rewind-timeline-", suffix=".html", dir=folder)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def register(add: Add) -> None:
    p = add(
        "timeline",
        cmd_timeline,
        "The timeline of the current agent session as text, or with --html FILE as a picture: turns "
        "left to right, files top to bottom by folder, each change coloured by who made it (agent, "
        "subagent, shell, your save, outside, restore), conflicts and shared changes marked.",
    )
    p.add_argument("--html", metavar="FILE", help="write the picture as one self-contained page")
    p.add_argument("--session", metavar="ID", help=SESSION_HELP)
    p.add_argument("--all", action="store_true", help="every session's turns, not one session's")
