"""Issue #24 with the real Claude Code binary (2.1.332) offline: shell runs that end without a
PostToolUse (Esc in the interactive UI, a killed `claude -p`, a Bash exiting non-zero), and two
real sessions whose Bash commands overlap. Each test is one scenario, kept short: the binary's
start-up dominates on the shared machine."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from tests.support.fake_anthropic import FakeAnthropic, Reply, text, tool_use
from tests.support.git import git
from tests.support.listing import outside_paths
from tests.support.real_claude import RealClaude, claude_binary
from tests.support.terminal import Terminal
from tests.support.waiting import wait_for

pytestmark = pytest.mark.agent


@pytest.fixture(scope="module")
def binary() -> Path:
    return claude_binary()


def first_text(body: dict[str, Any]) -> str:
    return json.dumps(body["messages"][0])


def answered(body: dict[str, Any]) -> int:
    """How many tool results the conversation holds (the step of the scripted turn)."""
    return json.dumps(body["messages"]).count('"tool_result"')


class ScriptedByPrompt(FakeAnthropic):
    """Replies chosen by the session's first prompt (two sessions share one stand-in); a step
    listed in `hold` waits for its event, outside the lock, so the other session goes on."""

    def __init__(self, scripts: dict[str, list[Reply]]) -> None:
        super().__init__()
        self.scripts = scripts
        self.hold: dict[tuple[str, int], threading.Event] = {}
        self.arrived: dict[tuple[str, int], threading.Event] = {}

    def _answer(self, body: dict[str, Any]) -> Reply:
        if body.get("tools"):
            for key, steps in self.scripts.items():
                if key in first_text(body):
                    step = answered(body)
                    self.arrived.setdefault((key, step), threading.Event()).set()
                    gate = self.hold.get((key, step))
                    if gate is not None:
                        gate.wait(120)
                    with self._lock:
                        self.requests.append(body)
                    return steps[min(step, len(steps) - 1)]
        return super()._answer(body)

    def wait_arrived(self, key: str, step: int, timeout: float = 90) -> None:
        event = self.arrived.setdefault((key, step), threading.Event())
        assert event.wait(timeout), f"the {key!r} session never sent step {step}"


def start_claude(claude: RealClaude, prompt: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [str(claude.binary), "-p", prompt, "--output-format", "json"],
        cwd=claude.project,
        env=claude.env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
        start_new_session=True,
    )


def finish(proc: subprocess.Popen[str]) -> str:
    out, err = proc.communicate(timeout=180)
    assert proc.returncode == 0, out[-2000:] + err[-2000:]
    sid: str = json.loads(out)["session_id"]
    return sid


def turn_files(claude: RealClaude, sid: str) -> list[list[str]]:
    listing = json.loads(claude.rewind_ls("turns", "--session", sid, "--json").stdout)
    return [
        sorted(f["path"] + (" shared" if f["source"] == "shared" else "") for f in t["files"])
        for t in listing["sessions"][0]["turns"]
    ]


def external_files(claude: RealClaude) -> list[str]:
    return outside_paths(json.loads(claude.rewind_ls("turns", "--all", "--json").stdout))


def kill_left_in(folder: Path) -> None:
    """Kill the processes still running in `folder` (a killed agent's orphaned Bash), by pid."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if os.readlink(entry / "cwd") == str(folder):
                os.kill(int(entry.name), signal.SIGKILL)
        except OSError:
            continue


def setup(binary: Path, api: FakeAnthropic, tmp_path: Path) -> RealClaude:
    project = tmp_path / "proj"
    claude = RealClaude(binary, api, tmp_path, project)
    (project / ".gitignore").write_text("*.flag\n")
    (project / "notes.txt").write_text("original\n")
    claude.install_hooks()
    claude.allow("Bash")
    claude.rewind_ls("scan")  # the baseline
    return claude


def test_esc_during_bash_then_a_hand_fix_then_a_prompt(binary: Path, tmp_path: Path) -> None:
    """Item 1 in the interactive UI: Esc during a Bash fires no hook; the interrupt line in the
    transcript ends the turn, so the person's fix before the next prompt is theirs (external),
    and `rewind 1` removes the command's file without touching the fix."""
    with ScriptedByPrompt(
        {
            "build it": [
                [
                    tool_use(
                        "Bash", {"command": "echo half > built.txt; touch started.flag; sleep 60"}
                    )
                ],
                [text("going on")],  # the next prompt's request (with the interrupted result)
            ],
        }
    ) as api:
        claude = setup(binary, api, tmp_path)
        project = claude.project
        env = {**claude.env, "COLUMNS": "160", "LINES": "40"}
        term = Terminal(
            ["build it"], project, env, columns=160, lines=40, program=[str(claude.binary)]
        )
        try:
            wait_for(lambda: (project / "started.flag").exists(), "the Bash to start", 90)
            term.send("esc")
            transcripts = list((claude.config / "projects").rglob("*.jsonl"))
            wait_for(
                lambda: any("Request interrupted by user" in t.read_text() for t in transcripts),
                "the interrupt line",
                30,
            )
            time.sleep(1.5)
            (project / "notes.txt").write_text("fixed by hand\n")
            term.send("go on")
            time.sleep(0.3)
            term.send("enter")
            api.wait_arrived("build it", 1, 60)
            sid = transcripts[0].stem
            wait_for(lambda: len(turn_files(claude, sid)) == 2, "the second turn", 30)
        finally:
            term.close()
        assert turn_files(claude, sid)[0] == ["built.txt"]
        assert external_files(claude) == ["notes.txt"]
        claude.rewind_ls("rewind", "1", "--session", sid, "--yes")
        assert not (project / "built.txt").exists()
        assert (project / "notes.txt").read_text() == "fixed by hand\n"


def test_claude_p_killed_during_its_bash(binary: Path, tmp_path: Path) -> None:
    """Item 1, the agent killed (SIGKILL, no hook at all) during its Bash, then the person edits
    and another session starts: the killed run is over (its process is gone); what changed since
    cannot be told apart, so it is shared with the person's external session and a rewind of the
    killed turn is a conflict instead of a silent revert of the person's edit."""
    with ScriptedByPrompt(
        {
            "build it": [
                [
                    tool_use(
                        "Bash", {"command": "echo half > built.txt; touch started.flag; sleep 60"}
                    )
                ]
            ],
            "hello": [[text("hi")]],
        }
    ) as api:
        claude = setup(binary, api, tmp_path)
        project = claude.project
        proc = start_claude(claude, "build it")
        try:
            wait_for(lambda: (project / "started.flag").exists(), "the Bash to start")
            proc.kill()
            proc.wait(30)
        finally:
            kill_left_in(project)  # the killed agent's orphaned `sleep`
        (project / "notes.txt").write_text("fixed by hand\n")
        claude.run("hello")
        listing = json.loads(claude.rewind_ls("turns", "--all", "--json").stdout)
        (killed,) = [
            s for s in listing["sessions"] if s["kind"] == "agent" and "build it" in json.dumps(s)
        ]
        sid = killed["id"]
        assert turn_files(claude, sid) == [["built.txt shared", "notes.txt shared"]]
        assert killed["turns"][0]["endedAt"] is not None
        proc2 = claude.rewind_ls("rewind", "1", "--session", sid, "--yes", ok=False)
        assert proc2.returncode == 3, proc2.stdout + proc2.stderr
        assert "notes.txt: shared with a change made outside agent turns" in proc2.stdout
        assert (project / "notes.txt").read_text() == "fixed by hand\n"


def test_failed_bash_while_another_session_writes(binary: Path, tmp_path: Path) -> None:
    """Item 4: A's Bash writes a file and exits 3 (PostToolUseFailure, no PostToolUse); while A's
    model is still thinking, session B's Bash writes another. Each file is its own session's;
    A's rewind leaves B's file."""
    with ScriptedByPrompt(
        {
            "run the tests": [
                [tool_use("Bash", {"command": "echo failing > report.txt; exit 3"})],
                [text("tests fail")],
            ],
            "generate": [
                [tool_use("Bash", {"command": "echo generated > gen.txt"})],
                [text("generated")],
            ],
        }
    ) as api:
        api.hold[("run the tests", 1)] = threading.Event()
        claude = setup(binary, api, tmp_path)
        project = claude.project
        a = start_claude(claude, "run the tests")
        api.wait_arrived("run the tests", 1)
        b_sid = claude.run("generate")["session_id"]
        api.hold[("run the tests", 1)].set()
        a_sid = finish(a)
        assert turn_files(claude, a_sid) == [["report.txt"]]
        assert turn_files(claude, b_sid) == [["gen.txt"]]
        claude.rewind_ls("rewind", "1", "--session", a_sid, "--yes")
        assert not (project / "report.txt").exists()
        assert (project / "gen.txt").read_text() == "generated\n"


def test_two_sessions_whose_bash_commands_overlap(binary: Path, tmp_path: Path) -> None:
    """Item 2: A's Bash runs while B runs a whole turn with a Bash inside it. B's file could be
    either command's: both turns hold it as shared, and rewinding either is a conflict naming the
    other session (no silent delete); A's own later output is A's alone."""
    wait_b = "for i in $(seq 900); do [ -f b.flag ] && break; sleep 0.1; done"
    with ScriptedByPrompt(
        {
            "long build": [
                [tool_use("Bash", {"command": f"touch a.flag; {wait_b}; echo built > build.out"})],
                [text("built")],
            ],
            "generate": [
                [tool_use("Bash", {"command": "echo generated > gen.txt"})],
                [text("generated")],
            ],
        }
    ) as api:
        claude = setup(binary, api, tmp_path)
        project = claude.project
        a = start_claude(claude, "long build")
        wait_for(lambda: (project / "a.flag").exists(), "A's Bash to start")
        b_sid = claude.run("generate")["session_id"]
        (project / "b.flag").touch()
        a_sid = finish(a)
        assert turn_files(claude, a_sid) == [["build.out", "gen.txt shared"]]
        assert turn_files(claude, b_sid) == [["gen.txt shared"]]
        for sid, other in ((a_sid, b_sid), (b_sid, a_sid)):
            proc = claude.rewind_ls("rewind", "1", "--session", sid, "--yes", ok=False)
            assert proc.returncode == 3, proc.stdout + proc.stderr
            assert f"gen.txt: shared with turn #1 of session {other[:8]}" in proc.stdout
        assert (project / "gen.txt").read_text() == "generated\n"
        assert (project / "build.out").read_text() == "built\n"


def test_bash_renames_a_folder_and_moves_one_in(binary: Path, tmp_path: Path) -> None:
    """Item 3 through the Bash tool: `mv dir1 dir2` and a folder moved in from outside are
    recorded as deletions and creations, so `rewind 1` puts the tree back exactly."""
    with ScriptedByPrompt(
        {
            "reorganise": [
                [tool_use("Bash", {"command": "mv dir1 dir2 && mv ../outside/lib lib"})],
                [text("moved")],
            ]
        }
    ) as api:
        project = tmp_path / "proj"
        (project / "dir1" / "sub").mkdir(parents=True)
        (project / "dir1" / "a.txt").write_text("a\n")
        (project / "dir1" / "sub" / "b.txt").write_text("b\n")
        (tmp_path / "outside" / "lib").mkdir(parents=True)
        (tmp_path / "outside" / "lib" / "c.py").write_text("c\n")
        claude = setup(binary, api, tmp_path)
        time.sleep(1.1)  # the files' ctimes are before the session's first scan
        sid = claude.run("reorganise")["session_id"]
        assert turn_files(claude, sid) == [
            ["dir1/a.txt", "dir1/sub/b.txt", "dir2/a.txt", "dir2/sub/b.txt", "lib/c.py"]
        ]
        claude.rewind_ls("rewind", "1", "--session", sid, "--yes")
        left = sorted(
            str(p.relative_to(project))
            for p in project.rglob("*")
            if p.is_file() and ".claude" not in p.parts
        )
        # (.mcp.json: `install` puts rewind-ls' MCP server there.)
        assert left == [".gitignore", ".mcp.json", "dir1/a.txt", "dir1/sub/b.txt", "notes.txt"]


def test_bash_makes_a_link_and_exits_3(binary: Path, tmp_path: Path) -> None:
    """Item 5 through the Bash tool: a command writes a file, makes a link and exits 3
    (PostToolUseFailure); the file is the turn's, and the link, which is not recorded, is named
    by `turns`, the rewind preview and `doctor`: never silent."""
    with ScriptedByPrompt(
        {
            "link it": [
                [
                    tool_use(
                        "Bash", {"command": "echo x > made.txt && ln -s notes.txt link.txt; exit 3"}
                    )
                ],
                [text("linked")],
            ]
        }
    ) as api:
        claude = setup(binary, api, tmp_path)
        sid = claude.run("link it")["session_id"]
        assert turn_files(claude, sid) == [["made.txt"]]
        turns = json.loads(claude.rewind_ls("turns", "--json").stdout)
        assert any(
            u.startswith("link.txt: a symbolic link (-> notes.txt)") for u in turns["unrecorded"]
        )
        preview = claude.rewind_ls("rewind", "1", "--session", sid, "--dry-run")
        assert "link.txt: a symbolic link" in preview.stdout + preview.stderr
        doctor = json.loads(claude.rewind_ls("doctor", "--json", ok=False).stdout)
        assert any(
            "link.txt" in c["detail"] for c in doctor["checks"] if c["name"] == "unrecorded files"
        )


def test_resumed_fork_rewinds_its_inherited_turn_without_a_false_conflict(
    binary: Path, tmp_path: Path
) -> None:
    """Item 6 through the Bash tool: turn 1's Bash creates a.txt, turn 2's changes it; `rewind 2
    --scope both` undoes turn 2 and forks; the fork, resumed by the real binary, runs its own Bash;
    rewinding the fork's inherited turn 1 is not a conflict with the original's turn 2, which the
    fork does not contain and which that rewind already undid."""
    with FakeAnthropic() as api:
        claude = setup(binary, api, tmp_path)
        project = claude.project
        api.add(
            [tool_use("Bash", {"command": "echo 1 > a.txt"})],
            [text("one")],
            [tool_use("Bash", {"command": "echo 2 > a.txt"})],
            [text("two")],
            [tool_use("Bash", {"command": "echo c > c.txt"})],
            [text("again")],
        )
        sid = claude.run("turn one")["session_id"]
        claude.run("turn two", resume=sid)
        both = json.loads(
            claude.rewind_ls(
                "rewind", "2", "--session", sid, "--scope", "both", "--yes", "--json"
            ).stdout
        )
        fork = both["conversation"]["sessionId"]
        assert (project / "a.txt").read_text() == "1\n"
        claude.run("turn two, again", resume=fork)
        plan = claude.rewind_ls("rewind", "1", "--session", fork, "--dry-run", ok=False)
        assert plan.returncode == 0 and "conflict" not in plan.stdout, plan.stdout + plan.stderr
        claude.rewind_ls("rewind", "1", "--session", fork, "--yes")
        assert not (project / "a.txt").exists() and not (project / "c.txt").exists()


def test_claude_w_worktree_is_another_checkout(binary: Path, tmp_path: Path) -> None:
    """Issue #38 item 1 with `claude -w NAME` (2.1.197 and 2.1.332 have it): while the main session's Bash
    runs, a session in `.claude/worktrees/nest` writes a file there. The main turn lists only its
    own file, nothing of the worktree is external, and rewinding the main turn leaves the
    worktree's files (`git status` there shows nothing deleted)."""
    project = tmp_path / "proj"
    nest = project / ".claude" / "worktrees" / "nest"
    wait = "touch started.flag; while [ ! -e go.flag ]; do sleep 0.1; done; echo v2 > main.txt"
    with ScriptedByPrompt(
        {
            "work in the worktree": [
                [tool_use("Write", {"file_path": str(nest / "a.txt"), "content": "nested\n"})],
                [text("written")],
            ],
            "main work": [[tool_use("Bash", {"command": wait})], [text("done")]],
        }
    ) as api:
        claude = RealClaude(binary, api, tmp_path, project)
        (project / "main.txt").write_text("v1\n")
        (project / ".gitignore").write_text("*.flag\n")
        git(project, "init", "-q", "-b", "main")
        git(project, "add", "main.txt", ".gitignore")
        git(project, "commit", "-qm", "init")
        claude.install_hooks()
        claude.allow("Bash", "Write")
        claude.rewind_ls("scan")  # the baseline
        main = start_claude(claude, "main work")
        try:
            wait_for(lambda: (project / "started.flag").exists(), "the main Bash to start")
            claude.run("work in the worktree", args=("-w", "nest"))
            (project / "go.flag").touch()
        finally:
            sid = finish(main)
        assert (nest / "a.txt").read_text() == "nested\n"
        assert (nest / ".git").is_file()
        assert turn_files(claude, sid) == [["main.txt"]]
        assert not [p for p in external_files(claude) if p.startswith(".claude/worktrees/")]
        claude.rewind_ls("rewind", "1", "--session", sid, "--yes")
        assert (project / "main.txt").read_text() == "v1\n"
        assert (nest / "a.txt").read_text() == "nested\n"
        status = git(nest, "status", "--porcelain").splitlines()
        assert "?? a.txt" in status  # not deleted; `.claude/` there is the session's own
        assert not [line for line in status if "D" in line[:2]], status
