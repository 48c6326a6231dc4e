"""A restore plan on the terminal: one line per path it writes or finds in conflict. Shown by
`rewind`/`revert`/`undo` before they ask, and by `revert -p` for the hunks chosen."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rewind_ls.cli.style import safe


def render_plan(plan: Any, out: Callable[[str], None]) -> None:
    from rewind_ls.cli.style import ACTION_COLOURS, RED, colour_enabled, paint

    on = colour_enabled()
    for pp in plan.paths:
        if not pp.will_write and pp.conflict is None:
            continue
        stat = "binary" if pp.binary else f"+{pp.added} -{pp.removed}"
        action = paint(f"{pp.action:9}", ACTION_COLOURS.get(pp.action, ""), on)
        line = f"  {action} {safe(pp.path)}  {stat}"
        if pp.conflict is not None:
            text = f"conflict ({pp.conflict.kind}): {safe(pp.conflict.message)}"
            line += "\n            " + paint(text, RED, on)
            for hunk in pp.conflict.hunks[:3]:
                line += f"\n              base lines {hunk['base_start'] + 1}-{hunk['base_end']}"
        out(line)
