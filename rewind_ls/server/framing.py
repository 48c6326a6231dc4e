"""Reading LSP messages from a byte stream, with an answer for every malformed one.

pygls' own loop logs a message it cannot parse and answers nothing; after a wrong `Content-Length` it
loses the framing for good, and it drops requests after `shutdown` silently. This loop answers a
JSON-RPC error for every malformed message it can frame (the request's id when it has one, `null`
otherwise), finds the next header after a body that was not JSON, and closes cleanly (after an error
with id `null`) when the stream cannot be framed at all.
"""

from __future__ import annotations

import asyncio
import functools
import json
import logging
import os
import re
import threading
from collections.abc import Callable
from typing import Any, BinaryIO, Protocol

log = logging.getLogger("rewind_ls.server.framing")

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602

MAX_BODY = 256 * 1024 * 1024  # a larger Content-Length is a broken stream, not a message
MAX_HEADER = 64 * 1024
_HEADER = b"Content-Length:"
_LENGTH = re.compile(rb"content-length:[ \t]*(.*?)[ \t]*$", re.IGNORECASE)


class Unframeable(Exception):
    """The stream cannot be split into messages any more."""


class Responder(Protocol):
    """What the loop needs of pygls' protocol object."""

    _shutdown: bool

    def structure_message(self, data: dict[str, Any]) -> Any: ...

    def get_message_type(self, method: str) -> Any: ...

    def handle_message(self, message: Any) -> None: ...

    def _send_data(self, data: Any) -> None: ...


class ByteStream:
    """A pushback buffer over a blocking binary stream. One daemon thread reads it, so a read still
    blocked when the server exits never holds the process open."""

    def __init__(self, stream: BinaryIO) -> None:
        self.stream = stream
        self.buffer = b""
        self.eof = False
        self.chunks: asyncio.Queue[bytes] | None = None

    def _start(self) -> asyncio.Queue[bytes]:
        loop = asyncio.get_running_loop()
        chunks: asyncio.Queue[bytes] = asyncio.Queue()
        read: Callable[[int], bytes]
        try:
            fd = self.stream.fileno()
            # os.read, not the buffered reader: its lock would be held by this daemon thread when
            # the interpreter shuts down ("could not acquire lock ... at shutdown").
            read = functools.partial(os.read, fd)
        except (AttributeError, OSError, ValueError):
            read = getattr(self.stream, "read1", self.stream.read)

        def pump() -> None:
            while True:
                try:
                    chunk = read(65536)
                except (OSError, ValueError):
                    chunk = b""
                try:
                    loop.call_soon_threadsafe(chunks.put_nowait, chunk)
                except RuntimeError:
                    return  # the loop is closed: the server is gone
                if not chunk:
                    return

        threading.Thread(target=pump, name="rewind-stdin", daemon=True).start()
        return chunks

    async def _more(self) -> None:
        if self.chunks is None:
            self.chunks = self._start()
        chunk = await self.chunks.get()
        if not chunk:
            self.eof = True
        self.buffer += chunk

    async def line(self) -> bytes | None:
        """One header line without its CRLF; None at end of stream."""
        while b"\n" not in self.buffer:
            if self.eof:
                return None
            if len(self.buffer) > MAX_HEADER:
                raise Unframeable(f"a header line longer than {MAX_HEADER} bytes")
            await self._more()
        line, _, self.buffer = self.buffer.partition(b"\n")
        return line.rstrip(b"\r")

    async def exactly(self, n: int) -> bytes | None:
        while len(self.buffer) < n:
            if self.eof:
                return None
            await self._more()
        body, self.buffer = self.buffer[:n], self.buffer[n:]
        return body

    def push_back(self, data: bytes) -> None:
        self.buffer = data + self.buffer


