"""The invariants of ARCHITECTURE.md, checked on the real modules."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FORBIDDEN_IN_CORE = ("rewind_ls.server", "rewind_ls.cli", "pygls", "lsprotocol", "pydantic")


def _imports(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


def test_core_imports_nothing_above_it() -> None:
    for path in sorted((ROOT / "rewind_ls" / "core").glob("*.py")):
        bad = [n for n in _imports(path) if n.startswith(FORBIDDEN_IN_CORE)]
        assert not bad, f"{path.name} imports {bad}"


def test_only_lsp_module_imports_pygls() -> None:
    for path in sorted((ROOT / "rewind_ls").rglob("*.py")):
        if path.name == "lsp.py":
            continue
        bad = [n for n in _imports(path) if n.startswith(("pygls", "lsprotocol"))]
        assert not bad, f"{path.relative_to(ROOT)} imports {bad}"


def test_hook_process_loads_only_stdlib_and_core(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("x\n")
    probe = (
        "import sys, io, json\n"
        "import rewind_ls.cli\n"
        "from rewind_ls.core.claude_hook import run\n"
        "for event, extra in [('UserPromptSubmit', {'prompt': 'p'}),\n"
        "    ('PreToolUse', {'tool_name': 'Write', 'tool_input': {'file_path': 'a.txt'}}),\n"
        "    ('PostToolUse', {'tool_name': 'Write', 'tool_input': {'file_path': 'a.txt'}}),\n"
        "    ('PostToolUse', {'tool_name': 'Bash', 'tool_input': {'command': 'true'}}),\n"
        "    ('Stop', {})]:\n"
        "    payload = {'session_id': 's', 'cwd': sys.argv[1], 'hook_event_name': event, **extra}\n"
        "    assert run('claude-code', stdin=io.BytesIO(json.dumps(payload).encode())) == 0\n"
        "patch = {'command': '*** Begin Patch\\n*** Update File: a.txt\\n*** End Patch\\n'}\n"
        "for event, extra in [('UserPromptSubmit', {'prompt': 'p'}),\n"
        "    ('PreToolUse', {'tool_name': 'apply_patch', 'tool_input': patch}),\n"
        "    ('PostToolUse', {'tool_name': 'apply_patch', 'tool_input': patch}),\n"
        "    ('Stop', {})]:\n"
        "    payload = {'session_id': 'c', 'turn_id': 't', 'cwd': sys.argv[1],\n"
        "               'hook_event_name': event, **extra}\n"
        "    assert run('codex', stdin=io.BytesIO(json.dumps(payload).encode())) == 0\n"
        "print(json.dumps(sorted(sys.modules)))\n"
    )
    env = {**os.environ, "REWIND_LS_HOME": str(tmp_path / "home")}
    proc = subprocess.run(
        [sys.executable, "-c", probe, str(ws)], capture_output=True, text=True, env=env, cwd=ROOT
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == "", proc.stderr  # every event recorded without complaint
    loaded = json.loads(proc.stdout.strip().splitlines()[-1])
    ours = [m for m in loaded if m.startswith("rewind_ls")]
    assert all(
        m == "rewind_ls" or m.startswith(("rewind_ls.core", "rewind_ls.cli")) for m in ours
    ), ours
    assert "rewind_ls.cli.app" not in loaded  # argparse path not taken
    heavy = [
        m
        for m in loaded
        if m.split(".")[0]
        in (
            "pygls",
            "lsprotocol",
            "pydantic",
            "attrs",
            "cattrs",
            "argparse",
            "dataclasses",
            "prompt_toolkit",
            "inspect",
        )
    ]
    assert not heavy, heavy
