"""The server object and its error path: `RewindServer` (pygls' `LanguageServer` with the store's
worker thread, what the client advertised, the turn notifications), rewind-ls errors as JSON-RPC
errors, and the routes: the decorators a handler module uses to say which request, LSP feature or
command it answers, and `install`, which registers them on a server.

`rewind/*` requests are registered from `rewind_ls.protocol.methods.METHODS` (method -> params
model, result model): a request is one line there, one handler in `handlers/` (`@request(method)`,
taking the validated params, returning the result's data) and one `Service` method. The endpoint
(`endpoint_of`) waits for the workspace, parses the params, validates and dumps the result, and
turns every failure into a JSON-RPC error. A table line without a handler fails at start-up, a
handler without a table line at import.

pygls and lsprotocol are imported only by this module, `restore_driver.py`, `app.py` and the
modules of `handlers/`; the rest of `server/` is plain Python over the core.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import sys
import threading
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

import attrs
import orjson
from lsprotocol import types
from pydantic import BaseModel, ValidationError
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams, JsonRpcServerError
from pygls.io_ import StdoutWriter
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol

from rewind_ls import __version__
from rewind_ls.core.errors import BadInput, BadPath, ConflictError, RewindError, UnknownTurn
from rewind_ls.core.model import RestoreStatus
from rewind_ls.protocol.methods import COMMANDS, METHODS, NOTIFICATIONS
from rewind_ls.protocol.recording import DidChangeTurnsParams
from rewind_ls.server import framing
from rewind_ls.server.routing import ClientEditSupport
from rewind_ls.server.service import Service
from rewind_ls.server.workspace_view import OpenDoc

log = logging.getLogger("rewind_ls.server")

T = TypeVar("T")
M = TypeVar("M", bound=BaseModel)
Handler = Callable[..., Awaitable[Any]]

# JSON-RPC error codes of rewind-ls (the server-error range).
UNKNOWN_TURN = -32001
BAD_PATH = -32002
CONFLICT = -32003
REWIND_ERROR = -32000


@attrs.define
class RawRequest:
    id: Any
    method: str
    jsonrpc: str
    params: Any = None


@attrs.define
class RawNotification:
    method: str
    jsonrpc: str
    params: Any = None


# Writes of `_send_json` still under way on an asyncio transport (a task is only weakly held).
_WRITES: set[asyncio.Future[Any]] = set()


class Wire(dict[str, Any]):
    """A `rewind/*` result already in wire form (its model's JSON dump): sent as it is."""


class RewindProtocol(LanguageServerProtocol):
    """`rewind/*` params arrive as plain JSON (dicts) so the pydantic models can validate them;
    their results (`Wire`) leave as plain JSON too."""

    def get_message_type(self, method: str) -> type[Any] | None:  # type: ignore[override]
        if method.startswith("rewind/"):
            return RawNotification if method in NOTIFICATIONS else RawRequest
        return super().get_message_type(method)

    def _send_response(self, msg_id: Any, result: Any = None, error: Any = None) -> None:
        # pygls would wrap the result in its attrs message and walk it with its converter, node
        # by node: 0.6 ms for a page of 100 turns, more than the page's SQL. A `Wire` result is
        # JSON types only (pydantic made it), so the message is built as a dict.
        if error is None and type(result) is Wire:
            self._result_types.pop(msg_id, None)
            self._send_json({"jsonrpc": self.VERSION, "id": msg_id, "result": result})
            return
        super()._send_response(msg_id, result, error)

    def _send_json(self, message: dict[str, Any]) -> None:
        """pygls' `_send_data` for a message of JSON types only, encoded by orjson (a page of
        turns in a fifth of `json.dumps`' time): compact UTF-8, so Content-Length counts its
        bytes, as LSP says it does."""
        if self.writer is None:
            log.error("rewind-ls: no transport to send a response on")
            return
        body = orjson.dumps(message)
        if self._include_headers:
            head = (
                f"Content-Length: {len(body)}\r\n"
                f"Content-Type: {self.CONTENT_TYPE}; charset={self.CHARSET}\r\n\r\n"
            )
            body = head.encode("ascii") + body
        res = self.writer.write(body)
        if inspect.isawaitable(res):  # an asyncio transport's writer: kept until it is done
            task = asyncio.ensure_future(res)
            _WRITES.add(task)
            task.add_done_callback(_WRITES.discard)


class RewindServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__("rewind-ls", __version__, protocol_cls=RewindProtocol)
        self.worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="rewind-store")
        self.service: Service | None = None
        self.support = ClientEditSupport()
        self.lens_refresh = False
        self.progress_ok = False
        self.show_document = False
        # rewind/didChangeTurns is ours, not LSP: sent only to a client that asked for it.
        self.turn_notifications = False
        # Work that outlives its request: restores waiting for the person's answer to their preview.
        self.asks: set[asyncio.Task[None]] = set()
        self.poller: asyncio.Task[None] | None = None
        # The pending refresh of the unsaved-buffer list (handlers/documents.py).
        self.unsaved_task: asyncio.Task[None] | None = None
        # Set once `initialized` has opened the store (or failed to): requests that arrive earlier
        # wait for it instead of failing with "no workspace yet".
        self.ready = asyncio.Event()
        # One restore at a time from this server: an undo (or any restore) asked while another is
        # still with the client waits for its end, so it plans against the state that restore left
        # (else an undo right after a revert finds no restore point yet, or the one before it).
        self.restoring = asyncio.Lock()

    async def call(self, fn: Callable[..., T], *args: Any) -> T:
        return await asyncio.get_running_loop().run_in_executor(self.worker, fn, *args)

    async def wait_ready(self, seconds: float = 60.0) -> None:
        if self.ready.is_set():  # every request after start-up: no task, no timer, no loop turn
            return
        try:
            await asyncio.wait_for(self.ready.wait(), seconds)
        except asyncio.TimeoutError:
            pass

    async def restores_ended(self) -> None:
        """Wait for a restore in progress to end: a preview plans against what it leaves."""
        async with self.restoring:
            pass

    def svc(self) -> Service:
        if self.service is None:
            raise server_error("rewind-ls: the server has no workspace yet", REWIND_ERROR)
        return self.service

    def docs(self) -> dict[str, OpenDoc]:
        return {
            uri: OpenDoc(uri, doc.source, doc.version)
            for uri, doc in self.workspace.text_documents.items()
        }

    def background(self, work: Awaitable[None]) -> None:
        task = asyncio.ensure_future(work)
        self.asks.add(task)
        task.add_done_callback(self.asks.discard)

    def say(self, kind: types.MessageType, message: str) -> None:
        self.window_show_message(
            types.ShowMessageParams(type=kind, message=f"rewind-ls: {message}")
        )

    def start_io(self, stdin: Any = None, stdout: Any = None) -> None:
        """pygls' stdio loop, with our reader: every malformed message gets a JSON-RPC error."""
        self._stop_event = threading.Event()
        self.protocol.set_writer(StdoutWriter(stdout or sys.stdout.buffer))
        try:
            asyncio.run(framing.run(self._stop_event, stdin or sys.stdin.buffer, self.protocol))
        except BrokenPipeError:
            log.error("the client closed the connection")
        except (KeyboardInterrupt, SystemExit):
            pass
        finally:
            self.shutdown()  # type: ignore[no-untyped-call]

    def notify_turns(self, session_ids: list[str], reason: str) -> None:
        if self.turn_notifications:
            self.protocol.notify(
                "rewind/didChangeTurns",
                dump(DidChangeTurnsParams(session_ids=session_ids, reason=reason)),
            )
        if self.lens_refresh:
            self.workspace_code_lens_refresh(None)


