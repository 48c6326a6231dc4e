"""The command line through its per-user fork server (cli/server_client.py, cli/served.py): the
command runs in a child of the server on the caller's own stdin/stdout/stderr and gives the same
bytes and exit code as in-process; signals reach it, it dies with its caller; any failure before it
starts runs the command in-process (once), and a command that started is never run again."""

from __future__ import annotations

import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.agent import FakeClaude
from tests.support.terminal import Terminal

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = Path(sys.executable).parent / "rewind-ls"
# The console script as a person runs it (pip's template), else `python -m rewind_ls` (which goes
# through the same `cli.main`).
PROGRAM = [str(SCRIPT)] if SCRIPT.exists() else [sys.executable, "-m", "rewind_ls"]


def env_for(home: Path, **extra: str) -> dict[str, str]:
    env = {**os.environ, "REWIND_LS_HOME": str(home), "REWIND_LS_HOOK_SERVER_IDLE": "30"}
    env.pop("REWIND_LS_HOOK_SERVER", None)  # conftest turns the servers off for other tests
    env.update(extra)
    return env


def in_process(env: dict[str, str]) -> dict[str, str]:
    return {**env, "REWIND_LS_HOOK_SERVER": "0"}


def status(env: dict[str, str]) -> dict[str, str] | None:
    code = (
        "import json; from rewind_ls.core.agents.hook_server import status; "
        "print(json.dumps(status(role='cli')))"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, cwd=ROOT, timeout=30
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)  # type: ignore[no-any-return]


def children(pid: int) -> list[int]:
    out: list[int] = []
    for task in Path(f"/proc/{pid}/task").glob("*/children"):
        try:
            out += [int(p) for p in task.read_text().split()]
        except (FileNotFoundError, ProcessLookupError):
            pass
    return out


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except (FileNotFoundError, ProcessLookupError):
        return False


def wait_for(predicate: Any, timeout: float = 30.0, what: str = "condition") -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def wait_server(env: dict[str, str]) -> dict[str, str]:
    """Until the server is up with its spare child forked (the steady state)."""

    def up() -> dict[str, str] | None:
        info = status(env)
        return info if info and not info.get("stale") and children(int(info["pid"])) else None

    info: dict[str, str] = wait_for(up, what="the command-line server")
    return info


def served(env: dict[str, str]) -> int:
    """Commands the server took, + 1 (its spares: a status request leaves the spare waiting)."""
    info = wait_server(env)
    return int(info["served"])


def run(
    args: list[str], env: dict[str, str], cwd: Path, input: bytes = b""
) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [*PROGRAM, *args], env=env, cwd=cwd, input=input, capture_output=True, timeout=120
    )


@pytest.fixture
def server_env(home: Path) -> Iterator[dict[str, str]]:
    """The environment of commands that go through the server; the servers it started are
    stopped after the test."""
    env = env_for(home)
    yield env
    for _ in range(3):
        info = status(env)
        if info is None:
            return
        try:
            os.kill(int(info["pid"]), signal.SIGTERM)
        except ProcessLookupError:
            pass
        wait_for(lambda pid=int(info["pid"]): not alive(pid), what="the server to stop")


def two_turns(ws: Path, home: Path) -> FakeClaude:
    (ws / "app.py").write_bytes(b"def hello():\n    print('hello')\n")
    agent = FakeClaude(ws, home)
    agent.turn("add bye", {"app.py": b"def hello():\n    pass\n\n\ndef bye():\n    pass\n"})
    agent.turn("a readme", {"README.md": b"# app\n", "app.py": b"def hi():\n    pass\n"})
    return agent


