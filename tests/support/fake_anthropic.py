"""A scripted stand-in for the Anthropic Messages API, on loopback, for running the real `claude` binary
offline (tests/agents/).

The test scripts what "the model" answers: each reply is a list of content blocks (`text(...)`,
`tool_use(...)`), streamed as SSE exactly as the API does (message_start, content_block_start /
delta / stop, message_delta with the stop reason, message_stop). Every request body is logged, so a
test can assert what conversation the binary sent to the model (`conversation_requests`).

Which reply answers a request: a request that offers tools is the agent's main loop and takes the
next scripted reply (or, when the test gave a `responder`, whatever it returns); other requests
(title generation, summaries the binary asks for on its own) get `side_reply` unless the responder
handles them. A main-loop request with nothing scripted left gets a plain "done." so the binary
ends its turn instead of hanging; the test sees it in `unscripted`. The server and the queue:
`scripted_api`.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Callable
from typing import Any

from tests.support.scripted_api import Request, Response, ScriptedAPI

Block = dict[str, Any]
Reply = list[Block]
Responder = Callable[[dict[str, Any]], "Reply | None"]


def text(value: str) -> Block:
    return {"type": "text", "text": value}


def tool_use(name: str, input: dict[str, Any], id: str | None = None) -> Block:
    return {
        "type": "tool_use",
        "id": id or f"toolu_{uuid.uuid4().hex[:20]}",
        "name": name,
        "input": input,
    }


def usage(input_tokens: int) -> Block:
    """Not a content block: makes the reply report `input_tokens` used (e.g. near the context
    window, so the binary compacts automatically before its next request)."""
    return {"type": "usage", "input_tokens": input_tokens}


def _sse(event: str, data: dict[str, Any]) -> bytes:
    return f"event: {event}\ndata: {json.dumps(data)}\n\n".encode()


def stream(reply: Reply, model: str) -> bytes:
    """The SSE body of one streamed message holding `reply`'s blocks."""
    msg_id = f"msg_{uuid.uuid4().hex[:24]}"
    tokens = next((b["input_tokens"] for b in reply if b["type"] == "usage"), 10)
    reply = [b for b in reply if b["type"] != "usage"]
    out = [
        _sse(
            "message_start",
            {
                "type": "message_start",
                "message": {
                    "id": msg_id,
                    "type": "message",
                    "role": "assistant",
                    "model": model,
                    "content": [],
                    "stop_reason": None,
                    "stop_sequence": None,
                    "usage": {
                        "input_tokens": tokens,
                        "output_tokens": 1,
                        "cache_creation_input_tokens": 0,
                        "cache_read_input_tokens": 0,
                    },
                },
            },
        )
    ]
    for index, block in enumerate(reply):
        if block["type"] == "text":
            out.append(
                _sse(
                    "content_block_start",
                    {
                        "type": "content_block_start",
                        "index": index,
                        "content_block": {"type": "text", "text": ""},
                    },
                )
            )
            out.append(
                _sse(
                    "content_block_delta",
                    {
                        "type": "content_block_delta",
                        "index": index,
                        "delta": {"type": "text_delta", "text": block["text"]},
                    },
                )
            )
        else:
            start = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
            out.append(
                _sse(
                    "content_block_start",
                    {"type": "content_block_start", "index": index, "content_block": start},
                )
            )
            out.append(
                _sse(
                    "content_block_delta",
                    {
                        "type": "content_block_delta",
                        "index": index,
                        "delta": {
                            "type": "input_json_delta",
                            "partial_json": json.dumps(block["input"]),
                        },
                    },
                )
            )
        out.append(_sse("content_block_stop", {"type": "content_block_stop", "index": index}))
    stop = "tool_use" if any(b["type"] == "tool_use" for b in reply) else "end_turn"
    out.append(
        _sse(
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop, "stop_sequence": None},
                "usage": {"output_tokens": 5},
            },
        )
    )
    out.append(_sse("message_stop", {"type": "message_stop"}))
    return b"".join(out)


def message_json(reply: Reply, model: str) -> dict[str, Any]:
    """The same reply as a non-streamed response body."""
    reply = [b for b in reply if b["type"] != "usage"]
    stop = "tool_use" if any(b["type"] == "tool_use" for b in reply) else "end_turn"
    return {
        "id": f"msg_{uuid.uuid4().hex[:24]}",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": reply,
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 5},
    }


def is_compaction(body: dict[str, Any]) -> bool:
    """The binary's own request for a conversation summary (/compact): it offers tools too."""
    messages = body.get("messages") or []
    # Its last message ends with the summary instructions (a later prompt's merged user message
    # may quote "<summary>", so match the instruction itself).
    return bool(messages) and "Do NOT call any tools" in json.dumps(messages[-1])


def dialogue(messages: list[Any]) -> list[Any]:
    """A request's conversation: its user and assistant messages. Claude Code 2.1.332 also sends
    `system`-role messages inside `messages` (the environment and reminders its attachments
    render, and after the first message an empty one carrying the per-turn `output_config`: its
    per-turn-control beta); the binary places them anew at each request, where it loads the
    session, so they are not part of what a fork keeps of the conversation."""
    return [m for m in messages if m.get("role") != "system"]