def error_message(msg_id: Any, code: int, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": msg_id, "error": {"code": code, "message": message}}


async def read_frame(stream: ByteStream) -> bytes | None:
    """The next message body; None at a clean end of stream. Raises Unframeable."""
    length: int | None = None
    saw_header = False
    while True:
        line = await stream.line()
        if line is None:
            if saw_header:
                raise Unframeable("the stream ended inside a message's headers")
            return None
        if not line.strip():
            if not saw_header:
                continue  # stray blank lines between messages
            break
        # Garbage before a header (the tail of a body whose length was too short): skip it.
        at = line.lower().find(_HEADER.lower())
        if at > 0:
            line = line[at:]
        saw_header = True
        match = _LENGTH.fullmatch(line)
        if match:
            value = match.group(1)
            if not value.isdigit() or int(value) > MAX_BODY:
                raise Unframeable(f"bad Content-Length header {value[:40]!r}")
            length = int(value)
    if length is None:
        raise Unframeable("a message without a Content-Length header")
    body = await stream.exactly(length)
    if body is None:
        raise Unframeable(f"the stream ended inside a {length}-byte message")
    return body


def check_shape(data: Any, shutting_down: bool) -> dict[str, Any] | None:
    """An error response for a message that is JSON but not a usable JSON-RPC message, else None."""
    if not isinstance(data, dict):
        return error_message(None, INVALID_REQUEST, "a JSON-RPC message must be an object")
    msg_id = data.get("id")
    if data.get("jsonrpc") != "2.0":
        return error_message(msg_id, INVALID_REQUEST, 'a JSON-RPC message needs "jsonrpc": "2.0"')
    method = data.get("method")
    if method is None:
        if "id" in data and ("result" in data or "error" in data):
            return None  # a response to one of our requests
        return error_message(msg_id, INVALID_REQUEST, "a message with no method")
    if not isinstance(method, str):
        return error_message(msg_id, INVALID_REQUEST, "method must be a string")
    if shutting_down and "id" in data and method != "exit":
        return error_message(
            msg_id,
            INVALID_REQUEST,
            f"{method}: the server is shutting down (shutdown was received)",
        )
    return None


def dispatch(protocol: Responder, body: bytes) -> None:
    """Parse one framed body and hand it to pygls, or answer the error it deserves."""
    try:
        data = json.loads(body)
    except (ValueError, RecursionError) as exc:
        protocol._send_data(error_message(None, PARSE_ERROR, f"the message is not JSON: {exc}"))
        return
    problem = check_shape(data, protocol._shutdown)
    if problem is not None:
        if not isinstance(data, dict) or "id" in data or "method" not in data:
            protocol._send_data(problem)  # a notification gets no answer, even an error
        return
    is_request = "method" in data and "id" in data
    try:
        message = protocol.structure_message(data)
    except Exception as exc:  # pygls raises its JsonRpc* errors; this module does not import pygls
        if is_request:
            method = data["method"]
            if protocol.get_message_type(method) is None:
                protocol._send_data(
                    error_message(data["id"], METHOD_NOT_FOUND, f"unknown method {method!r}")
                )
            else:
                protocol._send_data(
                    error_message(data["id"], INVALID_PARAMS, f"{method}: bad params ({exc})")
                )
        else:
            log.warning("dropping a notification that does not match its type: %s", data)
        return
    protocol.handle_message(message)


def split_overrun(body: bytes) -> tuple[Any, bytes] | None:
    """A body whose Content-Length was too long holds a whole JSON value and then the start of the
    next message: that value, and the rest to read again. None when the body is not like that."""
    try:
        json.loads(body)
        return None
    except (ValueError, RecursionError):
        pass
    try:
        text = body.decode("utf-8", "surrogateescape")
        value, end = json.JSONDecoder().raw_decode(text)
    except (ValueError, RecursionError):
        return None
    rest = text[end:].encode("utf-8", "surrogateescape")
    return value, rest


async def run(stop: threading.Event, stream: BinaryIO, protocol: Responder) -> None:
    reader = ByteStream(stream)
    while not stop.is_set():
        try:
            body = await read_frame(reader)
        except Unframeable as exc:
            log.error("cannot read the client's messages: %s; closing", exc)
            protocol._send_data(
                error_message(
                    None, PARSE_ERROR, f"rewind-ls cannot read the stream: {exc}; closing"
                )
            )
            return
        if body is None:
            return
        overrun = split_overrun(body)
        if overrun is not None:
            value, rest = overrun
            reader.push_back(rest)
            msg_id = value.get("id") if isinstance(value, dict) else None
            protocol._send_data(
                error_message(
                    msg_id,
                    PARSE_ERROR,
                    f"Content-Length was {len(body)} but the message is "
                    f"{len(body) - len(rest)} bytes; it was not run",
                )
            )
            continue
        try:
            dispatch(protocol, body)
        except Exception:
            log.exception("handling a message failed")
