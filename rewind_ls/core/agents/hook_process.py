"""The hook process: `rewind-ls hook AGENT` reads one JSON payload on stdin and hands it to the
agent's adapter (`claude.hook`, `codex.hook`, `gemini.hook`, through the agent registry).

Runs on every agent edit, so it imports only the core (stdlib + the store), and never fails the
agent: `run()` turns every error into a message on stderr and in the log, exit 0.
"""

from __future__ import annotations

import json
import os
import sys
import time
from typing import Any

from rewind_ls.core.errors import BadInput, RewindError
from rewind_ls.core.fs import config


def log(message: str) -> None:
    """Append to the log; never raises (the log is a courtesy, not a requirement)."""
    try:
        config.ensure_private_dir(config.home_dir())
        # Never through a link: one planted as the log would make every hook append to its target.
        fd = os.open(
            config.log_path(), os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW, 0o600
        )
        with os.fdopen(fd, "a", encoding="utf-8", errors="replace") as f:
            f.write(f"{time.strftime('%Y-%m-%dT%H:%M:%S')} {message}\n")
    except (OSError, RewindError):
        pass  # no log in a home that cannot be trusted (the hook says why on stderr)


def read_payload(stream: Any) -> bytes:
    """The whole payload, at most `config.max_hook_bytes()`: a larger one is refused (BadInput)
    before it is parsed, so nothing of it is recorded; the rest is drained in bounded pieces so
    the agent's write of it still completes."""
    cap = config.max_hook_bytes()
    raw: bytes = stream.read(cap + 1)
    if len(raw) <= cap:
        return raw
    total = len(raw)
    del raw
    while chunk := stream.read(1 << 20):
        total += len(chunk)
    raise BadInput(
        f"hook payload: {total} bytes, over the cap of {cap} (REWIND_LS_MAX_HOOK_BYTES); "
        "refused, nothing recorded"
    )


def parse(raw: bytes) -> dict[str, Any]:
    if not raw.strip():
        raise BadInput("hook payload: stdin was empty (expected one JSON object from the agent)")
    try:
        payload = json.loads(raw)
    except (ValueError, UnicodeDecodeError, RecursionError) as exc:
        # RecursionError: nested deeper than the parser allows; still just bad JSON to the agent.
        raise BadInput(f"hook payload: not valid JSON ({type(exc).__name__}: {exc})") from None
    if not isinstance(payload, dict):
        raise BadInput(f"hook payload: expected a JSON object, got {type(payload).__name__}")
    _refuse_nul_paths(payload.get("tool_input"), "tool_input")
    return payload


def _refuse_nul_paths(value: Any, where: str) -> None:
    """A NUL byte in a path field of the tool's input (no file name can hold one): BadInput naming
    the field, before any step hands the path to the OS (which raises a bare ValueError)."""
    if isinstance(value, dict):
        for key, item in value.items():
            _refuse_nul_paths(item, f"{where}.{key}")
    elif isinstance(value, list):
        for i, item in enumerate(value[:1000]):
            _refuse_nul_paths(item, f"{where}[{i}]")
    elif isinstance(value, str) and "\x00" in value and "path" in where.rsplit(".", 1)[-1].lower():
        raise BadInput(f"hook payload: field {where!r} contains a NUL byte")


def run(
    agent: str, stdin: Any = None, whole_process: bool | None = None, start_server: bool = False
) -> int:
    """Entry point of `rewind-ls hook <agent>`: always exit 0 so the agent is never blocked.

    `start_server`: the hook command found no hook server (`hook_client`); once this hook's
    output is written, one is started for the hooks after it.

    Reading the process's own stdin (`stdin` None, or `whole_process`) means this is the whole
    process: it then ends
    with `os._exit(0)` once its output is flushed. The agent waits on every hook, and a normal exit
    costs tens of milliseconds for nothing: the last SQLite connection to close checkpoints the WAL
    into the database and fsyncs it, and the interpreter tears every module down. Every transaction
    is already committed to the WAL, which the next process to open the store reads (or checkpoints).
    """
    from rewind_ls.core.agents.registry import AGENTS

    if agent not in AGENTS:
        sys.stderr.write(
            f"rewind-ls hook: unknown agent {agent!r} (expected one of {', '.join(AGENTS)})\n"
        )
        return 0
    raw = b""
    try:
        raw = read_payload(stdin or sys.stdin.buffer)
        payload = parse(raw)
        outcome = AGENTS[agent].handler()(payload)
        if outcome.message:
            # Claude Code and Codex show a hook's `systemMessage` to the person (stdout JSON, exit 0).
            sys.stdout.write(json.dumps({"systemMessage": outcome.message}) + "\n")
        if os.environ.get("REWIND_LS_DEBUG"):
            log(f"hook {agent}: {outcome.done}")
    except RewindError as exc:
        sys.stderr.write(f"rewind-ls hook: {exc}\n")
        log(f"hook {agent}: {exc}")
    except Exception as exc:  # never block the agent for our own failure
        sys.stderr.write(f"rewind-ls hook: internal error: {type(exc).__name__}: {exc}\n")
        log(f"hook {agent}: internal error: {type(exc).__name__}: {exc} (payload {raw[:200]!r})")
    if whole_process is None:
        whole_process = stdin is None
    if whole_process:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
            if start_server:
                _start_server()
        finally:
            os._exit(0)
    return 0


def _start_server() -> None:
    """Start the hook server for the next hooks; a failure only means they run in-process too."""
    try:
        from rewind_ls.core.agents.hook_client import start_server

        start_server()
    except Exception as exc:  # never the agent's problem
        log(f"hook server: not started: {type(exc).__name__}: {exc}")
