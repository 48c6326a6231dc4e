"""`rewind-ls mcp`: the MCP server an agent rewinds its own work through, spoken to over its real
stdio by an independent client (`tests/support/mcp_client.py`), over turns recorded by the real hook
process (`FakeClaude`). The real Claude Code binary calling it: tests/agents/test_mcp_real.py."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Cli
from tests.support.agent import FakeClaude
from tests.support.mcp_client import McpProcess, text_of

TOOLS = {"list_turns", "show_turn", "blame", "preview", "rewind", "revert", "undo"}

Snapshot = Callable[[], dict[str, tuple[bytes, int]]]


def two_turns(agent: FakeClaude) -> None:
    """Turn 1 writes app.py (5 lines) and notes.txt; turn 2 changes app.py's last line."""
    agent.turn("start", {"app.py": "a = 1\nb = 2\nc = 3\nd = 4\ne = 5\n", "notes.txt": "n\n"})
    agent.turn("change the end", {"app.py": "a = 1\nb = 2\nc = 3\nd = 4\ne = 50\n"})


def server(ws: Path, agent: FakeClaude, **env: str) -> McpProcess:
    """The server as Claude Code starts it: its session id in the environment."""
    return McpProcess(
        ws,
        {**agent.env, "CLAUDE_CODE_SESSION_ID": agent.session_id, **env},
        "--agent",
        "claude-code",
    )


def test_initialize_and_tools_list_schemas(ws: Path, agent: FakeClaude) -> None:
    with server(ws, agent) as mcp:
        init = mcp.initialize()
        assert init["serverInfo"]["name"] == "rewind-ls"
        assert "tools" in init["capabilities"]
        assert "revert" in init["instructions"]
        tools = {t["name"]: t for t in mcp.request("tools/list")["result"]["tools"]}  # type: ignore[index]
    assert set(tools) == TOOLS
    for tool in tools.values():
        assert tool["description"]
        assert tool["inputSchema"]["type"] == "object"
        assert tool["outputSchema"]["type"] == "object"
    revert = tools["revert"]["inputSchema"]
    assert revert["required"] == ["turn"]
    assert set(revert["properties"]) == {"turn", "path", "hunks", "session"}
    assert revert["properties"]["hunks"]["anyOf"][0] == {
        "items": {"type": "integer"},
        "type": "array",
    }
    assert tools["blame"]["inputSchema"]["required"] == ["path"]
    assert tools["undo"]["inputSchema"]["properties"] == {}
    assert tools["list_turns"]["annotations"]["readOnlyHint"] is True
    assert tools["rewind"]["annotations"]["destructiveHint"] is True
    # The structured results are the CLI's --json objects.
    assert "sessions" in tools["list_turns"]["outputSchema"]["properties"]
    assert "restorePointId" in tools["revert"]["outputSchema"]["properties"]


def test_reading_tools_answer_for_the_callers_own_session(ws: Path, home: Path) -> None:
    me = FakeClaude(ws, home)
    two_turns(me)
    other = FakeClaude(ws, home)  # a later session of the same agent: the latest, but not mine
    other.turn("other work", {"other.txt": "o\n"})
    with server(ws, me) as mcp:
        mcp.initialize()
        listed = mcp.call("list_turns")
        assert not listed.get("isError"), listed
        (session,) = listed["structuredContent"]["sessions"]
        assert session["id"] == me.session_id
        assert [t["number"] for t in session["turns"]] == [1, 2]
        assert "#2" in text_of(listed) and "~app.py" in text_of(listed)

        shown = mcp.call("show_turn", {"turn": 2})
        assert not shown.get("isError"), shown
        (f,) = shown["structuredContent"]["files"]
        assert f["path"] == "app.py" and "+e = 50" in f["diff"]
        assert [h["index"] for h in f["hunks"]] == [0] and f["hunks"][0]["revertable"]
        assert "-e = 5" in text_of(shown)

        blamed = mcp.call("blame", {"path": "app.py", "start": 4, "end": 5})
        assert not blamed.get("isError"), blamed
        runs = blamed["structuredContent"]["runs"]
        assert [(r["start"], r["end"], r["number"]) for r in runs] == [(3, 4, 1), (4, 5, 2)]
        assert "5| e = 50" in text_of(blamed)

        # Another session's turns by the `session` argument.
        theirs = mcp.call("list_turns", {"session": other.session_id[:8]})
        assert theirs["structuredContent"]["sessions"][0]["id"] == other.session_id


