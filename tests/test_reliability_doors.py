"""Nothing lost, nothing outside (issue #23): each door an attacker or a careless command found,
shut and tested with the real processes (the CLI as a subprocess, the real hook, the server).

Figures for the note are printed at the end of the module (`Tally`).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.conftest import Cli
from tests.support.agent import FakeClaude, run_hook
from tests.support.fault import Tally, env_for, tree_state

TALLY = Tally("doors (issue 23)")


@pytest.fixture(scope="module", autouse=True)
def report() -> Iterator[None]:
    yield
    TALLY.report()


def _no_traceback(proc: subprocess.CompletedProcess[str]) -> None:
    assert "Traceback" not in proc.stderr, proc.stderr
    assert "internal error" not in proc.stderr, proc.stderr


def _turn_count(cli: Cli) -> int:
    return sum(len(s["turns"]) for s in cli.json("turns", "--all")["sessions"])


# --- 1. gc limits ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "args",
    [
        ("--max-bytes", "-5"),
        ("--max-bytes", "0"),
        ("--retention-days", "-1"),
        ("--retention-days", "0"),
    ],
)
def test_gc_refuses_a_limit_that_is_not_positive(
    ws: Path, agent: FakeClaude, cli: Cli, args: tuple[str, str]
) -> None:
    TALLY("attacks")
    agent.turn("one", {"a.txt": "1\n"})
    agent.turn("two", {"a.txt": "2\n"})
    proc = cli("gc", *args, ok=False)
    _no_traceback(proc)
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    assert "must be a positive" in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
    assert _turn_count(cli) == 2


def test_gc_never_drops_the_latest_restore_point(ws: Path, agent: FakeClaude, cli: Cli) -> None:
    """After a forced rewind the restore point holds the only copy of the person's edit: even a
    gc told to drop everything (`--yes`, a one-byte cap) keeps it, and `undo` brings it back."""
    TALLY("attacks")
    agent.turn("one", {"a.txt": "agent 1\n"})
    (ws / "a.txt").write_text("the person's only copy\n")
    cli("rewind", "1", "--yes", "--force")
    assert not (ws / "a.txt").exists()
    cli("gc", "--max-bytes", "1", "--retention-days", "1", "--yes")
    cli("undo", "--yes")
    assert (ws / "a.txt").read_text() == "the person's only copy\n"


def test_gc_asks_before_dropping_an_older_restore_point(
    ws: Path, agent: FakeClaude, cli: Cli
) -> None:
    TALLY("attacks")
    agent.turn("one", {"a.txt": "agent 1\n"})
    (ws / "a.txt").write_text("the person's only copy\n")
    cli("rewind", "1", "--yes", "--force")
    cli("undo", "--yes")  # a second restore point: the first is now an older one
    before = _turn_count(cli)
    proc = cli("gc", "--max-bytes", "1", ok=False)
    _no_traceback(proc)
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    assert "--yes" in proc.stderr and "Nothing dropped" in proc.stderr
    assert _turn_count(cli) == before
    cli("gc", "--max-bytes", "1", "--yes")
    assert (ws / "a.txt").read_text() == "the person's only copy\n"


# --- 2. a parent folder swapped for a link in the middle of a restore ------------------------------


def _race(ws: Path, home: Path, tmp_path: Path, attack: str, *cmd: str) -> subprocess.Popen[bytes]:
    mark = tmp_path / f"mark-{attack}"
    env = env_for(
        home,
        REWIND_LS_FAULT=attack,
        REWIND_LS_FAULT_MARK=str(mark),
        REWIND_LS_FAULT_PAUSE="1.0",
    )
    proc = subprocess.Popen(
        [sys.executable, "-m", "rewind_ls", *cmd, "-C", str(ws), "--yes"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 30
    while not mark.exists():
        assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
        time.sleep(0.002)
    return proc


def _digest(folder: Path) -> dict[str, str]:
    """The files of `folder` by content (a restore's own temporary names left out: they were
    written before the attack moved the folder, and must be gone after)."""
    out = {}
    for p in sorted(folder.rglob("*")):
        if p.is_file() and not p.is_symlink() and ".rewind-" not in p.name:
            out[str(p.relative_to(folder))] = hashlib.sha256(p.read_bytes()).hexdigest()
    return out


@pytest.mark.parametrize("stage", ["before-aside:1", "before-link:1"])
@pytest.mark.parametrize("how", ["link-to-outside", "folder-moved-outside"])
def test_parent_swapped_for_a_link_mid_restore_touches_nothing_outside(
    ws: Path, home: Path, agent: FakeClaude, tmp_path: Path, stage: str, how: str
) -> None:
    """A concurrent `mv sub …; ln -s /outside sub` between the restore's checks and its moves: the
    moves act on the folder that was checked (pinned descriptors) and a folder no longer where it
    was checked is a conflict; not one byte outside the workspace changes."""
    TALLY("attacks")
    TALLY("race windows")
    (ws / "sub").mkdir()
    (ws / "sub" / "keep.txt").write_text("keep\n")
    agent.turn("one", {"sub/a.txt": "the agent's file\n", "sub/keep.txt": "changed\n"})
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "a.txt").write_text(
        "the agent's file\n"
    )  # same bytes as the file the rewind deletes
    (outside / "keep.txt").write_text("changed\n")
    # What `outside` must hold at the end: untouched when a link leads there; when the checked
    # folder itself was moved there, what it held before the restore (rolled back whole).
    expected = _digest(outside)
    proc = _race(ws, home, tmp_path, stage, "rewind", "1")
    if how == "link-to-outside":
        os.rename(ws / "sub", ws / "sub.moved")
        os.symlink(outside, ws / "sub")
    else:
        shutil.rmtree(outside)
        os.rename(ws / "sub", outside)
        os.symlink(outside, ws / "sub")
    _, err = proc.communicate(timeout=60)
    assert b"Traceback" not in err, err
    after_outside = _digest(outside)
    changed = {
        k for k in set(expected) | set(after_outside) if expected.get(k) != after_outside.get(k)
    }
    TALLY("files changed outside", len(changed))
    assert after_outside == expected, (err, expected, after_outside)
    assert not any(".rewind-" in p.name for p in outside.iterdir()), list(outside.iterdir())
    if how == "folder-moved-outside":
        # The checked folder left the workspace: the restore is refused as a conflict, named.
        assert proc.returncode == 3, err
        assert b"sub" in err and b"moved" in err, err


# --- figures ----------------------------------------------------------------------------------------


def test_tree_state_helper_is_used() -> None:
    assert tree_state  # imported for the fuzz tests below


# --- 4. names of any legal length -------------------------------------------------------------------


@pytest.mark.parametrize("length", [235, 255])
def test_a_name_of_any_legal_length_is_restored(
    ws: Path, agent: FakeClaude, cli: Cli, length: int
) -> None:
    TALLY("attacks")
    name = "n" * (length - 4) + ".txt"
    assert len(name.encode()) == length
    (ws / name).write_text("before\n")
    (ws / "other.txt").write_text("o0\n")
    agent.turn("one", {name: "after\n", "other.txt": "o1\n", "gone" + "é" * 120: "x\n"})
    cli("rewind", "1", "--yes")
    assert (ws / name).read_text() == "before\n"
    assert (ws / "other.txt").read_text() == "o0\n"
    assert sorted(p.name for p in ws.iterdir()) == sorted([name, "other.txt"])
    cli("undo", "--yes")
    assert (ws / name).read_text() == "after\n"


# --- 5. folder <-> file, and folders a turn made --------------------------------------------------


def test_a_folder_that_became_a_file_is_a_conflict_with_its_reason(
    ws: Path, agent: FakeClaude, cli: Cli
) -> None:
    TALLY("attacks")
    (ws / "sub").mkdir()
    (ws / "sub" / "f.txt").write_text("0\n")
    agent.turn("one", {"sub/f.txt": "1\n"})
    shutil.rmtree(ws / "sub")
    (ws / "sub").write_text("now a file\n")
    for extra in ((), ("--force",)):
        proc = cli("rewind", "1", "--yes", *extra, ok=False)
        _no_traceback(proc)
        assert proc.returncode == 3, (proc.stdout, proc.stderr)
        assert "sub is a file now where a folder was" in proc.stderr, proc.stderr
        assert (ws / "sub").read_text() == "now a file\n"


def test_a_file_that_became_a_folder_is_a_conflict_not_a_success(
    ws: Path, agent: FakeClaude, cli: Cli
) -> None:
    """`rm b.txt; mkdir b.txt; echo x > b.txt/in` in a turn: a rewind of it must not report success
    and leave an empty folder where the person's file was."""
    TALLY("attacks")
    (ws / "b.txt").write_text("b0\n")
    agent.turn("one", {"c.txt": "c1\n"})
    agent.turns += 1
    agent.hook("UserPromptSubmit", prompt="replace")
    agent.shell("rm b.txt && mkdir b.txt && echo x > b.txt/in")
    agent.hook("Stop", stop_hook_active=False)
    proc = cli("rewind", "2", "--yes", ok=False)
    _no_traceback(proc)
    assert proc.returncode == 3, (proc.stdout, proc.stderr)
    assert "b.txt: a folder now where a file was" in proc.stderr, proc.stderr
    assert (ws / "b.txt" / "in").read_text() == "x\n"


