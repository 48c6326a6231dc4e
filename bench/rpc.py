"""A minimal JSON-RPC client for `rewind-ls serve` over stdio (Content-Length framing), enough for
the benchmark: initialize, requests, answers to the server's own requests, peak memory."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from typing import Any


class LspClient:
    def __init__(self, root: str, env: dict[str, str]) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "rewind_ls", "serve"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
            cwd=root,
        )
        self.next_id = 0
        self.root = root
        self.errors: list[str] = []  # window/showMessage errors from the server

    def _send(self, message: dict[str, Any]) -> None:
        body = json.dumps(message).encode()
        assert self.proc.stdin is not None
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.proc.stdin.flush()

    def _read(self) -> dict[str, Any]:
        assert self.proc.stdout is not None
        length = 0
        while True:
            line = self.proc.stdout.readline()
            if not line:
                raise RuntimeError("rewind-ls serve closed its output")
            line = line.strip()
            if not line:
                break
            name, _, value = line.partition(b":")
            if name.lower() == b"content-length":
                length = int(value)
        message: dict[str, Any] = json.loads(self.proc.stdout.read(length))
        return message

    def request(self, method: str, params: Any) -> Any:
        self.next_id += 1
        rid = self.next_id
        self._send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
        while True:
            msg = self._read()
            if msg.get("id") == rid and "method" not in msg:
                if "error" in msg:
                    raise RuntimeError(f"{method}: {msg['error']}")
                return msg.get("result")
            if "method" in msg and "id" in msg:
                self._answer(msg)
            elif msg.get("method") == "window/showMessage" and msg["params"].get("type") == 1:
                self.errors.append(str(msg["params"].get("message")))

    def _answer(self, msg: dict[str, Any]) -> None:
        # The server asks for progress tokens, code lens refreshes, edits: acknowledge them. Edits are
        # not expected (closed files are written by the server, see initialize).
        result: Any = None
        if msg["method"] == "workspace/applyEdit":
            result = {"applied": False, "failureReason": "benchmark client applies no edits"}
        self._send({"jsonrpc": "2.0", "id": msg["id"], "result": result})

    def notify(self, method: str, params: Any) -> None:
        self._send({"jsonrpc": "2.0", "method": method, "params": params})

    def initialize(self) -> None:
        uri = "file://" + os.path.realpath(self.root)
        self.request(
            "initialize",
            {
                "processId": os.getpid(),
                "rootUri": uri,
                "workspaceFolders": [{"uri": uri, "name": "bench"}],
                "capabilities": {"workspace": {"workspaceEdit": {"documentChanges": True}}},
                "initializationOptions": {"closedFiles": "server"},
            },
        )
        self.notify("initialized", {})
        # The server opens the workspace's store after `initialized`: wait until it answers (a
        # one-turn page: the whole list of a long session would be the server's memory peak).
        deadline = time.monotonic() + 30
        while True:
            try:
                self.request("rewind/listTurns", {"limit": 1})
                return
            except RuntimeError:
                if self.errors:
                    raise RuntimeError(f"the server failed to start: {self.errors[0]}") from None
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.02)

    def peak_rss_bytes(self) -> int:
        """VmHWM of the server process (Linux); 0 where /proc is not available."""
        try:
            with open(f"/proc/{self.proc.pid}/status") as f:
                for line in f:
                    if line.startswith("VmHWM:"):
                        return int(line.split()[1]) * 1024
        except OSError:
            pass
        return 0

    def close(self) -> None:
        try:
            self.request("shutdown", None)
            self.notify("exit", None)
            self.proc.wait(timeout=10)
        except Exception:
            self.proc.kill()
            self.proc.wait()
