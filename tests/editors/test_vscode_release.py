"""The released VS Code extension alone, as a new user gets it (issue 26).

A real code-server with a clean profile, a fresh HOME, a PATH with a Python 3.10+ and no rewind-ls, a
workspace with no venv; the platform .vsix that scripts/release.sh builds is the only thing installed.
Then, through the UI: the extension installs the server it carries and starts it; the walkthrough's
"Set Up Claude Code Hooks" button writes the project's hooks with that same rewind-ls; two agent
turns go through those hooks (the command in .claude/settings.json, run by `sh -c` as Claude Code
runs it); the status bar and the Rewind view list them; a rewind and its undo change the files; a
restart then finds the same rewind-ls through the project's hook settings. VS Code resolves the
login shell's PATH for the extension host, so the Python it picks may be the system's python3 (also
without rewind_ls). Workspace watchers are off (REWIND_LS_WATCH=0): they are detached processes.
Screenshots: test-artifacts/release-*.png.

The .vsix: $REWIND_RELEASE_DIST (a dist/ folder release.sh made), else scripts/release.sh is run.
"""

from __future__ import annotations

import json
import os
import platform
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import tomllib

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

from test_vscode_e2e import PREVIEW_GO  # noqa: E402
from vscode_support import (  # noqa: E402
    REPO,
    CodeServer,
    require_tools,
    run_driver,
    write_profile,
)

pytestmark = pytest.mark.editor

VERSION = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["version"]
A0, A1, A2 = "alpha v0\n", "alpha v1\n", "alpha v2\n"
ROW = ".pane-body .monaco-list-row"
HOOK_TURN = HERE / "vscode" / "installed_hook_turn.py"


def _target() -> str:
    arch = {"x86_64": "x64", "amd64": "x64", "aarch64": "arm64", "arm64": "arm64"}[
        platform.machine().lower()
    ]
    return f"{'darwin' if sys.platform == 'darwin' else 'linux'}-{arch}"


@pytest.fixture(scope="module")
def release_vsix() -> Path:
    dist = os.environ.get("REWIND_RELEASE_DIST")
    if not dist:
        proc = subprocess.run(
            ["bash", str(REPO / "scripts" / "release.sh")],
            capture_output=True,
            text=True,
            timeout=1800,
        )
        assert proc.returncode == 0, f"release.sh failed:\n{proc.stdout}\n{proc.stderr}"
        dist = str(REPO / "dist")
    vsix = Path(dist) / f"rewind-ls-{VERSION}-{_target()}.vsix"
    assert vsix.is_file(), f"{vsix} missing"
    return vsix


def _person_env(tmp: Path) -> tuple[dict[str, str], Path, str]:
    """A fresh HOME and a PATH holding a Python 3.10+ (the interpreter under the tests' venv) and
    the system's folders: no rewind-ls anywhere on it."""
    home = tmp / "home"
    home.mkdir()
    pybin = tmp / "python-bin"
    pybin.mkdir()
    base = Path(getattr(sys, "_base_executable", sys.executable))
    (pybin / "python3").symlink_to(base)
    path = f"{pybin}:/usr/bin:/bin"
    assert shutil.which("rewind-ls", path=path) is None, "rewind-ls is on the person's PATH"
    probe = subprocess.run(
        [str(pybin / "python3"), "-c", "import rewind_ls"],
        env={"PATH": path, "HOME": str(home)},
        capture_output=True,
        cwd=home,
    )
    assert probe.returncode != 0, "the person's python3 must not have rewind_ls"
    return {"HOME": str(home), "PATH": path}, home, path


