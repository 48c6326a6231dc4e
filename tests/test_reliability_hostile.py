"""Hostile and malformed input: hook payloads, `rewind/*` params, transcript lines, path attacks.

Every attack gets a clear error (or is ignored where the contract says so), the hook exits 0, the
server stays up and answers the next request, and nothing outside the workspace is read into the
store or written: a sentinel folder beside the workspace, holding a secret, is byte-identical (names,
modes, contents, mtimes) after each attack and its secret is never stored.

Sizes: hypothesis examples per property are `runs(...)`-scaled (CI defaults below; the full run is
`REWIND_RELIABILITY_RUNS=200`, i.e. 200 examples per property).
"""

from __future__ import annotations

import asyncio
import io
import json
import os
import sqlite3
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pygls.exceptions import JsonRpcException

from rewind_ls.core.store import digest, store_dir_for
from tests.support.agent import FakeClaude
from tests.support.fault import Tally, cli, env_for, query, runs, tree_digest
from tests.support.lsp_client import start, uri_of

SECRET = b"TOP-SECRET sentinel content that must never enter the store\n"
count = Tally("reliability/hostile inputs tried")


@pytest.fixture(scope="module", autouse=True)
def report_tally() -> Iterator[None]:
    yield
    count.report()


def examples(ci: int) -> settings:
    return settings(
        max_examples=runs(ci) if runs(0) else ci,
        deadline=None,
        suppress_health_check=list(HealthCheck),
        derandomize=True,
    )


class World:
    """A workspace with a recorded session, a store home, and a sentinel folder outside both."""

    def __init__(self, base: Path) -> None:
        self.base = base
        self.ws = base / "ws"
        self.home = base / "home"
        self.sentinel = base / "sentinel"
        self.ws.mkdir(parents=True)
        self.sentinel.mkdir()
        (self.sentinel / "secret.txt").write_bytes(SECRET)
        (self.sentinel / "sub").mkdir()
        (self.sentinel / "sub" / "secret2.txt").write_bytes(SECRET)
        (self.ws / "a.txt").write_text("a0\n")
        (self.ws / "dir").mkdir()
        (self.ws / "dir" / "b.txt").write_text("b0\n")
        self.agent = FakeClaude(self.ws, self.home, session_id="hostile-session")
        self.agent.turn("first", {"a.txt": "a1\n", "dir/b.txt": "b1\n"})
        self.agent.turn("second", {"a.txt": "a2\n"})
        self.sentinel_digest = tree_digest(self.sentinel)

    def untouched(self) -> None:
        assert tree_digest(self.sentinel) == self.sentinel_digest, "sentinel folder changed"
        assert not any(self.base.glob("*.rewind-*")), "temporary file outside the workspace"
        db = Path(store_dir_for(str(self.ws), str(self.home))) / "store.sqlite3"
        if db.exists():
            conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=30)
            try:
                hit = conn.execute("SELECT 1 FROM blobs WHERE hash = ?", (digest(SECRET),))
                assert hit.fetchone() is None, "content from outside the workspace was stored"
                bad = conn.execute(
                    "SELECT path FROM known WHERE path LIKE '/%' OR path LIKE '../%' OR path = '..'"
                    " UNION SELECT path FROM changes WHERE path LIKE '/%' OR path LIKE '../%'"
                ).fetchall()
                assert not bad, bad
            finally:
                conn.close()


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> World:
    return World(tmp_path_factory.mktemp("hostile"))


# --- hook payloads -------------------------------------------------------------------------------

EVENTS = [
    "SessionStart",
    "UserPromptSubmit",
    "PreToolUse",
    "PostToolUse",
    "Stop",
    "SessionEnd",
    "Notification",
    "PreCompact",
    "",
    "pretooluse",
]
TOOLS = ["Write", "Edit", "MultiEdit", "NotebookEdit", "Bash", "Read", "mcp__x__y", "", None]

junk = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=True)
    | st.text(max_size=40),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)


