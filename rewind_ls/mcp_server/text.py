"""Each tool's answer in words, for the model that called it (the structured result carries the
same facts as data). Plain lines, no colour, no terminal width: a model reads them."""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from typing import Any

from rewind_ls.core.restore.plan import Plan

_SIGN = {"created": "+", "deleted": "-", "modified": "~"}


def _one_line(value: str, limit: int = 80) -> str:
    flat = " ".join(value.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def turns(listing: dict[str, Any]) -> str:
    sessions = listing["sessions"]
    if not sessions:
        return "no turns recorded in this workspace yet"
    out = []
    for s in sessions:
        who = s["agent"] or s["kind"]
        mine = " (yours)" if s["id"] == listing.get("current_session_id") else ""
        out.append(f"session {s['id']} ({who}){mine}: {s['turn_count']} turn(s)")
        older = s["turn_count"] - len(s["turns"])
        if older > 0:
            out.append(f"  ({older} older turn(s) not listed)")
        for t in s["turns"]:
            files = ", ".join(_SIGN.get(f["change"], "") + f["path"] for f in t["files"])
            out.append(
                f"  #{t['number']} {t['started_at'] or ''} {_one_line(t['prompt'])!r}: "
                f"{files or 'no files'}"
            )
    gaps = listing.get("unrecorded") or []
    if gaps:
        out.append(f"not recorded (a rewind cannot restore these): {', '.join(gaps[:20])}")
    return "\n".join(out)


def shown_turn(data: dict[str, Any]) -> str:
    out = [f"turn {data['number']} ({_one_line(data['prompt'])!r}) changed:"]
    for f in data["files"]:
        out.append(f["diff"].rstrip("\n"))
        if f["hunks"]:
            states = ", ".join(
                f"#{h['index']} {h['status']}{'' if h['revertable'] else ' (not revertable)'}"
                for h in f["hunks"]
            )
            out.append(f"hunks of {f['path']} (revert's hunks take these indexes): {states}")
        elif f.get("note"):
            out.append(f"{f['path']}: {f['note']}")
    if not data["files"]:
        out.append("(no files)")
    return "\n".join(out)


def blamed(path: str, lines: Sequence[bytes], runs: list[dict[str, Any]]) -> str:
    out = [f"{path}: who last changed each line"]
    for r in runs:
        source = r["source"]
        who = f"turn {r['number']} ({r.get('agent') or source})" if r.get("number") else source
        prompt = f" {_one_line(r.get('prompt') or '', 50)!r}" if r.get("prompt") else ""
        out.append(f"lines {r['start'] + 1}-{r['end']}: {who}{prompt}")
        for i in range(r["start"], r["end"]):
            out.append(f"  {i + 1}| {lines[i].decode('utf-8', 'replace').rstrip()}")
    return "\n".join(out)


def _files(result: dict[str, Any]) -> list[str]:
    out = []
    for f in result["files"]:
        stat = "binary" if f["binary"] else f"+{f['added']} -{f['removed']}"
        line = f"  {f['action']} {f['path']} ({stat})"
        if f["conflict"]:
            line += f"  CONFLICT: {f['conflict']['message']}"
        out.append(line)
    return out or ["  (no file would change)"]


def after_preview(refusal: str | None) -> str:
    if refusal is None:
        return "nothing written; the same call to rewind, revert or undo makes this restore"
    return (
        f"this would be refused: {refusal.splitlines()[0]} (you never overwrite a conflict; "
        "the person can, from a terminal)"
    )


def previewed(result: dict[str, Any]) -> str:
    out = [f"preview of {result['label']}: nothing written"]
    out.extend(f"note: {n}" for n in result["notes"])
    out.extend(_files(result))
    out.append(result["next"])
    return "\n".join(out)


def person_command(result: dict[str, Any], plan: Plan) -> str:
    """The command with which the person can make the refused restore in a terminal (it previews
    and asks first)."""
    mode = str(result["mode"])
    argv = ["rewind-ls", mode]
    if mode != "undo":
        argv.append(str(plan.turn.number))
        argv += ["--session", plan.turn.session_id[:8]]
    conflicts = [f for f in result["files"] if f["conflict"]]
    if mode == "revert" and any(f["conflict"]["kind"] == "merge" for f in conflicts):
        argv.append("--merge")
    else:
        argv.append("--force")
    return shlex.join(argv)


def refusal_advice(result: dict[str, Any], plan: Plan) -> str:
    return (
        "refused, nothing was written (you never overwrite what is not yours). "
        + _tell_the_person(result, plan)
    )


def _tell_the_person(result: dict[str, Any], plan: Plan) -> str:
    return (
        "Tell the person; they can look and decide in a terminal: "
        f"`{person_command(result, plan)}` (it previews, asks, and `rewind-ls undo` takes it back)."
    )


def refused(result: dict[str, Any], plan: Plan, reason: str) -> str:
    lines = reason.splitlines()
    # The planner's conflict list starts with the terminal's header ("N conflict(s), nothing
    # written (--force to overwrite, ...)"): the agent has no --force, the person's command follows.
    conflicts = [ln.strip() for ln in lines[1:]] if len(lines) > 1 else lines
    out = [f"refused, nothing was written: {result['label']} would overwrite what is not yours."]
    out.extend(f"  {c}" for c in conflicts)
    out.append(_tell_the_person(result, plan))
    return "\n".join(out)


def after_restore(point: str | None) -> str:
    if not point:
        return "nothing was written"
    return "undoable: the undo tool (or `rewind-ls undo` in a terminal) brings every file back"


def restored(result: dict[str, Any]) -> str:
    out = [f"{result['label']}: {result['message']}"]
    out.extend(_files(result))
    out.append(result["next"])
    return "\n".join(out)
