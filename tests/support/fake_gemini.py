"""A scripted stand-in for the Gemini API (generativelanguage `models/*:streamGenerateContent?alt=sse`
and `:generateContent`), on loopback, for running the real `gemini` binary offline (tests/agents/);
Gemini CLI's SDK sends its requests to GOOGLE_GEMINI_BASE_URL.

Each scripted reply is a list of parts (`text_part(...)`, `call(...)`), streamed as one SSE chunk with
finishReason STOP. Requests that offer tools are the agent's main loop and take the next scripted
reply (a plain "done." when nothing is left: the test sees it in `unscripted`); other requests (the
CLI's own helper calls: routing, summaries, next-speaker checks) get `side_reply`. Every request is
logged with its path.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Part = dict[str, Any]
Reply = list[Part]


def text_part(value: str) -> Part:
    return {"text": value}


def call(name: str, args: dict[str, Any]) -> Part:
    return {"functionCall": {"name": name, "args": args}}


def _chunk(parts: Reply, model: str) -> dict[str, Any]:
    return {
        "candidates": [
            {"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}
        ],
        "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15},
        "modelVersion": model,
    }


class FakeGemini:
    def __init__(self) -> None:
        self.replies: list[Reply] = []
        self.requests: list[tuple[str, dict[str, Any]]] = []
        self.unscripted = 0
        self.side_reply: Reply = [text_part('{"next_speaker": "user", "reasoning": "done"}')]
        self._lock = threading.Lock()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                with fake._lock:
                    fake.requests.append((f"GET {self.path}", {}))
                self._send(200, "application/json", b'{"models": []}')

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("content-length") or 0))
                try:
                    body = json.loads(raw or b"{}")
                except ValueError:
                    body = {}
                model = (
                    self.path.split("models/")[-1].split(":")[0] if "models/" in self.path else "m"
                )
                with fake._lock:
                    fake.requests.append((f"POST {self.path}", body))
                    if ":countTokens" in self.path:
                        self._send(200, "application/json", b'{"totalTokens": 10}')
                        return
                    main = bool(body.get("tools")) and "functionDeclarations" in json.dumps(
                        body.get("tools")
                    )
                    if main and fake.replies:
                        reply = fake.replies.pop(0)
                    elif main:
                        fake.unscripted += 1
                        reply = [text_part("done.")]
                    else:
                        reply = fake.side_reply
                chunk = _chunk(reply, model)
                if "streamGenerateContent" in self.path:
                    data = f"data: {json.dumps(chunk)}\r\n\r\n".encode()
                    self._send(200, "text/event-stream", data)
                else:
                    self._send(200, "application/json", json.dumps(chunk).encode())

            def _send(self, status: int, ctype: str, data: bytes) -> None:
                self.send_response(status)
                self.send_header("content-type", ctype)
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base_url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def script(self, *replies: Reply) -> None:
        with self._lock:
            self.replies.extend(replies)

    def main_requests(self) -> list[dict[str, Any]]:
        return [b for p, b in self.requests if "functionDeclarations" in json.dumps(b.get("tools"))]

    def __enter__(self) -> FakeGemini:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