def test_released_vsix_alone_runs_server_sets_up_hooks_and_rewinds(
    tmp_path: Path, release_vsix: Path
) -> None:
    tools = require_tools()
    env, home, path = _person_env(tmp_path)
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text(A0)
    assert not any((ws / v).exists() for v in (".venv", "venv"))

    cs = CodeServer(tmp_path / "vscode", env, tools["node"])
    # Nothing of the test's environment reaches the editor: no venv, no PYTHONPATH, no store setting.
    for k in list(cs.env):
        if k in ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME") or k.startswith("REWIND_"):
            cs.env.pop(k)
    # No workspace watcher: it is detached from the editor and the hooks (it would outlive the test).
    cs.env["REWIND_LS_WATCH"] = "0"
    write_profile(cs.user_data, {})
    cs.install_extension(release_vsix)
    # The agent runs in the person's environment: the editor's XDG_DATA_HOME too (the store's home).
    turn = [sys.executable, str(HOOK_TURN), str(ws), str(home), path, cs.env["XDG_DATA_HOME"]]
    steps: list[dict[str, Any]] = [
        {"do": "open-workbench"},
        # First start: the bundled server is installed with the person's python3, then runs.
        {"do": "wait-log", "text": "(bundled)"},
        {"do": "wait-log", "text": "language server running"},
        {"do": "wait-status", "text": "0 turns"},
        {"do": "screenshot", "name": "release-server-running.png"},
        # The walkthrough, as Help > Welcome shows it; its hooks step has the one button.
        {"do": "command", "title": "Welcome: Open Walkthrough..."},
        {"do": "pick", "row": "Get Started with Rewind"},
        {"do": "click", "selector": ".getting-started-step", "text": "Record the agent's turns"},
        {
            "do": "wait-for",
            "selector": ".getting-started-step.expanded",
            "text": "Set Up Claude Code Hooks",
        },
        {"do": "screenshot", "name": "release-walkthrough.png"},
        {
            "do": "click",
            "selector": ".getting-started-step.expanded .button-container a, .getting-started-step.expanded a.button-link, .getting-started-step.expanded .monaco-button",
            "text": "Set Up Claude Code Hooks",
        },
        # Which file (issue 36 item 11): the per-person one, not the one the team commits.
        {"do": "pick", "row": "Just for me", "filter": ""},
        {"do": "wait-log", "text": "setting up the hooks"},
        {
            "do": "wait-for",
            "selector": ".notifications-toasts .notification-list-item-message",
            "text": "hooks set up",
        },
        {
            "do": "observe-texts",
            "label": "hooks-message",
            "selector": ".notifications-toasts .notification-list-item-message",
            "settleMs": 800,
        },
        {"do": "screenshot", "name": "release-hooks-set-up.png"},
        # The agent works: two turns through the hook command the button wrote.
        {"do": "exec", "label": "turn1", "argv": [*turn, "first prompt: bump alpha", "a.txt", A1]},
        {
            "do": "exec",
            "label": "turn2",
            "argv": [*turn, "second prompt: bump alpha again", "a.txt", A2],
        },
        {"do": "wait-status", "text": "2 turns"},
        {"do": "click", "selector": '.activitybar .action-label[aria-label^="Rewind"]'},
        {"do": "wait-for", "selector": ROW, "text": "second prompt"},
        {"do": "observe-texts", "label": "view", "selector": ROW, "settleMs": 300},
        {"do": "screenshot", "name": "release-turn-list.png"},
        # Rewind the code to the start of turn 1 (the open file follows), then undo it.
        {"do": "open", "file": "a.txt"},
        # The keys go to the editor, not to the walkthrough's webview (which swallows them).
        {"do": "focus", "file": "a.txt"},
        {"do": "command", "title": "Rewind: Rewind to Turn..."},
        {"do": "pick", "row": "#1", "filter": "first prompt"},
        {"do": "pick", "row": "Code only"},
        {"do": "pick", "row": PREVIEW_GO, "filter": ""},  # every restore previews (issue #27)
        {"do": "wait-disk", "file": "a.txt", "content": A0},
        {"do": "wait-editor", "file": "a.txt", "text": A0},
        {"do": "sleep", "ms": 1000},
        {"do": "screenshot", "name": "release-after-rewind.png"},
        {"do": "command", "title": "Rewind: Undo Last Rewind"},
        {"do": "pick", "row": PREVIEW_GO, "filter": ""},
        {"do": "wait-disk", "file": "a.txt", "content": A2},
        {"do": "wait-editor", "file": "a.txt", "text": A2},
        # A restart finds the server through the project's hook settings now (same rewind-ls).
        {"do": "command", "title": "Rewind: Restart Language Server"},
        {"do": "wait-log", "text": "(hook settings)"},
        {"do": "wait-log", "text": "language server running", "count": 2},
    ]
    try:
        url = cs.start(ws)
        config = {
            "url": url,
            "workspace": str(ws),
            "chromium": tools["chromium"],
            "logs": str(cs.user_data / "logs"),
            "steps": steps,
            "timeoutMs": 120000,
        }
        result = run_driver(tools["node"], config, tmp_path, timeout=600)
    finally:
        cs.stop()
    logs = "\n".join(
        p.read_text(errors="replace") for p in (cs.user_data / "logs").rglob("*Rewind*.log")
    )
    context = f"driver log:\n{result['log'][-8000:]}\n--- extension output:\n{logs[-6000:]}"
    assert "error" not in result, f"{result['error']}\n{context}"

    storage = cs.user_data / "User" / "globalStorage" / "rewind-ls.rewind-ls"
    venvs = list(storage.glob(f"server-{VERSION}-py3.*"))
    assert len(venvs) == 1 and (venvs[0] / ".rewind-installed").is_file(), (venvs, context)
    assert f"starting: {venvs[0]}/bin/rewind-ls serve (bundled)" in logs, context
    # The hooks run the bundled venv's Python without `site` (`python -I -S .../__main__.py`, issue
    # #29) through `server-current-py3.N`, a link to the newest bundle's venv, so an extension
    # update does not leave them on a stale path (issue 36 item 11): the restart finds the same
    # install through them.
    current = storage / f"server-current-{venvs[0].name.rsplit('-', 1)[1]}"
    assert current.is_symlink() and current.resolve() == venvs[0].resolve(), (current, context)
    assert any(
        line.startswith(f"starting: {current}/bin/") and line.endswith("(hook settings)")
        for line in logs.splitlines()
    ), context
    # The hooks run the same rewind-ls as the editor (the bundled venv's), by that stable path.
    hook_cmd = next(o for o in result["observations"] if o.get("label") == "turn1")["stdout"]
    assert hook_cmd.strip().startswith(f"'{current}/bin/python' -I -S"), (hook_cmd, context)
    # The hook command names this machine's venv: it went to the per-person file, not the one the
    # team commits.
    settings = json.loads((ws / ".claude" / "settings.local.json").read_text())
    assert str(current) in json.dumps(settings) and str(venvs[0]) not in json.dumps(settings)
    assert not (ws / ".claude" / "settings.json").exists()
    picked = next(o for o in result["observations"] if o.get("label") == "picker:Just for me")
    assert any("For everyone on the project" in r for r in picked["rows"]), picked
    message = next(o for o in result["observations"] if o.get("label") == "hooks-message")["texts"]
    assert any("claude-code hooks set up in .claude/settings.local.json" in m for m in message), (
        message
    )
    rows = next(o for o in result["observations"] if o.get("label") == "view")["texts"]
    assert any("first prompt" in r for r in rows) and any("second prompt" in r for r in rows), rows
    assert (ws / "a.txt").read_text() == A2