def test_latest_live_session_of_the_agent_without_a_session_id(ws: Path, home: Path) -> None:
    """No session id in the environment (Codex, Gemini): the agent's latest live session."""
    mine = FakeClaude(ws, home)
    mine.turn("one", {"a.txt": "1\n"})
    env = {k: v for k, v in mine.env.items()}
    with McpProcess(ws, env, "--agent", "claude-code") as mcp:
        mcp.initialize()
        listed = mcp.call("list_turns")
    assert listed["structuredContent"]["sessions"][0]["id"] == mine.session_id
    with McpProcess(ws, env, "--agent", "codex") as mcp:  # no codex session here
        mcp.initialize()
        none = mcp.call("list_turns")
    assert none["isError"] and "no codex session is recorded" in text_of(none)


def test_revert_keeps_the_persons_later_edit_and_is_labelled_and_undoable(
    ws: Path, agent: FakeClaude, cli: Cli, snapshot: Snapshot
) -> None:
    two_turns(agent)
    before = snapshot()
    # The person edits the first line after turn 2 (not through any tool).
    (ws / "app.py").write_text("a = 100\nb = 2\nc = 3\nd = 4\ne = 50\n")
    with server(ws, agent) as mcp:
        mcp.initialize()
        shown = mcp.call("preview", {"mode": "revert", "turn": 2})
        assert not shown.get("isError"), shown
        assert shown["structuredContent"]["status"] == "planned"
        assert (ws / "app.py").read_text().startswith("a = 100")  # a preview writes nothing
        done = mcp.call("revert", {"turn": 2})
        assert not done.get("isError"), done
        assert done["structuredContent"]["status"] == "applied"
        assert done["structuredContent"]["restorePointId"]
        assert (ws / "app.py").read_text() == "a = 100\nb = 2\nc = 3\nd = 4\ne = 5\n"
        listing = cli.json("turns", "--all")
        points = [s for s in listing["sessions"] if s["kind"] == "rewind"]
        assert points[0]["turns"][-1]["prompt"] == "revert turn 2 (by claude-code via MCP)"
        assert "by claude-code via MCP" in cli("turns", "--all").stdout
        undone = mcp.call("undo")
        assert not undone.get("isError"), undone
        assert "undo by claude-code via MCP of: revert turn 2 (by claude-code via MCP)" in text_of(
            undone
        )
    assert (ws / "app.py").read_text() == "a = 100\nb = 2\nc = 3\nd = 4\ne = 50\n"
    assert snapshot()["notes.txt"] == before["notes.txt"]


def test_hunk_revert_and_path_revert(ws: Path, agent: FakeClaude) -> None:
    agent.turn("one", {"app.py": "1\n2\n3\n4\n5\n6\n7\n8\n9\n", "b.txt": "b\n"})
    agent.turn("two", {"app.py": "1x\n2\n3\n4\n5\n6\n7\n8\n9x\n", "b.txt": "bb\n"})
    with server(ws, agent) as mcp:
        mcp.initialize()
        shown = mcp.call("show_turn", {"turn": 2, "path": "app.py"})
        hunks = shown["structuredContent"]["files"][0]["hunks"]
        assert [h["index"] for h in hunks] == [0, 1]
        done = mcp.call("revert", {"turn": 2, "path": "app.py", "hunks": [1]})
        assert not done.get("isError"), done
        assert (ws / "app.py").read_text() == "1x\n2\n3\n4\n5\n6\n7\n8\n9\n"
        assert (ws / "b.txt").read_text() == "bb\n"
        done = mcp.call("revert", {"turn": 2, "path": str(ws / "b.txt")})
        assert not done.get("isError"), done
        assert (ws / "b.txt").read_text() == "b\n"


