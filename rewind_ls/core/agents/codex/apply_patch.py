"""The paths a Codex `apply_patch` patch touches, read from its file headers.

Codex's only edit tool takes a patch in its own format (not a unified diff):

    *** Begin Patch
    *** Add File: <path>          (then `+` lines)
    *** Update File: <path>       (optionally `*** Move to: <path>`, then `@@` hunks)
    *** Delete File: <path>
    *** End Patch

Only the headers matter here: every path a patch adds, updates, deletes, moves from or moves to is
captured before the patch applies and again after. Hunk bodies are never interpreted (the files on
disk are the truth), so a hunk line that happens to start with `***` inside a `+`/`-`/` ` line is
never mistaken for a header: headers are recognised only at the start of a line.
"""

from __future__ import annotations

from rewind_ls.core.errors import BadInput

_HEADERS = (
    ("*** Add File: ", "add"),
    ("*** Update File: ", "update"),
    ("*** Delete File: ", "delete"),
    ("*** Move to: ", "move"),
)


def patch_operations(patch: str) -> list[tuple[str, str]]:
    """(operation, path) per header, in patch order: add, update, delete, move (the target of the
    update just before it)."""
    if "*** Begin Patch" not in patch:
        raise BadInput("apply_patch: no '*** Begin Patch' line in the patch")
    ops: list[tuple[str, str]] = []
    for line in patch.splitlines():
        for prefix, op in _HEADERS:
            if line.startswith(prefix):
                path = line[len(prefix) :].strip()
                if not path:
                    raise BadInput(f"apply_patch: header {line!r} names no path")
                if op == "move" and (not ops or ops[-1][0] != "update"):
                    raise BadInput(f"apply_patch: {line!r} does not follow an Update File header")
                ops.append((op, path))
                break
    return ops


def touched_paths(patch: str) -> list[str]:
    """Every path the patch may change (sources and move targets), each once, in patch order."""
    seen: list[str] = []
    for _op, path in patch_operations(patch):
        if path not in seen:
            seen.append(path)
    return seen