# --- errors and params --------------------------------------------------------------------------


def server_error(message: str, code: int, data: Any = None) -> JsonRpcException:
    error: JsonRpcException = JsonRpcServerError(message, code, data)  # type: ignore[no-untyped-call]
    return error


def to_rpc_error(exc: Exception) -> JsonRpcException:
    if isinstance(exc, JsonRpcException):
        return exc
    if isinstance(exc, UnknownTurn):
        return server_error(str(exc), UNKNOWN_TURN)
    if isinstance(exc, BadPath):
        return server_error(str(exc), BAD_PATH, {"path": exc.path})
    if isinstance(exc, ConflictError):
        return server_error(
            str(exc), CONFLICT, {"status": RestoreStatus.CONFLICT, "paths": exc.paths}
        )
    if isinstance(exc, BadInput):
        return JsonRpcInvalidParams(str(exc))
    if isinstance(exc, RewindError):
        return server_error(str(exc), REWIND_ERROR)
    log.exception("internal error")
    return server_error(f"rewind-ls internal error: {type(exc).__name__}: {exc}", REWIND_ERROR)


def parse(model: type[M], params: Any, method: str) -> M:
    if params is None:
        params = {}
    if not isinstance(params, dict):
        raise JsonRpcInvalidParams(
            f"{method}: params must be an object, got {type(params).__name__}"
        )
    try:
        return model.model_validate(params)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or '(params)'}: {err['msg']}"
            for err in exc.errors()
        )
        raise JsonRpcInvalidParams(f"{method}: {problems}") from None