def test_rewind_over_the_persons_edit_is_refused_and_writes_nothing(
    ws: Path, agent: FakeClaude, cli: Cli, snapshot: Snapshot
) -> None:
    two_turns(agent)
    (ws / "app.py").write_text("a = 1\nb = 2\nc = 3\nd = 4\ne = 50\nmine = 1\n")
    agent.turn("look", {})  # its boundary scan records the person's edit (the external session)
    before = snapshot()
    points = len(cli.json("turns", "--all")["sessions"])
    with server(ws, agent) as mcp:
        mcp.initialize()
        shown = mcp.call("preview", {"mode": "rewind", "turn": 2})
        assert "this would be refused" in text_of(shown)
        refused = mcp.call("rewind", {"turn": 2})
        assert refused["isError"] is True
        words = text_of(refused)
        assert "refused" in words and "nothing was written" in words
        assert "app.py" in words
        assert f"rewind-ls rewind 2 --session {agent.session_id[:8]} --force" in words
        assert refused["structuredContent"]["status"] == "refused"
        (conflict,) = [f for f in refused["structuredContent"]["files"] if f["conflict"]]
        assert conflict["path"] == "app.py"
    assert snapshot() == before
    assert len(cli.json("turns", "--all")["sessions"]) == points  # no restore point either


def test_unseen_edit_and_another_sessions_work_and_an_unsaved_buffer_are_refused(
    ws: Path, home: Path, snapshot: Snapshot
) -> None:
    me = FakeClaude(ws, home)
    me.turn("mine", {"a.txt": "a1\n", "b.txt": "b1\n"})
    me.turn("mine again", {"a.txt": "a2\n", "b.txt": "b2\n"})
    other = FakeClaude(ws, home)
    other.turn("theirs", {"b.txt": "b3\n"})
    with server(ws, me) as mcp:
        mcp.initialize()
        # Another session changed b.txt after my turn 2.
        refused = mcp.call("rewind", {"turn": 2})
        assert refused["isError"] and "b.txt" in text_of(refused)
        assert (ws / "b.txt").read_text() == "b3\n" and (ws / "a.txt").read_text() == "a2\n"
        # An edit rewind-ls never saw (no hook, no scan since).
        (ws / "a.txt").write_text("a-person\n")
        before = snapshot()
        refused = mcp.call("rewind", {"turn": 2, "paths": ["a.txt"]})
        assert refused["isError"] and "a.txt" in text_of(refused)
        assert snapshot() == before
        # An unsaved Emacs buffer (its lock file) on a path the restore would write.
        (ws / "a.txt").write_text("a2\n")
        me.turn("settle", {})
        os.symlink("me@host.123:1", ws / ".#a.txt")
        before = snapshot()
        refused = mcp.call("rewind", {"turn": 2, "paths": ["a.txt"]})
        assert refused["isError"] and "unsaved Emacs buffer" in text_of(refused), refused
        assert snapshot() == before


BAD_CALLS: list[tuple[str, dict[str, Any], str]] = [
    ("show_turn", {"turn": 99}, "has turns 1..2"),
    ("show_turn", {"turn": 1, "path": "nope.txt"}, "did not change nope.txt"),
    ("show_turn", {}, "turn"),  # missing argument: the SDK's validation
    ("show_turn", {"turn": [1]}, "turn"),  # wrong type
    ("blame", {"path": "../outside.txt"}, "outside"),
    ("blame", {"path": "app.py", "start": 0}, "start"),
    ("blame", {"path": "missing.py"}, "no such file"),
    ("preview", {"mode": "explode", "turn": 1}, "mode"),
    ("preview", {"mode": "revert"}, "a turn is needed"),
    ("preview", {"mode": "undo", "turn": 1}, "undo takes no turn"),
    ("revert", {"turn": 1, "hunks": [0]}, "only a revert of one turn in one path"),
    ("revert", {"turn": 2, "path": "app.py", "hunks": [7]}, "hunk"),
    ("rewind", {"turn": "zzz"}, "no turn with that id"),
    ("list_turns", {"session": "nosuch"}, "no such agent session"),
    ("undo", {}, "nothing to undo"),
    ("no_such_tool", {}, "no_such_tool"),
]


def test_bad_arguments_are_tool_errors_and_the_server_lives_on(
    ws: Path, agent: FakeClaude, snapshot: Snapshot
) -> None:
    two_turns(agent)
    before = snapshot()
    with server(ws, agent) as mcp:
        mcp.initialize()
        for name, arguments, words in BAD_CALLS:
            reply = mcp.request("tools/call", {"name": name, "arguments": arguments})
            assert reply is not None, f"{name} {arguments}: the server died: {mcp.stderr()}"
            if "error" in reply:  # an unknown tool may be a protocol error; never a dead server
                assert name == "no_such_tool" and words in reply["error"]["message"], reply
                continue
            result = reply["result"]
            assert result["isError"] is True, (name, arguments, result)
            assert words in text_of(result), (name, arguments, text_of(result))
        assert not mcp.call("list_turns").get("isError")
        assert mcp.proc.poll() is None
    assert snapshot() == before


