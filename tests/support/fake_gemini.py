"""A scripted stand-in for the Gemini API (generativelanguage `models/*:streamGenerateContent?alt=sse`
and `:generateContent`), on loopback, for running the real `gemini` binary offline (tests/agents/);
Gemini CLI's SDK sends its requests to GOOGLE_GEMINI_BASE_URL.

Each scripted reply is a list of parts (`text_part(...)`, `call(...)`), streamed as one SSE chunk with
finishReason STOP. Requests that offer tools are the agent's main loop and take the next scripted
reply (a plain "done." when nothing is left: the test sees it in `unscripted`); other requests (the
CLI's own helper calls: routing, summaries, next-speaker checks) get `side_reply`. Every request is
logged with its path. The server and the queue: `scripted_api`.
"""

from __future__ import annotations

import json
from typing import Any

from tests.support.scripted_api import Request, Response, ScriptedAPI

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


class FakeGemini(ScriptedAPI[Reply]):
    def __init__(self) -> None:
        super().__init__()
        self.requests: list[tuple[str, dict[str, Any]]] = []
        self.side_reply: Reply = [text_part('{"next_speaker": "user", "reasoning": "done"}')]

    @property
    def base_url(self) -> str:
        return self.url

    def script(self, *replies: Reply) -> None:
        self.add(*replies)

    def main_requests(self) -> list[dict[str, Any]]:
        return [b for p, b in self.requests if "functionDeclarations" in json.dumps(b.get("tools"))]

    def respond(self, request: Request) -> Response | None:
        if request.method == "GET":
            with self._lock:
                self.requests.append((f"GET {request.path}", {}))
            return Response(200, "application/json", b'{"models": []}')
        if request.method != "POST":
            return None
        try:
            body = json.loads(request.body or b"{}")
        except ValueError:
            body = {}
        path = request.path
        model = path.split("models/")[-1].split(":")[0] if "models/" in path else "m"
        with self._lock:
            self.requests.append((f"POST {path}", body))
            if ":countTokens" in path:
                return Response(200, "application/json", b'{"totalTokens": 10}')
            main = bool(body.get("tools")) and "functionDeclarations" in json.dumps(
                body.get("tools")
            )
            if main:
                asked = json.dumps(body.get("contents"))[-300:]
                reply = self.next_reply(asked, [text_part("done.")])
            else:
                reply = self.side_reply
        chunk = _chunk(reply, model)
        if "streamGenerateContent" in path:
            return Response(200, "text/event-stream", f"data: {json.dumps(chunk)}\r\n\r\n".encode())
        return Response(200, "application/json", json.dumps(chunk).encode())
