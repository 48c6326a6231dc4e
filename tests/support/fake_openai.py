"""A scripted stand-in for the OpenAI Responses API, on loopback, for running the real `codex` binary
offline (tests/agents/).

The test scripts what "the model" answers: each reply is a list of output items (`message(...)`,
`function_call(...)`, `custom_tool_call(...)`), streamed as SSE as the API does (response.created,
response.output_item.added / done per item, response.completed). Every request body is logged, so a
test can assert what conversation the binary sent (`requests`).

Which reply answers a request: the next scripted one; with nothing scripted left a plain "done." so
the binary ends its turn instead of hanging (the test sees it in `unscripted`). Requests for other
paths (`/models` and the like) get an empty JSON list.
"""

from __future__ import annotations

import json
import threading
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Item = dict[str, Any]
Reply = list[Item]


def message(text: str) -> Item:
    return {
        "type": "message",
        "id": f"msg_{uuid.uuid4().hex[:20]}",
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": text, "annotations": []}],
    }


def function_call(name: str, arguments: dict[str, Any], call_id: str | None = None) -> Item:
    return {
        "type": "function_call",
        "id": f"fc_{uuid.uuid4().hex[:20]}",
        "call_id": call_id or f"call_{uuid.uuid4().hex[:20]}",
        "name": name,
        "arguments": json.dumps(arguments),
        "status": "completed",
    }


def custom_tool_call(name: str, input: str, call_id: str | None = None) -> Item:
    """A freeform tool call (Codex offers apply_patch as one: its input is the patch text)."""
    return {
        "type": "custom_tool_call",
        "id": f"ctc_{uuid.uuid4().hex[:20]}",
        "call_id": call_id or f"call_{uuid.uuid4().hex[:20]}",
        "name": name,
        "input": input,
        "status": "completed",
    }


def _sse(data: dict[str, Any]) -> bytes:
    return f"event: {data['type']}\ndata: {json.dumps(data)}\n\n".encode()


def stream(reply: Reply, model: str) -> bytes:
    rid = f"resp_{uuid.uuid4().hex[:24]}"
    base = {"id": rid, "object": "response", "model": model, "output": []}
    out = [_sse({"type": "response.created", "response": {**base, "status": "in_progress"}})]
    for index, item in enumerate(reply):
        out.append(
            _sse({"type": "response.output_item.added", "output_index": index, "item": item})
        )
        out.append(_sse({"type": "response.output_item.done", "output_index": index, "item": item}))
    usage = {
        "input_tokens": 10,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": 5,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": 15,
    }
    done = {**base, "status": "completed", "output": reply, "usage": usage}
    out.append(_sse({"type": "response.completed", "response": done}))
    return b"".join(out)


class FakeOpenAI:
    """`with FakeOpenAI() as api: api.script(reply, ...)`; `api.base_url` for the provider config."""

    def __init__(self) -> None:
        self.replies: list[Reply] = []
        self.requests: list[dict[str, Any]] = []
        self.paths: list[str] = []
        self.unscripted = 0
        self._lock = threading.Lock()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                fake.paths.append(f"GET {self.path}")
                self._json({"object": "list", "data": [], "models": []})

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length)
                fake.paths.append(f"POST {self.path}")
                if self.headers.get("content-encoding") == "zstd":
                    self._json({"error": "compressed bodies are not supported here"}, 400)
                    return
                try:
                    body = json.loads(raw or b"{}")
                except ValueError:
                    body = {"unparsed": raw.decode("utf-8", "replace")}
                if not self.path.rstrip("/").endswith("/responses"):
                    self._json({})
                    return
                with fake._lock:
                    fake.requests.append(body)
                    if fake.replies:
                        reply = fake.replies.pop(0)
                    else:
                        fake.unscripted += 1
                        reply = [message("done.")]
                data = stream(reply, str(body.get("model", "fake")))
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _json(self, obj: Any, status: int = 200) -> None:
                data = json.dumps(obj).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base_url = f"http://127.0.0.1:{self._server.server_address[1]}/v1"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def script(self, *replies: Reply) -> None:
        with self._lock:
            self.replies.extend(replies)

    def __enter__(self) -> FakeOpenAI:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