def test_a_call_during_a_restore_in_progress_waits_for_it(
    ws: Path, agent: FakeClaude, cli: Cli, tmp_path: Path
) -> None:
    """The person's `rewind-ls rewind` is paused mid-swap; the agent's undo, called meanwhile,
    waits for it and then undoes that very restore (had it not waited, there would have been
    nothing applied to undo)."""
    two_turns(agent)
    mark = tmp_path / "paused"
    env = {
        **cli.env,
        "REWIND_LS_FAULT": "before-link:1",
        "REWIND_LS_FAULT_MARK": str(mark),
        "REWIND_LS_FAULT_PAUSE": "3",
    }
    with server(ws, agent) as mcp:
        mcp.initialize()
        person = subprocess.Popen(
            [sys.executable, "-m", "rewind_ls", "rewind", "1", "--yes"],
            cwd=ws,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        deadline = time.monotonic() + 60
        while not mark.exists():
            assert time.monotonic() < deadline and person.poll() is None, person.communicate()
            time.sleep(0.05)
        undone = mcp.call("undo")
        assert person.wait(timeout=60) == 0
    assert not undone.get("isError"), undone
    assert "undo by claude-code via MCP of: rewind to turn 1 (code)" in text_of(undone)
    assert (ws / "app.py").read_text().endswith("e = 50\n")


def test_a_restore_still_running_after_the_wait_is_refused(ws: Path, agent: FakeClaude) -> None:
    """In-process (the wait shortened): the restore lock held by someone else the whole time."""
    from rewind_ls.core.restore.swap import restore_lock
    from rewind_ls.core.store import Store
    from rewind_ls.mcp_server.session import Caller
    from rewind_ls.mcp_server.tools import Refused, Tools

    two_turns(agent)
    os.environ["REWIND_LS_HOME"] = agent.env["REWIND_LS_HOME"]
    try:
        tools = Tools(str(ws), Caller("claude-code", agent.session_id), busy_wait=0.3)
        with (
            Store.open(str(ws)) as store,
            restore_lock(store),
            pytest.raises(Refused, match="another restore is in progress"),
        ):
            tools.restore("revert", 2, None, None, None)
    finally:
        del os.environ["REWIND_LS_HOME"]
    assert (ws / "app.py").read_text().endswith("e = 50\n")


def test_a_server_killed_mid_restore_is_recovered_by_the_next_process(
    ws: Path, agent: FakeClaude, cli: Cli, snapshot: Snapshot
) -> None:
    two_turns(agent)
    agent.turn("more", {"app.py": "A\n", "notes.txt": "N\n"})
    before = snapshot()
    with server(ws, agent, REWIND_LS_FAULT="after-swap:1") as mcp:
        mcp.initialize()
        reply = mcp.request("tools/call", {"name": "rewind", "arguments": {"turn": 2}})
        assert reply is None  # killed after the first of two files was swapped
        assert mcp.proc.wait(timeout=30) == 137
    assert snapshot() != before  # half restored
    with server(ws, agent) as mcp:  # the next process (here: a new server) rolls it back
        mcp.initialize()
        listed = mcp.call("list_turns", {"all": True})
    assert snapshot() == before
    points = [s for s in listed["structuredContent"]["sessions"] if s["kind"] == "rewind"]
    assert points, json.dumps(listed["structuredContent"])[:2000]


def test_install_adds_the_mcp_server_beside_the_hooks_for_each_agent(
    ws: Path, cli: Cli, tmp_path: Path
) -> None:
    cli.env["CODEX_HOME"] = str(tmp_path / "codex-home")
    (ws / ".mcp.json").write_text(json.dumps({"mcpServers": {"theirs": {"command": "x"}}}))
    (ws / ".codex").mkdir()
    (ws / ".codex" / "config.toml").write_text(
        'model = "m"\n\n[mcp_servers.theirs]\ncommand = "x"\n'
    )
    for agent in ("claude-code", "codex", "gemini"):
        out = cli("install", agent).stdout
        assert "added MCP server rewind-ls" in out, out
        assert "nothing changed" in cli("install", agent).stdout  # idempotent
        assert "MCP server" not in cli("install", agent).stdout
    servers = json.loads((ws / ".mcp.json").read_text())["mcpServers"]
    assert set(servers) == {"theirs", "rewind-ls"}
    ours = servers["rewind-ls"]
    assert ours["type"] == "stdio" and ours["args"][-3:] == ["mcp", "--agent", "claude-code"]
    assert os.path.isabs(ours["command"]) and os.path.isfile(ours["args"][1])
    local = json.loads((ws / ".claude" / "settings.local.json").read_text())
    assert local["enabledMcpjsonServers"] == ["rewind-ls"]
    gemini = json.loads((ws / ".gemini" / "settings.json").read_text())
    assert gemini["mcpServers"]["rewind-ls"]["args"][-1] == "gemini" and gemini["hooks"]
    toml = (ws / ".codex" / "config.toml").read_text()
    assert '[mcp_servers.theirs]\ncommand = "x"' in toml and toml.startswith('model = "m"')
    assert "[mcp_servers.rewind-ls]" in toml and '"--agent", "codex"]' in toml
    tomllib = pytest.importorskip("tomllib")  # (Python 3.11+: the check, not the install)

    parsed = tomllib.loads(toml)["mcp_servers"]
    assert parsed["rewind-ls"]["args"][-3:] == ["mcp", "--agent", "codex"]
    assert parsed["theirs"] == {"command": "x"}

    # The installed command runs: an MCP server answering initialize.
    proc = subprocess.run(
        [ours["command"], *ours["args"]],
        input=json.dumps(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-06-18",
                    "capabilities": {},
                    "clientInfo": {"name": "t", "version": "1"},
                },
            }
        )
        + "\n",
        cwd=ws,
        env={"PATH": "/usr/bin:/bin", "REWIND_LS_HOME": cli.env["REWIND_LS_HOME"]},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert json.loads(proc.stdout.splitlines()[0])["result"]["serverInfo"]["name"] == "rewind-ls"

    doctor = cli.json("doctor")
    mcp_checks = {c["name"]: c for c in doctor["checks"] if "MCP server" in c["name"]}
    assert str(ws / ".mcp.json") in mcp_checks["Claude Code MCP server"]["detail"]
    assert str(ws / ".codex" / "config.toml") in mcp_checks["Codex CLI MCP server"]["detail"]
    assert all(c["ok"] for c in mcp_checks.values())

    for agent in ("claude-code", "codex", "gemini"):
        assert "removed MCP server rewind-ls" in cli("install", agent, "--uninstall").stdout
    assert json.loads((ws / ".mcp.json").read_text()) == {
        "mcpServers": {"theirs": {"command": "x"}}
    }
    assert "rewind-ls" not in (ws / ".codex" / "config.toml").read_text()
    assert "enabledMcpjsonServers" not in json.loads(
        (ws / ".claude" / "settings.local.json").read_text()
    )
    assert (
        "not installed"
        in {c["name"]: c for c in cli.json("doctor")["checks"]}["Claude Code MCP server"]["detail"]
    )