def test_a_rewind_reaches_the_turns_start_folders_included(
    ws: Path, agent: FakeClaude, cli: Cli
) -> None:
    """Folders a turn created are removed by its rewind (and made again by the undo); a folder
    that holds anything else stays."""
    TALLY("attacks")
    (ws / "keep").mkdir()
    (ws / "keep" / "k.txt").write_text("k\n")
    start = tree_state(ws)
    agent.turn("one", {"sub/deeper/new.txt": "n\n", "keep/new.txt": "n\n", "top.txt": "t\n"})
    after = tree_state(ws)
    cli("rewind", "1", "--yes")
    assert tree_state(ws) == start
    cli("undo", "--yes")
    assert tree_state(ws) == after


# --- 7. every bad argument a one-line error and a non-zero exit -----------------------------------


@pytest.mark.parametrize(
    "args, says",
    [
        (("rewind", "99999999999999999999999", "--yes"), "turn 99999999999999999999999"),
        (("revert", "99999999999999999999999", "--yes"), "turn 99999999999999999999999"),
        (("rewind", "1", "--path", "nope.txt", "--yes"), "nope.txt"),
        (("rewind", "2", "--path", "a.txt", "--yes"), "a.txt"),
        (("serve", "--tcp", "999.999.1.1:99999"), "--tcp"),
        (("serve", "--tcp", "nohostport"), "--tcp"),
        (("serve", "--tcp", "999.999.1.1:8080"), "999.999.1.1"),
        (("serve", "--tcp", "203.0.113.7:8080"), "cannot listen there"),
    ],
)
def test_bad_argument_is_one_line_and_non_zero(
    ws: Path, agent: FakeClaude, cli: Cli, args: tuple[str, ...], says: str
) -> None:
    TALLY("attacks")
    agent.turn("one", {"a.txt": "1\n"})
    agent.turn("two", {"b.txt": "2\n"})
    before = tree_state(ws)
    proc = cli(*args, ok=False)
    _no_traceback(proc)
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and says in lines[0], proc.stderr
    assert tree_state(ws) == before


