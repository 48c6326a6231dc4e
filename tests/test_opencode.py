"""OpenCode support without the binary: the plugin `install opencode` writes, and the hook process fed
the payloads that plugin builds from OpenCode 1.18's plugin calls (seen with the real binary in
tests/agents/test_opencode_real.py): write/edit, apply_patch (GPT models' edit tool, relative
paths), bash, and a subagent's tool call folded into the person's session."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Cli

SESSION = "ses_de0292523ffexVK3V5W8k3CGGs"


def hook(ws: Path, home: Path, event: str, **fields: Any) -> None:
    payload = {"hook_event_name": event, "session_id": SESSION, "cwd": str(ws), **fields}
    proc = subprocess.run(
        [sys.executable, "-m", "rewind_ls", "hook", "opencode"],
        input=json.dumps(payload).encode(),
        env={**os.environ, "REWIND_LS_HOME": str(home), "HOME": str(home / "user")},
        capture_output=True,
        timeout=60,
    )
    assert proc.returncode == 0 and not proc.stderr, proc.stderr


def test_install_writes_the_plugin_once_and_removes_only_ours(
    ws: Path, cli: Cli, tmp_path: Path
) -> None:
    plugin = ws / ".opencode" / "plugins" / "rewind-ls.js"
    out = cli("install", "opencode").stdout
    assert f"{plugin}: added the plugin" in out and "restart" in out
    text = plugin.read_text()
    assert text.startswith("// rewind-ls plugin for OpenCode")
    assert 'const TOOLS = ["write", "edit", "apply_patch", "bash"]' in text
    assert "already installed" in cli("install", "opencode").stdout
    from rewind_ls.core.agents.settings import installed_hooks

    # doctor runs the command the plugin runs: the one `install` chose.
    [(path, [command])] = installed_hooks(str(ws), "opencode")
    assert path == str(plugin) and command.endswith(" hook opencode")
    if shutil.which("node"):  # the plugin is a valid ES module
        check = tmp_path / "check.mjs"
        check.write_text(text)
        proc = subprocess.run(["node", "--check", str(check)], capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr
    cli("install", "opencode", "--uninstall")
    assert not plugin.exists()
    plugin.write_text("export const Mine = async () => ({})\n")
    refused = cli("install", "opencode", ok=False)
    assert refused.returncode != 0 and "not rewind-ls' plugin" in refused.stderr
    assert plugin.read_text() == "export const Mine = async () => ({})\n"
    user = subprocess.run(
        [sys.executable, "-m", "rewind_ls", "install", "opencode", "--user"],
        cwd=ws,
        env={
            **os.environ,
            "REWIND_LS_HOME": str(tmp_path / "h"),
            "XDG_CONFIG_HOME": str(tmp_path / "xdg"),
        },
        capture_output=True,
        text=True,
    )
    assert user.returncode == 0, user.stderr
    assert (tmp_path / "xdg" / "opencode" / "plugins" / "rewind-ls.js").exists()


def test_opencode_tools_recorded_in_the_persons_turn(ws: Path, home: Path, cli: Cli) -> None:
    (ws / "mod.txt").write_bytes(b"one\ntwo\n")
    (ws / "old.txt").write_bytes(b"old\n")
    hook(ws, home, "session.created")
    hook(ws, home, "chat.message", prompt="patch things")
    write = {
        "tool_name": "write",
        "tool_input": {"filePath": str(ws / "new.txt")},
        "tool_use_id": "c1",
    }
    hook(ws, home, "tool.execute.before", **write)
    (ws / "new.txt").write_bytes(b"x")
    hook(ws, home, "tool.execute.after", **write)
    patch = (
        "*** Begin Patch\n*** Add File: sub/added.txt\n+added\n*** Update File: mod.txt\n@@\n"
        "-two\n+TWO\n*** Delete File: old.txt\n*** End Patch"
    )
    args = {"patchText": patch}
    hook(
        ws, home, "tool.execute.before", tool_name="apply_patch", tool_input=args, tool_use_id="c2"
    )
    (ws / "sub").mkdir()
    (ws / "sub" / "added.txt").write_bytes(b"added\n")
    (ws / "mod.txt").write_bytes(b"one\nTWO\n")
    (ws / "old.txt").unlink()
    hook(ws, home, "tool.execute.after", tool_name="apply_patch", tool_input=args, tool_use_id="c2")
    # A subagent's edit: the plugin sends the person's session and the child's id.
    sub = {"filePath": "sub/by-agent.txt", "oldString": "", "newString": "a"}
    hook(ws, home, "tool.execute.before", tool_name="edit", tool_input=sub, agent_id="ses_child")
    (ws / "sub" / "by-agent.txt").write_bytes(b"a")
    hook(ws, home, "tool.execute.after", tool_name="edit", tool_input=sub, agent_id="ses_child")
    read = {"tool_name": "read", "tool_input": {"filePath": str(ws / "mod.txt")}}
    hook(ws, home, "tool.execute.before", **read)  # not an edit tool: ignored
    hook(
        ws,
        home,
        "tool.execute.before",
        tool_name="bash",
        tool_input={"command": "x"},
        tool_use_id="c4",
    )
    (ws / "by-shell.txt").write_bytes(b"s")
    hook(
        ws,
        home,
        "tool.execute.after",
        tool_name="bash",
        tool_input={"command": "x"},
        tool_use_id="c4",
    )
    hook(ws, home, "session.idle")

    listing = json.loads(cli("turns", "--session", SESSION, "--json").stdout)
    [session] = listing["sessions"]
    assert session["agent"] == "opencode"
    [turn] = session["turns"]
    assert turn["prompt"] == "patch things" and turn["endedAt"] is not None
    assert {f["path"]: f["change"] for f in turn["files"]} == {
        "new.txt": "created",
        "sub/added.txt": "created",
        "mod.txt": "modified",
        "old.txt": "deleted",
        "sub/by-agent.txt": "created",
        "by-shell.txt": "created",
    }
    # Each edit tool's files were captured by its own events ("agent"), not by a later scan.
    sources = {
        f["path"]: next(
            v["source"] for v in cli.json("log", f["path"])["versions"] if v["turnId"] == turn["id"]
        )
        for f in turn["files"]
    }
    assert sources == {p: "agent" for p in sources} | {"by-shell.txt": "shell"}
    # A fork goes through OpenCode's own export and import: without `opencode`, said so.
    path = cli.env.get("PATH", "")
    cli.env["PATH"] = "/nonexistent"
    conversation = cli("rewind", "1", "--session", SESSION, "--scope", "conversation", ok=False)
    cli.env["PATH"] = path
    assert "`opencode` is not on PATH" in conversation.stderr, conversation.stderr
    cli("rewind", "1", "--session", SESSION, "--yes")
    assert sorted(p.name for p in ws.rglob("*") if p.is_file()) == ["mod.txt", "old.txt"]
    assert (ws / "mod.txt").read_bytes() == b"one\ntwo\n" and (
        ws / "old.txt"
    ).read_bytes() == b"old\n"


@pytest.mark.parametrize("bad", [{"patchText": 3}, {"patchText": "no patch"}])
def test_a_bad_apply_patch_is_refused_with_its_reason(ws: Path, home: Path, bad: Any) -> None:
    payload = {
        "hook_event_name": "tool.execute.before",
        "session_id": SESSION,
        "cwd": str(ws),
        "tool_name": "apply_patch",
        "tool_input": bad,
    }
    proc = subprocess.run(
        [sys.executable, "-m", "rewind_ls", "hook", "opencode"],
        input=json.dumps(payload),
        env={**os.environ, "REWIND_LS_HOME": str(home)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0 and "apply_patch" in proc.stderr, proc.stderr


def test_fork_export_gets_new_ids_in_the_same_order() -> None:
    """A session as `opencode export` prints it (1.18.33): the fork's messages and parts all get
    new ids (import ignores ids it has: the original's would be left where they are), keeping the
    time-ordered head, and their links follow."""
    from rewind_ls.core.agents.opencode.session import prompt_index, renamed

    def message(mid: str, role: str, created: int, text: str, parent: str | None = None) -> Any:
        info = {"id": mid, "sessionID": SESSION, "role": role, "time": {"created": created}}
        if parent:
            info["parentID"] = parent
        part = {"id": "prt_" + mid[4:], "sessionID": SESSION, "messageID": mid, "type": "text"}
        return {"info": info, "parts": [{**part, "text": text}]}

    messages = [
        message("msg_21fd6db7e001zyYqYFbrAQEt7M", "user", 1795830504318, "again"),
        message(
            "msg_21fd6e720001J4W55mPDvdngRu",
            "assistant",
            1795830505000,
            "ok",
            "msg_21fd6db7e001zyYqYFbrAQEt7M",
        ),
        message("msg_21fd7f000001abcdefghijklmn", "user", 1795830900000, "again"),
    ]
    assert prompt_index(messages, "again", 1795830900.5) == 2
    assert prompt_index(messages, "again", 1795830504.0) == 0
    out = renamed({"id": SESSION, "title": "t"}, messages[:2], "ses_new")
    assert out["info"] == {"id": "ses_new", "title": "t"}
    [user, answer] = out["messages"]
    old_ids = {m["info"]["id"] for m in messages} | {p["id"] for m in messages for p in m["parts"]}
    new_ids = [user["info"]["id"], answer["info"]["id"], user["parts"][0]["id"]]
    assert not old_ids & set(new_ids) and len(set(new_ids)) == 3
    assert (
        user["info"]["id"][:16] == "msg_21fd6db7e001" and user["info"]["id"] < answer["info"]["id"]
    )
    assert answer["info"]["parentID"] == user["info"]["id"]
    assert user["parts"][0]["messageID"] == user["info"]["id"]
    assert {m["info"]["sessionID"] for m in out["messages"]} == {"ses_new"}
    assert messages[1]["info"]["parentID"] == "msg_21fd6db7e001zyYqYFbrAQEt7M"  # not edited