def _paths(world: World) -> st.SearchStrategy[Any]:
    ws = str(world.ws)
    return (
        st.sampled_from(
            [
                f"{ws}/a.txt",
                f"{ws}/new file.txt",
                "a.txt",
                "../sentinel/secret.txt",
                f"{ws}/../sentinel/secret.txt",
                str(world.sentinel / "secret.txt"),
                "/etc/passwd",
                f"{ws}/dir/../../sentinel/secret.txt",
                f"{ws}/line\nbreak.txt",
                f"{ws}/nul\x00byte.txt",
                f"{ws}/bad\udcffutf8.txt",
                f"{ws}/.git/config",
                f"{ws}/link-out/secret.txt",
                f"{ws}/file-link",
                ws,
                "",
                "~/x",
                "x" * 5000,
            ]
        )
        | junk
    )


def _payload(world: World) -> st.SearchStrategy[dict[str, Any]]:
    base = st.fixed_dictionaries(
        {
            "session_id": st.sampled_from(["hostile-session", "other", ""]) | junk,
            "transcript_path": st.sampled_from(
                [str(world.agent.transcript), "/etc/passwd", str(world.sentinel / "t.jsonl")]
            )
            | junk,
            "cwd": st.sampled_from(
                [str(world.ws), str(world.ws / "dir"), str(world.sentinel), "/", "relative", ""]
            )
            | junk,
            "hook_event_name": st.sampled_from(EVENTS) | junk,
        },
        optional={
            "tool_name": st.sampled_from(TOOLS) | junk,
            "tool_input": st.fixed_dictionaries(
                {},
                optional={
                    "file_path": _paths(world),
                    "notebook_path": _paths(world),
                    "content": st.text(max_size=30) | st.just("y" * 300_000) | junk,
                    "command": st.text(max_size=20),
                    "edits": junk,
                },
            )
            | junk,
            "tool_use_id": st.text(max_size=20) | junk,
            "prompt": st.text(max_size=50) | st.just("\x00" * 10 + "p" * 200_000) | junk,
            "tool_response": junk,
            "stop_hook_active": junk,
            "source": junk,
            "unknown_field": junk,
            "permission_mode": junk,
        },
    )
    return base


def _encode(payload: dict[str, Any], cut: int | None, garbage: bytes) -> bytes:
    raw = json.dumps(payload, ensure_ascii=False, allow_nan=True).encode("utf-8", "surrogatepass")
    if cut is not None:
        raw = raw[: cut % (len(raw) + 1)]
    return raw + garbage


@pytest.fixture(scope="module")
def link_world(world: World) -> World:
    # Links that lead outside: a symlinked folder and a symlinked file inside the workspace.
    (world.ws / "link-out").symlink_to(world.sentinel)
    (world.ws / "file-link").symlink_to(world.sentinel / "secret.txt")
    return world


def test_hook_payloads_property(link_world: World, monkeypatch: pytest.MonkeyPatch) -> None:
    """The real entry point (`hook_process.run`) in process, so hypothesis can try many payloads."""
    from rewind_ls.core.agents import hook_process

    world = link_world
    for key, value in env_for(world.home).items():
        if key.startswith(("REWIND_LS_", "CLAUDE_")):
            monkeypatch.setenv(key, value)
    ws_files = {
        p: p.read_bytes() for p in world.ws.rglob("*") if p.is_file() and not p.is_symlink()
    }

    @examples(150)
    @given(
        payload=_payload(world),
        cut=st.none() | st.integers(min_value=0),
        garbage=st.sampled_from([b"", b"\x00", b"\xff\xfe", b"}", b"\n{}", b"\xed\xa0\x80"]),
    )
    def prop(payload: dict[str, Any], cut: int | None, garbage: bytes) -> None:
        count("hook payload (hypothesis)")
        err = io.StringIO()
        monkeypatch.setattr(sys, "stderr", err)
        try:
            code = hook_process.run("claude-code", io.BytesIO(_encode(payload, cut, garbage)))
        finally:
            monkeypatch.undo()
            for key, value in env_for(world.home).items():
                if key.startswith(("REWIND_LS_", "CLAUDE_")):
                    monkeypatch.setenv(key, value)
        assert code == 0
        assert "internal error" not in err.getvalue(), err.getvalue()
        world.untouched()
        for path, data in ws_files.items():
            assert path.read_bytes() == data  # the hook never writes the workspace

    prop()
    rows = query(world.ws, world.home, "PRAGMA integrity_check")
    assert rows == [("ok",)]