def dump(model: BaseModel) -> dict[str, Any]:
    return model.model_dump(mode="json", by_alias=True)


# --- routes: which handler answers what ----------------------------------------------------------

# Filled by the decorators below when the handler modules are imported (`app.py` imports them).
REQUESTS: dict[str, Handler] = {}
COMMAND_HANDLERS: dict[str, Handler] = {}
FEATURES: list[tuple[str, Any, Callable[..., Any]]] = []


def request(method: str) -> Callable[[Handler], Handler]:
    """The handler of a `rewind/*` request of METHODS: `async (ls, params model) -> result data`."""
    if method not in METHODS or method in NOTIFICATIONS:
        raise KeyError(f"{method}: not a request of rewind_ls.protocol.methods.METHODS")

    def register(fn: Handler) -> Handler:
        REQUESTS[method] = fn
        return fn

    return register


def command(name: str) -> Callable[[Handler], Handler]:
    """The handler of a workspace/executeCommand command of COMMANDS: `async (ls, *args)`."""
    if name not in COMMANDS:
        raise KeyError(f"{name}: not a command of rewind_ls.protocol.methods.COMMANDS")

    def register(fn: Handler) -> Handler:
        COMMAND_HANDLERS[name] = fn
        return fn

    return register


def feature(method: str, options: Any = None) -> Callable[[T], T]:
    """The handler of a standard LSP message (pygls' `feature`, registered by `install`)."""

    def register(fn: T) -> T:
        FEATURES.append((method, options, fn))  # type: ignore[arg-type]
        return fn

    return register


def endpoint_of(method: str, handler: Handler) -> Handler:
    """A `rewind/*` request as pygls calls it: params checked against the method's model, the
    answer checked against its result model, every failure a clear JSON-RPC error."""
    params_model, result_model = METHODS[method]
    assert result_model is not None, method

    async def endpoint(ls: RewindServer, params: Any) -> Any:
        try:
            await ls.wait_ready()
            result = await handler(ls, parse(params_model, params, method))
            if type(result) is Wire:  # already in wire form (the handler says how it was made)
                return result
            return Wire(dump(result_model.model_validate(result)))
        except Exception as exc:
            raise to_rpc_error(exc) from None

    endpoint.__name__ = handler.__name__
    return endpoint


def install(server: RewindServer) -> None:
    """Register every handler on `server`: the LSP features, then the requests in METHODS' order
    and the commands in COMMANDS' order (the order `initialize` lists them in)."""
    missing = [m for m in METHODS if m not in NOTIFICATIONS and m not in REQUESTS]
    missing += [c for c in COMMANDS if c not in COMMAND_HANDLERS]
    if missing:
        raise RuntimeError(f"rewind-ls: no handler for {', '.join(missing)}")
    for method, options, fn in FEATURES:
        server.feature(method, options)(fn)
    for method in METHODS:
        if method not in NOTIFICATIONS:
            server.feature(method)(endpoint_of(method, REQUESTS[method]))
    for name in COMMANDS:
        server.command(name)(COMMAND_HANDLERS[name])
