"""Claude Code's worktrees with the real binary (2.1.332) offline: `claude -w NAME` and a subagent
with `isolation: "worktree"` both work in a git worktree INSIDE the project
(`.claude/worktrees/NAME`). That checkout is a workspace of its own: its sessions' turns are
recorded in its store (listed by `rewind-ls turns` run inside it, rewound and undone there byte for
byte), never in the main session's, whose prompts stay numbered 1, 2, 3; once the worktree is
removed its history is still there (`rewind-ls -C DIR turns`, `export`)."""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.support.fake_anthropic import FakeAnthropic, Reply, text, tool_use
from tests.support.git import git
from tests.support.real_claude import RealClaude, claude_binary
from tests.support.waiting import wait_for

pytestmark = pytest.mark.agent

Step = Reply | Callable[[dict[str, Any]], Reply]


@pytest.fixture(scope="module")
def binary() -> Path:
    return claude_binary()


def _user_texts(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    return "\n".join(
        str(b.get("text", "")) for b in content or [] if isinstance(b, dict) and b["type"] == "text"
    )


class ByPrompt(FakeAnthropic):
    """Replies chosen by the latest prompt of the conversation that holds one of the scripts' keys
    (a person's prompt, or a subagent's task); the step is how many answers follow it. A step
    may be a function of the request (a reply naming a folder only the request tells)."""

    def __init__(self, scripts: dict[str, list[Step]]) -> None:
        super().__init__()
        self.scripts = scripts

    def _answer(self, body: dict[str, Any]) -> Reply:
        if body.get("tools"):
            messages = body.get("messages") or []
            for index in range(len(messages) - 1, -1, -1):
                said = _user_texts(messages[index]) if messages[index]["role"] == "user" else ""
                key = next((k for k in self.scripts if k in said), None)
                if key is None:
                    continue
                step = sum(m["role"] == "assistant" for m in messages[index + 1 :])
                steps = self.scripts[key]
                chosen = steps[min(step, len(steps) - 1)]
                with self._lock:
                    self.requests.append(body)
                return chosen(body) if callable(chosen) else chosen
        return super()._answer(body)


def setup(binary: Path, api: FakeAnthropic, tmp_path: Path) -> RealClaude:
    """A git project with one commit; rewind-ls' hooks in the project's per-person settings
    (`install --local`: Claude Code reads them for the project's worktrees too, from the main
    checkout, where `.claude/settings.json` would have to be committed to reach a worktree)."""
    project = tmp_path / "proj"
    claude = RealClaude(binary, api, tmp_path, project)
    (project / "main.txt").write_text("v1\n")
    (project / "shared.txt").write_text("in every checkout\n")
    (project / ".gitignore").write_text("*.flag\n")
    git(project, "init", "-q", "-b", "main")
    git(project, "add", "main.txt", "shared.txt", ".gitignore")
    git(project, "commit", "-qm", "init")
    claude.allow("Bash", "Write", "Edit", "Agent")
    claude.rewind_ls("install", "claude-code", "--local", "--no-mcp")
    claude.rewind_ls("scan")  # the baseline
    return claude


def listing(claude: RealClaude, folder: Path, sid: str) -> list[dict[str, Any]]:
    out = json.loads(claude.rewind_ls("turns", "--session", sid, "--json", cwd=folder).stdout)
    sessions = [s for s in out["sessions"] if s["id"] == sid]
    assert len(sessions) == 1, out
    turns: list[dict[str, Any]] = sessions[0]["turns"]
    return turns


def files_of(turns: list[dict[str, Any]]) -> list[list[str]]:
    return [sorted(f["path"] for f in t["files"]) for t in turns]


def all_paths(claude: RealClaude, folder: Path) -> list[str]:
    """Every path any session's turn lists in the workspace of `folder`."""
    out = json.loads(claude.rewind_ls("turns", "--all", "--json", cwd=folder).stdout)
    return sorted({f["path"] for s in out["sessions"] for t in s["turns"] for f in t["files"]})


def made_up(claude: RealClaude, *folders: Path) -> list[str]:
    """Turns of the workspaces of `folders` that no prompt opened (edits outside any turn)."""
    return [
        t["prompt"]
        for folder in folders
        for s in json.loads(claude.rewind_ls("turns", "--all", "--json", cwd=folder).stdout)[
            "sessions"
        ]
        for t in s["turns"]
        if t["prompt"].startswith("(edits outside")
    ]


def snapshot(folder: Path) -> dict[str, bytes]:
    """Every file of a checkout by relative path, its `.git` and `.claude` (Claude Code's own,
    the worktrees in it) left out."""
    return {
        str(p.relative_to(folder)): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and not {".git", ".claude"} & set(p.relative_to(folder).parts)
    }


def test_claude_w_session_is_recorded_in_its_worktree(binary: Path, tmp_path: Path) -> None:
    """`claude -w nest` beside a main session: the worktree session's two prompts are turns 1 and
    2 of ITS workspace (an edit tool and a shell command each), the main session's three prompts
    are 1, 2, 3 of the main one with only its own file; a rewind and an undo in the worktree are
    byte exact and leave the main checkout alone."""
    project = tmp_path / "proj"
    nest = project / ".claude" / "worktrees" / "nest"
    wait = "touch started.flag; while [ ! -e go.flag ]; do sleep 0.1; done; echo v3 > main.txt"
    scripts: dict[str, list[Step]] = {
        "MAIN-ONE": [
            [tool_use("Write", {"file_path": str(project / "main.txt"), "content": "v2\n"})],
            [text("ok")],
        ],
        "MAIN-TWO": [[tool_use("Bash", {"command": wait})], [text("ok")]],
        "MAIN-THREE": [
            [
                tool_use(
                    "Edit",
                    {
                        "file_path": str(project / "main.txt"),
                        "old_string": "v3",
                        "new_string": "v4",
                    },
                )
            ],
            [text("ok")],
        ],
        "WT-ONE": [
            [
                tool_use("Write", {"file_path": str(nest / "a.txt"), "content": "a1\n"}),
                tool_use(
                    "Edit",
                    {
                        "file_path": str(nest / "shared.txt"),
                        "old_string": "every",
                        "new_string": "the nest",
                    },
                ),
            ],
            [text("ok")],
        ],
        "WT-TWO": [
            [tool_use("Bash", {"command": "echo b > b.txt && echo more >> a.txt && rm main.txt"})],
            [text("ok")],
        ],
    }
    with ByPrompt(scripts) as api:
        claude = setup(binary, api, tmp_path)
        sid = claude.run("MAIN-ONE")["session_id"]
        main = subprocess.Popen(
            [str(binary), "-p", "MAIN-TWO", "--output-format", "json", "--resume", sid],
            cwd=project,
            env=claude.env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
            text=True,
        )
        try:
            wait_for(lambda: (project / "started.flag").exists(), "the main Bash to start")
            # While the main session's Bash runs: the worktree session's first prompt.
            wsid = claude.run("WT-ONE", args=("-w", "nest"))["session_id"]
            (project / "go.flag").touch()
        finally:
            out, err = main.communicate(timeout=180)
        assert main.returncode == 0, out[-2000:] + err[-2000:]
        claude.run("MAIN-THREE", resume=sid)
        # The worktree session goes on from inside the worktree (`--resume` there).
        claude.run("WT-TWO", resume=wsid, cwd=nest)

    assert (project / "main.txt").read_text() == "v4\n"
    assert (nest / "a.txt").read_text() == "a1\nmore\n"
    assert not (nest / "main.txt").exists()

    # The main workspace: three prompts, numbered 1, 2, 3, each with the main file only.
    mains = listing(claude, project, sid)
    assert [t["number"] for t in mains] == [1, 2, 3]
    assert [t["prompt"] for t in mains] == ["MAIN-ONE", "MAIN-TWO", "MAIN-THREE"]
    assert files_of(mains) == [["main.txt"], ["main.txt"], ["main.txt"]]
    assert not [p for p in all_paths(claude, project) if ".claude/worktrees" in p]
    main_store = json.loads(claude.rewind_ls("turns", "--all", "--json").stdout)
    assert wsid not in [s["id"] for s in main_store["sessions"]]  # no made-up turn for it

    # The worktree's workspace: its own two prompts, their files, relative to the worktree.
    nested = listing(claude, nest, wsid)
    assert [(t["number"], t["prompt"]) for t in nested] == [(1, "WT-ONE"), (2, "WT-TWO")]
    assert files_of(nested) == [["a.txt", "shared.txt"], ["a.txt", "b.txt", "main.txt"]]
    assert made_up(claude, project, nest) == []
    assert sid not in [
        s["id"]
        for s in json.loads(claude.rewind_ls("turns", "--all", "--json", cwd=nest).stdout)[
            "sessions"
        ]
    ]

    # Rewind the worktree to the start of its turn 1, byte exact; the main checkout is untouched.
    after = snapshot(nest)
    main_before = snapshot(project)
    claude.rewind_ls("rewind", "1", "--session", wsid, "--yes", cwd=nest)
    assert snapshot(nest) == {
        ".gitignore": b"*.flag\n",
        "main.txt": b"v1\n",
        "shared.txt": b"in every checkout\n",
    }
    assert snapshot(project) == main_before
    claude.rewind_ls("undo", "--yes", cwd=nest)
    assert snapshot(nest) == after
    assert snapshot(project) == main_before


def in_worktree(name: str, make: Callable[[Path], Reply]) -> Callable[[dict[str, Any]], Reply]:
    """A subagent's reply naming files in its worktree, which only its request tells (Claude Code
    names it `.claude/worktrees/agent-<agent id>` and starts the subagent there)."""

    def reply(body: dict[str, Any]) -> Reply:
        found = re.search(r"(/[^\s\"\\]+/\.claude/worktrees/agent-[0-9a-f]+)", json.dumps(body))
        assert found is not None, f"the {name} request names no worktree"
        return make(Path(found.group(1)))

    return reply


def test_isolated_subagent_is_recorded_in_its_worktree(binary: Path, tmp_path: Path) -> None:
    """A subagent with `isolation: "worktree"` (foreground) writes, edits and runs a shell command
    in its worktree: they are recorded in the worktree's workspace, in a turn of the same session
    named by the launching prompt; the launching turn of the main session names the worktree and
    lists no file of it; the person's prompts are 1, 2, 3. Rewind and undo in the worktree are
    byte exact. Then the worktree is removed (`git worktree remove`): its history is still read
    with `-C` the removed folder, and `export --after` gives back the subagent's work."""
    project = tmp_path / "proj"
    agent = {
        "description": "isolated work",
        "prompt": "SUB-TASK: write in your worktree",
        "subagent_type": "general-purpose",
        "isolation": "worktree",
        "run_in_background": False,
    }
    scripts: dict[str, list[Step]] = {
        "SUB-LAUNCH": [[tool_use("Agent", agent)], [text("launched")]],
        "SUB-TASK": [
            in_worktree(
                "subagent's",
                lambda wt: [
                    tool_use("Write", {"file_path": str(wt / "a.txt"), "content": "sub\n"}),
                    tool_use(
                        "Edit",
                        {
                            "file_path": str(wt / "shared.txt"),
                            "old_string": "every",
                            "new_string": "the agent's",
                        },
                    ),
                ],
            ),
            [tool_use("Bash", {"command": "echo s > s.txt && rm main.txt"})],
            [text("subagent done")],
        ],
        "MAIN-TWO": [
            [tool_use("Write", {"file_path": str(project / "main.txt"), "content": "v2\n"})],
            [text("ok")],
        ],
        "MAIN-THREE": [[tool_use("Bash", {"command": "echo v3 > main.txt"})], [text("ok")]],
    }
    with ByPrompt(scripts) as api:
        claude = setup(binary, api, tmp_path)
        sid = claude.run("SUB-LAUNCH")["session_id"]
        claude.run("MAIN-TWO", resume=sid)
        claude.run("MAIN-THREE", resume=sid)

    worktrees = list((project / ".claude" / "worktrees").iterdir())
    assert len(worktrees) == 1 and worktrees[0].name.startswith("agent-"), worktrees
    wt = worktrees[0]
    where = f".claude/worktrees/{wt.name}"
    assert (wt / ".git").is_file()
    done = {
        ".gitignore": b"*.flag\n",
        "a.txt": b"sub\n",
        "s.txt": b"s\n",
        "shared.txt": b"in the agent's checkout\n",
    }
    assert snapshot(wt) == done
    assert (project / "main.txt").read_text() == "v3\n"

    # The main session: 1, 2, 3; the launching turn names the worktree, lists none of its files.
    mains = listing(claude, project, sid)
    assert [(t["number"], t["prompt"]) for t in mains] == [
        (1, "SUB-LAUNCH"),
        (2, "MAIN-TWO"),
        (3, "MAIN-THREE"),
    ]
    assert files_of(mains) == [[], ["main.txt"], ["main.txt"]]
    assert mains[0]["subagents"] == [f"general-purpose in {where}"]
    assert not [p for p in all_paths(claude, project) if ".claude/worktrees" in p]
    shown = claude.rewind_ls("turns", "--session", sid).stdout
    assert f"(subagent: general-purpose in {where})" in shown, shown

    # The worktree's workspace: the same session, one turn named by the launching prompt.
    nested = listing(claude, wt, sid)
    assert [(t["number"], t["prompt"]) for t in nested] == [(1, "SUB-LAUNCH")]
    assert files_of(nested) == [["a.txt", "main.txt", "s.txt", "shared.txt"]]
    assert nested[0]["subagents"] == ["general-purpose"]
    assert made_up(claude, project, wt) == []
    assert nested[0]["endedAt"], "SubagentStop closed the worktree's turn"
    listed = json.loads(claude.rewind_ls("turns", "--all", "--json", cwd=wt).stdout)
    assert [s["id"] for s in listed["sessions"] if s["kind"] == "agent"] == [sid]

    # Rewind and undo in the worktree, byte exact; the main checkout untouched.
    main_before = snapshot(project)
    claude.rewind_ls("rewind", "1", "--session", sid, "--yes", cwd=wt)
    assert snapshot(wt) == {
        ".gitignore": b"*.flag\n",
        "main.txt": b"v1\n",
        "shared.txt": b"in every checkout\n",
    }
    claude.rewind_ls("undo", "--yes", cwd=wt)
    assert snapshot(wt) == done
    assert snapshot(project) == main_before

    # The worktree removed, with the subagent's uncommitted work: its history stays.
    git(project, "worktree", "remove", "--force", str(wt))
    assert not wt.exists()
    gone = json.loads(claude.rewind_ls("-C", str(wt), "turns", "--session", sid, "--json").stdout)
    assert [t["prompt"] for s in gone["sessions"] for t in s["turns"]] == ["SUB-LAUNCH"]
    out = tmp_path / "recovered"
    claude.rewind_ls("-C", str(wt), "export", "1", "--session", sid, "--after", "--to", str(out))
    assert snapshot(out) == done
    # A restore into the removed folder: a conflict; forced, still nothing is written.
    rewind = ("-C", str(wt), "rewind", "1", "--session", sid, "--yes")
    assert claude.rewind_ls(*rewind, ok=False).returncode == 3
    refused = claude.rewind_ls(*rewind, "--force", ok=False)
    assert refused.returncode != 0 and "no longer exists" in refused.stderr, refused.stderr
    assert not wt.exists()


def test_background_and_idle_isolated_subagents(binary: Path, tmp_path: Path) -> None:
    """2.1.332 runs an isolated subagent in the background unless told otherwise: its edit in its
    worktree (after the launching turn's `Stop`) is recorded there, in the turn named by the
    launching prompt. A foreground isolated subagent that changes nothing leaves no store behind
    (Claude Code removes its worktree; no history of a folder that never had any).

    Claude Code's automatic `<task-notification>` request after the background subagent is not
    the person's prompt; how it is recorded in the main session belongs to the background-work
    change, so this test leaves it out of the person's prompts it checks."""
    project = tmp_path / "proj"
    seen: dict[str, Path] = {}

    def remember(name: str, reply: Reply) -> Step:
        def make(wt: Path) -> Reply:
            seen[name] = wt
            return reply

        return in_worktree(name, make)

    def agent(prompt: str, **more: Any) -> dict[str, Any]:
        return {
            # (not the key: the task notification quotes the description)
            "description": prompt.split(": ")[1],
            "prompt": prompt,
            "subagent_type": "general-purpose",
            "isolation": "worktree",
            **more,
        }

    scripts: dict[str, list[Step]] = {
        "SUB-BG": [
            [tool_use("Agent", agent("IDLE-TASK: look only", run_in_background=False))],
            [tool_use("Agent", agent("BG-TASK: write"))],
            [text("launched")],
        ],
        "IDLE-TASK": [remember("idle", [text("nothing to change")])],
        "BG-TASK": [
            in_worktree(
                "background",
                lambda wt: [
                    tool_use("Write", {"file_path": str(wt / "bg.txt"), "content": "bg\n"})
                ],
            ),
            [text("background done")],
        ],
        "MAIN-TWO": [
            [tool_use("Write", {"file_path": str(project / "main.txt"), "content": "v2\n"})],
            [text("ok")],
        ],
    }
    with ByPrompt(scripts) as api:
        claude = setup(binary, api, tmp_path)
        sid = claude.run("SUB-BG")["session_id"]
        worktrees = project / ".claude" / "worktrees"
        wait_for(lambda: any((w / "bg.txt").exists() for w in worktrees.iterdir()), "bg.txt")
        claude.run("MAIN-TWO", resume=sid)

    idle = seen["idle"]
    assert not idle.exists(), "Claude Code keeps an isolated worktree that changed nothing"
    [bg] = list(worktrees.iterdir())
    assert (bg / "bg.txt").read_text() == "bg\n"
    assert claude.rewind_ls("-C", str(idle), "turns", ok=False).returncode != 0
    doctor = claude.rewind_ls("doctor", "--json", ok=False).stdout
    assert idle.name not in doctor

    nested = listing(claude, bg, sid)
    assert [(t["number"], t["prompt"]) for t in nested] == [(1, "SUB-BG")]
    assert files_of(nested) == [["bg.txt"]]
    mains = listing(claude, project, sid)
    person = [t for t in mains if not t["prompt"].startswith("<task-notification>")]
    assert [t["prompt"] for t in person] == ["SUB-BG", "MAIN-TWO"]
    assert files_of(person) == [[], ["main.txt"]]
    assert person[0]["subagents"] == [f"general-purpose in .claude/worktrees/{bg.name}"]
    assert not [p for p in all_paths(claude, project) if ".claude/worktrees" in p]


def test_claude_w_with_hooks_only_in_the_uncommitted_project_settings(
    binary: Path, tmp_path: Path
) -> None:
    """`rewind-ls install claude-code` (the project's `.claude/settings.json`, not committed): the
    `claude -w` session reads that file from its own checkout, which has none, so no hook fires
    there and nothing of it is recorded live (nor in the main workspace). `doctor` says so and
    how to reach worktrees; `rewind-ls import claude-code` inside the worktree then records the
    session from its transcript."""
    project = tmp_path / "proj"
    nest = project / ".claude" / "worktrees" / "nest"
    scripts: dict[str, list[Step]] = {
        "WT-ONE": [
            [tool_use("Write", {"file_path": str(nest / "a.txt"), "content": "a1\n"})],
            [text("ok")],
        ]
    }
    with ByPrompt(scripts) as api:
        claude = setup(binary, api, tmp_path)
        claude.rewind_ls("install", "claude-code", "--local", "--uninstall", "--no-mcp")
        claude.rewind_ls("install", "claude-code", "--no-mcp")
        checks = json.loads(claude.rewind_ls("doctor", "--json", ok=False).stdout)["checks"]
        [said] = [c for c in checks if c["name"] == "claude code worktrees"]
        assert "--local" in said["detail"], said
        wsid = claude.run("WT-ONE", args=("-w", "nest"))["session_id"]

    assert (nest / "a.txt").read_text() == "a1\n"
    assert claude.rewind_ls("turns", "--all", cwd=nest, ok=False).returncode != 0  # no store
    assert not [p for p in all_paths(claude, project) if ".claude/worktrees" in p]
    claude.rewind_ls("import", "claude-code", cwd=nest)
    [turn] = listing(claude, nest, wsid)
    assert turn["prompt"] == "WT-ONE" and files_of([turn]) == [["a.txt"]]
    assert turn["reconstructed"], turn


def test_isolated_subagent_of_a_claude_w_session(binary: Path, tmp_path: Path) -> None:
    """`claude -w nest` launching a subagent with `isolation: "worktree"`: 2.1.332 makes the
    subagent's worktree beside `nest`, in the MAIN checkout's `.claude/worktrees/` (outside the
    `-w` session's workspace). Its edit is recorded in its own worktree's workspace, in a turn of
    the `-w` session; that session's launching turn names the worktree by its whole path."""
    project = tmp_path / "proj"
    agent = {
        "description": "isolated",
        "prompt": "SUB-TASK: write",
        "subagent_type": "general-purpose",
        "isolation": "worktree",
        "run_in_background": False,
    }
    scripts: dict[str, list[Step]] = {
        "LAUNCH": [[tool_use("Agent", agent)], [text("ok")]],
        "SUB-TASK": [
            in_worktree(
                "subagent's",
                lambda wt: [tool_use("Write", {"file_path": str(wt / "a.txt"), "content": "s\n"})],
            ),
            [text("done")],
        ],
    }
    with ByPrompt(scripts) as api:
        claude = setup(binary, api, tmp_path)
        wsid = claude.run("LAUNCH", args=("-w", "nest"))["session_id"]

    nest = project / ".claude" / "worktrees" / "nest"
    [sub] = [w for w in (project / ".claude" / "worktrees").iterdir() if w.name != "nest"]
    assert (sub / "a.txt").read_text() == "s\n"
    [launching] = listing(claude, nest, wsid)
    assert launching["prompt"] == "LAUNCH" and launching["files"] == []
    assert launching["subagents"] == [f"general-purpose in {sub}"]
    [turn] = listing(claude, sub, wsid)
    assert turn["prompt"] == "LAUNCH" and files_of([turn]) == [["a.txt"]]
    assert not [p for p in all_paths(claude, project) if ".claude/worktrees" in p]
