"""rewind-ls as each agent's own package, with the real binaries offline and no other set-up: the
Claude Code plugin (`claude --plugin-dir`) and the Gemini CLI extension (`gemini extensions
install`), as `rewind-ls install AGENT --plugin DIR` writes them (this install's paths) and as
`scripts/release.sh` builds them (`--portable`: `rewind-ls` from PATH). Each records turns through
its hooks, serves the MCP tools and expands its `/rewind-ls:turns` and `/rewind-ls:undo`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.support.fake_anthropic import FakeAnthropic, text, tool_use, waiting_for_mcp
from tests.support.real_claude import MCP_CONNECT_WAIT_MS, RealClaude, claude_binary

pytestmark = pytest.mark.agent

TOOL = "mcp__plugin_rewind-ls_rewind-ls__"  # Claude Code's name of a plugin's MCP server's tools


def claude_result(api: FakeAnthropic, call: dict[str, Any]) -> dict[str, Any]:
    for body in api.conversation_requests():
        for message in body["messages"]:
            content = message.get("content")
            for block in content if isinstance(content, list) else []:
                if block.get("type") == "tool_result" and block["tool_use_id"] == call["id"]:
                    found: dict[str, Any] = block
                    return found
    raise AssertionError(f"no result for {call['name']}")


def sent(api: FakeAnthropic, words: str) -> bool:
    return any(words in json.dumps(b["messages"]) for b in api.conversation_requests())


@pytest.mark.parametrize("portable", [False, True], ids=["install-plugin", "release-portable"])
def test_claude_plugin_dir_records_turns_and_serves_the_tools(
    tmp_path: Path, portable: bool
) -> None:
    project = tmp_path / "proj"
    plugin_root = tmp_path / "plugin"
    with FakeAnthropic() as api:
        claude = RealClaude(claude_binary(), api, tmp_path, project)
        claude.env["MCP_CONNECT_TIMEOUT_MS"] = MCP_CONNECT_WAIT_MS
        # Headless, a plugin's servers connect in the background unless the binary is told to
        # wait for them (`CLAUDE_CODE_SYNC_PLUGINS`, up to `..._MCP_TIMEOUT_MS`, 10 s by default):
        # the stand-in model calls the tool at once, a real one seconds later.
        claude.env["CLAUDE_CODE_SYNC_PLUGINS"] = "1"
        claude.env["CLAUDE_CODE_SYNC_PLUGINS_MCP_TIMEOUT_MS"] = MCP_CONNECT_WAIT_MS
        api.responder = waiting_for_mcp(api)
        args = ["install", "claude-code", "--plugin", str(plugin_root)]
        claude.rewind_ls(*args, *(["--portable"] if portable else []))
        if portable:  # rewind-ls on the agent's PATH, as pipx or uv put it
            claude.env["PATH"] = f"{Path(sys.executable).parent}:{claude.env['PATH']}"
        plugin = ("--plugin-dir", str(plugin_root / "rewind-ls"))
        claude.allow("Write", f"{TOOL}list_turns", f"{TOOL}revert", f"{TOOL}undo", f"{TOOL}preview")
        assert not (project / ".claude" / "settings.json").exists()  # nothing else set up
        assert not (project / ".mcp.json").exists()

        api.add(
            [tool_use("Write", {"file_path": str(project / "a.txt"), "content": "agent\n"})],
            [text("written")],
        )
        sid = claude.run("write a.txt", args=plugin)["session_id"]
        assert "write a.txt" in claude.rewind_ls("turns").stdout  # the plugin's hooks recorded it

        listed = tool_use(f"{TOOL}list_turns", {})
        revert = tool_use(f"{TOOL}revert", {"turn": 1})
        api.add([listed], [revert], [text("listed and reverted")])
        claude.run("/rewind-ls:turns", args=plugin, resume=sid)
        assert sent(api, "Call the rewind-ls list_turns tool")  # the command's prompt, expanded
        turns = json.loads(claude_result(api, listed)["content"])
        assert turns["sessions"][0]["id"] == sid
        assert turns["sessions"][0]["turns"][0]["prompt"] == "write a.txt"
        assert not claude_result(api, revert).get("is_error")
        assert not (project / "a.txt").exists()  # turn 1 created it: reverted

        preview = tool_use(f"{TOOL}preview", {"mode": "undo"})
        undo = tool_use(f"{TOOL}undo", {})
        api.add([preview], [undo], [text("undone")])
        claude.run("/rewind-ls:undo", args=plugin, resume=sid)
        assert sent(api, 'preview tool with mode \\"undo\\"')
        assert json.loads(claude_result(api, undo)["content"])["label"] == (
            # The undo is the agent's too, of the agent's revert.
            "undo by claude-code via MCP of: revert turn 1 (by claude-code via MCP)"
        )
        assert (project / "a.txt").read_text() == "agent\n"


def test_gemini_extension_installs_and_records_and_serves_the_tools(tmp_path: Path) -> None:
    from tests.support.fake_gemini import FakeGemini, call, text_part
    from tests.support.real_gemini import RealGemini, gemini_entry

    entry = gemini_entry()
    project = tmp_path / "proj"
    project.mkdir()
    with FakeGemini() as api:
        gemini = RealGemini(entry, api, tmp_path, project)
        gemini.rewind_ls("install", "gemini", "--plugin", str(tmp_path / "ext"), "--portable")
        gemini.env["PATH"] = f"{Path(sys.executable).parent}:{gemini.env['PATH']}"
        installed = subprocess.run(
            [gemini.node, str(entry), "extensions", "install", str(tmp_path / "ext"), "--consent"],
            cwd=project,
            env=gemini.env,
            capture_output=True,
            text=True,
            timeout=120,
            input="y\n",  # "Do you trust the files in this folder?", asked of the source folder
        )
        assert installed.returncode == 0, installed.stdout + installed.stderr
        assert (
            gemini.gemini_home / "extensions" / "rewind-ls" / "gemini-extension.json"
        ).exists(), installed.stdout + installed.stderr
        assert not (project / ".gemini").exists()  # nothing else set up
        doctor = json.loads(gemini.rewind_ls("doctor", "--json", ok=False).stdout)
        (check,) = [c for c in doctor["checks"] if c["name"] == "Gemini CLI MCP server"]
        assert "extensions/rewind-ls/gemini-extension.json: rewind-ls mcp" in check["detail"]

        write = {"file_path": str(project / "a.txt"), "content": "agent\n"}
        api.script([call("write_file", write)], [text_part("written")])
        sid = gemini.run("write a.txt")
        assert "write a.txt" in gemini.rewind_ls("turns").stdout, gemini.hook_log()

        api.script(
            [call("mcp_rewind-ls_list_turns", {})],
            [call("mcp_rewind-ls_revert", {"turn": 1})],
            [text_part("listed and reverted")],
        )
        gemini.run("/rewind-ls:turns", resume=sid)
        bodies = json.dumps([b["contents"] for b in api.main_requests()])
        assert "Call the rewind-ls list_turns tool" in bodies  # the command's prompt, expanded
        assert "write a.txt" in bodies and "revert turn 1 (by gemini via MCP)" in bodies
        assert not (project / "a.txt").exists()
        assert os.environ.get("REWIND_LS_HOME") != gemini.env["REWIND_LS_HOME"]
