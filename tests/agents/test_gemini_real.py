"""The real Gemini CLI (pinned, from npm, run with node) offline against the scripted Gemini API
stand-in, with the hooks `rewind-ls install gemini` writes and real tools on real files.

One session, three turns: write_file and replace; a shell edit (modify, create, delete); a second
write. Then rewind, undo and revert are checked byte for byte, and the conversation is forked before
turn 2 and resumed with the real binary: what it then sends to the model is the conversation as it
stood before turn 2.
"""

from __future__ import annotations

import json
import shlex
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.agents.test_codex_real import sources
from tests.support.fake_gemini import FakeGemini, call, text_part
from tests.support.real_gemini import RealGemini, gemini_entry

pytestmark = pytest.mark.agent

ORIGINAL = {"keep.txt": b"keep\n", "mod.txt": b"one\ntwo\n", "gone.txt": b"bye\r\nno newline"}


def files(folder: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(folder)): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and not {".git", ".gemini"} & set(p.relative_to(folder).parts)
    }


def user_texts(request: dict[str, Any]) -> list[str]:
    return [
        "".join(str(p.get("text", "")) for p in c.get("parts", []))
        for c in request.get("contents", [])
        if c.get("role") == "user"
    ]


def test_gemini_session_recorded_rewound_and_forked(tmp_path: Path) -> None:
    entry = gemini_entry()
    project = tmp_path / "proj"
    project.mkdir()
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    for name, data in ORIGINAL.items():
        (project / name).write_bytes(data)

    with FakeGemini() as api:
        gemini = RealGemini(entry, api, tmp_path, project)
        installed = gemini.rewind_ls("install", "gemini")
        assert "trust" in installed.stdout
        settings = json.loads((project / ".gemini" / "settings.json").read_text())
        assert set(settings["hooks"]) == {
            "SessionStart",
            "BeforeAgent",
            "BeforeTool",
            "AfterTool",
            "AfterAgent",
            "SessionEnd",  # issue #24: the session's end closes a turn left open
        }

        api.script(
            [
                call("write_file", {"file_path": str(project / "new.txt"), "content": "fresh\n"}),
                call(
                    "replace",
                    {
                        "file_path": str(project / "mod.txt"),
                        "old_string": "two",
                        "new_string": "TWO",
                        "instruction": "capitalise two",
                    },
                ),
            ],
            [text_part("written")],
        )
        sid = gemini.run("turn one: write and replace")
        after1 = files(project)
        assert after1["new.txt"] == b"fresh\n" and after1["mod.txt"] == b"one\nTWO\n", (
            after1,
            gemini.hook_log(),
        )

        shell = "printf 'shell\\n' >> mod.txt && printf 'made\\n' > sh.txt && rm gone.txt"
        api.script([call("run_shell_command", {"command": shell})], [text_part("shelled")])
        assert gemini.run("turn two: shell", resume=sid) == sid
        api.script(
            [call("write_file", {"file_path": str(project / "new.txt"), "content": "fresher\n"})],
            [text_part("again")],
        )
        assert gemini.run("turn three: write again", resume=sid) == sid
        after3 = files(project)
        assert after3 == {
            "keep.txt": b"keep\n",
            "mod.txt": b"one\nTWO\nshell\n",
            "new.txt": b"fresher\n",
            "sh.txt": b"made\n",
        }, gemini.hook_log()

        listing = json.loads(gemini.rewind_ls("turns", "--all", "--json").stdout)
        sessions = [s for s in listing["sessions"] if s["id"] == sid]
        assert len(sessions) == 1 and sessions[0]["agent"] == "gemini", listing
        turns = sessions[0]["turns"]
        assert [t["prompt"] for t in turns] == [
            "turn one: write and replace",
            "turn two: shell",
            "turn three: write again",
        ], gemini.hook_log()
        changes = {t["number"]: {f["path"]: f["change"] for f in t["files"]} for t in turns}
        assert changes == {
            1: {"new.txt": "created", "mod.txt": "modified"},
            2: {"mod.txt": "modified", "sh.txt": "created", "gone.txt": "deleted"},
            3: {"new.txt": "modified"},
        }
        # write_file / replace were captured by their hooks ("agent"), the shell edits by the scan.
        assert sources(gemini, 1, sid) == {"new.txt": "agent", "mod.txt": "agent"}
        assert sources(gemini, 2, sid) == {
            "mod.txt": "shell",
            "sh.txt": "shell",
            "gone.txt": "shell",
        }
        assert f"session {sid}  (agent, gemini)" in gemini.rewind_ls("turns", "--all").stdout

        gemini.rewind_ls("revert", "2", "--session", sid, "--yes")
        assert files(project) == {
            "keep.txt": b"keep\n",
            "mod.txt": b"one\nTWO\n",
            "new.txt": b"fresher\n",
            "gone.txt": ORIGINAL["gone.txt"],
        }
        gemini.rewind_ls("undo", "--yes")
        assert files(project) == after3
        gemini.rewind_ls("rewind", "1", "--session", sid, "--yes")
        assert files(project) == ORIGINAL
        gemini.rewind_ls("undo", "--yes")
        assert files(project) == after3

        fork = json.loads(
            gemini.rewind_ls(
                "rewind", "2", "--session", sid, "--scope", "conversation", "--json"
            ).stdout
        )["conversation"]
        assert fork["resumeCommand"] == (
            f"cd {shlex.quote(str(project))} && gemini --resume {fork['sessionId']}"
        )
        before = len(api.main_requests())
        api.script([text_part("forked answer")])
        # The printed command, run as printed (from another folder: it starts with its `cd`).
        resumed = gemini.run("fork prompt", command=fork["resumeCommand"], cwd=tmp_path)
        assert resumed == fork["sessionId"]
        sent = [r for r in api.main_requests()[before:] if "fork prompt" in json.dumps(r)]
        assert sent, api.requests[-3:]
        texts = user_texts(sent[0])
        assert any("turn one: write and replace" in t for t in texts)
        assert not any("turn two" in t or "turn three" in t for t in texts), texts
        fork_session = json.loads(
            gemini.rewind_ls("turns", "--session", fork["sessionId"], "--json").stdout
        )["sessions"][0]
        assert fork_session["agent"] == "gemini"
        fork_turns = fork_session["turns"]
        assert [(t["number"], t["prompt"]) for t in fork_turns] == [
            (1, "turn one: write and replace"),
            (2, "fork prompt"),
        ], gemini.hook_log()
