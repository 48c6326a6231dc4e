"""The hook process stays at the interpreter's floor (#29): the command `install` writes starts
Python without `site`, and each event imports no more modules than it did when this budget was set.

Counts, not times (no test asserts a time): `-X importtime` lists every module the process imports,
so a new import on the hook path, direct or pulled in by a core module, fails here and must either
be made lazy or raise the budget on purpose (with the benchmark's `hook on an edit` figure checked).
"""

from __future__ import annotations

import ast
import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

from rewind_ls.core.agents.settings import default_command, is_fast_command
from tests.conftest import Cli

ROOT = Path(__file__).resolve().parents[1]

# Modules imported per event, in a workspace whose baseline is taken (the steady state of a session:
# every hook after the first). Measured with CPython 3.11; each is the figure when it was last set.
# UserPromptSubmit, PostToolUse Bash and Stop end the turn's shell runs (core/capture/shell_runs.py,
# core/capture/interrupts.py: a run ends by every road a turn can end), two small stdlib-only modules.
# The store became a package of modules with one job each (issue 25): +10 on every event.
# The first checkpoint's worker (issue 29): a scan reads whether the baseline is whole from
# core/capture/baseline_spawn.py (+1), and a shell command's PreToolUse waits for an unfinished one
# (+2: baseline_spawn, scan_settings). The watcher and the worker start through one module,
# core/fs/detached.py (+1 where a scan runs or the worker is awaited).
# The hook server's follow-up: what `__main__.py` ran itself (the `sys.path` it sets, the choice of
# the server or the in-process path) is in core/agents/hook_client.py, whose `.pyc` is cached where
# a script is compiled on every run (+1 on every event; less time, not more).
# Issue 37: the in-process hook runs through core/agents/hook_inprocess.py, which waits for a
# package being replaced by `pip install` rather than fail with a traceback (+1 on every event).
# Issue #38: core/capture/scan.py reached the 600-line limit; what a scan could not record (and the
# links it names) went to core/capture/scan_links.py (+1 where a scan runs). A prompt's hook holds
# a lock (`hook_steps.PromptLock`) so a hook delivered twice opens one turn: fcntl (+1 on a prompt).
BUDGET = {
    "UserPromptSubmit": 103,  # + claude.notifications (is the prompt a task notification?)
    "PreToolUse Edit": 87,
    "PostToolUse Edit": 87,
    "PreToolUse Bash": 91,
    "PostToolUse Bash": 101,
    "Stop": 101,
}
# What no hook may load: `site` (the start-up the command avoids) and the libraries of the server
# and the CLI.
FORBIDDEN = (
    "site",
    "pydantic",
    "pygls",
    "lsprotocol",
    "mcp",  # the MCP server's SDK (`rewind-ls mcp`)
    "argparse",
    "prompt_toolkit",
    "dataclasses",
)


def _namespace_only(module: str) -> bool:
    """A package of ours whose `__init__` is its docstring only (`rewind_ls.core.capture`): it
    names a layer and costs one small read, so it does not count against the budget."""
    if not module.startswith("rewind_ls"):
        return False
    init = ROOT.joinpath(*module.split("."), "__init__.py")
    if not init.is_file():
        return False
    body = ast.parse(init.read_text(encoding="utf-8")).body
    return len(body) <= 1 and all(isinstance(n, ast.Expr) for n in body)


def _imported(argv: list[str], payload: dict[str, object], env: dict[str, str]) -> list[str]:
    traced = [argv[0], "-X", "importtime", *argv[1:]]
    proc = subprocess.run(
        traced, input=json.dumps(payload).encode(), capture_output=True, env=env, timeout=60
    )
    assert proc.returncode == 0, proc.stderr.decode()
    lines = proc.stderr.decode().splitlines()
    errors = [line for line in lines if not line.startswith("import time:")]
    assert not errors, errors  # the event was recorded without complaint
    return [line.split("|")[-1].strip() for line in lines[1:] if line.startswith("import time:")]


