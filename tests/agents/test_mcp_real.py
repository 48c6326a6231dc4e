"""The agent rewinds itself: the real Claude Code binary (pinned, offline, the scripted stand-in for
its model) with what `rewind-ls install claude-code` writes (the hooks, and the MCP server in
`.mcp.json`, approved in `.claude/settings.local.json`), calling rewind-ls' MCP tools as
`mcp__rewind-ls__<tool>`:

1. turn 1: the model changes the last line of app.py (Read, then Write);
2. the person edits the first line by hand;
3. turn 2 ("undo what you just did"): the model reverts its previous turn through MCP: the last line
   goes back, the person's line stays; then it asks to rewind to turn 1, which would overwrite the
   person's line: refused, nothing written, the refusal naming the conflict and the person's
   terminal command; the revert's restore point is in `rewind-ls turns --all`, labelled as the
   agent's, and `rewind-ls undo` takes it back.

What the binary sent back to the model (each tool's text) is printed: docs/mcp.md's transcript."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.support.fake_anthropic import (
    FakeAnthropic,
    deferred_tools,
    text,
    tool_use,
    waiting_for_mcp,
)
from tests.support.real_claude import MCP_CONNECT_WAIT_MS, RealClaude, claude_binary

pytestmark = pytest.mark.agent

ORIGINAL = "def parse(s):\n    tokens = s.split()\n    return tokens\n\n\nVERSION = 1\n"
BY_AGENT = ORIGINAL.replace("VERSION = 1", "VERSION = 2")
BY_PERSON = BY_AGENT.replace("def parse(s):", "def parse(s):  # the person's comment")


def tool_results(api: FakeAnthropic) -> dict[str, dict[str, Any]]:
    """Each tool_result the binary sent the model, by the tool_use id it answers."""
    found: dict[str, dict[str, Any]] = {}
    for body in api.conversation_requests():
        for message in body["messages"]:
            content = message.get("content")
            for block in content if isinstance(content, list) else []:
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    found[block["tool_use_id"]] = block
    return found


def result_text(block: dict[str, Any]) -> str:
    content = block.get("content")
    if isinstance(content, str):
        return content
    return "\n".join(c.get("text", "") for c in content or [] if isinstance(c, dict))


def test_claude_reverts_its_own_turn_through_mcp(tmp_path: Path) -> None:
    binary = claude_binary()
    project = tmp_path / "proj"
    with FakeAnthropic() as api:
        claude = RealClaude(binary, api, tmp_path, project)
        claude.env["MCP_CONNECT_TIMEOUT_MS"] = MCP_CONNECT_WAIT_MS
        api.responder = waiting_for_mcp(api)
        # Permission rules first: `install` then adds its approval of the MCP server beside them.
        claude.allow("Read", "Write", "mcp__rewind-ls__revert", "mcp__rewind-ls__rewind")
        claude.install_hooks()
        local = json.loads((project / ".claude" / "settings.local.json").read_text())
        assert local["enabledMcpjsonServers"] == ["rewind-ls"] and local["permissions"]["allow"]
        assert "rewind-ls" in json.loads((project / ".mcp.json").read_text())["mcpServers"]
        (project / "app.py").write_text(ORIGINAL)

        api.add(
            # (The binary writes over a file only after reading it.)
            [tool_use("Read", {"file_path": str(project / "app.py")})],
            [tool_use("Write", {"file_path": str(project / "app.py"), "content": BY_AGENT})],
            [text("bumped the version")],
        )
        r1 = claude.run("bump the version in app.py")
        sid = r1["session_id"]
        assert (project / "app.py").read_text() == BY_AGENT

        # The person's own edit of another line, between the two prompts.
        (project / "app.py").write_text(BY_PERSON)

        revert = tool_use("mcp__rewind-ls__revert", {"turn": 1})
        rewind = tool_use("mcp__rewind-ls__rewind", {"turn": 1})
        api.add([revert], [rewind], [text("reverted my change; your comment is kept")])
        claude.run("undo what you just did to app.py", resume=sid)

        # The binary offered the tools to the model: 2.1.332 defers an MCP server's tools (named
        # in a reminder, `deferred_tools`), and sends a tool's schema once the model loaded it
        # with ToolSearch (as the stand-in did before calling revert and rewind).
        requests = api.conversation_requests()
        offered = {t["name"]: t for b in requests for t in b["tools"]}
        deferred = set().union(*(deferred_tools(b) for b in requests))
        assert {
            f"mcp__rewind-ls__{n}"
            for n in ("list_turns", "show_turn", "blame", "preview", "rewind", "revert", "undo")
        } <= set(offered) | deferred
        assert offered["mcp__rewind-ls__revert"]["input_schema"]["required"] == ["turn"]

        results = tool_results(api)
        reverted, refused = results[revert["id"]], results[rewind["id"]]
        print("\n--- revert result ---\n" + result_text(reverted))
        print("--- rewind result ---\n" + result_text(refused))
        assert not reverted.get("is_error"), (reverted, refused)
        assert (
            json.loads(result_text(reverted))["label"] == "revert turn 1 (by claude-code via MCP)"
        )
        assert refused.get("is_error") is True, refused
        words = result_text(refused)
        assert "refused" in words and "nothing was written" in words and "app.py" in words
        assert f"rewind-ls rewind 1 --session {sid[:8]} --force" in words

        # Reverted: the agent's line back, the person's line kept; the refused rewind wrote nothing.
        assert (project / "app.py").read_text() == BY_PERSON.replace("VERSION = 2", "VERSION = 1")

        # The person sees the agent's restore and can undo it.
        listing = claude.rewind_ls("turns", "--all").stdout
        assert "revert turn 1 (by claude-code via MCP)" in listing, listing
        claude.rewind_ls("undo", "--yes")
        assert (project / "app.py").read_text() == BY_PERSON


def codex_function_output(api: Any, call_id: str) -> str:
    """What Codex sent the model for one tool call (its function_call_output's text)."""
    for body in reversed(api.requests):
        for item in body.get("input") or []:
            if item.get("type") == "function_call_output" and item.get("call_id") == call_id:
                output = item["output"]
                if isinstance(output, str):
                    return output
                return "\n".join(o.get("text", "") for o in output if isinstance(o, dict))
    raise AssertionError(f"no output sent for {call_id}")


def test_codex_reverts_its_own_turn_through_mcp(tmp_path: Path) -> None:
    """The same conversation with Codex CLI 0.169.0: `install codex` writes the MCP server into the
    project's `.codex/config.toml`; Codex offers MCP tools as a deferred namespace
    (`mcp__rewind_ls`), which the model calls by namespace and name; the server finds Codex's
    session as the latest live codex session here (Codex passes no session id)."""
    import subprocess

    from tests.support.fake_openai import FakeOpenAI, custom_tool_call, function_call, message
    from tests.support.real_codex import RealCodex, codex_binary

    binary = codex_binary()
    project = tmp_path / "proj"
    project.mkdir()
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    (project / "app.py").write_text(ORIGINAL)
    with FakeOpenAI() as api:
        codex = RealCodex(binary, api, tmp_path, project)
        codex.rewind_ls("install", "codex")
        config = project / ".codex" / "config.toml"
        assert "[mcp_servers.rewind-ls]" in config.read_text()
        # The person's choices, added under our table: approve its tools without asking (`codex
        # exec` cannot ask: "approval policy is never"), and wait for the server at start
        # (`required`): Codex starts MCP servers in the background and the stand-in model answers
        # at once, before the SDK's few seconds of start-up; a real model's first reply is slower.
        config.write_text(
            config.read_text() + 'required = true\ndefault_tools_approval_mode = "approve"\n'
            "startup_timeout_sec = 60\n"
        )
        patch = (
            "*** Begin Patch\n"
            f"*** Update File: {project / 'app.py'}\n"
            "@@\n-VERSION = 1\n+VERSION = 2\n"
            "*** End Patch\n"
        )
        api.script([custom_tool_call("apply_patch", patch)], [message("bumped")])
        sid = codex.run("bump the version in app.py")
        assert (project / "app.py").read_text() == BY_AGENT

        (project / "app.py").write_text(BY_PERSON)

        revert = function_call("revert", {"turn": 1})
        rewind = function_call("rewind", {"turn": 1})
        for call in (revert, rewind):
            call["namespace"] = "mcp__rewind_ls"
        api.script([revert], [rewind], [message("reverted; your comment is kept")])
        codex.run("undo what you just did to app.py", resume=sid)

        reverted = codex_function_output(api, revert["call_id"])
        refused = codex_function_output(api, rewind["call_id"])
        print("\n--- codex revert ---\n" + reverted + "\n--- codex rewind ---\n" + refused)
        assert '"label":"revert turn 1 (by codex via MCP)"' in reverted, reverted
        assert "refused" in refused and "nothing was written" in refused, refused
        assert f"rewind-ls rewind 1 --session {sid[:8]} --force" in refused
        assert (project / "app.py").read_text() == BY_PERSON.replace("VERSION = 2", "VERSION = 1")
        assert "revert turn 1 (by codex via MCP)" in codex.rewind_ls("turns", "--all").stdout


def gemini_function_response(api: Any, call_id: str) -> dict[str, Any]:
    """What Gemini CLI sent the model for one function call (its functionResponse)."""
    for body in reversed(api.main_requests()):
        for content in body.get("contents") or []:
            for part in content.get("parts") or []:
                response = part.get("functionResponse")
                if response and response.get("id") == call_id:
                    found: dict[str, Any] = response["response"]
                    return found
    raise AssertionError(f"no functionResponse sent for {call_id}")


def test_gemini_reverts_its_own_turn_through_mcp(tmp_path: Path) -> None:
    """The same conversation with Gemini CLI 0.61.0 (run with --yolo, as the other Gemini tests):
    `install gemini` writes the server into the project's `.gemini/settings.json`; the tools are
    offered as `mcp_rewind-ls_<tool>`; Gemini passes no session id, so the server takes the latest
    live gemini session here."""
    from tests.support.fake_gemini import FakeGemini, call, text_part
    from tests.support.real_gemini import RealGemini, gemini_entry

    entry = gemini_entry()
    project = tmp_path / "proj"
    project.mkdir()
    (project / "app.py").write_text(ORIGINAL)
    with FakeGemini() as api:
        gemini = RealGemini(entry, api, tmp_path, project)
        gemini.rewind_ls("install", "gemini")
        settings = json.loads((project / ".gemini" / "settings.json").read_text())
        assert "rewind-ls" in settings["mcpServers"]
        bump = {"file_path": str(project / "app.py"), "content": BY_AGENT}
        api.script([call("write_file", bump)], [text_part("bumped")])
        sid = gemini.run("bump the version in app.py")
        assert (project / "app.py").read_text() == BY_AGENT

        (project / "app.py").write_text(BY_PERSON)

        api.script(
            [call("mcp_rewind-ls_revert", {"turn": 1})],
            [call("mcp_rewind-ls_rewind", {"turn": 1})],
            [text_part("reverted; your comment is kept")],
        )
        gemini.run("undo what you just did to app.py", resume=sid)
        offered = {
            d["name"]: d
            for t in api.main_requests()[-1]["tools"]
            for d in t.get("functionDeclarations", [])
        }
        assert "mcp_rewind-ls_revert" in offered and "mcp_rewind-ls_undo" in offered
        calls = [
            part["functionCall"]
            for body in api.main_requests()
            for content in body.get("contents") or []
            for part in content.get("parts") or []
            if "functionCall" in part and part["functionCall"]["name"].startswith("mcp_")
        ]
        ids = {c["name"]: c["id"] for c in calls}
        reverted = gemini_function_response(api, ids["mcp_rewind-ls_revert"])
        refused = gemini_function_response(api, ids["mcp_rewind-ls_rewind"])
        print("\n--- gemini revert ---\n" + json.dumps(reverted)[:1500])
        print("--- gemini rewind ---\n" + json.dumps(refused)[:1500])
        assert "revert turn 1 (by gemini via MCP)" in json.dumps(reverted)
        words = json.dumps(refused)
        assert "refused" in words and "nothing was written" in words, refused
        assert f"rewind-ls rewind 1 --session {sid[:8]} --force" in words
        assert (project / "app.py").read_text() == BY_PERSON.replace("VERSION = 2", "VERSION = 1")
        assert "revert turn 1 (by gemini via MCP)" in gemini.rewind_ls("turns", "--all").stdout
