"""`rewind-ls doctor`: is the store usable, private and whole; are the hooks installed.

Store checks and repairs (salvage of a damaged store, `--moved-from`, unrecorded files): doctor's
checks are small functions, `STORE_CHECKS` the list run on an open store; `hook_server_check`:
whether the hook server is up, which code it runs, and why none can start.
"""

from __future__ import annotations

import os
import stat
import sys
from collections.abc import Callable
from typing import Any

from rewind_ls.core.errors import CorruptBlob, RewindError
from rewind_ls.core.fs import config


def agent_path() -> str:
    """PATH as the agent may have it: without the virtualenv this rewind-ls runs from. The agent
    is often started where that virtualenv is not activated (another terminal, an editor), so a
    hook command that only works with it on PATH must fail the check, not pass it."""
    import sys

    venv_bins = set()
    if sys.prefix != sys.base_prefix:
        venv_bins.add(os.path.realpath(os.path.join(sys.prefix, "bin")))
    if os.environ.get("VIRTUAL_ENV"):
        venv_bins.add(os.path.realpath(os.path.join(os.environ["VIRTUAL_ENV"], "bin")))
    parts = os.environ.get("PATH", os.defpath).split(os.pathsep)
    return os.pathsep.join(p for p in parts if p and os.path.realpath(p) not in venv_bins)


