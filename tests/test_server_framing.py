"""The real `rewind-ls serve` process fed malformed messages over stdio: every message it can frame
gets a JSON-RPC error and the server keeps answering; a stream it cannot frame gets an error with id
null and a clean exit."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest


def frame(obj: Any, length_delta: int = 0) -> bytes:
    body = json.dumps(obj).encode()
    return b"Content-Length: %d\r\n\r\n" % (len(body) + length_delta) + body


class Server:
    def __init__(self, tmp: Path) -> None:
        (tmp / "ws").mkdir()
        env = {**os.environ, "REWIND_LS_HOME": str(tmp / "home")}
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "rewind_ls", "serve"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            cwd=tmp / "ws",
            env=env,
        )
        self.messages: list[dict[str, Any]] = []
        self.lock = threading.Condition()
        threading.Thread(target=self._read, daemon=True).start()
        self.root = (tmp / "ws").as_uri()

    def _read(self) -> None:
        out = self.proc.stdout
        assert out is not None
        while True:
            header = b""
            while not header.endswith(b"\r\n\r\n"):
                c = out.read(1)
                if not c:
                    return
                header += c
            length = int(header.split(b"Content-Length:")[1].split(b"\r\n")[0])
            msg = json.loads(out.read(length))
            with self.lock:
                self.messages.append(msg)
                self.lock.notify_all()

    def send(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def wait_for(self, pred: Any, seconds: float = 10.0) -> dict[str, Any]:
        deadline = time.monotonic() + seconds
        with self.lock:
            while True:
                for m in self.messages:
                    if pred(m):
                        self.messages.remove(m)
                        return m
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(f"no such message; got {self.messages}")
                self.lock.wait(left)

    def reply(self, msg_id: Any) -> dict[str, Any]:
        return self.wait_for(lambda m: m.get("id") == msg_id and "method" not in m)

    def initialize(self) -> None:
        self.send(
            frame(
                {
                    "jsonrpc": "2.0",
                    "id": 1,
                    "method": "initialize",
                    "params": {"capabilities": {}, "rootUri": self.root},
                }
            )
        )
        assert "result" in self.reply(1)
        self.send(frame({"jsonrpc": "2.0", "method": "initialized", "params": {}}))

    def alive(self, msg_id: int) -> None:
        self.send(
            frame({"jsonrpc": "2.0", "id": msg_id, "method": "rewind/listTurns", "params": {}})
        )
        assert "result" in self.reply(msg_id), "the server stopped answering"


@pytest.fixture
def server(tmp_path: Path) -> Any:
    s = Server(tmp_path)
    s.initialize()
    yield s
    if s.proc.poll() is None:
        s.proc.kill()
    s.proc.wait()


def test_every_malformed_message_it_can_frame_gets_an_error(server: Server) -> None:
    # A Content-Length too long: the body runs into the next message; both are told apart again.
    server.send(frame({"jsonrpc": "2.0", "id": 10, "method": "rewind/listTurns"}, length_delta=5))
    server.send(frame({"jsonrpc": "2.0", "id": 11, "method": "rewind/listTurns", "params": {}}))
    assert server.reply(10)["error"]["code"] == -32700
    assert "result" in server.reply(11)
    # Too short: the rest of the body is skipped up to the next header.
    server.send(frame({"jsonrpc": "2.0", "id": 12, "method": "rewind/listTurns"}, length_delta=-3))
    server.alive(13)
    assert server.reply(None)["error"]["code"] == -32700
    # Not JSON at all.
    server.send(b"Content-Length: 5\r\n\r\n{oops")
    assert server.reply(None)["error"]["code"] == -32700
    server.alive(14)
    # A request with no params for a method nobody knows.
    server.send(frame({"jsonrpc": "2.0", "id": 20, "method": "nobody/knows"}))
    assert server.reply(20)["error"]["code"] == -32601
    # A message with no method (with and without an id).
    server.send(frame({"jsonrpc": "2.0", "id": 21}))
    assert server.reply(21)["error"]["code"] == -32600
    server.send(frame({"jsonrpc": "2.0", "params": {}}))
    assert server.reply(None)["error"]["code"] == -32600
    # Not an object, wrong version.
    server.send(frame([1, 2]))
    assert server.reply(None)["error"]["code"] == -32600
    server.send(frame({"jsonrpc": "1.0", "id": 22, "method": "rewind/listTurns"}))
    assert server.reply(22)["error"]["code"] == -32600
    # Bad params of a known method.
    server.send(frame({"jsonrpc": "2.0", "id": 23, "method": "rewind/preview", "params": [1]}))
    assert server.reply(23)["error"]["code"] == -32602
    server.alive(24)
    # After shutdown: requests get an error, exit ends the process with 0.
    server.send(frame({"jsonrpc": "2.0", "id": 30, "method": "shutdown"}))
    assert "error" not in server.reply(30)
    server.send(frame({"jsonrpc": "2.0", "id": 31, "method": "rewind/listTurns", "params": {}}))
    assert server.reply(31)["error"]["code"] == -32600
    server.send(frame({"jsonrpc": "2.0", "method": "exit"}))
    assert server.proc.wait(10) == 0


@pytest.mark.parametrize(
    "garbage",
    [
        b"Content-Length: banana\r\n\r\n{}",
        b"Content-Type: x\r\n\r\n{}",
        b"Content-Length: 99999999999\r\n\r\n",
    ],
)
def test_a_stream_it_cannot_frame_is_closed_cleanly(server: Server, garbage: bytes) -> None:
    server.send(garbage)
    err = server.reply(None)["error"]
    assert err["code"] == -32700 and "closing" in err["message"]
    assert server.proc.wait(10) == 0
