"""Browsing a turn read-only through the language server: `rewind/listFolder` lists each folder of
the workspace as it was at a turn, `rewind/fileAt` gives each file's content then (the requests
behind VS Code's `rewind-turn:` folders, `:Rewind browse N` and `M-x rewind-ls-browse`)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from html import unescape
from pathlib import Path
from typing import Any

import pytest
from pygls.exceptions import JsonRpcException

from tests.support.agent import FakeClaude
from tests.support.lsp_client import start, uri_of
from tests.support.wire import check_response
from tests.test_server import as_dict, request

Files = dict[str, bytes]


class Browser:
    def __init__(self, ws: Path, client: Any, agent: FakeClaude) -> None:
        self.ws = ws
        self.client = client
        self.agent = agent

    async def call(self, method: str, params: dict[str, Any]) -> Any:
        result = as_dict(await request(self.client, method, params))
        check_response(method, result)
        return result

    async def walk(self, turn: str, side: str = "before") -> Files:
        """Every file of the turn's listing, read through rewind/fileAt, by walking the folders."""
        out: Files = {}
        folders: list[str | None] = [None]
        while folders:
            folder = folders.pop()
            params = {"turnId": turn, "side": side, **({"uri": folder} if folder else {})}
            listing = await self.call("rewind/listFolder", params)
            names = [e["name"] for e in listing["entries"]]
            kinds = [e["folder"] for e in listing["entries"]]
            assert kinds == sorted(kinds, reverse=True), names  # folders first
            for entry in listing["entries"]:
                if entry["folder"]:
                    folders.append(entry["uri"])
                    continue
                content = await self.call(
                    "rewind/fileAt", {"turnId": turn, "uri": entry["uri"], "side": side}
                )
                assert content["exists"] and not content["binary"], entry
                rel = entry["uri"][len(uri_of(self.ws)) :].lstrip("/")
                out[rel] = content["text"].encode()
                assert entry["size"] == len(out[rel]), entry
        return out


@pytest.fixture
async def browser(tmp_path: Path) -> AsyncIterator[Browser]:
    ws = tmp_path / "ws"
    ws.mkdir()
    home = tmp_path / "home"
    client, _editor = await start(ws, home)
    try:
        yield Browser(ws, client, FakeClaude(ws, home))
    finally:
        await client.shutdown_session()


def two(agent: FakeClaude) -> None:
    """Turn 2: a shell command removes a folder and a file, an edit tool rewrites another."""
    agent.hook("UserPromptSubmit", prompt="two")
    agent.shell("rm -rf src/lib README")
    agent.write("src/app.py", b"app v2")
    agent.hook("Stop", stop_hook_active=False)


def files(ws: Path) -> Files:
    return {
        p.relative_to(ws).as_posix(): p.read_bytes()
        for p in sorted(ws.rglob("*"))
        if p.is_file() and ".git" not in p.parts
    }


async def test_listing_and_content_at_each_turn(browser: Browser) -> None:
    ws = browser.ws
    (ws / "src" / "lib").mkdir(parents=True)
    (ws / "src" / "lib" / "util.py").write_bytes(b"def u(): pass\n")
    (ws / "src" / "app.py").write_bytes(b"app v0\n")
    (ws / "README").write_bytes(b"readme\r\n")
    (ws / "CHANGES").write_bytes(b"")
    (ws / "zz.txt").write_bytes(b"z")
    loop = asyncio.get_running_loop()
    start1 = files(ws)
    await loop.run_in_executor(
        None, browser.agent.turn, "one", {"src/app.py": b"app v1\n", "docs/a.md": b"# a\n"}
    )
    start2 = files(ws)
    await loop.run_in_executor(None, two, browser.agent)
    now = files(ws)
    # An edit no scan saw yet: the past is what was recorded, never the disk now.
    (ws / "CHANGES").write_bytes(b"unrecorded edit\n")
    listing = await browser.call("rewind/listTurns", {"sessionId": browser.agent.session_id})
    t1, t2 = (t["id"] for t in listing["sessions"][0]["turns"])
    assert await browser.walk(t1) == start1
    assert await browser.walk(t1, "after") == start2
    assert "src/lib/util.py" in await browser.walk(t2)  # a shell command of turn 2 removed it
    assert await browser.walk(t2, "after") == now
    top = await browser.call("rewind/listFolder", {"turnId": t1})
    assert [(e["name"], e["folder"]) for e in top["entries"]] == [
        ("src", True),
        ("CHANGES", False),
        ("README", False),
        ("zz.txt", False),
    ]
    assert top["number"] == 1 and top["side"] == "before" and top["startedAt"].endswith("Z")
    src = await browser.call("rewind/listFolder", {"turnId": t1, "uri": uri_of(ws / "src")})
    assert [e["name"] for e in src["entries"]] == ["lib", "app.py"]
    assert (ws / "README").exists() is False  # nothing browsed was written back
    every = await browser.call("rewind/listFolder", {"turnId": t1, "recursive": True})
    assert [e["name"] for e in every["entries"]] == sorted(start1)
    assert not any(e["folder"] for e in every["entries"])
    below = {"turnId": t1, "uri": uri_of(ws / "src"), "recursive": True}
    assert [e["name"] for e in (await browser.call("rewind/listFolder", below))["entries"]] == [
        "app.py",
        "lib/util.py",
    ]


async def test_listing_errors_name_the_folder(browser: Browser) -> None:
    await asyncio.get_running_loop().run_in_executor(
        None, browser.agent.turn, "one", {"a.txt": b"a\n"}
    )
    listing = await browser.call("rewind/listTurns", {})
    t1 = listing["sessions"][0]["turns"][0]["id"]
    for uri, code, text in [
        (uri_of(browser.ws / "nowhere"), -32002, "no file under this folder"),
        ("file:///etc", -32002, "outside the workspace"),
    ]:
        with pytest.raises(JsonRpcException) as err:
            await browser.call("rewind/listFolder", {"turnId": t1, "uri": uri})
        assert err.value.code == code and text in str(err.value), err.value
    with pytest.raises(JsonRpcException) as err:
        await browser.call("rewind/listFolder", {"turnId": "tnope"})
    assert err.value.code == -32001


async def test_timeline_page_for_a_webview(browser: Browser) -> None:
    await asyncio.get_running_loop().run_in_executor(
        None, browser.agent.turn, "one", {"a.txt": b"a\n", "d/b.txt": b"b\n"}
    )
    page = await browser.call("rewind/timelinePage", {"nonce": "n0nce-for-test"})
    assert (page["turns"], page["files"], page["changes"]) == (1, 2, 2)
    assert page["sessionId"] == browser.agent.session_id
    html = unescape(page["html"])  # the policy is an attribute: its quotes arrive escaped
    assert "script-src 'nonce-n0nce-for-test'" in html and '<script nonce="n0nce-for-test">' in html
    assert "const WEBVIEW = true;" in html and '"d/b.txt"' in html
    with pytest.raises(JsonRpcException) as err:
        await browser.call("rewind/timelinePage", {"nonce": "'; script-src *"})
    assert err.value.code == -32602