def test_nul_in_a_hook_path_is_named_not_an_internal_error(ws: Path, agent: FakeClaude) -> None:
    TALLY("attacks")
    agent.turn("one", {"a.txt": "1\n"})
    before = tree_state(ws)
    for event in ("PreToolUse", "PostToolUse"):
        payload = {
            **agent._base(event),
            "tool_name": "Write",
            "tool_input": {"file_path": f"{ws}/a\x00b.txt", "content": "x"},
        }
        proc = run_hook(payload, agent.env)
        assert proc.returncode == 0  # a hook never blocks the agent
        err = proc.stderr.decode()
        assert "internal error" not in err and "Traceback" not in err, err
        assert "tool_input.file_path' contains a NUL byte" in err, err
    assert tree_state(ws) == before


async def test_record_edit_refuses_an_untitled_or_malformed_uri(tmp_path: Path) -> None:
    from pygls.exceptions import JsonRpcException

    from tests.support.lsp_client import start

    ws, home = tmp_path / "ws", tmp_path / "home"
    ws.mkdir()
    client, _ = await start(ws, home)
    try:
        send = client.protocol.send_request_async
        await send("rewind/beginTurn", {"sessionId": "lsp-agent", "prompt": "p"})
        for uri in ("untitled:Untitled-1", "file:relative.txt", "file:", "vscode-notebook-cell:x"):
            TALLY("attacks")
            with pytest.raises(JsonRpcException) as err:
                await send(
                    "rewind/recordEdit",
                    {"sessionId": "lsp-agent", "uri": uri, "phase": "before", "text": "x"},
                )
            assert "URI" in err.value.message, (uri, err.value.message)
        assert sorted(p.name for p in ws.iterdir()) == []
    finally:
        await client.shutdown_session()


# --- 3. a store home another user can change -------------------------------------------------------


def _foreign_folder(tmp_path: Path) -> Path:
    """A world-writable folder owned by another user (uid 65534, `nobody`): made with chown,
    which needs root (CI runs as root)."""
    shared = tmp_path / "shared"
    shared.mkdir()
    try:
        os.chown(shared, 65534, 65534)
    except PermissionError:
        pytest.skip("chown to another user needs root")
    shared.chmod(0o777)
    return shared


