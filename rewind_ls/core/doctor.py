"""`rewind-ls doctor`: is the store usable, private and whole; are the hooks installed."""

from __future__ import annotations

import os
import stat
from typing import Any

from rewind_ls.core import config
from rewind_ls.core.errors import CorruptBlob, RewindError


def run_hook_command(command: str, root: str) -> str | None:
    """Run the installed hook command the way Claude Code does (`sh -c`, a JSON payload on
    stdin) with an event rewind-ls ignores. None when it ran; else what went wrong."""
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
            " (not found: reinstall with `rewind-ls install claude-code`)"
            if proc.returncode == 127
            else ""
        )
        return f"`{command}` exited {proc.returncode}{hint}: {err[:300]}"
    if "rewind-ls hook:" in err:
        return f"`{command}` ran but reported: {err[:300]}"
    return None


def diagnose(root: str, repair: bool = False) -> dict[str, Any]:
    from rewind_ls.core.apply_disk import recover
    from rewind_ls.core.claude_settings import hook_commands, settings_path
    from rewind_ls.core.store import Store, store_dir_for

    checks: list[dict[str, Any]] = []

    def check(name: str, ok: bool, detail: str) -> None:
        checks.append({"name": name, "ok": ok, "detail": detail})

    home = config.home_dir()
    check("store home", True, home)
    directory = store_dir_for(root)
    if not os.path.exists(os.path.join(directory, "store.sqlite3")):
        check("store", True, f"no checkpoints for {root} yet")
    else:
        try:
            with Store.open(root, create=False) as store:
                rolled = recover(store)
                check(
                    "interrupted restores", True, f"rolled back {len(rolled)}" if rolled else "none"
                )
                integrity = store.conn.execute("PRAGMA quick_check").fetchone()[0]
                check("database integrity", integrity == "ok", str(integrity))
                bad = []
                for (h,) in store.conn.execute("SELECT hash FROM blobs").fetchall():
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
                missing = store.conn.execute(
                    "SELECT count(*) FROM (SELECT before_hash AS h FROM changes WHERE before_kind = 'file'"
                    " UNION SELECT after_hash FROM changes WHERE after_kind = 'file') x"
                    " WHERE h NOT IN (SELECT hash FROM blobs)"
                ).fetchone()[0]
                check(
                    "checkpoints complete",
                    missing == 0,
                    f"{missing} referenced content(s) missing"
                    if missing
                    else "every checkpoint's content is present",
                )
                st = store.stats()
                check(
                    "size",
                    True,
                    f"{st['turns']} turns, {st['blobs']} contents, {st['storedBytes']} bytes stored",
                )
        except RewindError as exc:
            check("store", False, str(exc))
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
    # Hooks that are not installed are not a store problem; a hook command that fails is.
    ok = all(c["ok"] for c in checks if c["name"] != "claude code hooks" or commands)
    return {"ok": ok, "workspace": root, "storeDir": directory, "checks": checks}
