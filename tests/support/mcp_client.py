"""A small MCP client for the protocol tests: the real `rewind-ls mcp` process on pipes, spoken to
in newline-delimited JSON-RPC as MCP's stdio transport is, independent of the SDK the server uses
(so a server that only agrees with its own SDK's client fails here)."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

PROTOCOL = "2025-06-18"


class McpProcess:
    """`rewind-ls mcp` in `cwd` with `env` added to the test's environment; a context manager."""

    def __init__(self, cwd: Path, env: Mapping[str, str], *args: str) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "rewind_ls", "mcp", *args],
            cwd=cwd,
            env={**os.environ, **env},
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        self.lines: queue.Queue[bytes] = queue.Queue()
        self.next_id = 0
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line)
        self.lines.put(b"")  # end of output: the server exited

    def __enter__(self) -> McpProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self.proc.poll() is None:
            assert self.proc.stdin is not None
            self.proc.stdin.close()
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")
        self.proc.stdin.flush()

    def request(
        self, method: str, params: dict[str, Any] | None = None, timeout: float = 120
    ) -> dict[str, Any] | None:
        """The response to one request (its whole JSON-RPC object); None when the server exited."""
        self.next_id += 1
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": self.next_id, "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)
        while True:
            line = self.lines.get(timeout=timeout)
            if not line:
                return None
            reply: dict[str, Any] = json.loads(line)
            if reply.get("id") == self.next_id:
                return reply

    def initialize(self) -> dict[str, Any]:
        reply = self.request(
            "initialize",
            {
                "protocolVersion": PROTOCOL,
                "capabilities": {},
                "clientInfo": {"name": "rewind-ls-tests", "version": "1"},
            },
        )
        assert reply is not None and "result" in reply, reply
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        result: dict[str, Any] = reply["result"]
        return result

    def call(self, name: str, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
        """A tools/call's result (content, structuredContent, isError)."""
        reply = self.request("tools/call", {"name": name, "arguments": arguments or {}})
        assert reply is not None, f"the server exited during {name}: {self.stderr()}"
        assert "result" in reply, reply
        result: dict[str, Any] = reply["result"]
        return result

    def stderr(self) -> str:
        if self.proc.poll() is None or self.proc.stderr is None:
            return ""
        return self.proc.stderr.read().decode("utf-8", "replace")


def text_of(result: dict[str, Any]) -> str:
    return "\n".join(c["text"] for c in result["content"] if c["type"] == "text")