@pytest.mark.parametrize("where", ["inside-foreign-folder", "home-owned-by-another"])
def test_a_store_home_another_user_can_change_is_refused(
    ws: Path, tmp_path: Path, where: str
) -> None:
    TALLY("attacks")
    shared = _foreign_folder(tmp_path)
    home = shared / "rewind-home"
    if where == "home-owned-by-another":
        home = tmp_path / "planted-home"
        home.mkdir(mode=0o700)
        os.chown(home, 65534, 65534)
    (ws / "a.txt").write_text("0\n")
    agent = FakeClaude(ws, home)
    victim = tmp_path / "victim.txt"
    victim.write_text("the victim's file\n")
    if where == "inside-foreign-folder":
        # The other user plants a link as the log before the victim's first hook.
        home.mkdir(mode=0o700, exist_ok=True)
        os.symlink(victim, home / "rewind-ls.log")
        os.chown(home / "rewind-ls.log", 65534, 65534, follow_symlinks=False)
    proc = agent.hook("UserPromptSubmit", prompt="one")
    err = proc.stderr.decode()
    assert proc.returncode == 0  # the agent is never blocked
    assert "store home" in err and "refused" in err, err
    assert victim.read_text() == "the victim's file\n"
    assert not (home / "workspaces").exists()
    doctor = Cli(ws, home)("doctor", ok=False)
    _no_traceback(doctor)
    assert doctor.returncode == 2
    assert "FAIL store home" in doctor.stdout, doctor.stdout
    rewind = Cli(ws, home)("turns", ok=False)
    assert rewind.returncode == 2 and "refused" in rewind.stderr, rewind.stderr


@pytest.fixture
def made_group() -> Iterator[Callable[..., int]]:
    """Makes groups for a test (groupadd, as root) and deletes them after."""
    import grp

    made: list[str] = []

    def make(*members: str) -> int:
        name = f"rwls{os.getpid()}x{len(made)}"
        args = ["groupadd", name] + (["-U", ",".join(members)] if members else [])
        if os.geteuid() != 0 or shutil.which("groupadd") is None:
            pytest.skip("making a group needs root and groupadd")
        subprocess.run(args, check=True, capture_output=True)
        made.append(name)
        return grp.getgrnam(name).gr_gid

    yield make
    for name in made:
        subprocess.run(["groupdel", name], capture_output=True)


@pytest.mark.parametrize("group", ["ours-alone", "with-another-member", "not-our-primary"])
def test_a_group_writable_folder_above_the_home_is_fine_only_when_the_group_is_ours_alone(
    ws: Path, tmp_path: Path, made_group: Callable[..., int], group: str
) -> None:
    """User private groups (/home/alice is alice:alice 0775 on Debian, Ubuntu, Fedora): a
    folder only our own primary group can write is accepted; a group another user is in, or a
    group that is not ours, is refused as before."""
    import grp
    import pwd

    TALLY("attacks")
    me = pwd.getpwuid(os.geteuid())
    if group == "ours-alone":
        if grp.getgrgid(me.pw_gid).gr_mem not in ([], [me.pw_name]):
            pytest.skip("this user's primary group has other members")
        gid = me.pw_gid
    else:
        gid = made_group("nobody") if group == "with-another-member" else made_group()
    parent = tmp_path / "alice"
    parent.mkdir()
    os.chown(parent, -1, gid)
    parent.chmod(0o775)
    home = parent / "rewind-home"
    agent = FakeClaude(ws, home)
    agent.turn("one", {"a.txt": "1\n"})
    doctor = Cli(ws, home)("doctor", ok=False)
    _no_traceback(doctor)
    if group == "ours-alone":
        assert doctor.returncode == 0, doctor.stdout
        assert _prompts(Cli(ws, home)) == ["one"]
    else:
        assert doctor.returncode == 2
        assert f"FAIL store home: {home}: {parent} (above it) is writable by other users" in (
            doctor.stdout
        ), doctor.stdout
        assert not (home / "workspaces").exists()


def test_the_log_is_not_opened_through_a_link(ws: Path, home: Path, tmp_path: Path) -> None:
    TALLY("attacks")
    victim = tmp_path / "victim.txt"
    victim.write_text("the victim's file\n")
    home.mkdir(mode=0o700)
    os.symlink(victim, home / "rewind-ls.log")
    agent = FakeClaude(ws, home)
    agent.hook("UserPromptSubmit", prompt="x" * 10)
    bad = run_hook(b"not json", {**agent.env, "REWIND_LS_DEBUG": "1"})  # logs an error
    assert bad.returncode == 0
    assert victim.read_text() == "the victim's file\n"


# --- 6. bounded prompts -------------------------------------------------------------------------------


def _prompts(cli: Cli) -> list[str]:
    return [t["prompt"] for s in cli.json("turns", "--all")["sessions"] for t in s["turns"]]


def test_a_huge_hook_prompt_is_stored_bounded_and_says_so(
    ws: Path, home: Path, agent: FakeClaude, cli: Cli
) -> None:
    TALLY("attacks")
    huge = "p" * (5 << 20)  # 5 MB (the probe used 50 MB; the cap is what is tested)
    proc = agent.hook("UserPromptSubmit", prompt=huge)
    assert proc.returncode == 0 and not proc.stderr, proc.stderr
    agent.hook("Stop", stop_hook_active=False)
    (prompt,) = _prompts(cli)
    assert len(prompt) < 70_000, len(prompt)
    assert prompt.startswith("ppp") and "prompt cut by rewind-ls" in prompt
    assert str(len(huge) - 64 * 1024) in prompt
    from tests.support.fault import query

    (stored,) = query(ws, home, "SELECT length(prompt) FROM turns")[0]
    assert stored < 70_000


