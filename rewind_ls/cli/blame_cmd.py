"""`rewind-ls blame PATH [--json]`: who last changed each line of a file (the turn, the agent or
"your save" or a shell command, the time, the prompt), from the store's recorded contents
(`core.history.blame`). The editor's hover says the same for one line."""

from __future__ import annotations

import argparse

from rewind_ls.cli.common import JSON_HELP, Add, open_store, print_json, rel
from rewind_ls.core.errors import RewindError

# Short names of the authors in the text listing's "who" column.
SHORT = {
    "agent": "t{n}",
    "subagent": "t{n} sub",
    "shell": "t{n} shell",
    "background": "t{n} background",
    "save": "your save",
    "outside": "outside",
    "restore": "restore",
    "original": "-",
    "unrecorded": "unrecorded",
}


def cmd_blame(args: argparse.Namespace) -> int:
    from rewind_ls.cli.style import DIM, clip, colour_enabled, pad, page, paint, safe, width
    from rewind_ls.core.capture.recorder import read_current
    from rewind_ls.core.history.blame import Blamer, binary
    from rewind_ls.core.history.review import origin_dict, runs
    from rewind_ls.core.history.timeline import iso

    with open_store(args) as store:
        path = rel(store, args.path)
        _, data, _ = read_current(store.root, path)
        if data is None:
            raise RewindError(f"{args.path}: no such file (or not readable as one)")
        if store.known(path) is None and not store.path_history(path):
            raise RewindError(
                f"{args.path}: rewind-ls has no record of this path in this workspace"
            )
        attribution = Blamer(store).blame(path, data)
    if args.json:
        from rewind_ls.core.fs.paths import to_uri
        from rewind_ls.protocol.cli_output import BlameOutput, wire

        print_json(
            wire(
                BlameOutput,
                {
                    "path": path,
                    "uri": to_uri(store.root, path),
                    "line_count": len(attribution.lines),
                    "runs": runs(attribution),
                },
            )
        )
        return 0
    if binary(data):
        # No lines to show: raw bytes would reach the terminal. Its author, as a whole.
        origin = (
            attribution.origins[0]
            if attribution.origins
            else Blamer(store).whole_origin(path, data)
        )
        who = SHORT.get(origin.source, origin.source).format(n=origin.number)
        d = origin_dict(origin)
        when = (iso(origin.at) or "").replace("T", " ")[:16]
        prompt = " ".join((d["prompt"] or "").split())
        said = ", ".join(x for x in (who, when, safe(prompt)) if x)
        print(
            f"{safe(path)}: binary file ({len(data)} bytes), not shown by line; last written by {said}"
        )
        return 0
    # Text in a legacy 8-bit encoding (not UTF-8) shows as Latin-1: every byte a character.
    try:
        data.decode("utf-8")
        encoding = "utf-8"
    except UnicodeDecodeError:
        encoding = "latin-1"
    on = colour_enabled()
    columns = width() or 100
    out = []
    digits = len(str(len(attribution.lines)))
    whos = [SHORT.get(o.source, o.source).format(n=o.number) for o in attribution.origins]
    wide = max([10, *map(len, whos)])  # "t12 background" is longer than the others
    for i, (line, origin) in enumerate(zip(attribution.lines, attribution.origins, strict=True)):
        d = origin_dict(origin)
        when = (iso(origin.at) or "").replace("T", " ")[5:16]
        prompt = clip(safe(" ".join((d["prompt"] or "").split())), 24)
        head = f"{i + 1:>{digits}} {pad(whos[i], wide)} {pad(when, 11)} {pad(prompt, 24)} "
        text = safe(line.decode(encoding, "replace").rstrip("\r\n"))
        room = max(10, columns - len(head) - 2)
        out.append(paint(head, DIM, on) + "| " + (clip(text, room) if on else text))
    page("\n".join(out) + ("\n" if out else ""))
    return 0


def register(add: Add) -> None:
    p = add(
        "blame",
        cmd_blame,
        "Who last changed each line of PATH: the turn (agent, subagent, shell command), your save "
        "or a change outside turns, with the time and the prompt.",
    )
    p.add_argument("path", metavar="PATH", help="a file of the workspace")
    p.add_argument("--json", action="store_true", help=JSON_HELP)