# Reported in .coordination/reliability-findings.md (claude_hook.py is not ours to edit): a payload
# nested deeper than the JSON parser allows is reported as "internal error: RecursionError" instead
# of "not valid JSON". Still exit 0, one line, nothing recorded.
KNOWN_HOOK_FINDINGS: set[str] = set()  # every nasty payload gets a plain reason now


def test_hook_nasty_payloads_as_processes(link_world: World) -> None:
    """The same entry point as a real process: exit 0 and a one-line reason on stderr."""
    world = link_world
    agent = world.agent
    base = agent._base("PreToolUse")
    nasty: dict[str, bytes] = {
        "empty stdin": b"",
        "truncated JSON": json.dumps(base).encode()[:37],
        "not an object": b"[1, 2, 3]",
        "invalid UTF-8": b'{"session_id": "\xff\xfe"}',
        "NUL in session": json.dumps({**base, "session_id": "a\x00b"}).encode(),
        "huge prompt": json.dumps(
            {**agent._base("UserPromptSubmit"), "prompt": "p" * 5_000_000}
        ).encode(),
        "deep nesting": b'{"tool_input": ' + b"[" * 100_000 + b"]" * 100_000 + b"}",
        "wrong types": json.dumps({**base, "tool_name": 5, "tool_input": "x", "cwd": 7}).encode(),
        "dotdot path": json.dumps(
            {**base, "tool_name": "Write", "tool_input": {"file_path": "../sentinel/secret.txt"}}
        ).encode(),
        "absolute outside": json.dumps(
            {
                **base,
                "tool_name": "Edit",
                "tool_input": {"file_path": str(world.sentinel / "secret.txt")},
            }
        ).encode(),
        "symlinked parent": json.dumps(
            {
                **base,
                "tool_name": "Write",
                "tool_input": {"file_path": str(world.ws / "link-out" / "secret.txt")},
            }
        ).encode(),
        "symlinked file": json.dumps(
            {**base, "tool_name": "Write", "tool_input": {"file_path": str(world.ws / "file-link")}}
        ).encode(),
        "cwd outside": json.dumps({**base, "cwd": str(world.sentinel)}).encode(),
        "unknown event and fields": json.dumps(
            {**base, "hook_event_name": "FutureEvent", "new_field": {"x": [1]}}
        ).encode(),
    }
    for name, raw in nasty.items():
        proc = subprocess.run(
            [sys.executable, "-m", "rewind_ls", "hook", "claude-code"],
            input=raw,
            env=env_for(world.home),
            capture_output=True,
            timeout=60,
        )
        assert proc.returncode == 0, (name, proc.stderr)
        assert b"Traceback" not in proc.stderr, (name, proc.stderr)
        if name not in KNOWN_HOOK_FINDINGS:
            assert b"internal error" not in proc.stderr, (name, proc.stderr)
        assert proc.stderr.count(b"\n") <= 1 and len(proc.stderr) < 2000, (name, proc.stderr)
        world.untouched()
        count(f"hook process: {name}")
    # The session still records normally afterwards.
    agent.turn("after the attacks", {"a.txt": "a3\n"})
    world.untouched()


# --- rewind/* params through the real server ----------------------------------------------------


