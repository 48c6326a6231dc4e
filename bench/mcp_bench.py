"""`rewind-ls mcp` (issue #39): a tool call answers like the CLI. In one run, on the same
N-turn session: the MCP server's `list_turns` (a page of 100) and `preview` (a revert of the newest
turn) as the agent calls them (a running server, one JSON-RPC round trip on its stdio), against
`rewind-ls turns` as a person runs it (the console script, in its own process: there is no
command-line server since issue 37). The server's start-up (to its answer to `initialize`) is reported as a note: the agent pays
it once per session, in the background of its own start."""

from __future__ import annotations

import json
import os
import subprocess
import time
from typing import Any

from bench.load import loaded
from bench.run import (
    BASE_ENV,
    PY,
    Row,
    Sizes,
    _cli_turns_argv,
    _fill_turns,
    median,
    run,
    timed,
)

TARGET = 1.0  # "answers like the CLI": no slower than `rewind-ls turns`


class McpClient:
    """The server on pipes, newline-delimited JSON-RPC (MCP's stdio transport)."""

    def __init__(self, ws: str, env: dict[str, str]) -> None:
        self.proc = subprocess.Popen(
            [PY, "-m", "rewind_ls", "mcp"],
            cwd=ws,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        self.next_id = 0

    def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.next_id += 1
        message = {"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params}
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")
        self.proc.stdin.flush()
        while True:
            line = self.proc.stdout.readline()
            if not line:
                raise RuntimeError(f"the MCP server exited during {method}")
            reply: dict[str, Any] = json.loads(line)
            if reply.get("id") == self.next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                result: dict[str, Any] = reply["result"]
                return result

    def call(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        result = self.request("tools/call", {"name": name, "arguments": arguments})
        if result.get("isError"):
            raise RuntimeError(f"{name}: {result['content'][0]['text']}")
        return result

    def initialize(self) -> None:
        self.request(
            "initialize",
            {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "bench", "version": "1"},
            },
        )
        assert self.proc.stdin is not None
        self.proc.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
        self.proc.stdin.flush()

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def bench_mcp(tmp: str, sizes: Sizes, runs: int, notes: list[str]) -> list[Row]:
    count = sizes.memory_turns
    ws = os.path.join(tmp, f"mcp-{count}")
    home = os.path.join(tmp, f"mcp-{count}-home")
    os.makedirs(os.path.join(ws, "src"))
    _fill_turns(ws, home, count)
    for i in range(max(0, count - 50), count):  # the files as the newest turns left them
        with open(os.path.join(ws, "src", f"f{i % 50}.txt"), "wb") as f:
            f.write(f"content {i}\n".encode())
    # No agent's variables: the bench's session is named in each call.
    env = {
        k: v
        for k, v in BASE_ENV.items()
        if not k.startswith(("CLAUDE", "GEMINI", "CODEX")) and k != "REWIND_LS_HOOK_SERVER"
    }
    env["REWIND_LS_HOME"] = home
    cli = _cli_turns_argv()
    run(cli, env=env, cwd=ws)  # warm the page cache as a person's earlier command would

    started = time.perf_counter()
    client = McpClient(ws, env)
    try:
        client.initialize()
        notes.append(
            f"rewind-ls mcp start-up to its initialize answer: {time.perf_counter() - started:.2f} s "
            "(once per agent session; most of it is importing the MCP SDK)"
        )
        session = {"session": "bench"}
        page = {"limit": 100, **session}
        preview = {"mode": "revert", "turn": count, **session}
        listed = client.call("list_turns", page)["structuredContent"]["sessions"][0]
        if listed["turnCount"] != count or len(listed["turns"]) != min(100, count):
            raise RuntimeError(f"list_turns listed {len(listed['turns'])} of {listed['turnCount']}")
        client.call("preview", preview)

        def times(name: str, arguments: dict[str, Any]) -> tuple[float, float]:
            ours, base = [], []
            for _ in range(max(5, runs)):
                ours.append(timed(lambda: client.call(name, arguments)))
                base.append(timed(lambda: run(cli, env=env, cwd=ws)))
            return median(ours), median(base)

        rows = []
        for name, arguments, what in (
            ("list_turns", page, "a page of 100"),
            ("preview", preview, "a revert of the newest turn"),
        ):
            figure = f"MCP {name} ({what}), {count} turns (vs rewind-ls turns, same run)"
            rows.append(Row(figure, *times(name, arguments), "s", TARGET))
            busy = loaded(lambda n=name, a=arguments: times(n, a))  # type: ignore[misc]
            rows.append(Row(figure + " [loaded]", *busy, "s", TARGET))
        return rows
    finally:
        client.close()