def test_a_listing_never_loads_an_old_huge_prompt_whole(
    ws: Path, home: Path, agent: FakeClaude, cli: Cli
) -> None:
    """A store written before the cap may hold a huge prompt: listings read a bounded part."""
    import sqlite3

    from tests.support.fault import store_db

    TALLY("attacks")
    agent.turn("one", {"a.txt": "1\n"})
    conn = sqlite3.connect(store_db(ws, home))
    conn.execute("UPDATE turns SET prompt = ?", ("q" * (5 << 20),))
    conn.commit()
    conn.close()
    (prompt,) = _prompts(cli)
    assert len(prompt) <= 64 * 1024 + 100


# --- fuzz: the CLI's arguments, as processes ----------------------------------------------------------

# Every command that reads or plans (never `--yes`: a valid `rewind 1 --yes` is meant to change
# the workspace; `serve`, `hook`, `install`, `demo` and the picker are driven elsewhere).
_COMMANDS = ["turns", "diff", "log", "rewind", "revert", "undo", "gc", "scan", "doctor", "import"]
_VALUES = [
    "1",
    "0",
    "-1",
    "99999999999999999999999",
    "-99999999999999999999999",
    "1e9",
    "",
    " ",
    "nope.txt",
    "a.txt",
    "../outside.txt",
    "/etc/passwd",
    "sub/../a.txt",
    "\u00e9\u0301",
    "\udcff",
    "x" * 300,
    "--",
    "-",
    "both",
    "code",
    "conversation",
    "%s%n",
    "file:///etc/passwd",
    "untitled:Untitled-1",
]
_OPTIONS = [
    "--path",
    "--session",
    "--scope",
    "--max-bytes",
    "--retention-days",
    "--since",
    "--json",
    "--dry-run",
    "--force",
    "--skip-conflicts",
    "--all",
    "--stat",
    "--moved-from",
    "-C",
]


def _fuzz_budget() -> int:
    from tests.support.fault import runs

    return runs(40)


@pytest.mark.slow
def test_fuzzed_cli_arguments_never_trace_back_nor_touch_the_workspace(
    ws: Path, home: Path, agent: FakeClaude, tmp_path: Path
) -> None:
    """A fixed budget of generated command lines (`REWIND_RELIABILITY_RUNS` makes it larger): each
    ends in an exit code of the contract (0, 1, 2 or 3) and, when it fails, a reason on stderr;
    never a traceback; the workspace and a folder beside it stay byte-identical."""
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    from tests.support.fault import tree_digest

    (ws / "a.txt").write_text("a0\n")
    agent.turn("one", {"a.txt": "a1\n", "sub/b.txt": "b1\n"})
    agent.turn("two", {"a.txt": "a2\n"})
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "outside.txt").write_text("secret\n")
    ws_before, out_before = tree_digest(ws), tree_digest(outside)
    token = st.sampled_from(_VALUES) | st.text(max_size=12).filter(lambda t: "\x00" not in t)
    argv = st.tuples(
        st.sampled_from(_COMMANDS),
        st.lists(st.sampled_from(_OPTIONS) | token, max_size=5),
    )

    @settings(
        max_examples=_fuzz_budget(),
        deadline=None,
        derandomize=True,
        suppress_health_check=list(HealthCheck),
    )
    @given(argv)
    def prop(args: tuple[str, list[str]]) -> None:
        command, rest = args
        TALLY("fuzzed command lines")
        cmd = [sys.executable, "-m", "rewind_ls", command, *rest]
        proc = subprocess.run(
            cmd,
            cwd=ws,
            env=env_for(home),
            capture_output=True,
            stdin=subprocess.DEVNULL,
            timeout=60,
        )
        err = proc.stderr.decode("utf-8", "replace")
        assert "Traceback" not in err and "internal error" not in err, (cmd, err)
        assert proc.returncode in (0, 1, 2, 3), (cmd, proc.returncode, err)
        if proc.returncode == 2 and "error:" in err.splitlines()[0]:
            assert len(err.strip().splitlines()) == 1, (cmd, err)  # argparse: one line
        if proc.returncode:
            assert err.strip(), (cmd, "a failure says why")
        assert tree_digest(ws) == ws_before, cmd
        assert tree_digest(outside) == out_before, cmd

    prop()


# --- the long loop: races on the parent folders and kill -9, sized for CI ---------------------------


def _contents(*folders: Path) -> set[str]:
    found: set[str] = set()
    for folder in folders:
        if not folder.exists():
            continue
        for p in folder.rglob("*"):
            if p.is_file() and not p.is_symlink():
                found.add(hashlib.sha256(p.read_bytes()).hexdigest())
    return found