def test_commands_give_the_same_bytes_and_exit_codes_through_the_server(
    ws: Path, home: Path, server_env: dict[str, str]
) -> None:
    two_turns(ws, home)
    first = run(["turns"], server_env, ws)  # no server yet: in-process, and it starts one
    assert first.returncode == 0, first.stderr
    before = served(server_env)
    lines = [
        ["turns"],
        ["turns", "--json"],
        ["--help"],
        ["turns", "--help"],
        ["log", "app.py"],
        ["log", "nothere.py"],  # an error: exit 2, one line on stderr
        ["bogus"],  # argparse's error
        ["turns", "--limit", "x"],
        ["diff", "1"],
        ["--version"],
    ]
    for args in lines:
        ours = run(args, server_env, ws)
        ref = run(args, in_process(server_env), ws)
        assert (ours.returncode, ours.stdout, ours.stderr) == (
            ref.returncode,
            ref.stdout,
            ref.stderr,
        ), args
    assert served(server_env) == before + len(lines)  # each one ran in the server

    # A restore (and its undo) through the server, then the same in-process: same output, same
    # files.
    start = run(["turns", "--json"], in_process(server_env), ws)
    turn = json.loads(start.stdout)["sessions"][0]["turns"][0]["id"]
    before = served(server_env)
    ours = run(["rewind", turn, "--yes"], server_env, ws)
    after_ours = (ws / "app.py").read_bytes(), (ws / "README.md").exists()
    undo_ours = run(["undo", "--yes"], server_env, ws)
    assert served(server_env) == before + 2
    ref = run(["rewind", turn, "--yes"], in_process(server_env), ws)
    after_ref = (ws / "app.py").read_bytes(), (ws / "README.md").exists()
    undo_ref = run(["undo", "--yes"], in_process(server_env), ws)
    assert ours.returncode == ref.returncode == 0, (ours.stderr, ref.stderr)
    assert (ours.stdout, ours.stderr) == (ref.stdout, ref.stderr)
    assert after_ours == after_ref == (b"def hello():\n    print('hello')\n", False)
    assert (undo_ours.returncode, undo_ours.stdout, undo_ours.stderr) == (
        undo_ref.returncode,
        undo_ref.stdout,
        undo_ref.stderr,
    )
    assert (ws / "README.md").read_bytes() == b"# app\n"


def _screen(term: Terminal) -> tuple[str, bytes, int | None]:
    code = term.proc.wait(timeout=60)
    term._pump(0.5)
    return "\n".join(line.rstrip() for line in term.screen.display).rstrip(), term.raw, code


def test_a_terminal_is_the_commands_terminal_through_the_server(
    ws: Path, home: Path, server_env: dict[str, str]
) -> None:
    """isatty, the width, colour: the child writes on the caller's own pty."""
    agent = two_turns(ws, home)
    for i in range(3):
        agent.turn(f"a long prompt number {i} that must be cut to the terminal's width " * 2, {})
    run(["turns"], server_env, ws)
    before = served(server_env)
    shown = {}
    for name, env in (("server", server_env), ("in-process", in_process(server_env))):
        term = Terminal(["turns"], ws, env, columns=52, lines=30, program=PROGRAM)
        shown[name] = _screen(term)
    assert served(server_env) == before + 1
    assert shown["server"] == shown["in-process"]
    text, raw, code = shown["server"]
    assert code == 0
    assert "a long prom…" in text  # cut to the width
    assert max(len(line) for line in text.splitlines()) <= 52
    assert b"\r\n" in raw  # written on a tty (onlcr), not a pipe


def running_child(server: int, ws: Path) -> int:
    """The server's child running a command in `ws` (the spare's folder is /)."""

    def find() -> int | None:
        for pid in children(server):
            try:
                if os.readlink(f"/proc/{pid}/cwd") == str(ws):
                    return pid
            except OSError:
                pass
        return None

    pid: int = wait_for(find, what="the command's child")
    return pid


