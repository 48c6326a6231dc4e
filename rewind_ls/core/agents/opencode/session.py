"""OpenCode sessions: forking the conversation before a turn into a new session OpenCode can resume.

OpenCode (1.18) keeps sessions in its own SQLite database; rewind-ls never writes it. It goes
through OpenCode's own commands instead: `opencode export <id>` prints a session as JSON (`info`,
and `messages`: each `{info: {id, sessionID, role, parentID?, time.created, ...}, parts: [{id,
sessionID, messageID, type, text?, ...}]}`), and `opencode import <file>` stores such a file as a
session of the project it runs in. Import keeps a message or part whose id already exists as it is
(insert or ignore): the fork gets new ids for its session, messages and parts, so the original is
never touched. A new id keeps the old one's time-ordered prefix (`msg_<12 hex>`) with a new random
tail, so the fork's messages stay in their order.

The fork is every message before the user message of turn T's prompt (its text parts, found by text,
the nearest in time to the turn's start when the same prompt was sent twice). It is imported only
once the store has adopted it (`StagedImport.publish`), like the other agents' staged files.
"""

from __future__ import annotations

import json
import os
import secrets
import shlex
import string
import subprocess
from typing import Any

from rewind_ls.core.agents.claude.transcript import Fork, StagedSession, adopt_fork
from rewind_ls.core.errors import RewindError
from rewind_ls.core.model import Turn

_TAIL = string.ascii_letters + string.digits


def opencode_command() -> str:
    """The `opencode` to run: $REWIND_LS_OPENCODE, else the one on PATH."""
    import shutil

    found = os.environ.get("REWIND_LS_OPENCODE") or shutil.which("opencode")
    if not found:
        raise RewindError(
            "conversation: `opencode` is not on PATH (rewind-ls forks an OpenCode session with "
            "its own export and import); set REWIND_LS_OPENCODE to its path"
        )
    return found


def run_opencode(args: list[str], cwd: str) -> str:
    """Run `opencode ARGS` in `cwd`; its stdout, or RewindError with its exit code and stderr."""
    command = [opencode_command(), *args]
    try:
        proc = subprocess.run(
            command, cwd=cwd, capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise RewindError(f"conversation: `{shlex.join(command)}` could not run: {exc}") from None
    if proc.returncode != 0:
        raise RewindError(
            f"conversation: `{shlex.join(command)}` exited {proc.returncode}: {proc.stderr[-300:]}"
        )
    return proc.stdout


def new_id(old: str) -> str:
    """A fresh id in the place of `old` (`<prefix>_<12 hex><14 random>`): same ordered head."""
    head, _, rest = old.partition("_")
    if not rest or len(rest) < 12:
        raise RewindError(f"conversation: OpenCode id {old!r} is not of the form prefix_<hex>...")
    return f"{head}_{rest[:12]}{''.join(secrets.choice(_TAIL) for _ in range(14))}"


def message_text(message: dict[str, Any]) -> str:
    """A user message's text as the plugin recorded it: its text parts, synthetic ones left out."""
    parts = message.get("parts") or []
    return "\n".join(
        str(p.get("text", ""))
        for p in parts
        if isinstance(p, dict) and p.get("type") == "text" and not p.get("synthetic")
    )


def prompt_index(messages: list[dict[str, Any]], prompt: str, started_at: float) -> int:
    from rewind_ls.core.store import prompt_matches

    def created(i: int) -> float:
        time_info = messages[i].get("info", {}).get("time") or {}
        return float(time_info.get("created") or 0) / 1000.0

    found = [
        i
        for i, m in enumerate(messages)
        if m.get("info", {}).get("role") == "user" and prompt_matches(prompt, message_text(m))
    ]
    if not found:
        raise RewindError(f"conversation: the prompt {prompt[:60]!r} is not in the session")
    return min(found, key=lambda i: abs(created(i) - started_at))


def renamed(session: dict[str, Any], messages: list[dict[str, Any]], sid: str) -> dict[str, Any]:
    """The export as session `sid`, every message and part under a new id."""
    ids: dict[str, str] = {}

    def fresh(old: str) -> str:
        ids.setdefault(old, new_id(old))
        return ids[old]

    out = []
    for message in messages:
        info = dict(message["info"])
        info["id"] = fresh(info["id"])
        info["sessionID"] = sid
        if isinstance(info.get("parentID"), str):
            info["parentID"] = fresh(info["parentID"])
        parts = []
        for part in message.get("parts") or []:
            part = {**part, "id": fresh(part["id"]), "sessionID": sid}
            part["messageID"] = info["id"]
            parts.append(part)
        out.append({"info": info, "parts": parts})
    return {"info": {**session, "id": sid}, "messages": out}


class StagedImport(StagedSession):
    """The fork's export file, imported into OpenCode only once the store adopted the session.
    Its `path` is empty: the fork lives in OpenCode's database, no file is the session's."""

    __slots__ = ("cwd", "session_id")

    def __init__(self, tmp: str, cwd: str, session_id: str) -> None:
        super().__init__(tmp, "")
        self.cwd = cwd
        self.session_id = session_id

    def publish(self) -> str:
        out = run_opencode(["import", self.tmp], self.cwd)
        if f"Imported session: {self.session_id}" not in out:
            raise RewindError(f"conversation: `opencode import` did not import it: {out[-300:]}")
        self.discard()
        return self.path


def fork(store: Any, session_id: str, prompt: str, started_at: float) -> Fork:
    root = str(store.root)
    out = run_opencode(["export", session_id], root)
    try:
        data = json.loads(out[out.index("{") :])
        messages = list(data["messages"])
        session = dict(data["info"])
    except (ValueError, KeyError, TypeError) as exc:
        raise RewindError(
            f"conversation: `opencode export {session_id}` gave no session: {exc}"
        ) from None
    index = prompt_index(messages, prompt, started_at)
    if index == 0:
        # The session's first prompt: nothing comes before it to continue; start anew.
        result = Fork("", None, prompt, 0, None)
        result.resume_command = f"cd {shlex.quote(root)} && opencode"
        return result
    sid = new_id(session_id)
    from rewind_ls.core.fs import config

    folder = os.path.join(config.home_dir(), "opencode-forks")
    config.ensure_private_dir(folder)
    path = os.path.join(folder, f"{sid}.json")
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        json.dump(renamed(session, messages[:index], sid), f)
    result = Fork(sid, StagedImport(path, root, sid), prompt, index, None)
    result.resume_command = f"cd {shlex.quote(root)} && opencode --session {sid}"
    return result


def conversation_source(store: Any, turn: Turn) -> tuple[str | None, str | None]:
    try:
        opencode_command()
    except RewindError as exc:
        return None, str(exc)
    return f"opencode session {turn.session_id}", None


def fork_turn(store: Any, turn: Turn) -> Fork:
    """Fork the OpenCode session before `turn`; the fork inherits the turns before it."""
    result = fork(store, turn.session_id, turn.prompt, turn.started_at)
    if result.staged is not None:
        try:
            adopt_fork(store, turn, result)
        finally:
            result.staged.discard()
    return result
