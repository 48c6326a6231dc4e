"""Reading `rewind-ls turns --all --json` in tests."""

from __future__ import annotations

from typing import Any


def outside_paths(listing: dict[str, Any]) -> list[str]:
    """The paths the listing's external session holds (changes found between turns: the person's,
    another program's), sorted, once per turn that changed them."""
    return sorted(
        f["path"]
        for s in listing["sessions"]
        if s["kind"] == "external"
        for t in s["turns"]
        for f in t["files"]
    )
