"""A scripted stand-in for the OpenAI Responses API, on loopback, for running the real `codex` binary
offline (tests/agents/).

The test scripts what "the model" answers: each reply is a list of output items (`message(...)`,
`function_call(...)`, `custom_tool_call(...)`), streamed as SSE as the API does (response.created,
response.output_item.added / done per item, response.completed). Every request body is logged, so a
test can assert what conversation the binary sent (`requests`).

Which reply answers a request: the next scripted one; with nothing scripted left a plain "done." so
the binary ends its turn instead of hanging (the test sees it in `unscripted`). Requests for other
paths (`/models` and the like) get an empty JSON list. The server and the queue: `scripted_api`.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

from tests.support.scripted_api import Request, Response, ScriptedAPI, json_response

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


class FakeOpenAI(ScriptedAPI[Reply]):
    """`with FakeOpenAI() as api: api.script(reply, ...)`; `api.base_url` for the provider config."""

    def __init__(self) -> None:
        super().__init__()
        self.requests: list[dict[str, Any]] = []
        self.paths: list[str] = []

    @property
    def base_url(self) -> str:
        return f"{self.url}/v1"

    def script(self, *replies: Reply) -> None:
        self.add(*replies)

    def respond(self, request: Request) -> Response | None:
        if request.method == "GET":
            self.paths.append(f"GET {request.path}")
            return json_response({"object": "list", "data": [], "models": []})
        if request.method != "POST":
            return None
        self.paths.append(f"POST {request.path}")
        if request.headers.get("content-encoding") == "zstd":
            return json_response({"error": "compressed bodies are not supported here"}, 400)
        try:
            body = json.loads(request.body or b"{}")
        except ValueError:
            body = {"unparsed": request.body.decode("utf-8", "replace")}
        if not request.path.rstrip("/").endswith("/responses"):
            return json_response({})
        with self._lock:
            self.requests.append(body)
            reply = self.next_reply(json.dumps(body.get("input"))[-300:], [message("done.")])
        return Response(200, "text/event-stream", stream(reply, str(body.get("model", "fake"))))