def paused_restore(ws: Path, env: dict[str, str], turn: str, mark: Path) -> subprocess.Popen[bytes]:
    """`rewind TURN --yes` (off a terminal: through the server), held by the race tests' pause
    after the files were swapped in, before the backups are dropped (`restore.swap.pause`)."""
    mark.unlink(missing_ok=True)
    paused = {
        **env,
        "REWIND_LS_FAULT": "before-discard:1",
        "REWIND_LS_FAULT_PAUSE": "60",
        "REWIND_LS_FAULT_MARK": str(mark),
    }
    proc = subprocess.Popen(
        [*PROGRAM, "rewind", turn, "--yes"],
        env=paused,
        cwd=ws,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    wait_for(mark.exists, what="the restore to reach its pause")
    return proc


def first_turn(ws: Path, env: dict[str, str]) -> str:
    listing = run(["turns", "--json"], in_process(env), ws)
    return str(json.loads(listing.stdout)["sessions"][0]["turns"][0]["id"])


def files(ws: Path) -> dict[str, bytes]:
    """The workspace's files (a restore's backups named without their random part)."""
    return {
        re.sub(r"\.rewind-[0-9a-f]+\.", ".rewind-*.", p.name): p.read_bytes()
        for p in sorted(ws.iterdir())
        if p.is_file()
    }


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP])
def test_a_signal_to_the_command_reaches_it_in_the_server_and_ends_it_the_same_way(
    ws: Path, home: Path, server_env: dict[str, str], tmp_path: Path, sig: signal.Signals
) -> None:
    """Ctrl-C (SIGINT, which a terminal sends to the command's process group), SIGTERM and
    SIGHUP mid-restore: the child gets it, and the command ends as in-process (same exit
    status, output and files; the next command finishes the interrupted restore the same way)."""
    two_turns(ws, home)
    turn = first_turn(ws, server_env)
    start = files(ws)
    run(["turns"], server_env, ws)
    server = int(wait_server(server_env)["pid"])
    results = {}
    for name, env in (("server", server_env), ("in-process", in_process(server_env))):
        proc = paused_restore(ws, env, turn, tmp_path / "mark")
        if name == "server":
            child = running_child(server, ws)
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=30)
        after = files(ws)
        again = run(["turns"], in_process(env), ws)  # recovers what the restore left
        results[name] = (proc.returncode, out, err, after, again.stderr, files(ws))
        run(["undo", "--yes"], in_process(env), ws)
        assert files(ws) == start, name
    assert results["server"] == results["in-process"]
    assert results["server"][0] == (130 if sig == signal.SIGINT else -sig)
    wait_for(lambda: not alive(child), timeout=10, what="the child to end")
    assert alive(server)


def test_kill_9_of_the_command_kills_its_child_and_the_server_goes_on(
    ws: Path, home: Path, server_env: dict[str, str], tmp_path: Path
) -> None:
    two_turns(ws, home)
    turn = first_turn(ws, server_env)
    run(["turns"], server_env, ws)
    server = int(wait_server(server_env)["pid"])
    before = served(server_env)
    proc = paused_restore(ws, server_env, turn, tmp_path / "mark")
    child = running_child(server, ws)
    proc.kill()
    proc.wait(timeout=30)
    wait_for(lambda: not alive(child), timeout=10, what="the child to die with its client")
    assert alive(server)
    # The next command, through the same server, finishes the restore the kill interrupted.
    again = run(["turns"], server_env, ws)
    assert again.returncode == 0, again.stderr
    assert served(server_env) == before + 2
    assert int(wait_server(server_env)["pid"]) == server
    assert (ws / "app.py").read_bytes() == b"def hello():\n    print('hello')\n"


def test_a_killed_or_stale_server_means_the_command_runs_here_once_and_a_new_server(
    ws: Path, home: Path, server_env: dict[str, str]
) -> None:
    two_turns(ws, home)
    ref = run(["turns"], in_process(server_env), ws)
    run(["turns"], server_env, ws)
    old = int(wait_server(server_env)["pid"])
    for pid in [*children(old), old]:
        os.kill(pid, signal.SIGKILL)
    wait_for(lambda: not alive(old), what="the server to die")
    ours = run(["turns"], server_env, ws)  # the socket is there, nobody listens
    assert (ours.returncode, ours.stdout, ours.stderr) == (ref.returncode, ref.stdout, ref.stderr)
    new = int(wait_server(server_env)["pid"])
    assert new != old
    # A server that is refused (its interpreter differs from the caller's: another PYTHONPATH)
    # leaves the command here, and it runs once.
    before = served(server_env)
    other = {**server_env, "PYTHONPATH": str(ws)}
    ours = run(["turns"], other, ws)
    assert (ours.returncode, ours.stdout, ours.stderr) == (ref.returncode, ref.stdout, ref.stderr)
    assert served(server_env) == before + 1  # its spare took it, answered D and was replaced


