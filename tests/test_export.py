"""`rewind-ls export TURN --to DIR [--after]` and `rewind-ls export --git BRANCH`: the workspace at a
turn written byte for byte to a new folder, and a session written as commits on a branch with
git's plumbing, the person's HEAD, index, work tree and branches untouched (issue 41)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import Cli
from tests.support.agent import FakeClaude

Files = dict[str, tuple[bytes, int]]

CRLF = b"one\r\ntwo\r\n"
BINARY = bytes(range(256)) * 3
NO_EOL = b"no final newline"


def shell_turn(agent: FakeClaude, prompt: str, *commands: str) -> None:
    """A turn whose only work is shell commands (found by the scans, not reported by a tool)."""
    agent.hook("UserPromptSubmit", prompt=prompt)
    for command in commands:
        agent.shell(command)
    agent.hook("Stop", stop_hook_active=False)


def tree(folder: Path) -> Files:
    """Every file under `folder` (not .git): bytes and permission bits."""
    out = {}
    for p in sorted(folder.rglob("*")):
        if p.is_file() and ".git" not in p.relative_to(folder).parts:
            out[p.relative_to(folder).as_posix()] = (p.read_bytes(), p.stat().st_mode & 0o777)
    return out


def without_ignored(files: Files) -> Files:
    return {p: v for p, v in files.items() if not p.startswith("build/")}


@pytest.fixture
def session(
    ws: Path, agent: FakeClaude, snapshot: Callable[[], Files]
) -> tuple[list[Files], list[Files]]:
    """Four turns over a workspace with CRLF, binary, no-final-newline and executable files, an
    ignored folder, and a shell turn that deletes one folder and creates another. Returns the
    workspace at the start of each turn and at its end."""
    (ws / ".gitignore").write_bytes(b"build/\n")
    (ws / "build").mkdir()
    (ws / "build" / "out.o").write_bytes(b"ignored")
    (ws / "src").mkdir()
    (ws / "src" / "main.py").write_bytes(b"print('v0')\n")
    (ws / "crlf.txt").write_bytes(CRLF)
    (ws / "blob.bin").write_bytes(BINARY)
    (ws / "tool.sh").write_bytes(b"#!/bin/sh\necho hi\n")
    (ws / "tool.sh").chmod(0o755)
    (ws / "old" / "deep").mkdir(parents=True)
    (ws / "old" / "a.txt").write_bytes(b"old a\n")
    (ws / "old" / "deep" / "b.txt").write_bytes(NO_EOL)
    starts: list[Files] = []
    ends: list[Files] = []
    starts.append(snapshot())
    agent.turn("edit main and add a note", {"src/main.py": b"print('v1')\n", "note.md": b"# n\n"})
    ends.append(snapshot())
    starts.append(snapshot())
    shell_turn(
        agent,
        "move old to new by hand",
        "rm -rf old && mkdir -p new/sub && printf 'created\\n' > new/sub/c.txt"
        " && printf 'x\\r\\ny' > new/d.txt && chmod +x crlf.txt",
    )
    ends.append(snapshot())
    # The person edits between turns (recorded as an outside change by the next turn's scan).
    (ws / "note.md").write_bytes(b"# n\nperson\n")
    starts.append(snapshot())
    agent.turn("binary and delete", {"blob.bin": BINARY[::-1], "tool.sh": None})
    ends.append(snapshot())
    starts.append(snapshot())
    agent.turn("last", {"src/main.py": b"print('v3')", "new/sub/c.txt": b"changed\n"})
    ends.append(snapshot())
    return starts, ends


def test_export_is_byte_exact_at_every_turn_and_leaves_the_workspace_alone(
    ws: Path,
    tmp_path: Path,
    cli: Cli,
    session: tuple[list[Files], list[Files]],
    snapshot: Callable[[], Files],
) -> None:
    starts, ends = session
    now = snapshot()
    for number in range(1, 5):
        out = tmp_path / f"start-{number}"
        result = cli.json("export", str(number), "--to", str(out))
        assert result["side"] == "start" and result["unwritable"] == []
        assert tree(out) == without_ignored(starts[number - 1]), number
        assert result["files"] == len(tree(out))
        after = tmp_path / f"end-{number}"
        cli("export", str(number), "--after", "--to", str(after))
        assert tree(after) == without_ignored(ends[number - 1]), number
    # The shell turn: a folder deleted (old/), one created (new/), a mode changed.
    assert "old/deep/b.txt" in tree(tmp_path / "start-2")
    assert not (tmp_path / "end-2" / "old").exists()
    assert tree(tmp_path / "end-2")["new/sub/c.txt"] == (b"created\n", 0o644)
    assert tree(tmp_path / "end-2")["crlf.txt"][1] & 0o111
    assert not (tmp_path / "start-1" / "build").exists()  # ignored files are not recorded
    assert snapshot() == now  # the workspace untouched


def test_export_equals_what_rewind_brings_back(
    ws: Path, tmp_path: Path, cli: Cli, session: tuple[list[Files], list[Files]]
) -> None:
    starts, _ = session
    for number in (4, 2):
        out = tmp_path / f"t{number}"
        cli("export", str(number), "--to", str(out))
        cli("rewind", str(number), "--yes", "--force")
        now = without_ignored(tree(ws))
        if number == 2:
            # The one difference: the person's edit after turn 2 began. A rewind takes back only
            # the session's turns and leaves it; the export is the workspace as it was then.
            assert now.pop("note.md") == (b"# n\nperson\n", 0o644)
            assert tree(out).pop("note.md") == starts[1]["note.md"] == (b"# n\n", 0o644)
            assert now == {p: v for p, v in tree(out).items() if p != "note.md"}
        else:
            assert now == tree(out), number


def test_export_destination_must_be_new_or_empty_and_outside(
    ws: Path, tmp_path: Path, cli: Cli, session: tuple[list[Files], list[Files]]
) -> None:
    full = tmp_path / "full"
    full.mkdir()
    (full / "keep.txt").write_bytes(b"mine")
    proc = cli("export", "1", "--to", str(full), ok=False)
    assert proc.returncode == 2 and "not empty" in proc.stderr
    assert tree(full) == {"keep.txt": (b"mine", 0o644)}
    inside = cli("export", "1", "--to", str(ws / "past"), ok=False)
    assert inside.returncode == 2 and "inside the workspace" in inside.stderr
    assert not (ws / "past").exists()
    empty = tmp_path / "empty"
    empty.mkdir()
    cli("export", "1", "--to", str(empty))
    assert (empty / "src" / "main.py").read_bytes() == b"print('v0')\n"
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".rewind-export-")]
    assert cli("export", "1", ok=False).returncode == 2  # neither --to nor --git


# --- export --git -----------------------------------------------------------------------------


def git(ws: Path, *args: str, input: bytes | None = None) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "P", "GIT_AUTHOR_EMAIL": "p@example.com"}
    env.update(GIT_COMMITTER_NAME="P", GIT_COMMITTER_EMAIL="p@example.com")
    proc = subprocess.run(
        ["git", *args], cwd=ws, env=env, input=input, capture_output=True, check=True
    )
    return proc.stdout.decode()


def repo_state(ws: Path) -> tuple[str, str, bytes, str, str]:
    """What export --git must never change: HEAD (symbolic and resolved), the index file's bytes,
    `git status`, and every ref but the exported branch."""
    refs = git(ws, "for-each-ref", "--format=%(refname) %(objectname)")
    kept = "\n".join(line for line in refs.splitlines() if "refs/heads/agent" not in line)
    return (
        git(ws, "symbolic-ref", "HEAD"),
        git(ws, "rev-parse", "HEAD"),
        (ws / ".git" / "index").read_bytes(),
        git(ws, "status", "--porcelain=v2", "--untracked-files=all"),
        kept,
    )


def commit_tree(ws: Path, commit: str) -> Files:
    """The files of a commit: bytes and the permission bits export writes for its mode."""
    out = {}
    listing = git(ws, "ls-tree", "-r", "-z", commit).split("\0")
    for entry in filter(None, listing):
        meta, path = entry.split("\t", 1)
        mode, _kind, blob = meta.split()
        data = subprocess.run(
            ["git", "cat-file", "blob", blob], cwd=ws, capture_output=True, check=True
        ).stdout
        out[path] = (data, 0o755 if mode == "100755" else 0o644)
    return out


def perms(files: Files) -> Files:
    """Modes as git keeps them: executable or not."""
    return {p: (d, 0o755 if m & 0o111 else 0o644) for p, (d, m) in files.items()}


def test_export_git_writes_the_session_as_commits_and_touches_nothing_else(
    ws: Path, tmp_path: Path, agent: FakeClaude, cli: Cli, snapshot: Callable[[], Files]
) -> None:
    git(ws, "init", "-q", "-b", "main")
    (ws / ".gitignore").write_bytes(b"build/\n")
    (ws / "a.txt").write_bytes(b"a0\n")
    (ws / "run.sh").write_bytes(b"#!/bin/sh\n")
    (ws / "run.sh").chmod(0o755)
    git(ws, "add", ".")
    git(ws, "commit", "-q", "-m", "base")
    git(ws, "branch", "feature")
    # The person's own state: a staged change, an unstaged one, an untracked file.
    (ws / "a.txt").write_bytes(b"a0 staged\n")
    git(ws, "add", "a.txt")
    (ws / "a.txt").write_bytes(b"a0 staged then edited\n")
    (ws / "untracked.txt").write_bytes(b"u\n")
    agent.turn("first\n\nwith a body", {"a.txt": b"a1\n", "dir/new.txt": b"n\n"})
    shell_turn(
        agent, "shell: remove dir, add other", "rm -rf dir && mkdir other && echo o > other/o"
    )
    before = repo_state(ws)
    work = snapshot()

    out = cli.json("export", "--git", "agent")
    assert out["previous"] is None and out["commits"] == 3 and out["turns"] == [1, 2]
    assert repo_state(ws) == before and snapshot() == work
    log = git(ws, "log", "--format=%H %P%n%s%n%(trailers:key=Rewind-Turn,valueonly)", "agent")
    commits = git(ws, "rev-list", "--first-parent", "agent").split()
    assert len(commits) == 4  # start, turn 1, turn 2 on top of the person's HEAD
    assert commits[-1] == before[1].strip()
    assert "shell: remove dir, add other\n2\n" in log and "first\n1\n" in log
    body = git(ws, "log", "-1", "--format=%B", commits[1])
    assert "with a body" in body and "Rewind-Agent: claude-code" in body
    # Each commit's tree is the exported state; the start's is turn 1's start.
    states = [("2", "--after"), ("1", "--after"), ("1", "")]
    for commit, (turn, flag) in zip(commits[:3], states, strict=True):
        folder = tmp_path / f"state-{commit[:8]}"
        cli("export", turn, *([flag] if flag else []), "--to", str(folder))
        assert commit_tree(ws, commit) == perms(tree(folder)), (turn, flag)

    # A new turn: the rerun fast-forwards; again with nothing new: up to date.
    agent.turn("third", {"a.txt": b"a3\n"})
    before = repo_state(ws)
    again = cli.json("export", "--git", "agent")
    assert again["previous"] == out["tip"] and again["fastForward"] and again["turns"] == [1, 2, 3]
    assert git(ws, "rev-list", "agent").split()[1:] == git(ws, "rev-list", out["tip"]).split()
    assert repo_state(ws) == before
    assert cli.json("export", "--git", "agent")["tip"] == again["tip"]
    assert "already up to date" in cli("export", "--git", "agent").stdout


def test_export_git_refuses_branches_it_did_not_write(
    ws: Path, agent: FakeClaude, cli: Cli
) -> None:
    agent.turn("zero", {"z.txt": b"z\n"})
    outside = cli("export", "--git", "agent", ok=False)
    assert outside.returncode == 2 and "not in a git repository" in outside.stderr
    git(ws, "init", "-q", "-b", "main")
    (ws / "a.txt").write_bytes(b"a\n")
    git(ws, "add", ".")
    git(ws, "commit", "-q", "-m", "base")
    git(ws, "branch", "agent")
    agent.turn("one", {"a.txt": b"b\n"})
    head = git(ws, "rev-parse", "HEAD")
    proc = cli("export", "--git", "agent", ok=False)
    assert proc.returncode == 2 and "not written by" in proc.stderr
    proc = cli("export", "--git", "main", ok=False)
    assert proc.returncode == 2 and "checked out" in proc.stderr
    assert git(ws, "rev-parse", "agent", "main").split() == [head.strip()] * 2
    forced = cli.json("export", "--git", "agent", "--force")
    assert forced["previous"] == head.strip() and forced["fastForward"]  # on top of HEAD


def test_export_git_in_a_repository_without_commits(ws: Path, agent: FakeClaude, cli: Cli) -> None:
    git(ws, "init", "-q", "-b", "main")
    (ws / "a.txt").write_bytes(b"a\n")
    agent.turn("one", {"a.txt": b"b\n"})
    out = cli.json("export", "--git", "agent")
    commits = git(ws, "rev-list", "agent").split()
    assert len(commits) == 2 and out["tip"] == commits[0]
    assert git(ws, "show", "agent:a.txt") == "b\n" and git(ws, "show", "agent~1:a.txt") == "a\n"
    assert subprocess.run(["git", "rev-parse", "-q", "--verify", "HEAD"], cwd=ws).returncode != 0


def test_export_git_rerun_rebuilds_from_a_turn_whose_state_changed(
    ws: Path, home: Path, agent: FakeClaude, cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A rerun keeps the commits whose turn and state (`Rewind-State`) are unchanged and rebuilds
    from the first that differs: here a change of turn 1 recorded late (as an import of the
    transcript can), so the branch is rewritten from turn 1 and says so."""
    from rewind_ls.core.model import ABSENT_VERSION, FILE, Version
    from rewind_ls.core.store import Store, digest

    git(ws, "init", "-q", "-b", "main")
    (ws / "a.txt").write_bytes(b"a\n")
    agent.turn("one", {"a.txt": b"b\n"})
    agent.turn("two", {"a.txt": b"c\n"})
    first = cli.json("export", "--git", "agent")
    start = git(ws, "rev-list", "--reverse", "agent").split()[0]
    assert "Rewind-State: " in git(ws, "log", "-1", "--format=%B", "agent")
    monkeypatch.setenv("REWIND_LS_HOME", str(home))
    with Store.open(str(ws), create=False) as store:
        turn1 = store.turns(agent.session_id)[0]
        late = b"late\n"
        store.put_blob(late)
        store.record_before(turn1.id, "late.txt", ABSENT_VERSION, "tool")
        version = Version(FILE, digest(late), 0o644, len(late))
        store.record_after(turn1.id, "late.txt", version)
        store.set_known("late.txt", version)  # what the recorder does with a change it records
    said = cli("export", "--git", "agent").stdout
    assert f"rewritten (the old tip {first['tip'][:10]} stays in `git reflog agent`)" in said
    again = cli.json("export", "--git", "agent")  # and now up to date
    assert again["previous"] == again["tip"] != first["tip"] and again["fastForward"]
    commits = git(ws, "rev-list", "--reverse", "agent").split()
    assert commits[0] == start  # the start commit kept: its state did not change
    assert git(ws, "show", f"{commits[1]}:late.txt") == "late\n"