@pytest.mark.slow
def test_race_and_kill_loop(ws: Path, home: Path, agent: FakeClaude, tmp_path: Path) -> None:
    """`REWIND_RELIABILITY_RUNS` rounds (CI: 6) of a rewind attacked at a random gap (a parent
    folder swapped for a link to an outside folder, the folder moved out of the workspace) or
    killed with SIGKILL at a random instant; then the next command's recovery. Nothing outside
    the workspace changes but what the attacker moved there, no temporary name is left outside,
    and no content the workspace held is lost: each is on disk or in the store (undo's way back)."""
    import random

    from tests.support.fault import check_store_whole, query, runs

    rng = random.Random(23)
    sentinel = tmp_path / "sentinel"
    sentinel.mkdir()
    for i in range(4):
        (sentinel / f"f{i}.txt").write_text(f"agent {i} round 0\n")  # same names as sub/
    sentinel_digest = _digest(sentinel)
    rounds = runs(6)
    lost_total = 0
    for round_no in range(rounds):
        moved = tmp_path / f"moved-{round_no}"
        if (ws / "sub").is_symlink():
            (ws / "sub").unlink()
        (ws / "sub").mkdir(exist_ok=True)
        agent.turn(
            f"round {round_no}",
            {f"sub/f{i}.txt": f"agent {i} round {round_no}\n" for i in range(4)},
        )
        had = _contents(ws)
        attack = ["link", "move", "kill"][round_no % 3]
        TALLY("attacks")
        TALLY(f"loop: {attack}")
        if attack == "kill":
            env = env_for(home)
            proc = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "rewind_ls",
                    "rewind",
                    str(agent.turns),
                    "-C",
                    str(ws),
                    "--yes",
                ],
                env=env,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            time.sleep(rng.uniform(0.05, 0.6))
            proc.kill()
            proc.wait()
            TALLY("kills")
        else:
            stage = f"{rng.choice(['before-aside', 'before-link'])}:{rng.randint(1, 4)}"
            proc = _race(ws, home, tmp_path, f"{stage}", "rewind", str(agent.turns))
            if attack == "link":
                os.rename(ws / "sub", ws / f"sub.moved-{round_no}")
                os.symlink(sentinel, ws / "sub")
            else:
                os.rename(ws / "sub", moved)
                os.symlink(moved, ws / "sub")
            _, err = proc.communicate(timeout=60)
            assert b"Traceback" not in err, err
            (ws / "sub").unlink()
        # The next command recovers whatever was left pending.
        after = Cli(ws, home)("turns", ok=False)
        _no_traceback(after)
        assert _digest(sentinel) == sentinel_digest, (attack, round_no)
        outside_names = [
            p.name for p in tmp_path.rglob("*") if ".rewind-" in p.name and ws not in p.parents
        ]
        assert not outside_names, outside_names
        stored = {r[0] for r in query(ws, home, "SELECT hash FROM blobs")}
        # Contents are named by their sha256, on disk and in the store alike.
        lost = had - _contents(ws, moved, *ws.parent.glob("ws/sub.moved-*")) - stored
        lost_total += len(lost)
        assert not lost, (attack, round_no, lost)
        check_store_whole(ws, home)
    TALLY("data lost (contents)", lost_total)


def test_recovery_acts_only_on_journal_paths_of_the_workspace(
    ws: Path, home: Path, agent: FakeClaude, tmp_path: Path
) -> None:
    """A restore killed midway leaves a journal in the store; one edited to name files outside the
    workspace (its temporary name set to the victim's file) must not make the recovery delete or
    move them: those entries are refused and named, the rest recovered."""
    import json
    import sqlite3

    from tests.support.fault import store_db

    TALLY("attacks")
    (ws / "a.txt").write_text("a0\n")
    (ws / "b.txt").write_text("b0\n")
    agent.turn("one", {"a.txt": "a1\n", "b.txt": "b1\n"})
    crashed = subprocess.run(
        [sys.executable, "-m", "rewind_ls", "rewind", "1", "-C", str(ws), "--yes"],
        env=env_for(home, REWIND_LS_FAULT="after-swap:1"),
        capture_output=True,
    )
    assert crashed.returncode == 137, crashed.stderr
    victim = tmp_path / "victim.txt"
    victim.write_text("the victim's file\n")
    conn = sqlite3.connect(store_db(ws, home))
    (tid, info) = conn.execute("SELECT id, info FROM turns WHERE state = 'pending'").fetchone()
    journal = json.loads(info)
    for op in journal["ops"]:
        op["tmp"] = str(victim)
        if op["path"] == "b.txt":
            op["full"] = str(victim)
    conn.execute("UPDATE turns SET info = ? WHERE id = ?", (json.dumps(journal), tid))
    conn.commit()
    conn.close()
    proc = Cli(ws, home)("turns", ok=False)
    _no_traceback(proc)
    assert victim.read_text() == "the victim's file\n"
    doctor = Cli(ws, home)("doctor", ok=False)
    _no_traceback(doctor)
    assert victim.read_text() == "the victim's file\n"