def test_a_command_that_started_in_the_server_is_never_run_again(
    ws: Path, home: Path, server_env: dict[str, str]
) -> None:
    """The child dies right after the command's turn is committed (the fault hook's
    `os._exit(137)`): the caller does not run it again (a second turn would be opened) and
    exits as the command did."""
    two_turns(ws, home)
    run(["turns"], server_env, ws)
    results = {}
    for name, env in (("server", server_env), ("in-process", in_process(server_env))):
        before = served(server_env)
        begin = ["record", "begin-turn", "--session", f"s-{name}", "--prompt", "once"]
        # The third commit of `begin-turn` is its turn's (checked: 1 and 2 leave no turn).
        proc = run(begin, {**env, "REWIND_LS_FAULT": "after-commit:3"}, ws)
        results[name] = proc
        if name == "server":
            assert served(server_env) == before + 1
        listing = run(["turns", "--json", "--session", f"s-{name}"], in_process(server_env), ws)
        turns = json.loads(listing.stdout)["sessions"][0]["turns"]
        assert [t["prompt"] for t in turns] == ["once"], name
    # The server reaps the child and tells the caller how it ended: the same exit status.
    ours, ref = results["server"], results["in-process"]
    assert (ours.returncode, ours.stdout, ours.stderr) == (137, b"", b"")
    assert (ref.returncode, ref.stdout, ref.stderr) == (137, b"", b"")


def test_terminal_programs_that_need_the_terminal_stay_in_process(
    ws: Path, home: Path, server_env: dict[str, str]
) -> None:
    """The picker (no command), the pager (`diff`/`blame` on a terminal), and on a terminal the
    commands that may open the picker to choose a turn or prompt (`rewind`, `revert`, `undo`,
    `summarize`) run in the caller's process: the server's child has no controlling terminal."""
    two_turns(ws, home)
    run(["turns"], server_env, ws)
    before = served(server_env)
    for args in (["diff", "1"], ["blame", "app.py"], ["revert"]):
        term = Terminal(args, ws, {**server_env, "PAGER": "cat"}, program=PROGRAM)
        if args == ["revert"]:
            term.send("esc")
            time.sleep(0.5)
            term.send("ctrl-c")
        _screen(term)
    assert served(server_env) == before
    # Off a terminal the same commands go through the server.
    run(["diff", "1"], server_env, ws)
    assert served(server_env) == before + 1


def test_ctrl_z_stops_the_command_and_its_child_and_fg_continues_both(
    ws: Path, home: Path, server_env: dict[str, str]
) -> None:
    """SIGTSTP (what Ctrl-Z sends the foreground job) stops the caller and its child (SIGSTOP:
    a SIGTSTP is discarded in the server's orphaned process group); SIGCONT (`fg`) continues
    both, and the command ends normally."""
    from rewind_ls.core.store import DB_NAME, store_dir_for

    two_turns(ws, home)
    run(["turns"], server_env, ws)
    server = int(wait_server(server_env)["pid"])
    conn = sqlite3.connect(os.path.join(store_dir_for(str(ws), str(home)), DB_NAME), timeout=30)
    conn.isolation_level = None
    conn.execute("BEGIN IMMEDIATE")  # the scan waits for the store's write lock
    try:
        # Its own process group under this process, in this session, as a shell's job is: in a
        # group with no parent in the session outside it (orphaned) the kernel discards SIGTSTP,
        # for the command in-process too (the client then continues its child at once).
        proc = subprocess.Popen(
            [*PROGRAM, "scan"],
            env=server_env,
            cwd=ws,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            preexec_fn=os.setpgrp,
        )
        child = running_child(server, ws)

        def state(pid: int) -> str:
            return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]

        proc.send_signal(signal.SIGTSTP)
        wait_for(lambda: state(proc.pid) == "T" and state(child) == "T", what="both stopped")
        proc.send_signal(signal.SIGCONT)
        wait_for(lambda: state(proc.pid) != "T" and state(child) != "T", what="both running")
    finally:
        conn.rollback()
        conn.close()
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert b"scanned" in out


def test_doctor_says_whether_the_command_line_server_is_up(
    ws: Path, home: Path, server_env: dict[str, str]
) -> None:
    """Doctor names the command line's server beside the hooks' (a check, never a failure); asked
    through that server, its own child reaches it for the status."""

    def said(env: dict[str, str]) -> str:
        proc = run(["doctor", "--json"], env, ws)
        checks = json.loads(proc.stdout)["checks"]
        (check,) = [c for c in checks if c["name"] == "command-line server"]
        assert check["ok"]
        return str(check["detail"])

    assert said(in_process(server_env)).startswith("off (REWIND_LS_HOOK_SERVER=0)")
    first = said(server_env)  # in-process: no server yet; it starts one
    assert first.startswith("not running: the next command starts it"), first
    info = wait_server(server_env)
    detail = said(server_env)
    assert detail.startswith(f"running (pid {info['pid']}"), detail
    assert str(ROOT / "rewind_ls") in detail and info["python"] in detail
