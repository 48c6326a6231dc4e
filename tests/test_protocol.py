"""The protocol models are the source of truth: schemas/ must match them, the CLI's --json and the
VS Code client's generated types follow them, core speaks snake_case only, and the server's position
math must agree with an independent implementation on the text that breaks editors.
(The server's answers are checked against the models in tests/test_server.py, `Session.call`.)"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from rewind_ls.core.history.timeline import list_sessions
from rewind_ls.core.history.versions import file_log
from rewind_ls.core.store import Store, gc
from rewind_ls.protocol import cli_output, methods, typescript
from rewind_ls.server.edits import decode_text, encode_buffer, minimal_edit
from tests.conftest import Cli
from tests.support.agent import FakeClaude
from tests.support.lsp_client import apply_edits
from tests.support.wire import check_shape

ROOT = Path(__file__).resolve().parents[1]
VSCODE = ROOT / "editors" / "vscode"
CAMEL = re.compile(r"[a-z][A-Z]")


def test_schemas_match_models() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "rewind_ls.protocol.schemas", "--check"],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def _keys(data: Any) -> set[str]:
    """Every object key in a JSON-like value, however deep."""
    if isinstance(data, dict):
        return set(data).union(*(_keys(v) for v in data.values()))
    if isinstance(data, list):
        return set().union(*(_keys(v) for v in data))
    return set()


def _conflicted(ws: Path, agent: FakeClaude) -> None:
    """Two turns, then the person's edit over the first turn's lines: reverting turn 1 conflicts."""
    (ws / "a.txt").write_text("zero\n")
    agent.turn("one", {"a.txt": "one\n"})
    agent.turn("two", {"b.txt": "b\n"})
    (ws / "a.txt").write_text("mine\n")


def test_core_speaks_snake_case(
    ws: Path, agent: FakeClaude, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """camelCase starts at the edges (server, --json): core's read models have none of it."""
    _conflicted(ws, agent)
    monkeypatch.setenv("REWIND_LS_HOME", str(home))
    with Store.open(str(ws), create=False) as store:
        outputs = [list_sessions(store), file_log(store, "a.txt"), gc.run(store, dry_run=True)]
    for out in outputs:
        camel = sorted(k for k in _keys(out) if CAMEL.search(k))
        assert not camel, camel


def test_cli_json_is_the_protocol_shapes(ws: Path, agent: FakeClaude, cli: Cli) -> None:
    _conflicted(ws, agent)
    turns = json.loads(cli("turns", "--all", "--json").stdout)
    check_shape(cli_output.TurnsOutput, turns)
    assert turns["sessions"][0]["turns"][0]["startedAt"].endswith("Z")
    log = json.loads(cli("log", "a.txt", "--json").stdout)
    check_shape(cli_output.LogOutput, log)
    assert [v["sessionKind"] for v in log["versions"]][-1] is None  # the version first seen
    check_shape(cli_output.GcOutput, json.loads(cli("gc", "--dry-run", "--json").stdout))
    check_shape(
        cli_output.DiffOutput, json.loads(cli("diff", "1", "--json").stdout), every_field=False
    )
    doctor = json.loads(cli("doctor", "--json", ok=False).stdout)
    check_shape(cli_output.DoctorOutput, doctor, every_field=False)
    assert "storeDir" in doctor
    proc = cli("revert", "1", "--dry-run", "--json", ok=False)
    assert proc.returncode == 3, proc.stderr
    planned = json.loads(proc.stdout)
    check_shape(cli_output.RestoreOutput, planned, every_field=False)
    assert planned["status"] == "planned"
    conflicted = [f for f in planned["files"] if f["conflict"]]
    assert [f["path"] for f in conflicted] == ["a.txt"]
    hunk = conflicted[0]["conflict"]["hunks"][0]
    assert (hunk["baseStart"], hunk["baseEnd"], hunk["ours"], hunk["theirs"]) == (
        0,
        1,
        ["mine\n"],
        ["zero\n"],
    )
    check_shape(cli_output.ScanOutput, json.loads(cli("scan", "--json").stdout))


def test_wire_checks_and_camelizes_without_adding_defaults() -> None:
    out = cli_output.wire(cli_output.GcOutput, {**_GC, "dry_run": True})
    assert out == {
        "turnsDropped": 1,
        "blobsDropped": 2,
        "bytesBefore": 3,
        "bytesAfter": 4,
        "dryRun": True,
    }
    with pytest.raises(ValidationError, match="typo"):
        cli_output.wire(cli_output.GcOutput, {**_GC, "dry_run": True, "typo": 1})
    session = {"session_id": "s", "transcript": "t.jsonl", "turns": 1, "changes": 2}
    assert cli_output.wire(cli_output.ImportedSession, session)["sessionId"] == "s"
    check = cli_output.wire(cli_output.DoctorCheck, {"name": "n", "ok": True, "detail": "d"})
    assert check == {"name": "n", "ok": True, "detail": "d"}  # `sessions` only when core sets it


_GC = {"turns_dropped": 1, "blobs_dropped": 2, "bytes_before": 3, "bytes_after": 4}


