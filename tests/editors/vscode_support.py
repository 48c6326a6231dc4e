"""Running a real VS Code for tests.

code-server 4.100.3 (installed by scripts/install-vscode-env.sh into .tools/), a fresh profile per
test, the packaged extension installed from its .vsix, and the node playwright-core driver
(editors/vscode/test/e2e/driver.mjs) that works the UI like a person.

Nothing here skips: a missing tool is an error that says how to install it.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import zipfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
TOOLS = Path(os.environ.get("REWIND_TOOLS_DIR", REPO / ".tools"))
CODE_SERVER = TOOLS / "code-server" / "node_modules" / "code-server" / "out" / "node" / "entry.js"
VSIX = Path(os.environ.get("REWIND_VSIX", TOOLS / "rewind-ls.vsix"))
EXT_DIR = REPO / "editors" / "vscode"
DRIVER = EXT_DIR / "test" / "e2e" / "driver.mjs"
PYTHON_STANDIN = Path(__file__).resolve().parent / "vscode" / "python_standin"
ARTIFACTS = REPO / "test-artifacts"
INSTALL_HINT = "run `bash scripts/install-vscode-env.sh` (or scripts/test.sh) first"


def require_tools() -> dict[str, str]:
    """Paths of node and Chromium; an AssertionError naming the fix when any tool is missing."""
    node = shutil.which("node")
    chromium = (
        os.environ.get("REWIND_CHROMIUM")
        or shutil.which("chromium")
        or shutil.which("chromium-browser")
    )
    missing = []
    if not node:
        missing.append("node")
    if not CODE_SERVER.is_file():
        missing.append(f"code-server ({CODE_SERVER})")
    if not chromium:
        missing.append("chromium")
    if not VSIX.is_file():
        missing.append(f"the packaged extension ({VSIX})")
    if not (EXT_DIR / "node_modules" / "playwright-core").is_dir():
        missing.append("playwright-core (editors/vscode/node_modules)")
    if missing:
        raise AssertionError(f"VS Code e2e tools missing: {', '.join(missing)}; {INSTALL_HINT}")
    assert node and chromium
    return {"node": node, "chromium": chromium}


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def base_profile_settings() -> dict[str, Any]:
    """User settings of a test profile: no trust dialog, no welcome page, no preview tabs, quiet."""
    return {
        "security.workspace.trust.enabled": False,
        "workbench.startupEditor": "none",
        "workbench.editor.enablePreview": False,
        "workbench.tips.enabled": False,
        "workbench.enableExperiments": False,
        "telemetry.telemetryLevel": "off",
        "update.mode": "none",
        "extensions.autoCheckUpdates": False,
        "extensions.autoUpdate": False,
        "extensions.ignoreRecommendations": True,
        "files.autoSave": "off",
        "files.hotExit": "off",
        "git.enabled": False,
        "editor.minimap.enabled": False,
        "chat.disableAIFeatures": True,
        "workbench.secondarySideBar.defaultVisibility": "hidden",
        # The DOM renderer: the terminal's text is then readable by the driver.
        "terminal.integrated.gpuAcceleration": "off",
        "window.restoreWindows": "none",
        # The driver types whole texts (settings JSON): no auto-closing or auto-indent on the way.
        "editor.autoClosingBrackets": "never",
        "editor.autoClosingQuotes": "never",
        "editor.autoSurround": "never",
        "editor.autoIndent": "none",
        "editor.formatOnType": False,
        "editor.acceptSuggestionOnEnter": "off",
        "editor.quickSuggestions": {"other": False, "comments": False, "strings": False},
    }


def write_profile(user_data: Path, settings: Mapping[str, Any]) -> None:
    """A fresh user profile: the base settings plus `settings`."""
    (user_data / "User").mkdir(parents=True, exist_ok=True)
    merged = {**base_profile_settings(), **settings}
    (user_data / "User" / "settings.json").write_text(json.dumps(merged, indent=2))


class CodeServer:
    """One code-server process on a free loopback port, with its own profile and extensions."""

    def __init__(self, tmp: Path, env: Mapping[str, str], node: str) -> None:
        self.tmp = tmp
        self.node = node
        self.user_data = tmp / "user-data"
        self.extensions = tmp / "extensions"
        self.log = tmp / "code-server.log"
        self.env = {
            **os.environ,
            **env,
            "XDG_CONFIG_HOME": str(tmp / "xdg-config"),
            "XDG_DATA_HOME": str(tmp / "xdg-data"),
            "XDG_CACHE_HOME": str(tmp / "xdg-cache"),
        }
        self.env.pop("VSCODE_IPC_HOOK_CLI", None)
        self.proc: subprocess.Popen[bytes] | None = None
        self.port = 0

    def _cli(self, *args: str) -> list[str]:
        return [
            self.node,
            str(CODE_SERVER),
            "--user-data-dir",
            str(self.user_data),
            "--extensions-dir",
            str(self.extensions),
            *args,
        ]

    def install_extension(self, vsix: Path, ext_id: str = "rewind-ls.rewind-ls") -> None:
        proc = subprocess.run(
            self._cli("--install-extension", str(vsix)),
            env=self.env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert proc.returncode == 0, f"--install-extension failed: {proc.stdout}\n{proc.stderr}"
        assert list(self.extensions.glob(f"{ext_id}-*")), (
            f"extension not installed: {proc.stdout}\n{proc.stderr}"
        )

    def start(self, workspace: Path) -> str:
        self.port = free_port()
        out = self.log.open("wb")
        self.proc = subprocess.Popen(
            self._cli(
                "--auth",
                "none",
                "--bind-addr",
                f"127.0.0.1:{self.port}",
                "--disable-telemetry",
                "--disable-update-check",
                "--disable-workspace-trust",
                "--disable-getting-started-override",
                str(workspace),
            ),
            env=self.env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise AssertionError(
                    f"code-server exited {self.proc.returncode}:\n{self.log.read_text()}"
                )
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1):
                    return f"http://127.0.0.1:{self.port}"
            except OSError:
                time.sleep(0.2)
        raise AssertionError(f"code-server did not listen on {self.port}:\n{self.log.read_text()}")

    def stop(self) -> None:
        """Stops the code-server we started: its own process group (server, extension hosts)."""
        if self.proc is None:
            return
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout=10)
        # Children that outlived the parent in its group (extension host, language server).
        with suppress(ProcessLookupError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc = None


def python_extension_standin(tmp: Path) -> Path:
    """A .vsix of tests/editors/vscode/python_standin (id ms-python.python): the part of the Python
    extension's API the Rewind extension reads, with the interpreter taken from
    python.defaultInterpreterPath. The real Python extension cannot be installed offline."""
    vsix = tmp / "python-standin.vsix"
    with zipfile.ZipFile(vsix, "w") as z:
        for f in sorted(PYTHON_STANDIN.iterdir()):
            z.write(f, f"extension/{f.name}")
    return vsix


@contextmanager
def code_server(
    tmp: Path,
    env: Mapping[str, str],
    settings: Mapping[str, Any],
    node: str,
    extra_extensions: Mapping[str, Path] | None = None,
) -> Iterator[CodeServer]:
    """code-server with the packaged extension and `extra_extensions` ({id: vsix}) installed."""
    cs = CodeServer(tmp, env, node)
    write_profile(cs.user_data, settings)
    cs.install_extension(VSIX)
    for ext_id, vsix in (extra_extensions or {}).items():
        cs.install_extension(vsix, ext_id)
    try:
        yield cs
    finally:
        cs.stop()


def run_driver(
    node: str, config: dict[str, Any], tmp: Path, timeout: float = 240
) -> dict[str, Any]:
    """Runs driver.mjs with `config`; returns {observations, error?} and the driver's log."""
    ARTIFACTS.mkdir(exist_ok=True)
    result = tmp / "driver-result.json"
    cfg = {**config, "artifacts": str(ARTIFACTS), "result": str(result)}
    cfg_path = tmp / "driver-config.json"
    cfg_path.write_text(json.dumps(cfg))
    proc = subprocess.run(
        [node, str(DRIVER), str(cfg_path)],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=EXT_DIR,
    )
    data: dict[str, Any] = (
        json.loads(result.read_text()) if result.exists() else {"observations": []}
    )
    data["log"] = proc.stdout + proc.stderr
    if proc.returncode != 0 and "error" not in data:
        data["error"] = f"driver exited {proc.returncode}"
    return data


def python_for_server() -> list[str]:
    return [sys.executable, "-m", "rewind_ls", "serve"]
