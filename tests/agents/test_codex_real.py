"""The real Codex CLI binary (pinned, from npm), run offline against the scripted Responses API
stand-in, with the hooks `rewind-ls install codex` writes and real tools on real files.

One session, three turns (to keep the binary's start-up cost down): a patch that adds, updates,
moves and deletes; a shell edit; a second patch. Then rewind, undo and revert are checked byte for
byte, and the conversation is forked before turn 2 and resumed with the real binary: what it then
sends to the model is the conversation as it stood before turn 2.
"""

from __future__ import annotations

import json
import shlex
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from tests.support.fake_openai import FakeOpenAI, custom_tool_call, function_call, message
from tests.support.real_codex import RealCodex, codex_binary

pytestmark = pytest.mark.agent

ORIGINAL = {
    "keep.txt": b"keep\n",
    "mod.txt": b"one\ntwo\n",
    "old.txt": b"old\n",
    "gone.txt": b"bye\r\nno newline at end",
}


def files(folder: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(folder)): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and not {".git", ".codex"} & set(p.relative_to(folder).parts)
    }


def patch(project: Path) -> str:
    return (
        "*** Begin Patch\n"
        "*** Add File: new.txt\n"
        "+fresh\n"
        "*** Update File: mod.txt\n"
        "@@\n"
        " one\n"
        "-two\n"
        "+TWO\n"
        "*** Update File: old.txt\n"
        "*** Move to: moved.txt\n"
        "@@\n"
        "-old\n"
        "+old, moved\n"
        f"*** Delete File: {project / 'gone.txt'}\n"
        "*** End Patch\n"
    )


def user_texts(request: dict[str, Any]) -> list[str]:
    """The user messages' texts of one request, in order."""
    out = []
    for item in request.get("input", []):
        if item.get("type") == "message" and item.get("role") == "user":
            out.append("".join(c.get("text", "") for c in item.get("content", [])))
    return out


def sources(agent: Any, number: int, session: str) -> dict[str, str]:
    """Who made each change of turn `number` of `session`, as `rewind-ls log` says."""
    turns = json.loads(agent.rewind_ls("turns", "--session", session, "--json").stdout)
    turn = turns["sessions"][0]["turns"][number - 1]
    out = {}
    for path in (f["path"] for f in turn["files"]):
        versions = json.loads(agent.rewind_ls("log", path, "--json").stdout)["versions"]
        out[path] = next(v["source"] for v in versions if v["turnId"] == turn["id"])
    return out


def test_codex_session_recorded_rewound_and_forked(tmp_path: Path) -> None:
    binary = codex_binary()
    project = tmp_path / "proj"
    project.mkdir()
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    for name, data in ORIGINAL.items():
        (project / name).write_bytes(data)
    foreign_log = tmp_path / "foreign.log"
    (project / ".codex").mkdir()
    foreign = {
        "hooks": {
            "PostToolUse": [
                {
                    "hooks": [
                        {"type": "command", "command": f"cat > /dev/null; echo x >> {foreign_log}"}
                    ]
                }
            ]
        }
    }
    (project / ".codex" / "hooks.json").write_text(json.dumps(foreign))

    with FakeOpenAI() as api:
        codex = RealCodex(binary, api, tmp_path, project)
        installed = codex.rewind_ls("install", "codex")
        assert "Trust all and continue" in installed.stdout  # how to trust the new hooks
        hooks = json.loads((project / ".codex" / "hooks.json").read_text())
        commands = [h["command"] for g in hooks["hooks"]["PostToolUse"] for h in g["hooks"]]
        assert any(str(foreign_log) in c for c in commands)  # the foreign hook is kept
        assert any(c.endswith("hook codex") for c in commands)

        # Turn 1: one patch adds, updates, moves and deletes.
        api.script([custom_tool_call("apply_patch", patch(project))], [message("patched")])
        sid = codex.run("turn one: patch")
        after1 = files(project)
        assert after1 == {
            "keep.txt": b"keep\n",
            "mod.txt": b"one\nTWO\n",
            "moved.txt": b"old, moved\n",
            "new.txt": b"fresh\n",
        }
        assert foreign_log.read_text().count("x") >= 1  # the foreign hook still runs

        # Turn 2: a shell edit.
        shell = "printf 'shell\\n' >> mod.txt && printf 'made\\n' > sh.txt"
        api.script([function_call("exec_command", {"cmd": shell})], [message("shelled")])
        assert codex.run("turn two: shell", resume=sid) == sid
        # Turn 3: a second patch on a file turn 1 created.
        api.script(
            [
                custom_tool_call(
                    "apply_patch",
                    "*** Begin Patch\n*** Update File: new.txt\n@@\n-fresh\n+fresher\n"
                    "*** End Patch\n",
                )
            ],
            [message("again")],
        )
        assert codex.run("turn three: patch again", resume=sid) == sid
        after3 = files(project)
        assert after3["mod.txt"] == b"one\nTWO\nshell\n" and after3["sh.txt"] == b"made\n"
        assert after3["new.txt"] == b"fresher\n"

        listing = json.loads(codex.rewind_ls("turns", "--all", "--json").stdout)
        sessions = [s for s in listing["sessions"] if s["id"] == sid]
        assert len(sessions) == 1 and sessions[0]["agent"] == "codex", listing
        turns = sessions[0]["turns"]
        assert [t["prompt"] for t in turns] == [
            "turn one: patch",
            "turn two: shell",
            "turn three: patch again",
        ]
        changes = {t["number"]: {f["path"]: f["change"] for f in t["files"]} for t in turns}
        assert changes[1] == {
            "new.txt": "created",
            "mod.txt": "modified",
            "old.txt": "deleted",
            "moved.txt": "created",
            "gone.txt": "deleted",
        }
        assert changes[2] == {"mod.txt": "modified", "sh.txt": "created"}
        assert changes[3] == {"new.txt": "modified"}
        # The patch's paths were captured by the apply_patch hooks ("agent"), not found afterwards
        # by the turn's scan ("shell"); the shell edit by the scan.
        assert sources(codex, 1, sid) == {p: "agent" for p in changes[1]}
        assert sources(codex, 2, sid) == {"mod.txt": "shell", "sh.txt": "shell"}
        assert f"session {sid}  (agent, codex)" in codex.rewind_ls("turns", "--all").stdout

        # Revert turn 2 only: the shell's changes go, turn 3's stay.
        codex.rewind_ls("revert", "2", "--session", sid, "--yes")
        reverted = files(project)
        expected = {k: v for k, v in after3.items() if k != "sh.txt"}
        assert reverted == {**expected, "mod.txt": b"one\nTWO\n"}
        codex.rewind_ls("undo", "--yes")
        assert files(project) == after3

        # Rewind to the start of turn 1: every original byte back (CRLF, no final newline).
        codex.rewind_ls("rewind", "1", "--session", sid, "--yes")
        assert files(project) == ORIGINAL
        codex.rewind_ls("undo", "--yes")
        assert files(project) == after3

        # Fork the conversation before turn 2 and resume it with the real binary.
        fork = json.loads(
            codex.rewind_ls(
                "rewind", "2", "--session", sid, "--scope", "conversation", "--json"
            ).stdout
        )["conversation"]
        command = fork["resumeCommand"]
        assert command == f"cd {shlex.quote(str(project))} && codex resume {fork['sessionId']}"
        api.script([message("forked answer")])
        resumed = codex.run("fork prompt", resume=fork["sessionId"])
        assert resumed == fork["sessionId"]
        sent = codex.requests_with("fork prompt")
        assert sent, api.paths
        texts = user_texts(sent[0])
        assert any("turn one: patch" in t for t in texts)
        assert not any("turn two" in t or "turn three" in t for t in texts), texts
        # The fork's model input is the original's turn-2 input minus the turn-2 prompt.
        original = codex.requests_with("turn two: shell")[0]
        assert [i for i in original["input"] if i not in sent[0]["input"]], "nothing dropped"
        # The resumed fork continues the numbering after the inherited turn.
        fork_session = json.loads(
            codex.rewind_ls("turns", "--session", fork["sessionId"], "--json").stdout
        )["sessions"][0]
        assert fork_session["agent"] == "codex"
        fork_turns = fork_session["turns"]
        assert [(t["number"], t["prompt"]) for t in fork_turns] == [
            (1, "turn one: patch"),
            (2, "fork prompt"),
        ], codex.hook_log()


