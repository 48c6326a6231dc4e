"""The real OpenCode (pinned, from npm) offline against the scripted Anthropic API stand-in, with the
plugin `rewind-ls install opencode` writes and real tools on real files.

One session, three turns: `write` and `edit`; a `bash` command (modify, create, delete); a second
write. Then rewind, undo and revert are checked byte for byte, and the conversation is forked before
turn 2 (through OpenCode's own export and import) and resumed with the real binary: what it then
sends to the model is the conversation as it stood before turn 2.
"""

from __future__ import annotations

import json
import shlex
import subprocess
from pathlib import Path

import pytest

from tests.agents.test_codex_real import sources
from tests.support.fake_anthropic import FakeAnthropic, text, tool_use
from tests.support.real_opencode import RealOpenCode, opencode_binary

pytestmark = pytest.mark.agent

ORIGINAL = {"keep.txt": b"keep\n", "mod.txt": b"one\ntwo\n", "gone.txt": b"bye\r\nno newline"}


def files(folder: Path) -> dict[str, bytes]:
    """The project's files, without git's and OpenCode's own folders."""
    return {
        str(p.relative_to(folder)): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and not {".git", ".opencode"} & set(p.relative_to(folder).parts)
    }


def test_opencode_session_recorded_and_rewound(tmp_path: Path) -> None:
    binary = opencode_binary()
    project = tmp_path / "proj"
    project.mkdir()
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    for name, data in ORIGINAL.items():
        (project / name).write_bytes(data)

    with FakeAnthropic() as api:
        oc = RealOpenCode(binary, api, tmp_path, project)
        installed = oc.rewind_ls("install", "opencode")
        assert "restart" in installed.stdout
        plugin = project / ".opencode" / "plugins" / "rewind-ls.js"
        assert plugin.read_text().startswith("// rewind-ls plugin for OpenCode")

        api.add(
            [
                tool_use("write", {"filePath": str(project / "new.txt"), "content": "fresh\n"}),
                tool_use(
                    "edit",
                    {"filePath": str(project / "mod.txt"), "oldString": "two", "newString": "TWO"},
                ),
            ],
            [text("written")],
        )
        sid = oc.run("turn", "one:", "write", "and", "edit")
        after1 = files(project)
        assert after1["new.txt"] == b"fresh\n" and after1["mod.txt"] == b"one\nTWO\n", (
            after1,
            oc.hook_log(),
        )

        shell = "printf 'shell\\n' >> mod.txt && printf 'made\\n' > sh.txt && rm gone.txt"
        api.add([tool_use("bash", {"command": shell, "description": "edit by shell"})])
        api.add([text("shelled")])
        assert oc.run("turn", "two:", "shell", session=sid) == sid
        api.add(
            [tool_use("write", {"filePath": str(project / "new.txt"), "content": "fresher\n"})],
            [text("again")],
        )
        assert oc.run("turn", "three:", "write", "again", session=sid) == sid
        after3 = files(project)
        assert after3 == {
            "keep.txt": b"keep\n",
            "mod.txt": b"one\nTWO\nshell\n",
            "new.txt": b"fresher\n",
            "sh.txt": b"made\n",
        }, oc.hook_log()

        listing = json.loads(oc.rewind_ls("turns", "--all", "--json").stdout)
        sessions = [s for s in listing["sessions"] if s["id"] == sid]
        assert len(sessions) == 1 and sessions[0]["agent"] == "opencode", listing
        turns = sessions[0]["turns"]
        assert [t["prompt"] for t in turns] == [
            "turn one: write and edit",
            "turn two: shell",
            "turn three: write again",
        ], oc.hook_log()
        # Every turn was closed by OpenCode's session.idle, not left open for the next prompt.
        assert all(t["endedAt"] is not None for t in turns), turns
        changes = {
            t["number"]: {
                f["path"]: f["change"] for f in t["files"] if not f["path"].startswith(".opencode/")
            }
            for t in turns
        }
        assert changes == {
            1: {"new.txt": "created", "mod.txt": "modified"},
            2: {"mod.txt": "modified", "sh.txt": "created", "gone.txt": "deleted"},
            3: {"new.txt": "modified"},
        }
        # write / edit were captured by the plugin's tool events ("agent"), bash's by the scan.
        own = {p: s for p, s in sources(oc, 1, sid).items() if not p.startswith(".opencode/")}
        assert own == {"new.txt": "agent", "mod.txt": "agent"}
        assert sources(oc, 2, sid) == {"mod.txt": "shell", "sh.txt": "shell", "gone.txt": "shell"}
        assert f"session {sid}  (agent, opencode)" in oc.rewind_ls("turns", "--all").stdout

        oc.rewind_ls("revert", "2", "--session", sid, "--yes")
        assert files(project) == {
            "keep.txt": b"keep\n",
            "mod.txt": b"one\nTWO\n",
            "new.txt": b"fresher\n",
            "gone.txt": ORIGINAL["gone.txt"],
        }
        oc.rewind_ls("undo", "--yes")
        assert files(project) == after3
        oc.rewind_ls("rewind", "1", "--session", sid, "--yes")
        assert files(project) == ORIGINAL
        oc.rewind_ls("undo", "--yes")
        assert files(project) == after3

        fork = json.loads(
            oc.rewind_ls(
                "rewind", "2", "--session", sid, "--scope", "conversation", "--json"
            ).stdout
        )["conversation"]
        assert fork["resumeCommand"] == (
            f"cd {shlex.quote(str(project))} && opencode --session {fork['sessionId']}"
        )
        before = len(api.conversation_requests())
        api.add([text("forked answer")])
        assert oc.run("fork", "prompt", session=fork["sessionId"]) == fork["sessionId"]
        sent = api.conversation_requests()[before:]
        assert sent, api.requests[-3:]
        said = [json.dumps(m["content"]) for m in sent[0]["messages"] if m["role"] == "user"]
        assert "turn one: write and edit" in said[0] and "fork prompt" in said[-1], said
        assert not any("turn two" in t or "turn three" in t for t in said), said
        fork_session = json.loads(
            oc.rewind_ls("turns", "--session", fork["sessionId"], "--json").stdout
        )["sessions"][0]
        assert fork_session["agent"] == "opencode"
        assert [(t["number"], t["prompt"]) for t in fork_session["turns"]] == [
            (1, "turn one: write and edit"),
            (2, "fork prompt"),
        ], oc.hook_log()
        # The original session is as it was: resumed, it still holds turns two and three.
        before = len(api.conversation_requests())
        api.add([text("original again")])
        assert oc.run("original", "again", session=sid) == sid
        said = [
            json.dumps(m["content"])
            for m in api.conversation_requests()[before]["messages"]
            if m["role"] == "user"
        ]
        assert any("turn three" in t for t in said), said
        assert "internal error" not in oc.hook_log()