# method -> (valid params, {field: (wrong values...)})
def _methods(turn: str, uri: str) -> dict[str, tuple[dict[str, Any], dict[str, list[Any]]]]:
    return {
        "rewind/listTurns": ({}, {"sessionId": [1, True, [], {}]}),
        "rewind/preview": (
            {"turnId": turn},
            {
                "turnId": [1, None, [], {}],
                "scope": ["all", 1, None],
                "mode": ["sideways", 3, []],  # undo is a mode of the preview (no turnId needed)
                "paths": ["a.txt", [1], {}],
            },
        ),
        "rewind/restore": (
            {"turnId": turn, "apply": False},
            {
                "turnId": [5, None, []],
                "scope": ["nope", 0],
                "mode": ["x"],
                "force": ["yes-please", [], 2],
                "skipConflicts": [{}, "no way"],
                "apply": ["maybe", []],
                "paths": [[None], 7],
            },
        ),
        "rewind/undo": ({"apply": False}, {"force": ["sure", []], "apply": [{}, "x"]}),
        "rewind/fileAt": (
            {"turnId": turn, "uri": uri},
            {"turnId": [1, None], "uri": [2, None, []], "side": ["middle", 1]},
        ),
        "rewind/listFolder": (
            {"turnId": turn},
            {"turnId": [1, None], "uri": [2, []], "side": ["middle", 1], "recursive": ["all", []]},
        ),
        "rewind/timeline": ({}, {"sessionId": [9, [], {}]}),
        "rewind/timelinePage": (
            {},
            {"sessionId": [9, []], "all": ["maybe", []], "nonce": ["<script>", 5, "short"]},
        ),
        "rewind/beginTurn": (
            {"sessionId": "lsp-agent"},
            {"sessionId": [1, None, []], "prompt": [1, []], "agent": [[], 5]},
        ),
        "rewind/recordEdit": (
            {"sessionId": "lsp-agent", "uri": uri, "phase": "before"},
            {"sessionId": [None, 2], "uri": [3, []], "phase": ["during", 1], "text": [1, []]},
        ),
        "rewind/endTurn": ({"sessionId": "lsp-agent"}, {"sessionId": [None, 4, {}]}),
    }


REQUIRED = {"turnId", "uri", "sessionId", "phase"}


class Server:
    """A pytest-lsp client on its own event loop thread, so sync (hypothesis) tests can drive it."""

    def __init__(self, ws: Path, home: Path) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.client, self.editor = self.run(start(ws, home), 60)

    def run(self, coro: Any, timeout: float = 30) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def request(self, method: str, params: Any) -> Any:
        return self.run(self.client.protocol.send_request_async(method, params))

    def error(self, method: str, params: Any) -> JsonRpcException:
        try:
            result = self.request(method, params)
        except JsonRpcException as exc:
            return exc
        raise AssertionError(f"{method} {params!r:.200}: accepted, answered {result!r:.200}")

    def alive(self) -> None:
        listing = self.request("rewind/listTurns", {})
        assert listing is not None
        assert self.client._server.returncode is None

    def close(self) -> None:
        try:
            self.run(self.client.shutdown_session(), 20)
        finally:
            self.loop.call_soon_threadsafe(self.loop.stop)


@pytest.fixture(scope="module")
def server(world: World) -> Iterator[Server]:
    srv = Server(world.ws, world.home)
    yield srv
    srv.close()


def _turn_id(world: World, prompt: str = "first") -> str:
    return str(query(world.ws, world.home, "SELECT id FROM turns WHERE prompt = ?", prompt)[0][0])


def test_params_every_field_wrong(world: World, server: Server) -> None:
    """Each method: each field with each wrong type, a missing required field, an extra field and
    non-object params: InvalidParams (-32602) naming the field; the server answers the next one."""
    methods = _methods(_turn_id(world), uri_of(world.ws / "a.txt"))
    for method, (valid, fields) in methods.items():
        for field, wrongs in fields.items():
            for wrong in wrongs:
                exc = server.error(method, {**valid, field: wrong})
                assert exc.code == -32602, (method, field, wrong, exc)
                assert field in str(exc.message), (method, field, exc.message)
                count("params: wrong type/value")
        for field in [f for f in valid if f in REQUIRED]:
            exc = server.error(method, {k: v for k, v in valid.items() if k != field})
            assert exc.code == -32602 and field in str(exc.message), (method, field, exc)
            count("params: missing required field")
        exc = server.error(method, {**valid, "bogusField": 1})
        assert exc.code == -32602 and "bogusField" in str(exc.message), (method, exc)
        count("params: unknown field")
        for params in ([1, 2], "text", 42):
            exc = server.error(method, params)
            assert exc.code == -32602, (method, params, exc)
            count("params: not an object")
        server.alive()


