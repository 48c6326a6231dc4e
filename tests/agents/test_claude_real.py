"""The real Claude Code binary (pinned, from npm), run offline against the scripted API stand-in,
with the hooks `rewind-ls install claude-code` writes and real tools on real files.

One session covers most scenarios of issue #10 turn by turn, one `claude -p --resume` per turn (to
keep the binary's start-up cost down); each assertion names the problem it shows fixed. Two more
sessions show what needs a session of its own: an automatic compaction inside a turn, and the
person's edit between two prompts of one running session (no SessionStart between them). Forks are
resumed with the real binary and the conversation it then sends to the model is compared with the
one the original sent.
"""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from tests.support.fake_anthropic import (
    FakeAnthropic,
    Reply,
    deferred_tools,
    is_compaction,
    loading_tools,
    text,
    tool_use,
    usage,
)
from tests.support.listing import outside_paths
from tests.support.real_claude import NOTEBOOK, RealClaude, claude_binary

pytestmark = pytest.mark.agent


@pytest.fixture(scope="module")
def binary() -> Path:
    return claude_binary()


def prompt_request(api: FakeAnthropic, prompt: str) -> tuple[list[Any], int]:
    """The messages of the first main-loop request that sent `prompt`, and the index of the
    message holding it (the binary may add attachment messages after it)."""
    for body in api.conversation_requests():
        messages = body["messages"]
        for k in range(len(messages) - 1, max(len(messages) - 4, -1), -1):
            if prompt in json.dumps(messages[k]):
                return messages, k
    raise AssertionError(f"no request sent the prompt {prompt!r}")


def fork_before(claude: RealClaude, sid: str, turn: int) -> dict[str, Any]:
    """`rewind-ls rewind TURN --scope conversation --json` of session `sid`: its conversation
    object (the fork's session id and resume command)."""
    proc = claude.rewind_ls(
        "rewind", str(turn), "--session", sid, "--scope", "conversation", "--json"
    )
    fork: dict[str, Any] = json.loads(proc.stdout)["conversation"]
    return fork


