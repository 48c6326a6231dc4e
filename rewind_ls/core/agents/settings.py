"""Installing rewind-ls' hooks into an agent's hook settings, idempotently, keeping every other hook.

Claude Code (`settings.json`) and Codex CLI (`hooks.json`) share the `{"hooks": {Event: [{matcher?,
hooks: [{type, command}]}]}}` shape; the events and the file come from the agent registry."""

from __future__ import annotations

import json
import os
import shlex
import sys
from typing import Any

import rewind_ls
from rewind_ls.core.errors import BadInput, BadPath


def _marks(agent: str) -> tuple[str, ...]:
    # Every form is ours: the hook command (`python -I -S /abs/rewind_ls/__main__.py hook AGENT`,
    # the file quoted when its path needs it), and those an older rewind-ls wrote (`rewind-ls hook
    # AGENT`, `python -m rewind_ls hook AGENT`), which keep working and which installing replaces.
    main = "rewind_ls/__main__.py"
    return (
        f"rewind-ls hook {agent}",
        f"rewind_ls hook {agent}",
        f"{main} hook {agent}",
        f"{main}' hook {agent}",
    )


def default_command(agent: str = "claude-code") -> str:
    """The hook command: this interpreter, isolated and without `site` (`-I -S`), running the
    package's `__main__.py` as a script file (not the folder: that would load `runpy`), which puts
    the package and the interpreter's site-packages on `sys.path` itself. Absolute paths because the agent runs hooks with its own
    PATH, which need not hold the virtualenv rewind-ls was installed in; no `site` because its
    start-up (the venv's `.pth` files) costs more than the hook's own work, twice per tool call."""
    python = os.path.abspath(sys.executable)
    package_dir = os.path.dirname(os.path.abspath(rewind_ls.__file__))
    main = os.path.join(package_dir, "__main__.py")
    return f"{shlex.quote(python)} -I -S {shlex.quote(main)} hook {agent}"


def is_fast_command(command: str) -> bool:
    """Whether an installed hook command is the form `default_command` writes (no `site`)."""
    try:
        argv = shlex.split(command)
    except ValueError:
        return False
    return len(argv) == 6 and argv[1:3] == ["-I", "-S"] and argv[4] == "hook"


def settings_files(root: str, agent: str = "claude-code") -> list[tuple[str, str]]:
    """The agent's hook settings files for `root`, each with the `install` flag that writes it:
    the project's (""), the project's per-person file ("--local", where the agent has one), the
    user's ("--user")."""
    from rewind_ls.core.agents.registry import AGENTS

    who = AGENTS[agent]
    files = [(who.settings_path(root, False), "")]
    if who.local_settings_path is not None:
        files.append((who.local_settings_path(root), "--local"))
    files.append((who.settings_path(root, True), "--user"))
    return files


def installed_hooks(root: str, agent: str = "claude-code") -> list[tuple[str, list[str]]]:
    """The agent's settings files for `root` (`settings_files`) that hold our hooks, each with its
    hook commands."""
    from rewind_ls.core.agents.registry import AGENTS

    out = []
    for path, _flag in settings_files(root, agent):
        commands = AGENTS[agent].hooks_file().hook_commands(path, agent)
        if commands:
            out.append((path, commands))
    return out


def hook_commands(path: str, agent: str = "claude-code") -> list[str]:
    """Our hook commands in the settings file at `path` (normally one, repeated per event)."""
    found: list[str] = []
    for _event, command in _our_hooks(path, agent):
        if command not in found:
            found.append(command)
    return found


def hooked_events(path: str, agent: str = "claude-code") -> set[str]:
    """The events our hook command runs on in the settings file at `path` (an install by an older
    rewind-ls lacks the events added since)."""
    return {event for event, _command in _our_hooks(path, agent)}


