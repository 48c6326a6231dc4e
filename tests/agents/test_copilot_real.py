"""The real GitHub Copilot CLI (pinned, from npm) offline against the scripted Anthropic API stand-in
(its "bring your own key" mode), with the hooks `rewind-ls install copilot` writes and real tools on
real files.

One session, three turns: `create` and `edit`; a shell command (modify, create, delete); a second
edit. Then rewind, undo and revert are checked byte for byte, and the conversation is forked before
turn 2 and resumed with the real binary: what it then sends to the model is the conversation as it
stood before turn 2.
"""

from __future__ import annotations

import json
import shlex
import subprocess
from pathlib import Path

import pytest

from tests.agents.test_codex_real import sources
from tests.support.fake_anthropic import FakeAnthropic, text, tool_use
from tests.support.real_copilot import RealCopilot, copilot_binary

pytestmark = pytest.mark.agent

ORIGINAL = {"keep.txt": b"keep\n", "mod.txt": b"one\ntwo\n", "gone.txt": b"bye\r\nno newline"}


def files(folder: Path) -> dict[str, bytes]:
    """The project's files, without git's folder and the hooks file."""
    return {
        str(p.relative_to(folder)): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and not {".git", ".github"} & set(p.relative_to(folder).parts)
    }


def test_copilot_session_recorded_and_rewound(tmp_path: Path) -> None:
    binary = copilot_binary()
    project = tmp_path / "proj"
    project.mkdir()
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    for name, data in ORIGINAL.items():
        (project / name).write_bytes(data)

    with FakeAnthropic() as api:
        cp = RealCopilot(binary, api, tmp_path, project)
        installed = cp.rewind_ls("install", "copilot")
        assert "trust" in installed.stdout
        hooks = json.loads((project / ".github" / "hooks" / "rewind-ls.json").read_text())
        assert set(hooks["hooks"]) == {
            "SessionStart",
            "UserPromptSubmit",
            "PreToolUse",
            "PostToolUse",
            "PostToolUseFailure",
            "Stop",
            "SessionEnd",
        }

        api.add(
            [
                tool_use("create", {"path": str(project / "new.txt"), "file_text": "fresh\n"}),
                tool_use(
                    "edit", {"path": str(project / "mod.txt"), "old_str": "two", "new_str": "TWO"}
                ),
            ],
            [text("written")],
        )
        sid = cp.run("turn one: create and edit")
        after1 = files(project)
        assert after1["new.txt"] == b"fresh\n" and after1["mod.txt"] == b"one\nTWO\n", (
            after1,
            cp.hook_log(),
        )

        shell = "printf 'shell\\n' >> mod.txt && printf 'made\\n' > sh.txt && rm gone.txt"
        api.add([tool_use("bash", {"command": shell, "description": "edit by shell"})])
        api.add([text("shelled")])
        assert cp.run("turn two: shell", resume=sid) == sid
        api.add(
            [
                tool_use(
                    "edit",
                    {"path": str(project / "new.txt"), "old_str": "fresh", "new_str": "fresher"},
                )
            ],
            [text("again")],
        )
        assert cp.run("turn three: edit again", resume=sid) == sid
        after3 = files(project)
        assert after3 == {
            "keep.txt": b"keep\n",
            "mod.txt": b"one\nTWO\nshell\n",
            "new.txt": b"fresher\n",
            "sh.txt": b"made\n",
        }, cp.hook_log()

        listing = json.loads(cp.rewind_ls("turns", "--all", "--json").stdout)
        sessions = [s for s in listing["sessions"] if s["id"] == sid]
        assert len(sessions) == 1 and sessions[0]["agent"] == "copilot", listing
        turns = sessions[0]["turns"]
        assert [t["prompt"] for t in turns] == [
            "turn one: create and edit",
            "turn two: shell",
            "turn three: edit again",
        ], cp.hook_log()
        assert all(t["endedAt"] is not None for t in turns), turns
        changes = {t["number"]: {f["path"]: f["change"] for f in t["files"]} for t in turns}
        assert changes == {
            1: {"new.txt": "created", "mod.txt": "modified"},
            2: {"mod.txt": "modified", "sh.txt": "created", "gone.txt": "deleted"},
            3: {"new.txt": "modified"},
        }, cp.hook_log()
        # create / edit were captured by their hooks ("agent"), the shell's by the scan.
        assert sources(cp, 1, sid) == {"new.txt": "agent", "mod.txt": "agent"}
        assert sources(cp, 2, sid) == {"mod.txt": "shell", "sh.txt": "shell", "gone.txt": "shell"}
        assert f"session {sid}  (agent, copilot)" in cp.rewind_ls("turns", "--all").stdout

        cp.rewind_ls("revert", "2", "--session", sid, "--yes")
        assert files(project) == {
            "keep.txt": b"keep\n",
            "mod.txt": b"one\nTWO\n",
            "new.txt": b"fresher\n",
            "gone.txt": ORIGINAL["gone.txt"],
        }
        cp.rewind_ls("undo", "--yes")
        assert files(project) == after3
        cp.rewind_ls("rewind", "1", "--session", sid, "--yes")
        assert files(project) == ORIGINAL
        cp.rewind_ls("undo", "--yes")
        assert files(project) == after3

        fork = json.loads(
            cp.rewind_ls(
                "rewind", "2", "--session", sid, "--scope", "conversation", "--json"
            ).stdout
        )["conversation"]
        assert fork["resumeCommand"] == (
            f"cd {shlex.quote(str(project))} && copilot --resume={fork['sessionId']}"
        )
        before = len(api.conversation_requests())
        api.add([text("forked answer")])
        assert cp.run("fork prompt", resume=fork["sessionId"]) == fork["sessionId"]
        sent = api.conversation_requests()[before:]
        assert sent, api.requests[-3:]
        said = [json.dumps(m["content"]) for m in sent[0]["messages"] if m["role"] == "user"]
        assert "turn one: create and edit" in said[0] and "fork prompt" in said[-1], said
        assert not any("turn two" in t or "turn three" in t for t in said), said
        fork_session = json.loads(
            cp.rewind_ls("turns", "--session", fork["sessionId"], "--json").stdout
        )["sessions"][0]
        assert fork_session["agent"] == "copilot"
        assert [(t["number"], t["prompt"]) for t in fork_session["turns"]] == [
            (1, "turn one: create and edit"),
            (2, "fork prompt"),
        ], cp.hook_log()
        # The first prompt has nothing before it: a new conversation, said so.
        first = cp.rewind_ls("rewind", "1", "--session", sid, "--scope", "conversation").stdout
        assert "nothing comes before it to fork" in first and "copilot" in first, first
        assert "internal error" not in cp.hook_log()


def test_copilot_user_hooks_record_in_a_folder_not_trusted(tmp_path: Path) -> None:
    """`install copilot --user` writes ~/.copilot/hooks/rewind-ls.json, which Copilot runs in every
    folder, trusted or not."""
    binary = copilot_binary()
    project = tmp_path / "proj"
    project.mkdir()
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    with FakeAnthropic() as api:
        cp = RealCopilot(binary, api, tmp_path, project)
        (cp.home / ".copilot" / "config.json").write_text("{}")  # no trusted folder
        cp.rewind_ls("install", "copilot", "--user")
        assert (cp.home / ".copilot" / "hooks" / "rewind-ls.json").exists()
        assert not (project / ".github").exists()
        api.add([tool_use("create", {"path": str(project / "n.txt"), "file_text": "n\n"})])
        api.add([text("ok")])
        sid = cp.run("user level")
        [session] = json.loads(cp.rewind_ls("turns", "--all", "--json").stdout)["sessions"]
        assert session["id"] == sid and session["agent"] == "copilot"
        [turn] = session["turns"]
        assert turn["prompt"] == "user level" and [f["path"] for f in turn["files"]] == ["n.txt"]
        assert sources(cp, 1, sid) == {"n.txt": "agent"}, cp.hook_log()