def test_params_property(world: World, server: Server) -> None:
    methods = _methods(_turn_id(world), uri_of(world.ws / "a.txt"))
    names = sorted(methods)

    @examples(60)
    @given(
        method=st.sampled_from(names),
        params=st.dictionaries(
            st.sampled_from(
                ["turnId", "sessionId", "scope", "mode", "paths", "uri", "side", "phase", "text"]
            )
            | st.text(max_size=10),
            junk | st.text(max_size=20) | st.just("\x00" * 5) | st.just("z" * 100_000),
            max_size=5,
        )
        | junk,
    )
    def prop(method: str, params: Any) -> None:
        count("params (hypothesis)")
        params = (
            {**params, "apply": False}
            if method == "rewind/restore" and isinstance(params, dict) and "apply" not in params
            else params
        )
        try:
            server.request(method, params)
        except JsonRpcException as exc:
            # A clear error: bad params, unknown turn, bad path, conflict, rewind error. Never an
            # internal error.
            assert exc.code in (-32602, -32001, -32002, -32003, -32000), exc
            assert "internal error" not in str(exc.message), exc.message
        world.untouched()

    prop()
    server.alive()


# --- transcripts ----------------------------------------------------------------------------------

transcript_line = st.one_of(
    st.builds(
        lambda kind, content, uid, parent: json.dumps(
            {
                "type": kind,
                "uuid": uid,
                "parentUuid": parent,
                "sessionId": "x",
                "timestamp": "2026-11-22T12:00:00Z",
                "message": {"role": "user", "content": content},
            }
        ),
        st.sampled_from(["user", "assistant", "summary", "file-history-snapshot", "brand-new"]),
        st.sampled_from(["first", "second"]) | junk,
        st.sampled_from(["u1", "u2", "u3"]) | junk,
        st.sampled_from(["u1", "u2", "u3", None]) | junk,
    ),
    junk.map(json.dumps),
    st.text(max_size=60),
    st.just('{"type": "user", "message": {"content": "first"'),  # truncated
    st.just("[" * 50_000),  # deeper than the JSON parser's recursion limit
    st.just(
        '{"type": "user", "uuid": "loop", "parentUuid": "loop", "message": {"content": "first"}}'
    ),
)


def test_transcript_lines_property(world: World, server: Server) -> None:
    """Damaged or unknown lines in the agent's transcript: the conversation fork and the code lens
    skip them (or fail with a clear error), never crash, never edit the original."""
    from rewind_ls.core.agents.claude.transcript import fork
    from rewind_ls.core.errors import RewindError

    transcript = world.agent.transcript
    original = transcript.read_bytes()
    turn = query(world.ws, world.home, "SELECT started_at FROM turns WHERE prompt = 'first'")[0][0]
    folder = transcript.parent
    probe = folder / "probe-session.jsonl"

    @examples(60)
    @given(lines=st.lists(transcript_line, max_size=8), keep=st.booleans())
    def prop(lines: list[str], keep: bool) -> None:
        count("transcript lines (hypothesis)")
        body = "\n".join(lines) + "\n"
        text = (original.decode() + body) if keep else body
        probe.write_text(text, encoding="utf-8", errors="surrogatepass")
        before = set(folder.iterdir())
        os.environ["CLAUDE_CONFIG_DIR"] = str(world.home / "claude")
        try:
            made = fork(str(probe), "first", turn)
        except RewindError:
            made = None
        finally:
            os.environ.pop("CLAUDE_CONFIG_DIR", None)
        if made is not None and not made.path:
            made = None  # the first prompt: nothing before it, so no session file (issue #24)
        if made is not None:
            for raw in Path(made.staged.publish()).read_text().splitlines():
                assert isinstance(json.loads(raw), dict)
            os.unlink(made.path)
        assert set(folder.iterdir()) == before  # no temporary left, the original not renamed
        uri = uri_of(transcript)
        server.run(_lens_roundtrip(server, uri, text))

    prop()
    assert transcript.read_bytes() == original
    probe.unlink()
    server.alive()