def test_hook_command_starts_without_site_and_imports_within_budget(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("x\n")
    command = default_command("claude-code")
    assert is_fast_command(command)
    argv = shlex.split(command)
    assert argv[1:3] == ["-I", "-S"]
    env = {
        **os.environ,
        "REWIND_LS_HOME": str(tmp_path / "home"),
        "REWIND_LS_WATCH": "0",  # no watcher process (its import is the watcher test's)
    }
    base = {"session_id": "s", "cwd": str(ws)}
    edit = {"tool_name": "Edit", "tool_input": {"file_path": "a.txt"}}
    bash = {"tool_name": "Bash", "tool_input": {"command": "true"}}
    # The first hooks take the workspace's baseline (a scan); the budget is for the hooks after.
    for event in ("SessionStart", "UserPromptSubmit", "Stop"):
        _imported(argv, {**base, "hook_event_name": event}, env)
    events = [
        ("UserPromptSubmit", {"prompt": "p"}),
        ("PreToolUse Edit", edit),
        ("PostToolUse Edit", edit),
        ("PreToolUse Bash", bash),
        ("PostToolUse Bash", bash),
        ("Stop", {}),
    ]
    counts = {}
    for name, extra in events:
        modules = _imported(argv, {**base, "hook_event_name": name.split()[0], **extra}, env)
        bad = [m for m in modules if m.split(".")[0] in FORBIDDEN]
        assert not bad, f"{name} imported {bad}"
        counts[name] = len([m for m in modules if not _namespace_only(m)])
    over = {k: (v, BUDGET[k]) for k, v in counts.items() if v > BUDGET[k]}
    assert not over, f"the hook path grew (imported, budget): {over}"


def test_older_install_keeps_working_and_doctor_says_how_to_update(cli: Cli, ws: Path) -> None:
    """An install by an earlier rewind-ls (the console script, with `site`) still runs and passes
    doctor, which names the command that writes the fast one; installing again replaces it, once
    per event. The fast command finds the virtualenv's site-packages itself (doctor's probe checks
    zstandard is importable from it)."""
    venv_bin = Path(sys.executable).parent
    old = f"{venv_bin / 'rewind-ls'} hook claude-code"
    cli("install", "claude-code", "--command", old)
    hooks = [c for c in cli.json("doctor")["checks"] if c["name"] == "claude code hooks"]
    assert hooks[0]["ok"] and "`rewind-ls install claude-code`" in hooks[0]["detail"], hooks

    cli("install", "claude-code")
    settings = json.loads((ws / ".claude" / "settings.json").read_text())["hooks"]
    commands = [h["command"] for groups in settings.values() for g in groups for h in g["hooks"]]
    assert commands and all(c == default_command("claude-code") for c in commands)
    hooks = [c for c in cli.json("doctor")["checks"] if c["name"] == "claude code hooks"]
    assert hooks[0]["ok"] and "rewind-ls install" not in hooks[0]["detail"], hooks


def test_fast_command_reaches_the_venv_packages(tmp_path: Path) -> None:
    """Without `site`, `sys.prefix` is the base interpreter's: the launcher must still find the
    virtualenv's site-packages (zstandard, which a scan's packs need), or report it to doctor."""
    env = {**os.environ, "REWIND_LS_HOME": str(tmp_path / "home"), "REWIND_LS_HOOK_CHECK": "1"}
    payload = {"hook_event_name": "Notification", "session_id": "x", "cwd": str(tmp_path)}
    proc = subprocess.run(
        shlex.split(default_command("claude-code")),
        input=json.dumps(payload).encode(),
        capture_output=True,
        env=env,
        timeout=60,
    )
    assert proc.returncode == 0 and proc.stderr == b"", proc.stderr.decode()


# What the hook command imports when the hook server answers (core/agents/hook_client.py): the
# client and the packages holding it (docstring-only), and the C socket module. Nothing else: the
# server's child imported the hook path once, before forking.
CLIENT_IMPORTS = {
    "_socket",
    "rewind_ls",
    "rewind_ls.core",
    "rewind_ls.core.agents",
    "rewind_ls.core.agents.hook_client",
}


def test_the_hook_commands_client_imports_only_the_socket_when_the_server_answers(
    tmp_path: Path,
) -> None:
    from tests.test_hook_server import server_env, server_stopped_after, wait_server

    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("x\n")
    env = server_env(tmp_path / "home", REWIND_LS_WATCH="0")
    argv = shlex.split(default_command("claude-code"))
    base = {"session_id": "s", "cwd": str(ws)}
    edit = {"tool_name": "Edit", "tool_input": {"file_path": "a.txt"}}
    with server_stopped_after(env):
        _imported(argv, {**base, "hook_event_name": "SessionStart"}, env)
        wait_server(env)
        floor = subprocess.run(
            [argv[0], "-X", "importtime", "-I", "-S", "-c", "pass"], capture_output=True, text=True
        )
        started = {ln.split("|")[-1].strip() for ln in floor.stderr.splitlines()[1:]}
        for event in ("UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop"):
            modules = _imported(
                argv, {**base, "hook_event_name": event, "prompt": "p", **edit}, env
            )
            assert set(modules) - started == CLIENT_IMPORTS, (event, modules)


def test_the_hook_commands_script_is_a_few_lines() -> None:
    """`__main__.py` run as a file is compiled on every hook (a script's code is never cached as
    `.pyc`): what it does is in core/agents/hook_client.py, so it defines nothing itself."""
    main = ROOT / "rewind_ls" / "__main__.py"
    tree = ast.parse(main.read_text(encoding="utf-8"))
    defined = [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.ClassDef))]
    assert not defined and len(main.read_bytes()) < 1200