def resume_fork(claude: RealClaude, fork: dict[str, Any], prompt: str, cwd: Path) -> dict[str, Any]:
    """Run the printed resume command (from `cwd`, not the project) with the real binary."""
    command = fork["resumeCommand"]
    assert command.startswith("cd ") and "claude --resume " in command, command
    real = command.replace(
        "claude --resume",
        f"{shlex.quote(str(claude.binary))} -p {shlex.quote(prompt)} --output-format json --resume",
    )
    proc = subprocess.run(
        ["/bin/sh", "-c", real],
        cwd=cwd,
        env=claude.env,
        capture_output=True,
        text=True,
        timeout=180,
        stdin=subprocess.DEVNULL,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    result: dict[str, Any] = json.loads(proc.stdout)
    return result


def normalized(messages: list[Any]) -> list[Any]:
    """The binary lists the files it re-read after a compaction ("Called the Read tool ...") in
    an order that varies from run to run (seen: the same transcript loaded twice gave two orders),
    with the files' contents at load time, so that one message is compared as the set of files it
    re-read; everything else as sent."""
    out: list[Any] = []
    for m in messages:
        content = m.get("content")
        if (
            m.get("role") == "system"
            and isinstance(content, str)
            and content.startswith("Called the Read tool")
        ):
            # The binary builds this message when it loads the session, from the files on disk
            # at that moment (their contents may have moved on since the original run): the
            # same files must be re-read, in any order, whatever they hold now.
            files = re.findall(r'"file_path":\s*"([^"]+)"', content)
            out.append({"role": "system", "reads": sorted(set(files)) or content})
        else:
            out.append(m)
    return out


def assert_fork_is_original_subsequence(claude: RealClaude, sid: str, fork: dict[str, Any]) -> None:
    """Every line of the fork is a line of the original (sessionId aside), in the original order."""
    original = [json.loads(x) for x in claude.transcript(sid).read_text().splitlines()]
    positions = {
        json.dumps({**ln, "sessionId": None}, sort_keys=True): i for i, ln in enumerate(original)
    }
    forked = [json.loads(x) for x in Path(fork["transcriptPath"]).read_text().splitlines()]
    assert forked and all(
        ln.get("sessionId") == fork["sessionId"] for ln in forked if "sessionId" in ln
    )
    order = [positions[json.dumps({**ln, "sessionId": None}, sort_keys=True)] for ln in forked]
    assert order == sorted(order)


def assert_same_conversation(api: FakeAnthropic, original_prompt: str, new_prompt: str) -> None:
    """The resumed fork sends the model exactly what the original sent before the turn: every
    message (tool results, preserved messages), nothing after it."""
    before, k_before = prompt_request(api, original_prompt)
    after, k_after = prompt_request(api, new_prompt)
    mine, theirs = normalized(after[:k_after]), normalized(before[:k_before])
    differ = next((i for i, (a, b) in enumerate(zip(mine, theirs, strict=False)) if a != b), None)
    assert mine == theirs, (
        f"resumed fork sent {k_after} earlier messages, the original {k_before}; first"
        f" difference at message {differ}: {json.dumps(mine[differ])[:300] if differ is not None else ''}"
        f" vs {json.dumps(theirs[differ])[:300] if differ is not None else ''}"
    )
    assert original_prompt not in json.dumps(after[k_after])


def plan_file_writer(body: dict[str, Any]) -> Reply | None:
    """The "model" of the plan-mode turn (the responder only during it): the binary names a plan
    file in its own folder, the model writes it, then ends the turn once the Write's result is in."""
    if not body.get("tools") or is_compaction(body):
        return None  # the binary's side requests (a title): the side reply
    last = body["messages"][-1]
    if isinstance(last.get("content"), list) and any(
        b.get("type") == "tool_result" for b in last["content"] if isinstance(b, dict)
    ):
        return [text("plan written")]
    found = re.search(r'"planFilePath": "([^"]+)"', json.dumps(body))
    if found is None:
        found = re.search(r"(/[^\s\"\\]+/plans/[^\s\"\\]+\.md)", json.dumps(body))
    assert found is not None, "plan mode named no plan file"
    return [tool_use("Write", {"file_path": found.group(1), "content": "# plan\n"})]


def test_real_claude_session(binary: Path, tmp_path: Path) -> None:
    project = tmp_path / "proj"  # not a git repository: the workspace is the project folder
    with FakeAnthropic() as api:
        api.responder = loading_tools(api)  # a deferred tool (NotebookEdit) is loaded first
        claude = RealClaude(binary, api, tmp_path, project)
        claude.install_hooks()
        claude.allow(
            "Write",
            "Edit",
            "Bash",
            "NotebookEdit",
            "Agent",
            deny=("Edit(./denied.txt)", "Write(./denied.txt)", "Edit(denied.txt)"),
        )
        (project / ".claude" / "commands").mkdir(parents=True)
        (project / ".claude" / "commands" / "mkc.md").write_text("Create m.txt: $ARGUMENTS\n")
        p = str(project)
        (project / "pre.txt").write_text("before the session\n")
        (project / "gone.txt").write_text("deleted by the shell\n")

        # Turn 1: two tools in one message, Edit, NotebookEdit, a Bash that creates, deletes and
        # cds, then a Write to a top-level file from the new cwd.
        api.add(
            [
                text("two files at once"),
                tool_use("Write", {"file_path": p + "/a.txt", "content": "alpha\n"}),
                tool_use("Write", {"file_path": p + "/b.txt", "content": "beta\n"}),
            ],
            [
                tool_use(
                    "Edit",
                    {"file_path": p + "/a.txt", "old_string": "alpha", "new_string": "ALPHA"},
                )
            ],
            [tool_use("Write", {"file_path": p + "/nb.ipynb", "content": NOTEBOOK})],
            [
                tool_use(
                    "NotebookEdit",
                    {"notebook_path": p + "/nb.ipynb", "cell_id": "c1", "new_source": "x = 2\n"},
                )
            ],
            [
                tool_use(
                    "Bash",
                    {
                        "command": "mkdir -p sub && cd sub && echo x > x.txt && rm ../b.txt ../gone.txt"
                        " && echo more >> ../pre.txt"
                    },
                )
            ],
            [tool_use("Write", {"file_path": p + "/c.txt", "content": "top\n"})],
            [text("turn one done")],
        )
        r1 = claude.run("turn one: files")
        sid = r1["session_id"]
        # Smaller: MultiEdit is gone; every tool the installed hooks match is one the binary has.
        # 2.1.332 defers NotebookEdit: its first request names it among the deferred tools, with
        # no schema, and the model loads it with ToolSearch before calling it (as the stand-in
        # did); its hooks fire as before (the notebook's edit is recorded below).
        requests = api.conversation_requests()
        offered, deferred = {t["name"] for t in requests[0]["tools"]}, deferred_tools(requests[0])
        settings = json.loads((project / ".claude" / "settings.json").read_text())
        matched = set(settings["hooks"]["PreToolUse"][0]["matcher"].split("|"))
        assert "MultiEdit" not in offered | deferred
        assert matched == {"Write", "Edit", "NotebookEdit", "Bash"}
        assert matched <= offered | deferred and "NotebookEdit" in deferred, (offered, deferred)
        assert any("NotebookEdit" in {t["name"] for t in b["tools"]} for b in requests[1:])

        # The person edits between prompts.
        (project / "a.txt").write_text("ALPHA\nmine\n")

        # Turn 2: a slash command; a failed Edit; a denied Write.
        api.add(
            [tool_use("Write", {"file_path": p + "/m.txt", "content": "m\n"})],
            [
                tool_use(
                    "Edit",
                    {"file_path": p + "/c.txt", "old_string": "not there", "new_string": "x"},
                )
            ],
            [tool_use("Write", {"file_path": p + "/denied.txt", "content": "no\n"})],
            [text("turn two done")],
        )
        claude.run("/mkc now", resume=sid)
        assert "denied by your permission settings" in json.dumps(
            api.conversation_requests()[-1]["messages"][-1]
        )
        assert "String to replace not found" in json.dumps(api.conversation_requests()[-2])
        assert not (project / "denied.txt").exists()

        # Turn 3: a subagent edits.
        api.add(
            [
                tool_use(
                    "Agent",
                    {
                        "description": "edit",
                        "prompt": "write s.txt",
                        "subagent_type": "general-purpose",
                        # 2.1.332 runs a subagent in the background unless told not to (then its
                        # replies and the main loop's race for the script): this turn is the
                        # subagent that works inside its turn, as every subagent did on 2.1.197.
                        "run_in_background": False,
                    },
                )
            ],
            [tool_use("Write", {"file_path": p + "/s.txt", "content": "s\n"})],
            [text("subagent done")],
            [text("turn three done")],
        )
        claude.run("turn three: subagent", resume=sid)

        # /compact, then a new prompt (turn 4).
        claude.run("/compact", resume=sid)
        api.add(
            [tool_use("Write", {"file_path": p + "/after.txt", "content": "after\n"})],
            [text("turn four done")],
        )
        claude.run("turn four: after compact", resume=sid)

        # Turn 5: plan mode writes its plan in the agent's own folder.
        api.responder = plan_file_writer
        claude.run("turn five: plan the release", resume=sid, args=("--permission-mode", "plan"))
        api.responder = loading_tools(api)
        assert list(claude.config.glob("plans/*.md")), "the plan file was not written"

        listing = json.loads(claude.rewind_ls("turns", "--all", "--json").stdout)
        # Problem 1: one workspace, one store, whatever the shell's cwd became.
        assert len(list((claude.rewind_home / "workspaces").iterdir())) == 1
        agent = [s for s in listing["sessions"] if s["id"] == sid]
        assert len(agent) == 1
        turns = agent[0]["turns"]
        assert [t["number"] for t in turns] == [1, 2, 3, 4, 5]
        files = {t["number"]: {f["path"]: f["change"] for f in t["files"]} for t in turns}
        assert files[1] == {
            "a.txt": "created",
            "nb.ipynb": "created",
            "sub/x.txt": "created",
            "c.txt": "created",
            "pre.txt": "modified",
            "gone.txt": "deleted",
        }
        assert json.loads((project / "nb.ipynb").read_text())["cells"][0]["source"] in (
            "x = 2\n",
            ["x = 2\n"],
        )
        assert files[2] == {"m.txt": "created"}  # failed Edit and denied Write: no change
        assert files[3] == {"s.txt": "created"}
        assert turns[2]["subagents"] == ["general-purpose"]  # smaller: subagent kept
        shown = claude.rewind_ls("turns", "--session", sid).stdout
        third = [ln for ln in shown.splitlines() if "turn three: subagent" in ln]
        assert len(third) == 1 and "(subagent: general-purpose)" in third[0], shown
        assert files[4] == {"after.txt": "created"}
        assert files[5] == {}  # the plan file is the agent's, not the project's
        log = claude.hook_log()
        assert "outside" not in log and "error" not in log, log  # smaller: plans not errors

        # Problem 2: the person's edit is theirs: rewinding turn 1 stops on a conflict.
        dry = claude.rewind_ls("rewind", "1", "--session", sid, "--dry-run", ok=False)
        assert dry.returncode == 3, dry.stdout + dry.stderr
        assert "conflict (other-session): a.txt" in dry.stdout
        # Rewinding to the start of turn 2 (after the person's edit) leaves their edit alone.
        plan2 = json.loads(
            claude.rewind_ls("rewind", "2", "--session", sid, "--dry-run", "--json").stdout
        )
        assert "a.txt" not in {f["path"] for f in plan2["files"]}
        assert (project / "a.txt").read_text() == "ALPHA\nmine\n"

        # Problems 3, 5, 6: fork before turn 2 (a slash command; turn 1 had parallel calls),
        # resume it with the real binary from another folder.
        fork2 = fork_before(claude, sid, 2)
        assert fork2["prompt"] == "/mkc now"
        api.add([text("fork of two")])
        resumed = resume_fork(claude, fork2, "fork two prompt", tmp_path)
        assert resumed["session_id"] == fork2["sessionId"]
        assert_same_conversation(api, "Create m.txt: now", "fork two prompt")

        # Problem 7: the resumed fork continues the numbering and can rewind inherited turns.
        fork_turns = json.loads(
            claude.rewind_ls("turns", "--session", fork2["sessionId"], "--json").stdout
        )["sessions"][0]["turns"]
        assert [(t["number"], t["prompt"]) for t in fork_turns] == [
            (1, "turn one: files"),
            (2, "fork two prompt"),
        ]
        # No --session: the resumed fork is the current session, as for a person typing this.
        plan1 = claude.rewind_ls("rewind", "1", "--dry-run", "--json", ok=False)
        planned = json.loads(plan1.stdout)
        assert planned["turnId"] == fork_turns[0]["id"]  # the fork's own copy of turn 1
        paths = {f["path"] for f in planned["files"]}
        assert {"a.txt", "c.txt", "nb.ipynb", "sub/x.txt", "pre.txt", "gone.txt"} <= paths

        # Problem 4: fork before turn 4 (after /compact) keeps what compaction preserved.
        fork4 = fork_before(claude, sid, 4)
        assert_fork_is_original_subsequence(claude, sid, fork4)
        api.add([text("fork of four")])
        resume_fork(claude, fork4, "fork four prompt", tmp_path)
        assert_same_conversation(api, "turn four: after compact", "fork four prompt")

        # Fork before turn 3 (the subagent's turn) resumes the same too.
        fork3 = fork_before(claude, sid, 3)
        api.add([text("fork of three")])
        resume_fork(claude, fork3, "fork three prompt", tmp_path)
        assert_same_conversation(api, "turn three: subagent", "fork three prompt")

        # Doctor runs the installed hook command.
        doctor = json.loads(claude.rewind_ls("doctor", "--json").stdout)
        hooks = [c for c in doctor["checks"] if c["name"] == "claude code hooks"]
        assert hooks and all(c["ok"] for c in hooks), hooks
        # Every scripted reply answered the request it was written for, none was left over.
        assert not api.script and not api.unscripted, (api.script, api.unscripted)


def test_automatic_compaction_inside_a_turn(binary: Path, tmp_path: Path) -> None:
    """Problem 8, with the real binary: an automatic compaction in the middle of a turn fires
    SessionStart (source "compact") while the turn is open; a change the workspace scan had not
    yet seen stays the turn's, not "external". Then problem 4 after an automatic compaction: the
    fork before the next turn, resumed, sends the model the same conversation."""
    project = tmp_path / "proj"
    go = tmp_path / "go"  # outside the project: not a change of the workspace

    def compaction(body: dict[str, Any]) -> Reply | None:
        """The binary's compaction request: let the agent's background job write its file (the
        scan after the Bash call ran before it), wait for it, then answer with a summary."""
        if not is_compaction(body):
            return None
        go.write_text("")
        deadline = time.monotonic() + 60
        while not (project / "late.txt").exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        return [text("<summary>wrote big.txt; a background job writes late.txt</summary>")]

    with FakeAnthropic(responder=compaction) as api:
        claude = RealClaude(binary, api, tmp_path, project)
        # A configured window makes 2.1.197 compact on its own once the context nears it (with
        # the default "auto" window it only compacts after the API refuses a prompt as too long).
        claude.env["CLAUDE_CODE_AUTO_COMPACT_WINDOW"] = "100000"
        claude.env["REWIND_LS_DEBUG"] = "1"  # the hook log says what each hook did
        claude.install_hooks()
        claude.allow("Write", "Bash")
        p = str(project)
        api.add(
            [
                tool_use(
                    "Bash",
                    {
                        # Bounded (60 s): no process outlives a test that failed before.
                        "command": f"(i=0; while [ ! -e {shlex.quote(str(go))} ] && [ $i -lt 1200 ];"
                        " do sleep 0.05; i=$((i+1)); done; echo late > late.txt) >/dev/null 2>&1 &"
                    },
                )
            ],
            # A large tool call and a reported context near the window: the binary compacts
            # before its next request.
            [
                tool_use("Write", {"file_path": p + "/big.txt", "content": "word " * 60000}),
                usage(80000),
            ],
            [tool_use("Write", {"file_path": p + "/after.txt", "content": "after\n"})],
            [text("turn one done")],
        )
        sid = claude.run("turn one: a long task")["session_id"]
        assert sum(is_compaction(b) for b in api.requests) == 1, "the binary did not compact"
        assert (project / "late.txt").read_text() == "late\n"
        assert "SessionStart compact inside" in claude.hook_log()

        api.add([text("turn two done")])
        claude.run("turn two: after the compaction", resume=sid)
        listing = json.loads(claude.rewind_ls("turns", "--all", "--json").stdout)
        by_id = {s["id"]: s for s in listing["sessions"]}
        turns = by_id[sid]["turns"]
        assert [t["number"] for t in turns] == [1, 2]
        assert {f["path"]: f["change"] for f in turns[0]["files"]} == {
            "big.txt": "created",
            "late.txt": "created",
            "after.txt": "created",
        }
        assert not outside_paths(listing)

        fork = fork_before(claude, sid, 2)
        assert_fork_is_original_subsequence(claude, sid, fork)
        api.add([text("fork done")])
        resume_fork(claude, fork, "fork prompt", tmp_path)
        assert_same_conversation(api, "turn two: after the compaction", "fork prompt")
        assert not api.script and not api.unscripted, (api.script, api.unscripted)


def test_person_edits_between_prompts_of_one_session(binary: Path, tmp_path: Path) -> None:
    """Problems 1 and 2 in one running session (no SessionStart between the prompts, as in the
    interactive UI): the agent's shell `cd`s into a subfolder, the person edits a file between
    the two prompts; the edit is theirs (the "external" session), so rewinding turn 1 stops on a
    conflict and rewinding to turn 2 leaves it alone."""
    project = tmp_path / "proj"
    with FakeAnthropic() as api:
        claude = RealClaude(binary, api, tmp_path, project)
        claude.install_hooks()
        claude.allow("Write", "Bash")
        p = str(project)
        api.add(
            [tool_use("Write", {"file_path": p + "/a.txt", "content": "agent\n"})],
            [tool_use("Bash", {"command": "mkdir -p sub && cd sub"})],
            [text("turn one done")],
            [tool_use("Write", {"file_path": p + "/b.txt", "content": "b\n"})],
            [text("turn two done")],
        )
        with claude.session() as live:
            sid = live.prompt("turn one: write a.txt")["session_id"]
            # The result line may come before the Stop hook has closed the turn: wait for it.
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                listing = json.loads(claude.rewind_ls("turns", "--session", sid, "--json").stdout)
                if listing["sessions"][0]["turns"][0]["endedAt"]:
                    break
                time.sleep(0.1)
            (project / "a.txt").write_text("agent\nmine\n")  # the person, between prompts
            live.prompt("turn two: write b.txt")

        assert len(list((claude.rewind_home / "workspaces").iterdir())) == 1
        listing = json.loads(claude.rewind_ls("turns", "--all", "--json").stdout)
        changes = {
            (s["kind"], f["path"]): f["change"]
            for s in listing["sessions"]
            for t in s["turns"]
            for f in t["files"]
        }
        assert changes == {
            ("agent", "a.txt"): "created",
            ("external", "a.txt"): "modified",
            ("agent", "b.txt"): "created",
        }
        dry = claude.rewind_ls("rewind", "1", "--session", sid, "--dry-run", ok=False)
        assert dry.returncode == 3, dry.stdout + dry.stderr
        assert "conflict (other-session): a.txt" in dry.stdout
        plan = json.loads(
            claude.rewind_ls("rewind", "2", "--session", sid, "--dry-run", "--json").stdout
        )
        assert {f["path"] for f in plan["files"]} == {"b.txt"}
        assert not api.script and not api.unscripted, (api.script, api.unscripted)