async def _lens_roundtrip(server: Server, uri: str, text: str) -> None:
    from lsprotocol import types

    client = server.client
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            types.TextDocumentItem(uri=uri, language_id="jsonl", version=1, text=text)
        )
    )
    lenses = await client.text_document_code_lens_async(
        types.CodeLensParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )
    client.text_document_did_close(
        types.DidCloseTextDocumentParams(types.TextDocumentIdentifier(uri=uri))
    )
    assert lenses is not None


def test_transcript_deep_line_in_fork_gives_lenses_and_fork(world: World, server: Server) -> None:
    """One line nested deeper than the JSON parser allows must not cost the whole transcript."""
    transcript = world.agent.transcript
    original = transcript.read_bytes()
    damaged = original + b"[" * 50_000 + b"\n"
    transcript.write_bytes(damaged)
    try:
        proc = cli(
            world.ws,
            world.home,
            *("rewind", "2", "--session", "hostile-session", "--scope", "conversation", "--yes"),
        )
        assert proc.returncode == 0, proc.stderr[-2000:]
        assert b"claude --resume" in proc.stdout
        count("transcript: line deeper than the parser's limit (fork)")

        async def lenses() -> Any:
            from lsprotocol import types

            uri = uri_of(transcript)
            server.client.text_document_did_open(
                types.DidOpenTextDocumentParams(
                    types.TextDocumentItem(
                        uri=uri, language_id="jsonl", version=1, text=damaged.decode()
                    )
                )
            )
            got = await server.client.text_document_code_lens_async(
                types.CodeLensParams(text_document=types.TextDocumentIdentifier(uri=uri))
            )
            server.client.text_document_did_close(
                types.DidCloseTextDocumentParams(types.TextDocumentIdentifier(uri=uri))
            )
            return got

        got = server.run(lenses())
        assert got and len(got) >= 3, got
        count("transcript: line deeper than the parser's limit (code lens)")
    finally:
        transcript.write_bytes(original)


def test_transcript_outside_projects_folder(world: World) -> None:
    outside = world.sentinel / "evil.jsonl"
    agent = FakeClaude(world.ws, world.home, session_id="evil-session", transcript_dir=world.base)
    agent.transcript = outside  # the payload claims a transcript outside ~/.claude/projects
    outside.write_text("")
    agent.turn("evil", {"a.txt": "evil\n"})  # (the fake agent itself appends to evil.jsonl)
    world.sentinel_digest = tree_digest(world.sentinel)
    proc = cli(
        world.ws,
        world.home,
        "rewind",
        "1",
        "--session",
        "evil-session",
        "--scope",
        "conversation",
        "--yes",
    )
    assert proc.returncode == 2, proc
    assert b"outside Claude Code's projects folder" in proc.stderr, proc.stderr
    world.untouched()
    assert [p.name for p in world.sentinel.iterdir() if p.suffix == ".jsonl"] == ["evil.jsonl"]
    count("transcript path outside the projects folder")


# --- path attacks at restore ---------------------------------------------------------------------


def test_restore_refuses_symlinked_parent_and_file(tmp_path: Path) -> None:
    """A folder (or file) the agent changed becomes a link to outside before the rewind: refused,
    nothing written through the link."""
    w = World(tmp_path)
    for name, make in (
        ("dir", lambda: (w.ws / "dir").symlink_to(w.sentinel / "sub")),
        ("a.txt", lambda: (w.ws / "a.txt").symlink_to(w.sentinel / "secret.txt")),
    ):
        target = w.ws / name
        saved = tmp_path / f"saved-{name}"
        os.rename(target, saved)
        make()
        w.sentinel_digest = tree_digest(w.sentinel)
        proc = cli(w.ws, w.home, "rewind", "1", "--yes", "--force")
        assert proc.returncode in (2, 3), proc
        assert b"link" in proc.stderr or b"outside" in proc.stderr, proc.stderr
        w.untouched()
        os.unlink(target)
        os.rename(saved, target)
        count(f"restore through a symlinked {'folder' if name == 'dir' else 'file'}")
    proc = cli(w.ws, w.home, "rewind", "1", "--yes")
    assert proc.returncode == 0, proc.stderr
    assert (w.ws / "dir" / "b.txt").read_text() == "b0\n"