def test_install_no_mcp_writes_hooks_only(ws: Path, cli: Cli) -> None:
    out = cli("install", "claude-code", "--no-mcp").stdout
    assert "MCP" not in out and (ws / ".claude" / "settings.json").exists()
    assert not (ws / ".mcp.json").exists()


def test_user_install_goes_to_the_users_claude_json(ws: Path, cli: Cli) -> None:
    cli("install", "claude-code", "--user")
    state = json.loads((Path(cli.env["CLAUDE_CONFIG_DIR"]) / ".claude.json").read_text())
    assert state["mcpServers"]["rewind-ls"]["args"][-1] == "claude-code"
    assert not (ws / ".mcp.json").exists()


def test_plugin_packages_hold_hooks_mcp_and_commands(ws: Path, cli: Cli, tmp_path: Path) -> None:
    """The files of the packages (the real agents load them in tests/agents/test_plugin_real.py)."""
    cli("install", "claude-code", "--plugin", str(tmp_path / "cp"), "--portable")
    plugin = tmp_path / "cp" / "rewind-ls"
    market = json.loads((tmp_path / "cp" / ".claude-plugin" / "marketplace.json").read_text())
    assert market["plugins"][0]["source"] == "./rewind-ls"
    hooks = json.loads((plugin / "hooks" / "hooks.json").read_text())["hooks"]
    assert hooks["PreToolUse"][0]["hooks"][0]["command"] == "rewind-ls hook claude-code"
    server = json.loads((plugin / ".mcp.json").read_text())["mcpServers"]["rewind-ls"]
    assert [server["command"], *server["args"]] == ["rewind-ls", "mcp", "--agent", "claude-code"]
    assert sorted(p.name for p in (plugin / "commands").iterdir()) == ["turns.md", "undo.md"]
    cli("install", "gemini", "--plugin", str(tmp_path / "ge"))
    ext = json.loads((tmp_path / "ge" / "gemini-extension.json").read_text())
    assert os.path.isabs(ext["mcpServers"]["rewind-ls"]["command"])  # this install's paths
    assert (tmp_path / "ge" / "commands" / "rewind-ls" / "undo.toml").exists()
    cli("install", "gemini", "--plugin", str(tmp_path / "ge"))  # rewritten in place
    (tmp_path / "other").mkdir()
    refused = cli("install", "claude-code", "--plugin", str(tmp_path / "other"), ok=False)
    assert refused.returncode == 2 and "not a rewind-ls plugin" in refused.stderr
    refused = cli("install", "codex", "--plugin", str(tmp_path / "cx"), ok=False)
    assert refused.returncode == 2 and "no plugin package" in refused.stderr
    assert not (ws / ".mcp.json").exists()


