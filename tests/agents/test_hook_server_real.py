"""The real Claude Code binary's hooks through the hook server (core/agents/hook_server.py): the
same two turns with the server and without it (`REWIND_LS_HOOK_SERVER=0`) record the same."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from tests.support.fake_anthropic import FakeAnthropic, text, tool_use
from tests.support.real_agent import rewind_ls_command
from tests.support.real_claude import RealClaude, claude_binary

pytestmark = pytest.mark.agent


def status(home: str) -> dict[str, str] | None:
    """`hook_server_status.status` as the hooks see it: from the interpreter `rewind-ls install` ran on
    (the entry point's, which may be the venv's `python3` where this test's is `python`), since
    the socket is keyed on the interpreter's path."""
    with open(rewind_ls_command()[0]) as f:
        python = f.readline()[2:].strip()
    code = (
        "import json, sys; from rewind_ls.core.agents.hook_server_status import status; "
        "print(json.dumps(status(sys.argv[1])))"
    )
    proc = subprocess.run(
        [python, "-c", code, home], capture_output=True, text=True, timeout=30, check=True
    )
    return json.loads(proc.stdout)  # type: ignore[no-any-return]


@pytest.fixture(scope="module")
def binary() -> Path:
    return claude_binary()


def _records(claude: RealClaude) -> list[tuple[Any, ...]]:
    """Every version of every file `rewind-ls log` lists, and every turn's prompt and files
    (session ids and times aside: the two runs are two sessions)."""
    out: list[tuple[Any, ...]] = []
    for path in sorted(p.name for p in claude.project.iterdir() if p.is_file()):
        for v in json.loads(claude.rewind_ls("log", path, "--json").stdout)["versions"]:
            keys = ("number", "source", "change", "prompt", "hash", "mode")
            out.append((path, *(v[k] for k in keys)))
    listing = json.loads(claude.rewind_ls("turns", "--json").stdout)
    for turn in listing["sessions"][0]["turns"]:
        files = [{k: v for k, v in f.items() if k != "uri"} for f in turn["files"]]
        out.append((turn["number"], turn["prompt"], json.dumps(files, sort_keys=True)))
    return out


def _session(binary: Path, base: Path, server: bool) -> tuple[list[tuple[Any, ...]], int]:
    """Two turns (Write, Edit, a Bash that changes two files; then a Write in a resumed
    session); the records, and how many connections the hook server answered meanwhile."""
    project = base / "proj"
    with FakeAnthropic() as api:
        claude = RealClaude(binary, api, base, project)
        if not server:
            claude.env["REWIND_LS_HOOK_SERVER"] = "0"
        claude.install_hooks()
        claude.allow("Write", "Edit", "Bash")
        (project / "pre.txt").write_text("before the session\n")
        p = str(project)
        home = str(claude.rewind_home)
        api.add(
            [tool_use("Write", {"file_path": p + "/a.txt", "content": "alpha\n"})],
            [
                tool_use(
                    "Edit", {"file_path": p + "/a.txt", "old_string": "alpha", "new_string": "A"}
                )
            ],
            [tool_use("Bash", {"command": "echo more >> pre.txt && echo x > x.txt"})],
            [text("turn one done")],
        )
        first = claude.run("turn one")
        before = 0
        if server:
            # The first hook ran in-process and started the server; wait until it answers.
            deadline = time.monotonic() + 30
            while (info := status(home)) is None and time.monotonic() < deadline:
                time.sleep(0.1)
            assert info is not None, "the first hook did not start a hook server"
            before = int(info["served"])
        api.add([tool_use("Write", {"file_path": p + "/b.txt", "content": "beta\n"})], [text("ok")])
        claude.run("turn two", resume=first["session_id"])
        served = 0
        if server:
            info = status(home)
            assert info is not None
            served = int(info["served"]) - before - 1  # the status request itself
            os.kill(int(info["pid"]), signal.SIGTERM)
        else:
            assert status(home) is None
        return _records(claude), served


def test_real_claudes_hooks_go_through_the_server_and_record_what_in_process_records(
    binary: Path, tmp_path: Path
) -> None:
    through, served = _session(binary, tmp_path / "server", server=True)
    alone, _ = _session(binary, tmp_path / "in-process", server=False)
    # Turn two alone: SessionStart (resume), UserPromptSubmit, PreToolUse, PostToolUse, Stop.
    assert served >= 5, served
    assert through == alone
    assert any(r[0] == "x.txt" for r in through)  # the Bash's new file, found by the scan