def test_opencode_subagent_edits_belong_to_the_turn_that_started_it(tmp_path: Path) -> None:
    """The `task` tool runs a subagent in a child session: its prompt and its end are not the
    person's, and its write is recorded in the person's turn."""
    binary = opencode_binary()
    project = tmp_path / "proj"
    project.mkdir()
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    with FakeAnthropic() as api:
        oc = RealOpenCode(binary, api, tmp_path, project)
        oc.rewind_ls("install", "opencode")
        task = {"description": "write", "prompt": "write sub.txt", "subagent_type": "general"}
        api.add([tool_use("task", task)])
        api.add([tool_use("write", {"filePath": str(project / "sub.txt"), "content": "sub\n"})])
        api.add([text("sub done")])
        api.add([text("main done")])
        sid = oc.run("delegate", "please")
        assert (project / "sub.txt").read_bytes() == b"sub\n"
        listing = json.loads(oc.rewind_ls("turns", "--all", "--json").stdout)
        assert [s["id"] for s in listing["sessions"]] == [sid], listing
        [turn] = listing["sessions"][0]["turns"]
        assert turn["prompt"] == "delegate please" and turn["endedAt"] is not None
        assert [f["path"] for f in turn["files"]] == ["sub.txt"]
        assert sources(oc, 1, sid) == {"sub.txt": "agent"}, oc.hook_log()
        oc.rewind_ls("rewind", "1", "--session", sid, "--yes")
        assert not (project / "sub.txt").exists()