def run_hook_command(command: str, root: str, agent: str = "claude-code") -> str | None:
    """Run the installed hook command the way the agent does (`sh -c`, a JSON payload on stdin,
    PATH without rewind-ls' virtualenv: `agent_path`) with an event rewind-ls ignores. None when
    it ran; else what went wrong."""
    import json
    import subprocess

    payload = {"hook_event_name": "Notification", "session_id": "rewind-ls-doctor", "cwd": root}
    # REWIND_LS_HOOK_CHECK: the launcher also checks that what a later event imports is reachable.
    env = {**os.environ, "PATH": agent_path(), "REWIND_LS_HOOK_CHECK": "1"}
    env.pop("VIRTUAL_ENV", None)
    try:
        proc = subprocess.run(
            ["/bin/sh", "-c", command],
            input=json.dumps(payload).encode(),
            capture_output=True,
            timeout=60,
            cwd=root,
            env=env,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"`{command}` could not run: {exc}"
    err = proc.stderr.decode("utf-8", "replace").strip()
    if proc.returncode != 0:
        hint = (
            f" (not found on a PATH without rewind-ls' virtualenv, as the agent may run it:"
            f" reinstall with `rewind-ls install {agent}`, which names it by absolute path)"
            if proc.returncode == 127
            else ""
        )
        return f"`{command}` exited {proc.returncode}{hint}: {err[:300]}"
    if "rewind-ls hook:" in err:
        return f"`{command}` ran but reported: {err[:300]}"
    return None


def _check(name: str, ok: bool, detail: str) -> dict[str, Any]:
    return {"name": name, "ok": ok, "detail": detail}


NOT_INSTALLED = (
    "no agent's hooks installed: rewind-ls install AGENT (`rewind-ls install` lists the agents)"
)


def diagnose(root: str, repair: bool = False, moved_from: str | None = None) -> dict[str, Any]:
    from rewind_ls.core.store import DB_NAME, store_dir_for

    home_problem = config.home_problem()
    if home_problem is not None:
        # Nothing in a home another user can change is opened, let alone repaired.
        detail = f"{config.home_dir()}: {home_problem}; use a folder only you can write"
        return {
            "ok": False,
            "workspace": root,
            "store_dir": store_dir_for(root),
            "checks": [_check("store home", False, detail)],
        }
    checks = [_check("store home", True, config.home_dir())]
    checks += [_check("environment", False, problem) for problem in config.limit_problems()]
    if moved_from is not None:
        checks.append(reattach_check(root, moved_from))
    directory = store_dir_for(root)
    if not os.path.exists(os.path.join(directory, DB_NAME)):
        checks.append(_check("store", True, f"no checkpoints for {root} yet"))
    else:
        store_checks, damaged = _store_checks(root, directory)
        checks += store_checks
        if damaged and repair:
            checks.extend(repair_damaged_store(root))
        checks.append(permissions_check(directory, repair))
    checks.append(moved_check())
    checks.append(local_history_check(directory))
    checks += hook_checks(root)
    checks += worktree_hooks_check(root)
    checks += mcp_checks(root)
    checks.append(hook_server_check())
    # Hooks that are not installed are not a store problem; a hook command that fails is.
    ok = all(c["ok"] for c in checks if c["detail"] != NOT_INSTALLED)
    return {"ok": ok, "workspace": root, "store_dir": directory, "checks": checks}


def _store_checks(root: str, directory: str) -> tuple[list[dict[str, Any]], bool]:
    """The checks of an existing store (each of STORE_CHECKS on the open store), and whether it
    is damaged (so `--repair` salvages it)."""
    from rewind_ls.core.store import DB_NAME, DatabaseError, Store, store_error

    checks: list[dict[str, Any]] = []
    try:
        with Store.open(root, create=False) as store:
            for step in STORE_CHECKS:
                checks.append(step(store))
    except RewindError as exc:
        checks.append(_check("store", False, str(exc)))
        return checks, _integrity_failed(checks) or "damaged" in str(exc)
    except DatabaseError as exc:
        db = os.path.join(directory, DB_NAME)
        checks.append(_check("database integrity", False, str(store_error(exc, db))))
        return checks, True
    return checks, _integrity_failed(checks)


def _integrity_failed(checks: list[dict[str, Any]]) -> bool:
    return any(c["name"] == "database integrity" and not c["ok"] for c in checks)


def interrupted_check(store: Any) -> dict[str, Any]:
    """Restores a crash interrupted: rolled back (or finished) now."""
    from rewind_ls.core.restore.recovery import recover

    rolled = recover(store)
    said = f"{len(rolled)} finished or rolled back: {'; '.join(rolled)}" if rolled else "none"
    return _check("interrupted restores", True, said)


def integrity_check(store: Any) -> dict[str, Any]:
    integrity = store.quick_check()
    damaged = integrity != "ok"
    hint = " (--repair salvages what can be read)" if damaged else ""
    return _check("database integrity", not damaged, str(integrity) + hint)


def content_check(store: Any) -> dict[str, Any]:
    """Every stored content still matches its hash."""
    bad = []
    for h in store.blob_hashes():
        try:
            store.get_blob(h)
        except CorruptBlob as exc:
            bad.append(str(exc))
    detail = f"{len(bad)} damaged: {'; '.join(bad[:3])}" if bad else "every blob matches its hash"
    return _check("stored content", not bad, detail)


def complete_check(store: Any) -> dict[str, Any]:
    """Every checkpoint's content is present."""
    missing = store.missing_file_contents()
    detail = (
        f"{missing} referenced content(s) missing"
        if missing
        else "every checkpoint's content is present"
    )
    return _check("checkpoints complete", missing == 0, detail)


def transcript_hooks_check(store: Any) -> dict[str, Any]:
    from rewind_ls.core.agents.claude.check import transcript_check

    return transcript_check(store)


def size_check(store: Any) -> dict[str, Any]:
    st = store.stats()
    detail = f"{st['turns']} turns, {st['blobs']} contents, {st['stored_bytes']} bytes stored"
    return _check("size", True, detail)


def permissions_check(directory: str, repair: bool) -> dict[str, Any]:
    """Everything in the store folder is the owner's only (`repair`: made so)."""
    loose = []
    for dirpath, dirnames, filenames in os.walk(directory):
        for name in dirnames + filenames:
            full = os.path.join(dirpath, name)
            mode = stat.S_IMODE(os.lstat(full).st_mode)
            if mode & 0o077:
                loose.append(full)
                if repair:
                    os.chmod(full, 0o700 if os.path.isdir(full) else 0o600)
    if not loose:
        return _check("permissions", True, "owner-only")
    fixed = " (fixed)" if repair else " (--repair fixes)"
    return _check("permissions", repair, f"{len(loose)} readable by others" + fixed)


def _hook_check(name: str, command: str, root: str, agent: str) -> dict[str, Any]:
    """An installed hook command runs the way the agent runs it."""
    from rewind_ls.core.agents.settings import is_fast_command

    failure = run_hook_command(command, root, agent)
    detail = f"installed, and `{command}` runs" if failure is None else failure
    if failure is None and not is_fast_command(command):
        # An install by an older rewind-ls: it works, but pays Python's `site` start-up per hook.
        detail += (
            f"; it starts Python with `site` (slower on every tool call): `rewind-ls install"
            f" {agent}` (with --user for the user's settings) writes the faster command"
        )
    return _check(name, failure is None, detail)


def local_history_check(directory: str) -> dict[str, Any]:
    """Whether the person's edits between turns are kept as they happen (never a failure)."""
    from rewind_ls.core.capture.local_history import status

    return _check("local history", True, status(directory if os.path.isdir(directory) else None))


def hook_server_check() -> dict[str, Any]:
    """Whether this install's hook server is up, and which code it runs (never a failure: hooks
    run in their own process without it); when it is not, whether one can start, and the
    servers another interpreter of this install runs for this home (`python3` vs `python`)."""
    from rewind_ls.core.agents import hook_client, hook_server_status

    name = "hook server"
    if os.environ.get(hook_client.SWITCH) == "0":
        return _check(
            name, True, f"off ({hook_client.SWITCH}=0): each hook starts its own interpreter"
        )
    info = hook_server_status.status()
    if info is not None:
        detail = (
            f"running (pid {info.get('pid')}, since {info.get('since')}): the code in"
            f" {info.get('code')} on {info.get('python')}"
        )
        if info.get("stale"):
            detail += (
                f"; that code changed on disk since ({info['stale']}): the next hook replaces it"
            )
        return _check(name, True, detail)
    problem = hook_server_status.folder_problem()
    if problem is not None:
        return _check(
            name,
            True,
            f"not running, and none can start: {problem}; each hook runs in its own process",
        )
    detail = f"not running for {sys.executable}: the next hook starts it (hooks run in their own process meanwhile)"
    for other in hook_server_status.others():
        detail += (
            f"; one runs this code for this home on {other.get('python')} (pid {other.get('pid')}),"
            " used by hooks whose command names that interpreter"
        )
    return _check(name, True, detail)


def mcp_checks(root: str) -> list[dict[str, Any]]:
    """Where each agent's MCP server entry is installed (`mcp_config.mcp_checks`)."""
    from rewind_ls.core.agents.mcp_config import mcp_checks as checks

    return checks(root)


def hook_checks(root: str) -> list[dict[str, Any]]:
    """Each agent's installed hook commands (project and user settings) run, with what the agent
    still asks before it runs them (`after_install`); an agent without them gets a line saying
    where `install` puts them. Some agent's hooks must be installed (without any, no agent turn is
    recorded); which agents is the person's choice."""
    from rewind_ls.core.agents.registry import AGENTS
    from rewind_ls.core.agents.settings import installed_hooks

    checks: list[dict[str, Any]] = []
    absent = []  # one line per agent whose hooks are not installed (never a failure)
    for who in AGENTS.values():
        found: list[str] = []
        files = installed_hooks(root, who.name)
        for _path, commands in files:
            found += [c for c in commands if c not in found]
        name = "claude code hooks" if who.name == "claude-code" else f"{who.title} hooks"
        if not found:
            absent.append(
                _check(
                    name,
                    True,
                    f"not installed: `rewind-ls install {who.name}` puts them in "
                    f"{who.settings_path(root, False)} (--user: {who.settings_path(root, True)})",
                )
            )
            continue
        for command in found:
            check = _hook_check(name, command, root, who.name)
            if check["ok"] and who.after_install:  # it runs, once the agent lets it
                check["detail"] += f"; {who.after_install}"
            checks.append(check)
        checks += _missing_events(name, who, root, files)
        if who.name == "claude-code":
            from rewind_ls.core.agents.claude.check import hooks_switched_off

            for why in hooks_switched_off(root):
                checks.append(
                    _check(
                        name,
                        False,
                        f"installed, but {why}: Claude Code runs no "
                        "hook, so no turn is recorded; remove it",
                    )
                )
        if len(found) > 1:  # the agents run one command once, even from two settings files
            checks.append(_double_hooks(name, who.name, files))
    if not checks:
        checks.append(_check("agent hooks", False, NOT_INSTALLED))
    return checks + absent


def _missing_events(
    name: str, who: Any, root: str, files: list[tuple[str, list[str]]]
) -> list[dict[str, Any]]:
    """A settings file whose hooks an older rewind-ls wrote, without the events added since (Claude
    Code's `SubagentStart`, which credits a background subagent's work to its turn): what those
    events tell is not recorded until `install` runs again (it keeps every other hook)."""
    from rewind_ls.core.agents.settings import settings_files

    events_of = getattr(who.hooks_file(), "hooked_events", None)
    if events_of is None:  # a plugin file (OpenCode) is rewritten whole by each install
        return []
    flags = dict(settings_files(root, who.name))
    out = []
    for path, _commands in files:
        missing = [e for e in who.events if e not in events_of(path, who.name)]
        if missing:
            flag = f" {flags[path]}" if flags.get(path) else ""
            out.append(
                _check(
                    name,
                    False,
                    f"{path}: written by an older rewind-ls, no hook on {', '.join(missing)}; "
                    f"run `rewind-ls install {who.name}{flag}` again (it keeps your other hooks)",
                )
            )
    return out


def worktree_hooks_check(root: str) -> list[dict[str, Any]]:
    """Whether Claude Code's hooks reach its worktrees (`claude -w NAME`, `.claude/worktrees/`,
    each a workspace of its own): a session there reads `.claude/settings.json` from its own
    checkout (which has it only where it is committed), `.claude/settings.local.json` from the
    main checkout, and the user's settings. Never a failure; nothing when the hooks are not
    installed or the project is no git checkout."""
    from rewind_ls.core.agents.registry import AGENTS
    from rewind_ls.core.agents.settings import installed_hooks

    if not os.path.lexists(os.path.join(root, ".git")):
        return []
    claude = AGENTS["claude-code"]
    files = [path for path, _ in installed_hooks(root, claude.name)]
    if not files:
        return []
    name = "claude code worktrees"
    project = claude.settings_path(root, False)
    if files != [project]:
        reach = ", ".join(f for f in files if f != project)
        return [_check(name, True, f"the hooks reach every worktree ({reach})")]
    return [
        _check(
            name,
            True,
            f"the hooks are only in {project}: a session in a Claude Code worktree (`claude -w "
            "NAME`) reads that file from its own checkout, so it is recorded only if the file is "
            "committed there; `rewind-ls install claude-code --local` (or --user) reaches every "
            "worktree",
        )
    ]


def _double_hooks(name: str, agent: str, files: list[tuple[str, list[str]]]) -> dict[str, Any]:
    """Our hooks installed by two different rewind-ls installs (two commands): every event then
    runs both, each scanning and recording."""
    where = "; ".join(
        f"{path}: {', '.join(f'`{c}`' for c in commands)}" for path, commands in files
    )
    if len(files) > 1:
        fix = (
            f"keep one: `rewind-ls install {agent} --uninstall --user` removes the user "
            "settings' hooks (or run it without --user in the project to remove the project's)"
        )
    else:
        fix = f"keep one: `rewind-ls install {agent}` rewrites them with this install's command"
    return _check(
        f"{name} installed once",
        False,
        f"rewind-ls hooks every event more than once ({where}); each event is then recorded "
        f"twice; {fix}",
    )


def repair_damaged_store(root: str) -> list[dict[str, Any]]:
    """`doctor --repair` on a damaged store: salvage what can be read into a new store (the damaged
    file kept aside), then check the new one opens."""
    from rewind_ls.core.store import DbError, Store, salvage

    try:
        report = salvage(root)
    except (OSError, DbError) as exc:
        return [{"name": "repair", "ok": False, "detail": f"salvage failed: {exc}"}]
    lost = {t: bad for t, (_, bad) in report["tables"].items() if bad}
    copied = sum(n for n, _ in report["tables"].values())
    detail = (
        f"copied {copied} readable row(s) into a new store; damaged file kept at "
        f"{report['kept_aside']}"
    )
    if lost or report.get("damaged_contents"):
        detail += (
            f"; unreadable: {', '.join(_lost_rows(t, n) for t, n in lost.items()) or 'none'}, "
            f"{report.get('damaged_contents', 0)} damaged content(s) dropped"
        )
    try:
        with Store.open(root, create=False) as store:
            ok = store.quick_check() == "ok"
            reread = _reread_from_workspace(store)
    except (RewindError, DbError) as exc:
        return [{"name": "repair", "ok": False, "detail": f"{detail}; new store unusable: {exc}"}]
    if reread:
        detail += f"; {reread} lost content(s) read back from the workspace's files"
    return [{"name": "repair", "ok": ok, "detail": detail}]


def _lost_rows(table: str, n: int) -> str:
    return f"{table} ({n} row(s))" if n > 0 else f"{table} (the table's rows)"


def _reread_from_workspace(store: Any) -> int:
    """Contents a damaged store lost that the workspace still holds: a file whose content now is
    the one rewind-ls last saw there is stored again. Returns how many were."""
    from rewind_ls.core.capture.recorder import read_current
    from rewind_ls.core.model import FILE

    found = 0
    for path, version, _, _ in store.known_paths():
        if version.kind != FILE or not version.hash or store.has_blob(version.hash):
            continue
        try:
            now, data, _ = read_current(store.root, path)
        except (RewindError, OSError):
            continue
        if data is not None and now.hash == version.hash:
            store.put_blob(data, h=version.hash)
            found += 1
    return found


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
        " (if one is this workspace: rewind-ls doctor --moved-from OLD; a removed worktree's is"
        " still read with rewind-ls -C DIR turns, or export TURN --after --to NEW)",
    }


def unrecorded_check(store: Any) -> dict[str, Any]:
    """Files the last scan could not record (unreadable, a link or folder where a file was)."""
    from rewind_ls.core.capture.scan import unrecorded

    gaps = unrecorded(store)
    return {
        "name": "unrecorded files",
        "ok": True,
        "detail": "none" if not gaps else f"{len(gaps)}: " + "; ".join(gaps[:10]),
    }


# The checks of an open store, in the order doctor shows them.
STORE_CHECKS: list[Callable[[Any], dict[str, Any]]] = [
    interrupted_check,
    integrity_check,
    content_check,
    complete_check,
    unrecorded_check,
    transcript_hooks_check,
    size_check,
]