def test_typescript_types_are_the_models() -> None:
    ts = typescript.render()
    for method, (params, result) in methods.METHODS.items():
        for model in (params, result):
            if model is None:
                continue
            assert f"export interface {model.__name__} {{" in ts, model.__name__
            for name, field in model.model_fields.items():
                assert f"  {field.alias or name}" in ts, (model.__name__, name)
        assert f"'{method}'," in ts
    assert "  currentSessionId: string | null;" in ts
    assert "  sessionId?: string | null;" in ts  # params: optional when it has a default
    assert "export type Scope = 'code' | 'conversation' | 'both';" in ts


# camelCase names the Neovim client sends that are not protocol fields: initializationOptions, which
# server/handlers/lifecycle.py reads.
LUA_INIT_OPTIONS = {"closedFiles", "didChangeTurns", "restoreUnsaved"}


def test_neovim_client_uses_only_fields_the_models_define() -> None:
    """No type checker for Lua here (lua-language-server is not in the registries we install from):
    every camelCase field the Lua client reads (`x.fooBar`) or builds (`fooBar = ...`) must be a field
    of a protocol model, so a renamed or misspelt field fails here as it fails tsc for VS Code."""
    aliases = {f.alias or n for m in typescript.models() for n, f in m.model_fields.items()}
    used: dict[str, str] = {}
    for path in sorted((ROOT / "editors" / "nvim").rglob("*.lua")):
        code = "\n".join(line.split("--", 1)[0] for line in path.read_text().splitlines())
        # The server's command ids ('rewind.revertHunk') are names, not fields.
        code = re.sub(r"'rewind\.\w+'", "''", code)
        for name in re.findall(r"\.([a-z]+[A-Z]\w*)\b", code):
            used[name] = path.name
        for name in re.findall(r"\b([a-z]+[A-Z]\w*)\s*=(?!=)", code):
            used[name] = path.name
    assert {"currentSessionId", "turnId", "resumeCommand"} <= set(used)  # the scan finds them
    unknown = {n: f for n, f in used.items() if n not in aliases | LUA_INIT_OPTIONS}
    assert not unknown, f"not fields of any protocol model: {unknown}"


@pytest.mark.editor
def test_vscode_client_compiles_only_against_fields_the_models_define(tmp_path: Path) -> None:
    """The client and its unit tests compile against the generated types; a client that reads a
    field the models do not define does not."""
    tsc = VSCODE / "node_modules" / ".bin" / "tsc"
    if not tsc.exists():
        pytest.fail("editors/vscode/node_modules missing: run scripts/install-vscode-env.sh")
    assert typescript.main([]) == 0
    # The whole client (tsconfig.test.json, its unit tests, runs in .ci/run after the same step).
    proc = subprocess.run(
        [str(tsc), "--noEmit", "-p", "tsconfig.json"], cwd=VSCODE, capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (tmp_path / "probe.ts").write_text(
        f"import type {{ ListTurnsResult }} from '{VSCODE / 'src' / 'protocol'}';\n"
        "export const f = (r: ListTurnsResult): string => r.sessions[0].turns[0].sessionID;\n"
    )
    options = {"strict": True, "noEmit": True, "module": "node16", "types": []}
    config = {"compilerOptions": options, "files": ["probe.ts"]}
    (tmp_path / "tsconfig.json").write_text(json.dumps(config))
    proc = subprocess.run(
        [str(tsc), "-p", str(tmp_path)], cwd=VSCODE, capture_output=True, text=True
    )
    assert proc.returncode != 0
    assert "Property 'sessionID' does not exist on type 'TurnInfo'" in proc.stdout, proc.stdout


class _Pos:
    def __init__(self, d: dict[str, int]) -> None:
        self.line = d["line"]
        self.character = d["character"]


class _Range:
    def __init__(self, d: dict[str, dict[str, int]]) -> None:
        self.start = _Pos(d["start"])
        self.end = _Pos(d["end"])


class _Edit:
    def __init__(self, d: dict[str, object]) -> None:
        self.range = _Range(d["range"])  # type: ignore[arg-type]
        self.new_text = d["newText"]


pieces = st.sampled_from(
    ["a", "b", "\n", "\r\n", "\r", "é", "\U0001f600", "\u4e2d", " ", "\u2028", "\x0c"]
)
texts = st.lists(pieces, max_size=30).map("".join)


@settings(max_examples=400, deadline=None)
@given(old=texts, new=texts, encoding=st.sampled_from(["utf-16", "utf-8", "utf-32"]))
def test_minimal_edit_applies_exactly(old: str, new: str, encoding: str) -> None:
    edit = minimal_edit(old, new, encoding)
    if old == new:
        assert edit is None
        return
    assert edit is not None
    assert apply_edits(old, [_Edit(edit)], encoding) == new


def test_edit_never_splits_crlf() -> None:
    edit = minimal_edit("a\r\nb", "a\rb", "utf-16")
    assert edit is not None
    start, end = edit["range"]["start"], edit["range"]["end"]
    assert (start["line"], start["character"]) == (0, 1)
    assert (end["line"], end["character"]) == (1, 0)


def test_buffer_bytes_keep_the_bom_of_the_file() -> None:
    disk = b"\xef\xbb\xbfhello\n"
    text = decode_text(disk)
    assert text == "hello\n"
    assert encode_buffer(text, disk) == disk
    assert decode_text(b"\xff\xfeh\x00") is None  # UTF-16: not a text edit
    assert decode_text("caf\xe9".encode("latin-1")) is None
