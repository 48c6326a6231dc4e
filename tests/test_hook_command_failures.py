"""The hook command and `install` when the ground moves under them (issue 37): a hook during a
`pip install` of a new version (its package half replaced) exits 0 with one line, and records the
event when the files are back within its wait; `install` with a settings folder that is a file or
read-only says so in one line; `--version` and a failing command start no server."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest

from tests.test_hook_server import server_env

ROOT = Path(__file__).resolve().parents[1]
PY = sys.executable


def copied_package(tmp_path: Path) -> Path:
    """A copy of the package to break (the hook command runs `__main__.py` of its folder)."""
    dest = tmp_path / "site"
    shutil.copytree(ROOT / "rewind_ls", dest / "rewind_ls", ignore=shutil.ignore_patterns("*.pyc"))
    return dest / "rewind_ls"


def hook(package: Path, env: dict[str, str], payload: dict[str, object]) -> tuple[int, str, float]:
    start = time.monotonic()
    proc = subprocess.run(
        [PY, "-I", "-S", str(package / "__main__.py"), "hook", "claude-code"],
        input=json.dumps(payload).encode(),
        env=env,
        capture_output=True,
        timeout=60,
    )
    return proc.returncode, proc.stderr.decode(), time.monotonic() - start


def turns(ws: Path, env: dict[str, str]) -> list[str]:
    proc = subprocess.run(
        [PY, "-m", "rewind_ls", "turns", "--json"],
        cwd=ws,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    return [t["prompt"] for s in json.loads(proc.stdout)["sessions"] for t in s["turns"]]


@pytest.mark.parametrize("missing", ["core/agents/hook_client.py", "core/agents/hook_process.py"])
def test_a_hook_while_its_package_is_half_installed_says_so_in_one_line(
    tmp_path: Path, missing: str
) -> None:
    """A module of the hook's path gone (pip removed the old files, the new ones not in yet):
    exit 0, one line on stderr naming it, no traceback."""
    package = copied_package(tmp_path)
    (package / missing).unlink()
    ws = tmp_path / "ws"
    ws.mkdir()
    env = {**os.environ, "REWIND_LS_HOME": str(tmp_path / "home")}
    payload = {"session_id": "s", "cwd": str(ws), "hook_event_name": "UserPromptSubmit"}
    code, err, _ = hook(package, env, {**payload, "prompt": "p"})
    assert code == 0
    assert "Traceback" not in err and err.count("\n") == 1, err
    assert err.startswith("rewind-ls hook: being installed") and "not recorded" in err, err


def test_a_hook_whose_modules_come_back_within_its_wait_records_the_event(tmp_path: Path) -> None:
    """The hook process's module is missing when the hook starts and is put back 0.5 s later
    (the new version's file written): the hook waited for it and recorded the prompt."""
    package = copied_package(tmp_path)
    module = package / "core" / "agents" / "hook_process.py"
    aside = tmp_path / "hook_process.py"
    module.rename(aside)
    ws = tmp_path / "ws"
    ws.mkdir()
    env = {**os.environ, "REWIND_LS_HOME": str(tmp_path / "home")}
    payload = {"session_id": "s", "cwd": str(ws), "hook_event_name": "UserPromptSubmit"}
    back = threading.Timer(0.5, lambda: aside.rename(module))
    back.start()
    try:
        code, err, took = hook(package, env, {**payload, "prompt": "typed while installing"})
    finally:
        back.join()
    assert (code, err) == (0, ""), err
    assert took >= 0.5
    assert turns(ws, env) == ["typed while installing"]


def test_install_into_a_settings_folder_that_is_a_file_is_one_clear_line(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / ".claude").write_text("not a folder\n")
    proc = subprocess.run(
        [PY, "-m", "rewind_ls", "install", "claude-code"],
        cwd=ws,
        env={**os.environ, "REWIND_LS_HOME": str(tmp_path / "home")},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert ".claude" in proc.stderr and "nothing was changed" in proc.stderr, proc.stderr
    assert (ws / ".claude").read_text() == "not a folder\n"


def test_install_into_a_read_only_settings_folder_is_one_clear_line(tmp_path: Path) -> None:
    """Read-only: the folder made immutable (`chattr +i`: root ignores modes) or, for another
    user, mode 0555."""
    ws = tmp_path / "ws"
    (ws / ".claude").mkdir(parents=True)
    (ws / ".claude" / "settings.json").write_text("{}\n")
    if os.geteuid() == 0:
        if subprocess.run(["chattr", "+i", str(ws / ".claude")], capture_output=True).returncode:
            pytest.skip("chattr +i is not supported on this file system")
    else:
        (ws / ".claude").chmod(0o555)
    try:
        proc = subprocess.run(
            [PY, "-m", "rewind_ls", "install", "claude-code"],
            cwd=ws,
            env={**os.environ, "REWIND_LS_HOME": str(tmp_path / "home")},
            capture_output=True,
            text=True,
            timeout=60,
        )
    finally:
        if os.geteuid() == 0:
            subprocess.run(["chattr", "-i", str(ws / ".claude")], check=True)
        else:
            (ws / ".claude").chmod(0o755)
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert "settings.json" in proc.stderr and "nothing was changed" in proc.stderr, proc.stderr
    assert (ws / ".claude" / "settings.json").read_text() == "{}\n"
    assert os.listdir(ws / ".claude") == ["settings.json"]


@pytest.mark.parametrize("argv", [["--version"], ["rewind", "99"], ["no-such-command"]])
def test_commands_start_no_server(tmp_path: Path, argv: list[str]) -> None:
    """With the hook server on, `--version` and failing commands leave no server, socket or lock
    behind (there is no command-line server; the hook server starts only from a hook)."""
    ws = tmp_path / "ws"
    ws.mkdir()
    tmp = Path(tempfile.mkdtemp(prefix="rwls-", dir="/tmp"))
    try:
        env = server_env(tmp_path / "home", TMPDIR=str(tmp))
        env.pop("XDG_RUNTIME_DIR", None)
        subprocess.run(
            [PY, "-m", "rewind_ls", *argv], cwd=ws, env=env, capture_output=True, timeout=60
        )
        script = ROOT / ".venv" / "bin" / "rewind-ls"
        if script.exists():
            subprocess.run([script, *argv], cwd=ws, env=env, capture_output=True, timeout=60)
        time.sleep(0.5)  # what a start would have spawned has had time to make its files
        assert [str(p.relative_to(tmp)) for p in tmp.rglob("*")] == []
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