def _our_hooks(path: str, agent: str) -> list[tuple[str, str]]:
    """(event, command) of each of our hooks in the settings file at `path`."""
    try:
        data = load_json(path)
    except BadInput:
        return []
    hooks = data.get("hooks", {})
    if not isinstance(hooks, dict):
        return []
    return [
        (str(event), str(h.get("command")))
        for event, groups in hooks.items()
        for g in (groups if isinstance(groups, list) else [])
        for h in ((g.get("hooks") or []) if isinstance(g, dict) else [])
        if _ours(h, agent)
    ]


def load_json(path: str) -> dict[str, Any]:
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except FileNotFoundError:
        return {}
    except OSError as exc:  # its folder is a file, unreadable, ...: one line, not a traceback
        raise BadPath(path, f"cannot be read ({exc.strerror}); nothing was changed") from None
    if not text.strip():
        return {}
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise BadInput(
            f"{path}: not valid JSON ({exc}); fix it by hand, nothing was changed"
        ) from None
    if not isinstance(data, dict):
        raise BadInput(f"{path}: expected a JSON object at the top; nothing was changed")
    return data


def _ours(entry: Any, agent: str = "claude-code") -> bool:
    if not isinstance(entry, dict):
        return False
    command = str(entry.get("command", ""))
    return any(mark in command for mark in _marks(agent))


def install(
    path: str,
    command: str,
    uninstall: bool = False,
    agent: str = "claude-code",
    events: dict[str, str | None] | None = None,
) -> list[str]:
    """Add (or remove) our hooks for `events` (by default the agent's, from the registry). Returns
    a list of what changed (empty: nothing to do)."""
    if events is None:
        from rewind_ls.core.agents.registry import AGENTS

        events = AGENTS[agent].events
    data = load_json(path)
    hooks = data.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise BadInput(f'{path}: "hooks" is not an object; nothing was changed')
    changed: list[str] = []
    for event, matcher in events.items():
        groups = hooks.get(event, [])
        if not isinstance(groups, list):
            raise BadInput(f"{path}: hooks.{event} is not a list; nothing was changed")
        hook = None if uninstall else {"command": command, "matcher": matcher}
        kept = _event_groups(groups, event, hook, agent, changed)
        if kept:
            hooks[event] = kept
        else:
            hooks.pop(event, None)
    if not hooks:
        data.pop("hooks", None)
    if changed:
        write_json(path, data)
    return changed


def _event_groups(
    groups: list[Any], event: str, hook: dict[str, Any] | None, agent: str, changed: list[str]
) -> list[Any]:
    """One event's hook groups with ours removed, except one group already holding `hook` (its
    command with its matcher), which is kept, or else added; `hook` None: ours all removed.
    What changed is appended to `changed`."""
    kept = []
    found = False
    for group in groups:
        inner = group.get("hooks") if isinstance(group, dict) else None
        mine = [h for h in inner if _ours(h, agent)] if isinstance(inner, list) else []
        if not mine:
            kept.append(group)
            continue
        assert isinstance(inner, list)
        if (
            hook is not None
            and not found
            and any(h.get("command") == hook["command"] for h in mine)
            and group.get("matcher") == hook["matcher"]
        ):
            found = True
            kept.append(group)
            continue
        changed.append(f"removed {event}")
        rest = [h for h in inner if not _ours(h, agent)]
        if rest:
            kept.append({**group, "hooks": rest})
    if hook is not None and not found:
        entry: dict[str, Any] = {"hooks": [{"type": "command", "command": hook["command"]}]}
        if hook["matcher"] is not None:
            entry = {"matcher": hook["matcher"], **entry}
        kept.append(entry)
        changed.append(f"added {event}")
    return kept


def write_json(path: str, data: dict[str, Any]) -> None:
    """Replace the settings file at once (a temporary file renamed over it). A folder that is
    read-only or a file is one clear error (BadPath) naming the path, the file left as it was."""
    tmp = path + ".rewind-ls.tmp"
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(data, f, indent=2)
            f.write("\n")
        os.replace(tmp, path)
    except OSError as exc:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        where = exc.filename if isinstance(exc.filename, str) else path
        raise BadPath(
            where, f"cannot write the settings there ({exc.strerror}); nothing was changed"
        ) from None