# --- 6. transcript lines over the cap (recording only) --------------------------------------------


def _claude_session(home: Path, ws: Path, prompt: str, write: str) -> Path:
    """A Claude Code transcript (the real binary's line shapes): a prompt (its `promptId` after
    the message, as the binary writes it), a Write of a.txt and its result, the turn's end."""
    import json
    import uuid

    sid = str(uuid.uuid4())
    folder = home / "claude" / "projects" / "ws"
    folder.mkdir(parents=True, exist_ok=True)
    path, at = str(ws / "a.txt"), "2026-11-22T12:00:00.000Z"
    base = {"sessionId": sid, "cwd": str(ws), "timestamp": at}
    lines = [
        {
            **base,
            "type": "user",
            "uuid": "u1",
            "message": {"role": "user", "content": prompt},
            "promptId": "p1",
        },
        {
            **base,
            "type": "assistant",
            "uuid": "u2",
            "message": {
                "role": "assistant",
                "content": [
                    {
                        "type": "tool_use",
                        "id": "t1",
                        "name": "Write",
                        "input": {"file_path": path, "content": write},
                    }
                ],
            },
        },
        {
            **base,
            "type": "user",
            "uuid": "u3",
            "promptId": "p1",
            "message": {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": "t1",
                        "content": "File created successfully",
                    }
                ],
            },
            "toolUseResult": {
                "type": "create",
                "filePath": path,
                "content": write,
                "originalFile": None,
            },
        },
        {"type": "last-prompt", "sessionId": sid, "lastPrompt": "x"},
    ]
    (ws / "a.txt").write_text(write)
    transcript = folder / f"{sid}.jsonl"
    with transcript.open("w") as f:
        for line in lines:
            f.write(json.dumps(line) + "\n")
    return transcript


_PEAK = """
import runpy, sys
sys.argv = ["rewind-ls", *sys.argv[2:]]
try:
    runpy.run_module("rewind_ls", run_name="__main__")
finally:
    with open("/proc/self/status") as f, open(sys.argv_peak, "w") as out:
        out.write(next(ln for ln in f if ln.startswith("VmHWM")).split()[1])
"""