def last_user_text(body: dict[str, Any]) -> str:
    """The text of the request's last user message (all its text blocks)."""
    messages = body.get("messages") or []
    if not messages:
        return ""
    content = messages[-1].get("content")
    if isinstance(content, str):
        return content
    return "\n".join(b.get("text", "") for b in content if isinstance(b, dict))


class FakeAnthropic(ScriptedAPI[Reply]):
    """The server. Use as a context manager; `url` goes in ANTHROPIC_BASE_URL."""

    protocol_version = "HTTP/1.1"

    def __init__(self, responder: Responder | None = None, side_reply: str = "ok") -> None:
        super().__init__()
        self.responder = responder
        self.side_reply = side_reply
        self.requests: list[dict[str, Any]] = []  # every body of POST /v1/messages, in order
        self.other: list[str] = []  # every other path requested

    @property
    def script(self) -> list[Reply]:
        """The replies still queued (`add`)."""
        return self.replies

    def _answer(self, body: dict[str, Any]) -> Reply:
        with self._lock:
            self.requests.append(body)
            if self.responder is not None:
                reply = self.responder(body)
                if reply is not None:
                    return reply
            if not body.get("tools") or is_compaction(body):
                return [text(self.side_reply)]
            asked = json.dumps((body.get("messages") or [{}])[-1])
            return self.next_reply(asked, [text("done.")])

    def conversation_requests(self) -> list[dict[str, Any]]:
        """The main-loop requests (those offering tools), in order."""
        return [r for r in self.requests if r.get("tools") and not is_compaction(r)]

    def respond(self, request: Request) -> Response:
        not_found = b'{"type":"error","error":{"type":"not_found_error"}}'
        ids = (("request-id", f"req_{uuid.uuid4().hex[:12]}"),)
        if request.method == "GET":
            self.other.append("GET " + request.path)
            return Response(404, "application/json", not_found, ids)
        if request.method == "HEAD":
            self.other.append("HEAD " + request.path)
            return Response(200, "text/plain", b"", ids)
        path = request.path.split("?")[0]
        if path.endswith("/count_tokens"):
            self.other.append("POST " + path)
            return Response(200, "application/json", b'{"input_tokens": 10}', ids)
        if not path.endswith("/v1/messages"):
            self.other.append("POST " + path)
            return Response(404, "application/json", not_found, ids)
        body = json.loads(request.body)
        reply = self._answer(body)
        model = str(body.get("model", "claude"))
        if body.get("stream"):
            return Response(200, "text/event-stream", stream(reply, model), ids)
        return Response(
            200, "application/json", json.dumps(message_json(reply, model)).encode(), ids
        )


DEFERRED = "available via ToolSearch"  # 2.1.332's reminder naming the tools it defers


def _texts(messages: list[Any]) -> list[str]:
    """Every text of a request's messages (string contents and text blocks)."""
    out: list[str] = []
    for m in messages:
        content = m.get("content") if isinstance(m, dict) else None
        if isinstance(content, str):
            out.append(content)
        for block in content if isinstance(content, list) else []:
            if isinstance(block, dict) and isinstance(block.get("text"), str):
                out.append(block["text"])
    return out


def deferred_tools(body: dict[str, Any]) -> set[str]:
    """The tools a request names as deferred: Claude Code 2.1.332 sends the schemas of only some
    tools (NotebookEdit, every MCP server's tools, ... are left out) and lists the others by name,
    one a line, in a reminder ("The following deferred tools are now available via ToolSearch.
    ... before calling them:"); the model loads them with ToolSearch `select:<name>,...`."""
    names: set[str] = set()
    for said in _texts(body.get("messages") or []):
        for part in said.split(DEFERRED)[1:]:
            listed = part.split(":\n", 1)[1] if ":\n" in part else ""
            for line in listed.split("\n"):
                if not re.fullmatch(r"[A-Za-z0-9_.:-]+", line):
                    break  # the list ends at a blank line or the reminder's end
                names.add(line)
    return names


def loading_tools(api: FakeAnthropic) -> Responder:
    """A responder that plays the model as a real one plays it when the next scripted reply calls
    a tool the request does not offer: a deferred tool (2.1.332, `deferred_tools`) is loaded first
    with ToolSearch, as the binary's reminder tells a model to; an `mcp__` tool that is not even
    deferred yet belongs to an MCP server still connecting, so it calls the binary's
    `WaitForMcpServers` (what the binary's error tells a model to do). Either way the scripted
    reply is kept for the next request. `rewind-ls mcp` takes a second or more to start (the SDK's
    import), the stand-in answers at once."""

    def respond(body: dict[str, Any]) -> Reply | None:
        if not body.get("tools") or is_compaction(body) or not api.replies:
            return None
        offered = {t.get("name") for t in body["tools"]}
        wanted = [b["name"] for b in api.replies[0] if b["type"] == "tool_use"]
        missing = [n for n in wanted if n not in offered]
        deferred = [n for n in missing if n in deferred_tools(body)]
        if deferred and "ToolSearch" in offered:
            return [tool_use("ToolSearch", {"query": "select:" + ",".join(deferred)})]
        if any(n.startswith("mcp__") for n in missing):
            return [tool_use("WaitForMcpServers", {})]
        return None

    return respond


waiting_for_mcp = loading_tools  # the name the MCP tests know it by