def test_symlink_swapped_in_between_plan_and_apply(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from rewind_ls.core.errors import RewindError
    from rewind_ls.core.restore.apply_disk import apply_to_disk
    from rewind_ls.core.restore.plan import disk_reader, plan_rewind, resolve_turn
    from rewind_ls.core.restore.planner import select
    from rewind_ls.core.store import Store

    w = World(tmp_path)
    monkeypatch.setenv("REWIND_LS_HOME", str(w.home))
    for victim in ("dir", "dir/b.txt"):
        with Store.open(str(w.ws)) as store:
            plan = plan_rewind(
                store, resolve_turn(store, "1", w.agent.session_id), disk_reader(store.root)
            )
            assert {p.path for p in plan.changes()} == {"a.txt", "dir/b.txt"}
            real = w.ws / victim
            saved = tmp_path / "saved"
            os.rename(real, saved)
            real.symlink_to(w.sentinel / ("sub" if victim == "dir" else "secret.txt"))
            w.sentinel_digest = tree_digest(w.sentinel)
            before_a = (w.ws / "a.txt").read_bytes()
            with pytest.raises(RewindError) as info:
                apply_to_disk(store, plan, select(plan, False, False))
            assert (
                "link" in str(info.value)
                or "outside" in str(info.value)
                or "changed" in str(info.value)
            ), info.value
            w.untouched()
            assert (w.ws / "a.txt").read_bytes() == before_a  # all or nothing
            os.unlink(real)
            os.rename(saved, real)
            count(f"symlink swapped in between plan and apply ({victim})")


def test_names_with_newlines(tmp_path: Path) -> None:
    w = World(tmp_path)
    nl = w.ws / "new\nline.txt"
    nl.write_text("nl0\n")
    w.agent.turn("odd names", {"new\nline.txt": "nl1\n"})
    turns = cli(w.ws, w.home, "turns")
    assert turns.returncode == 0, turns.stderr
    assert b"new\\nline.txt" in turns.stdout  # shown escaped, on one line
    proc = cli(w.ws, w.home, "rewind", "3", "--yes")
    assert proc.returncode == 0, proc.stderr
    assert nl.read_text() == "nl0\n"
    w.untouched()
    count("capture and restore: name with a newline")


def test_invalid_utf8_name_refused_at_capture(tmp_path: Path) -> None:
    w = World(tmp_path)
    bad = os.path.join(os.fsencode(w.ws), b"bad\xffname.txt")
    payload = {
        **w.agent._base("PreToolUse"),
        "tool_name": "Write",
        "tool_input": {"file_path": os.fsdecode(bad), "content": "x"},
    }
    proc = subprocess.run(
        [sys.executable, "-m", "rewind_ls", "hook", "claude-code"],
        input=json.dumps(payload).encode("utf-8", "surrogatepass"),
        env=env_for(w.home),
        capture_output=True,
        timeout=60,
    )
    assert proc.returncode == 0 and b"UTF-8" in proc.stderr, proc.stderr
    w.untouched()
    count("capture: tool path with an invalid UTF-8 name")


def test_invalid_utf8_name_in_workspace_does_not_stop_recording(tmp_path: Path) -> None:
    w = World(tmp_path)
    bad = os.path.join(os.fsencode(w.ws), b"bad\xffname.txt")
    with open(bad, "wb") as f:
        f.write(b"bad0\n")
    w.agent.turn("after a bad name appeared", {"a.txt": "a9\n"})
    rows = query(
        w.ws, w.home, "SELECT number FROM turns WHERE prompt = ?", "after a bad name appeared"
    )
    assert rows == [(3,)], rows
    proc = cli(w.ws, w.home, "rewind", "3", "--yes")
    assert proc.returncode == 0, proc.stderr
    with open(bad, "rb") as f:
        assert f.read() == b"bad0\n"  # never recorded, never touched