async def test_a_buffer_unsaved_in_a_language_server_is_refused(ws: Path, home: Path) -> None:
    """The MCP server cannot see VS Code's buffers; the language server lists its unsaved ones in
    the store folder, and the agent's restore over one is refused (so is the CLI's, unforced)."""
    import asyncio

    from tests.support.lsp_client import start

    agent = FakeClaude(ws, home)
    agent.turn("one", {"a.txt": "a1\n", "b.txt": "b1\n"})
    agent.turn("two", {"a.txt": "a2\n", "b.txt": "b2\n"})
    client, editor = await start(ws, home)
    try:
        editor.open(ws / "a.txt")
        editor.type(ws / "a.txt", "a2 and my unsaved work\n")
        loop = asyncio.get_running_loop()

        def call(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
            with server(ws, agent) as mcp:
                mcp.initialize()
                return mcp.call(name, arguments)

        deadline = time.monotonic() + 30
        while True:  # the list follows the buffers after a short pause
            refused = await loop.run_in_executor(None, call, "rewind", {"turn": 2})
            if refused.get("isError") or time.monotonic() > deadline:
                break
            await asyncio.sleep(0.2)
        assert refused["isError"] is True, refused
        assert "unsaved buffer in an editor" in text_of(refused) and "a.txt" in text_of(refused)
        assert (ws / "a.txt").read_text() == "a2\n" and (ws / "b.txt").read_text() == "b2\n"
        cli = Cli(ws, home)
        assert cli("rewind", "2", "--yes", ok=False).returncode == 3  # the person's CLI too
        # Saved: nothing unsaved any more, the restore goes ahead (b.txt only changed by turn 2).
        editor.save(ws / "a.txt")
        agent.turn("saved", {})
        deadline = time.monotonic() + 30
        while True:
            done = await loop.run_in_executor(None, call, "revert", {"turn": 2, "path": "b.txt"})
            if not done.get("isError") or time.monotonic() > deadline:
                break
            await asyncio.sleep(0.2)
        assert not done.get("isError"), done
        assert (ws / "b.txt").read_text() == "b1\n"
    finally:
        await client.shutdown_session()


def test_the_turn_notice_names_the_agents_restores(ws: Path, agent: FakeClaude) -> None:
    """The line Claude Code shows the person when the turn ends (the Stop hook's systemMessage)
    names the restore the agent made through MCP during the turn, and how to take it back."""
    two_turns(agent)
    agent.hook("UserPromptSubmit", prompt="undo what you did in turn 2")
    with server(ws, agent) as mcp:
        mcp.initialize()
        assert not mcp.call("revert", {"turn": 2}).get("isError")
    stop = agent.hook("Stop", stop_hook_active=False)
    message = json.loads(stop.stdout)["systemMessage"]
    assert (
        message
        == "rewind-ls: revert turn 2 (by claude-code via MCP); to take it back: rewind-ls undo"
    )