def test_codex_runs_the_hooks_once_trusted_and_the_printed_command_resumes_the_fork(
    tmp_path: Path,
) -> None:
    """No bypass here: the hooks run only after the person trusts them the way `install codex`
    says (the TUI's start-up review), and the fork resumes with the exact command printed, in the
    interactive `codex`."""
    binary = codex_binary()
    project = tmp_path / "proj"
    project.mkdir()
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    (project / "a.txt").write_bytes(b"a\n")

    with FakeOpenAI() as api:
        codex = RealCodex(binary, api, tmp_path, project)
        installed = codex.rewind_ls("install", "codex").stdout
        assert '"Trust all and continue"' in installed  # what trust_hooks() chooses
        api.script([message("untrusted")])
        codex.run("before trusting", bypass_trust=False)
        assert "hook codex" not in codex.hook_log()  # new hooks do not run untrusted

        codex.trust_hooks()
        add = "*** Begin Patch\n*** Add File: b.txt\n+b\n*** End Patch\n"
        api.script([custom_tool_call("apply_patch", add)], [message("added")])
        sid = codex.run("turn one: trusted", bypass_trust=False)
        assert "hook codex" in codex.hook_log()  # (the log names every hook call)
        api.script([message("just talk")])
        codex.run("turn two: talk", resume=sid, bypass_trust=False)
        session = json.loads(codex.rewind_ls("turns", "--session", sid, "--json").stdout)
        turns = session["sessions"][0]["turns"]
        assert [t["prompt"] for t in turns] == ["turn one: trusted", "turn two: talk"]
        assert [f["path"] for f in turns[0]["files"]] == ["b.txt"]

        fork = json.loads(
            codex.rewind_ls(
                "rewind", "2", "--session", sid, "--scope", "conversation", "--json"
            ).stdout
        )["conversation"]
        api.script([message("resumed in the terminal")])
        term = codex.tui(fork["resumeCommand"])
        try:
            term.prompt("prompt in the resumed fork")
            deadline = time.monotonic() + 60
            while not codex.requests_with("prompt in the resumed fork"):
                assert time.monotonic() < deadline, term.text()
                term.read(0.2)  # keep reading: a terminal nobody reads blocks the program
            texts = user_texts(codex.requests_with("prompt in the resumed fork")[0])
            assert any("turn one: trusted" in t for t in texts), texts
            assert not any("turn two" in t for t in texts), texts
            term.wait_for("resumed in the terminal")
        finally:
            term.close()
        fork_turns = json.loads(
            codex.rewind_ls("turns", "--session", fork["sessionId"], "--json").stdout
        )["sessions"][0]["turns"]
        assert [(t["number"], t["prompt"]) for t in fork_turns] == [
            (1, "turn one: trusted"),
            (2, "prompt in the resumed fork"),
        ], codex.hook_log()
