"""`rewind-ls doctor`: is the store usable, private and whole; are the hooks installed."""

from __future__ import annotations

import os
import sqlite3
import stat
from typing import Any

from rewind_ls.core import config
from rewind_ls.core.errors import CorruptBlob, RewindError


def run_hook_command(command: str, root: str, agent: str = "claude-code") -> str | None:
    """Run the installed hook command the way the agent does (`sh -c`, a JSON payload on stdin)
    with an event rewind-ls ignores. None when it ran; else what went wrong."""
    import json
    import subprocess

    payload = {"hook_event_name": "Notification", "session_id": "rewind-ls-doctor", "cwd": root}
    try:
        proc = subprocess.run(
            ["/bin/sh", "-c", command],
            input=json.dumps(payload).encode(),
            capture_output=True,
            timeout=60,
            cwd=root,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"`{command}` could not run: {exc}"
    err = proc.stderr.decode("utf-8", "replace").strip()
    if proc.returncode != 0:
        hint = (
            f" (not found: reinstall with `rewind-ls install {agent}`)"
            if proc.returncode == 127
            else ""
        )
        return f"`{command}` exited {proc.returncode}{hint}: {err[:300]}"
    if "rewind-ls hook:" in err:
        return f"`{command}` ran but reported: {err[:300]}"
    return None


def diagnose(root: str, repair: bool = False, moved_from: str | None = None) -> dict[str, Any]:
    from rewind_ls.core.apply_disk import recover
    from rewind_ls.core.claude_settings import hook_commands, settings_path
    from rewind_ls.core.store import Store, store_dir_for, store_error

    checks: list[dict[str, Any]] = []

    def check(name: str, ok: bool, detail: str) -> None:
        checks.append({"name": name, "ok": ok, "detail": detail})

    home = config.home_dir()
    check("store home", True, home)
    if moved_from is not None:
        checks.append(reattach_check(root, moved_from))
    directory = store_dir_for(root)
    damaged = False
    store_db = os.path.join(directory, "store.sqlite3")
    if not os.path.exists(os.path.join(directory, "store.sqlite3")):
        check("store", True, f"no checkpoints for {root} yet")
    else:
        try:
            with Store.open(root, create=False) as store:
                rolled = recover(store)
                check(
                    "interrupted restores", True, f"rolled back {len(rolled)}" if rolled else "none"
                )
                integrity = store.quick_check()
                damaged = integrity != "ok"
                check(
                    "database integrity",
                    not damaged,
                    str(integrity) + (" (--repair salvages what can be read)" if damaged else ""),
                )
                bad = []
                for h in store.blob_hashes():
                    try:
                        store.get_blob(h)
                    except CorruptBlob as exc:
                        bad.append(str(exc))
                check(
                    "stored content",
                    not bad,
                    f"{len(bad)} damaged: {'; '.join(bad[:3])}"
                    if bad
                    else "every blob matches its hash",
                )
                missing = store.missing_file_contents()
                check(
                    "checkpoints complete",
                    missing == 0,
                    f"{missing} referenced content(s) missing"
                    if missing
                    else "every checkpoint's content is present",
                )
                checks.append(unrecorded_check(store))
                from rewind_ls.core.transcript_capture import transcript_check

                checks.append(transcript_check(store))
                st = store.stats()
                check(
                    "size",
                    True,
                    f"{st['turns']} turns, {st['blobs']} contents, {st['stored_bytes']} bytes stored",
                )
        except RewindError as exc:
            damaged = damaged or "damaged" in str(exc)
            check("store", False, str(exc))
        except sqlite3.DatabaseError as exc:
            damaged = True
            check("database integrity", False, str(store_error(exc, store_db)))
        if damaged and repair:
            checks.extend(repair_damaged_store(root))
        loose = []
        for dirpath, dirnames, filenames in os.walk(directory):
            for name in dirnames + filenames:
                full = os.path.join(dirpath, name)
                mode = stat.S_IMODE(os.lstat(full).st_mode)
                if mode & 0o077:
                    loose.append(full)
                    if repair:
                        os.chmod(full, 0o700 if os.path.isdir(full) else 0o600)
        check(
            "permissions",
            not loose or repair,
            "owner-only"
            if not loose
            else f"{len(loose)} readable by others"
            + (" (fixed)" if repair else " (--repair fixes)"),
        )
    checks.append(moved_check())
    project = settings_path(root, user=False)
    user = settings_path(root, user=True)
    commands = hook_commands(project) + [
        c for c in hook_commands(user) if c not in hook_commands(project)
    ]
    if not commands:
        check("claude code hooks", False, "not installed: rewind-ls install claude-code")
    for command in commands:
        failure = run_hook_command(command, root)
        check(
            "claude code hooks",
            failure is None,
            f"installed, and `{command}` runs" if failure is None else failure,
        )
    # The other agents' hooks, where installed, must run too (not installed is not a problem).
    from rewind_ls.core.agents import AGENTS

    for other in AGENTS.values():
        if other.name == "claude-code":
            continue
        found: list[str] = []
        for user_level in (False, True):
            path = other.settings_path(root, user_level)
            found += [c for c in hook_commands(path, other.name) if c not in found]
        for command in found:
            failure = run_hook_command(command, root, other.name)
            check(
                f"{other.title} hooks",
                failure is None,
                f"installed, and `{command}` runs" if failure is None else failure,
            )
    # Hooks that are not installed are not a store problem; a hook command that fails is.
    ok = all(c["ok"] for c in checks if c["name"] != "claude code hooks" or commands)
    return {"ok": ok, "workspace": root, "store_dir": directory, "checks": checks}


def repair_damaged_store(root: str) -> list[dict[str, Any]]:
    """`doctor --repair` on a damaged store: salvage what can be read into a new store (the damaged
    file kept aside), then check the new one opens."""
    from rewind_ls.core.store import Store, salvage

    try:
        report = salvage(root)
    except (OSError, sqlite3.Error) as exc:
        return [{"name": "repair", "ok": False, "detail": f"salvage failed: {exc}"}]
    lost = {t: bad for t, (_, bad) in report["tables"].items() if bad}
    copied = sum(n for n, _ in report["tables"].values())
    detail = (
        f"copied {copied} readable row(s) into a new store; damaged file kept at "
        f"{report['kept_aside']}"
    )
    if lost or report.get("damaged_contents"):
        detail += (
            f"; unreadable: {', '.join(f'{t} ({n})' for t, n in lost.items()) or 'none'}, "
            f"{report.get('damaged_contents', 0)} damaged content(s) dropped"
        )
    try:
        with Store.open(root, create=False) as store:
            ok = store.quick_check() == "ok"
    except (RewindError, sqlite3.Error) as exc:
        return [{"name": "repair", "ok": False, "detail": f"{detail}; new store unusable: {exc}"}]
    return [{"name": "repair", "ok": ok, "detail": detail}]


def reattach_check(root: str, old_root: str) -> dict[str, Any]:
    """`doctor --moved-from OLD`: give the history recorded for OLD to this workspace."""
    from rewind_ls.core.store import reattach

    try:
        where = reattach(old_root, root)
    except (OSError, RewindError) as exc:
        return {"name": "moved workspace", "ok": False, "detail": str(exc)}
    return {
        "name": "moved workspace",
        "ok": True,
        "detail": f"history of {os.path.realpath(old_root)} re-attached here ({where})",
    }


def moved_check() -> dict[str, Any]:
    """Folders with history that no longer exist: perhaps this workspace, moved."""
    from rewind_ls.core.store import orphan_roots

    orphans = orphan_roots()
    if not orphans:
        return {"name": "moved workspaces", "ok": True, "detail": "none"}
    return {
        "name": "moved workspaces",
        "ok": True,
        "detail": f"history recorded for folders that no longer exist: {', '.join(orphans[:5])}"
        " (if one is this workspace: rewind-ls doctor --moved-from OLD)",
    }


def unrecorded_check(store: Any) -> dict[str, Any]:
    """Files the last scan could not record (unreadable, a link or folder where a file was)."""
    from rewind_ls.core.scan import unrecorded

    gaps = unrecorded(store)
    return {
        "name": "unrecorded files",
        "ok": True,
        "detail": "none" if not gaps else f"{len(gaps)}: " + "; ".join(gaps[:10]),
    }
