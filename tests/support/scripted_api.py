"""What the scripted stand-ins for the model APIs share (`fake_anthropic`, `fake_openai`,
`fake_gemini`): a threaded HTTP server on loopback, started and stopped as a context manager, the
queue of scripted replies with what was asked when nothing was left, and the response plumbing.
Each stand-in adds only its API's shapes: which requests are the agent's main loop, how a reply
is encoded (SSE events, JSON), what it logs.

Every request is answered by `respond()`; a method it does not answer (None) gets the same 501
`BaseHTTPRequestHandler` gives a method it has no handler for.
"""

from __future__ import annotations

import json
import threading
from email.message import Message
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Generic, NamedTuple, TypeVar

R = TypeVar("R")  # one scripted reply of the API (a list of blocks, items or parts)
A = TypeVar("A", bound="ScriptedAPI[Any]")


class Request(NamedTuple):
    method: str  # GET, HEAD, POST
    path: str  # as sent, query included
    headers: Message  # the request headers (`get` is case-insensitive)
    body: bytes  # empty but for POST


class Response(NamedTuple):
    status: int
    content_type: str
    data: bytes
    headers: tuple[tuple[str, str], ...] = ()


def json_response(obj: Any, status: int = 200) -> Response:
    return Response(status, "application/json", json.dumps(obj).encode())


class ScriptedAPI(Generic[R]):
    """The loopback server and the reply queue. Subclasses implement `respond`."""

    # HTTP/1.1 keeps connections open (as the real APIs do); the default closes each one.
    protocol_version = "HTTP/1.0"

    def __init__(self) -> None:
        self.replies: list[R] = []  # scripted replies for the agent's main loop, in order
        self.unscripted: list[str] = []  # what each main-loop request asked when none was left
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self: A) -> A:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def add(self, *replies: R) -> None:
        """Queue replies for the agent's main loop, in order."""
        with self._lock:
            self.replies.extend(replies)

    def next_reply(self, asked: str, fallback: R) -> R:
        """The next scripted reply (the caller holds `_lock`); with none left, `fallback` (a plain
        "done.", so the agent ends its turn instead of hanging) and `asked` noted in `unscripted`."""
        if self.replies:
            return self.replies.pop(0)
        self.unscripted.append(asked[:300])
        return fallback

    def respond(self, request: Request) -> Response | None:
        raise NotImplementedError

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = fake.protocol_version

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def _serve(self) -> None:
                body = b""
                if self.command == "POST":
                    body = self.rfile.read(int(self.headers.get("content-length") or 0))
                response = fake.respond(Request(self.command, self.path, self.headers, body))
                if response is None:
                    self.send_error(501, f"Unsupported method ({self.command!r})")
                    return
                self.send_response(response.status)
                self.send_header("content-type", response.content_type)
                self.send_header("content-length", str(len(response.data)))
                for name, value in response.headers:
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(response.data)

            do_GET = do_HEAD = do_POST = _serve

        return Handler