def _import_rss(cli: Cli, transcript: Path, **env: str) -> tuple[int, str]:
    """Peak memory (bytes) of a real `import claude-code` (VmHWM of the process itself: a
    child's rusage would also count the test's own peak, which it borrowed until exec), and its
    output."""
    peak = cli.ws.parent / f"peak-{cli.ws.name}"
    code = _PEAK.replace("sys.argv_peak", repr(str(peak)))
    proc = subprocess.run(
        [sys.executable, "-c", code, "-", "import", "claude-code", str(transcript)],
        cwd=cli.ws,
        env={**cli.env, **env},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return int(peak.read_text()) * 1024, proc.stdout


def test_a_huge_transcript_line_is_recorded_cut_never_parsed_whole(
    ws: Path, home: Path, cli: Cli, tmp_path: Path
) -> None:
    """The issue's 200 MB prompt line, at 100 MB: the import holds the line's bytes, never the
    parsed text too (measured against a small import in the same run); the prompt is stored cut
    and says so, the turn's edit is recorded whole."""
    TALLY("attacks")
    size = 100 << 20
    small_ws = tmp_path / "small"
    small_ws.mkdir()
    small_cli = Cli(small_ws, tmp_path / "small-home")
    baseline, _ = _import_rss(
        small_cli, _claude_session(small_cli.home, small_ws, "hello", "one\n")
    )
    rss, out = _import_rss(cli, _claude_session(home, ws, "p" * size, "small\n"))
    assert "1 turn(s), 1 change(s)" in out, out
    # Parsed whole, the line cost four times its size (bytes, the split copy, the text, the
    # parser's); cut, it is read once (and once more while the file's reader joins it).
    assert rss - baseline < 3 * size, (rss - baseline) / size
    (prompt,) = _prompts(cli)
    assert prompt.startswith("ppp") and len(prompt) < 70_000
    assert f"[rewind-ls: {size - 32 * 1024} more bytes cut]" in prompt
    (turn,) = [t for s in cli.json("turns", "--all")["sessions"] for t in s["turns"]]
    assert cli("diff", str(turn["id"])).stdout.count("+small") == 1


def test_a_cut_edit_line_is_never_recorded_as_the_files_content(
    ws: Path, home: Path, cli: Cli
) -> None:
    """A Write whose lines are over the cap: their texts are cut, so neither is taken as the
    file's content (a rewind would write it); the import says why it left the edit out."""
    TALLY("attacks")
    body = "".join(f"line {i}\n" for i in range(40_000))  # about 430 KB
    transcript = _claude_session(home, ws, "write it", body)
    _, out = _import_rss(cli, transcript, REWIND_LS_MAX_LINE_BYTES=str(200_000))
    assert "not imported: Write a.txt: its transcript line is over the cap" in out, out
    (turn,) = [t for s in cli.json("turns", "--all")["sessions"] for t in s["turns"]]
    assert turn["files"] == [], turn
    assert (ws / "a.txt").read_text() == body
    # Forks read the same file whole, every line byte for byte (the cap is recording's only).
    from rewind_ls.core.agents.claude.transcript import read_lines

    lines = read_lines(str(transcript))
    assert lines[2]["toolUseResult"]["content"] == body and "rewindLsCut" not in lines[2]


def test_an_oversized_hook_payload_is_refused_whole_the_agent_not_blocked(
    ws: Path, home: Path, agent: FakeClaude, cli: Cli
) -> None:
    """A payload over REWIND_LS_MAX_HOOK_BYTES: one line on stderr and in the log, exit 0, and
    nothing of it recorded (not a bounded prompt either); the next hook is recorded as usual."""
    TALLY("attacks")
    env = {**agent.env, "REWIND_LS_MAX_HOOK_BYTES": str(1 << 20)}
    payload = {**agent._base("UserPromptSubmit"), "prompt": "h" * (3 << 20)}
    proc = run_hook(payload, env)
    assert proc.returncode == 0
    err = proc.stderr.decode()
    assert err.count("\n") == 1 and "over the cap of 1048576" in err, err
    assert "REWIND_LS_MAX_HOOK_BYTES" in err and "nothing recorded" in err
    assert "over the cap of 1048576" in (home / "rewind-ls.log").read_text()
    assert "no checkpoints recorded" in cli("turns", "--all", ok=False).stderr
    agent.turn("small", {"a.txt": "1\n"})
    assert _prompts(cli) == ["small"]


# --- bad limits in the environment: reported, not silently replaced ----------------------------


@pytest.mark.parametrize(
    ("name", "value", "default"),
    [
        ("REWIND_LS_RETENTION_DAYS", "-1", "30"),
        ("REWIND_LS_MAX_STORE_BYTES", "0", str(5 << 30)),
        ("REWIND_LS_MAX_FILE_BYTES", "lots", str(16 << 20)),
        ("REWIND_LS_MAX_LINE_BYTES", "-5", str(64 << 20)),
    ],
)
def test_a_bad_limit_in_the_environment_is_reported(
    ws: Path, agent: FakeClaude, cli: Cli, name: str, value: str, default: str
) -> None:
    agent.turn("one", {"a.txt": "1\n"})
    assert "warning" not in cli("turns", "--all").stderr
    cli.env[name] = value
    line = f"rewind-ls: warning: {name}={value!r} is not a positive number; the default {default} is used\n"
    proc = cli("turns", "--all")
    assert proc.stderr == line, proc.stderr
    assert "1 " in proc.stdout  # the command still runs, with the default
    doctor = cli("doctor", ok=False)
    assert doctor.returncode == 2
    assert f"FAIL environment: {line.split('warning: ', 1)[1]}" in doctor.stdout, doctor.stdout


# --- 5. a folder above the workspace swapped for a link in the middle of a restore ----------------


@pytest.mark.parametrize("stage", ["before-aside:1", "before-link:1"])
def test_a_link_put_in_place_of_a_folder_above_the_workspace_mid_restore(
    tmp_path: Path, stage: str
) -> None:
    """A concurrent `mv up up.moved; ln -s up.moved up` above the workspace root between the
    restore's checks and its moves: the workspace's path now leads through a link, so the restore
    is refused as a conflict and rolled back whole (as a link in place of a folder inside it is)."""
    TALLY("attacks")
    TALLY("race windows")
    up = tmp_path / "up"
    ws, home = up / "ws", tmp_path / "home"
    (ws / "sub").mkdir(parents=True)
    (ws / "sub" / "keep.txt").write_text("keep\n")
    (ws / "top.txt").write_text("top\n")
    agent = FakeClaude(ws, home)
    agent.hook("SessionStart", source="startup")
    agent.turn("one", {"sub/keep.txt": "changed\n", "top.txt": "changed top\n", "new.txt": "n\n"})
    moved = tmp_path / "up.moved"
    before = _digest(ws)
    proc = _race(ws, home, tmp_path, stage, "rewind", "1")
    os.rename(up, moved)
    os.symlink(moved, up)
    _, err = proc.communicate(timeout=60)
    _no_traceback(subprocess.CompletedProcess([], proc.returncode, "", err.decode()))
    assert proc.returncode == 3, err
    assert b"moved" in err and b"link" in err, err
    assert _digest(moved / "ws") == before, err
    assert not any(".rewind-" in p.name for p in (moved / "ws").rglob("*")), err