def test_export_without_turn_on_a_terminal_asks_with_the_picker(
    ws: Path, home: Path, agent: FakeClaude, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`rewind-ls export --to DIR` with no TURN on a terminal opens the picker as rewind/diff do
    (the picker itself is tested on a real terminal in test_cli_terminal; here: it is reached)."""
    from rewind_ls.cli import picker
    from rewind_ls.core.store import Store

    agent.turn("one", {"a.txt": b"a\n"})
    monkeypatch.setenv("REWIND_LS_HOME", str(home))
    monkeypatch.setattr(sys.stdin, "isatty", lambda: True)
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True)
    asked: list[str] = []

    def pick(store: Store, actions: bool, title: str, offer: Callable[..., bool]) -> None:
        asked.append(title)
        return None  # the person pressed Escape

    monkeypatch.setattr(picker, "pick", pick)
    with Store.open(str(ws), create=False) as store, pytest.raises(picker.Cancelled):
        picker.ask_turn(store, "export")
    assert asked == ["export: pick a turn"]


def test_a_file_over_the_size_cap_is_named_never_silently_left_out(
    ws: Path, tmp_path: Path, agent: FakeClaude, cli: Cli
) -> None:
    """A file rewind-ls knew by its size only (over REWIND_LS_MAX_FILE_BYTES) has no content to
    write: export --to and --git name it, and write everything else."""
    for env in (agent.env, cli.env):
        env["REWIND_LS_MAX_FILE_BYTES"] = "1000"
    (ws / "big.bin").write_bytes(b"x" * 5000)
    (ws / "small.txt").write_bytes(b"s\n")
    agent.turn("one", {"small.txt": b"t\n"})
    out = cli.json("export", "1", "--to", str(tmp_path / "out"))
    assert out["unwritable"] == ["big.bin"]
    assert tree(tmp_path / "out") == {"small.txt": (b"s\n", 0o644)}
    said = cli("export", "1", "--to", str(tmp_path / "again")).stdout
    assert "not written (1): rewind-ls does not hold their content (size cap)" in said
    assert "  big.bin" in said
    git(ws, "init", "-q", "-b", "main")
    branch = cli.json("export", "--git", "agent")
    assert branch["unwritable"] == ["big.bin"]
    assert git(ws, "ls-tree", "-r", "--name-only", "agent").split() == ["small.txt"]
