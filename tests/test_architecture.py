"""The invariants of ARCHITECTURE.md, checked on the real modules."""

from __future__ import annotations

import ast
import json
import os
import re
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
    for path in sorted((ROOT / "rewind_ls" / "core").rglob("*.py")):
        bad = [n for n in _imports(path) if n.startswith(FORBIDDEN_IN_CORE)]
        assert not bad, f"{path.name} imports {bad}"


# The modules that speak LSP: the server object and its error path, the restore driver, the
# assembly and the handlers. The rest of server/ (service, routing, edits, review, ...) is plain
# Python over the core; the protocol and the CLI never see pygls.
LSP_MODULES = ("server/lsp.py", "server/restore_driver.py", "server/app.py", "server/handlers/")


def test_only_the_lsp_modules_import_pygls() -> None:
    for path in sorted((ROOT / "rewind_ls").rglob("*.py")):
        if path.relative_to(ROOT / "rewind_ls").as_posix().startswith(LSP_MODULES):
            continue
        bad = [n for n in _imports(path) if n.startswith(("pygls", "lsprotocol"))]
        assert not bad, f"{path.relative_to(ROOT)} imports {bad}"


def test_only_the_mcp_app_imports_the_mcp_sdk() -> None:
    """The MCP SDK (and its web stack) is loaded by `rewind-ls mcp` alone, through one module;
    `rewind_ls.mcp_server` is imported by nothing but the `mcp` command."""
    sdk = [
        f"{path.relative_to(ROOT)} imports {name}"
        for path in sorted((ROOT / "rewind_ls").rglob("*.py"))
        for name in sorted(_imports(path))
        if (name == "mcp" or name.startswith("mcp."))
        and path.relative_to(ROOT).as_posix() != "rewind_ls/mcp_server/app.py"
    ]
    assert not sdk, sdk
    users = [
        f"{path.relative_to(ROOT)} imports {name}"
        for path in sorted((ROOT / "rewind_ls").rglob("*.py"))
        if "mcp_server" not in path.parts and path.name != "mcp_cmd.py"
        for name in sorted(_imports(path))
        if name.startswith("rewind_ls.mcp_server")
    ]
    assert not users, users


def test_cli_imports_the_protocol_not_the_server() -> None:
    """The CLI's `--json` shapes come from `rewind_ls.protocol`; the server is imported only to run
    it (`rewind-ls serve`, lazily, through `server/main.py`)."""
    bad = [
        f"{path.relative_to(ROOT)} imports {name}"
        for path in sorted((ROOT / "rewind_ls" / "cli").rglob("*.py"))
        for name in sorted(_imports(path))
        if name.startswith("rewind_ls.server")
        and not (path.name == "serve_cmd.py" and name == "rewind_ls.server.main")
    ]
    assert not bad, bad


def test_hook_process_loads_only_stdlib_and_core(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("x\n")
    probe = (
        "import sys, io, json\n"
        "import rewind_ls.cli\n"
        "from rewind_ls.core.agents.hook_process import run\n"
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
            "mcp",
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


# Statement shapes, upper case as the store writes them: prose ("select a turn", "the
# transaction is rolled back", "UPDATE" alone in a sentence) matches none of them.
_SQL = re.compile(
    r"\bSELECT\b.+\bFROM\b"
    r"|\bINSERT\s+(OR\s+[A-Z]+\s+)?INTO\b"
    r"|\bUPDATE\s+\w+\s+SET\b"
    r"|\bDELETE\s+FROM\b"
    r"|\bPRAGMA\s+\w+"
    r"|\b(CREATE|DROP|ALTER)\s+(TABLE|INDEX|VIEW|TRIGGER)\b"
    r"|^\s*(BEGIN(\s+(IMMEDIATE|EXCLUSIVE|DEFERRED))?|COMMIT|ROLLBACK|VACUUM)\s*;?\s*$",
    re.DOTALL,
)
_SQL_CALLS = {"execute", "executemany", "executescript"}


def _docstrings(tree: ast.AST) -> set[int]:
    """ids of the docstring constants (prose, never run)."""
    out: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                out.add(id(body[0].value))
    return out


def _sql_uses(source: str, name: str) -> list[str]:
    tree = ast.parse(source)
    skip = _docstrings(tree)
    found: list[str] = []
    for node in ast.walk(tree):
        where = f"{name}:{getattr(node, 'lineno', '?')}"
        if isinstance(node, ast.Attribute) and node.attr == "conn":
            found.append(f"{where}: .conn")
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in _SQL_CALLS
        ):
            found.append(f"{where}: {node.func.attr}(")
        elif (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and id(node) not in skip
            and _SQL.search(node.value)
        ):
            found.append(f"{where}: SQL {node.value[:50]!r}")
    return found


def test_only_the_store_knows_sql() -> None:
    """The store is the only module that knows the schema: every other one asks it a question
    (a Store method), never the database."""
    store = ROOT / "rewind_ls" / "core" / "store"
    bad = [
        use
        for path in sorted((ROOT / "rewind_ls").rglob("*.py"))
        if store not in path.parents
        for use in _sql_uses(path.read_text(encoding="utf-8"), str(path.relative_to(ROOT)))
    ]
    assert not bad, "SQL outside core/store/ (add a Store method):\n" + "\n".join(bad)


def test_sql_check_sees_sql_and_spares_prose() -> None:
    """The rule above can fail: it finds each kind of use, and leaves prose alone."""
    code = (
        '"""A docstring may say SELECT id FROM turns."""\n'
        "def f(store, conn):\n"
        "    store.conn\n"
        "    conn.execute('x')\n"
        "    q = ('SELECT id FROM turns'\n"
        "         ' WHERE seq > ?')\n"
        "    u = f'UPDATE turns SET info = {q}'\n"
        "    p = 'PRAGMA data_version'\n"
        "    c = 'COMMIT'\n"
        "    prose = 'select a turn, then update the file; the insert point; deleted from disk'\n"
        "    msg = 'nothing to undo: no rewind, revert or undo has been applied here'\n"
    )
    uses = sorted(_sql_uses(code, "sample"))
    assert uses == [
        "sample:3: .conn",
        "sample:4: execute(",
        "sample:5: SQL 'SELECT id FROM turns WHERE seq > ?'",
        "sample:7: SQL 'UPDATE turns SET info = '",
        "sample:8: SQL 'PRAGMA data_version'",
        "sample:9: SQL 'COMMIT'",
    ], uses


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def _defined_private_names(tree: ast.AST) -> set[str]:
    """Underscore names a module defines: functions, classes, methods, assigned names and
    attributes (`self._x = ...`), slots."""
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            out.add(node.name)
        elif isinstance(node, ast.Name | ast.arg):
            out.add(node.id if isinstance(node, ast.Name) else node.arg)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            out.add(node.attr)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            out.add(node.value)  # __slots__ entries
    return {n for n in out if _private(n)}


def _private_uses(sources: dict[str, str]) -> list[str]:
    """`from <our module> import _x`, and `anything._x` (but `self._x` / `cls._x`) where `_x` is
    defined by another of our modules and not by the one using it."""
    trees = {name: ast.parse(src) for name, src in sources.items()}
    defined = {name: _defined_private_names(tree) for name, tree in trees.items()}
    found: list[str] = []
    for name, tree in trees.items():
        elsewhere = set().union(*(d for n, d in defined.items() if n != name)) - defined[name]
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (
                node.level or (node.module or "").startswith("rewind_ls")
            ):
                found.extend(
                    f"{name}: from {node.module} import {a.name}"
                    for a in node.names
                    if _private(a.name)
                )
            elif (
                isinstance(node, ast.Attribute)
                and node.attr in elsewhere
                and not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"))
            ):
                found.append(f"{name}: {ast.unparse(node)}")
    return found


def test_no_module_uses_another_modules_private_names() -> None:
    """A leading underscore means "this module's business": another module that needs the name
    gets a public one (tests may still reach in)."""
    sources = {
        str(p.relative_to(ROOT)): p.read_text(encoding="utf-8")
        for p in sorted((ROOT / "rewind_ls").rglob("*.py"))
    }
    bad = _private_uses(sources)
    assert not bad, "private names used across modules (make them public):\n" + "\n".join(bad)


def test_private_name_check_sees_leaks_and_spares_own_names() -> None:
    """The rule above can fail: imports and attribute uses of another module's underscore names
    are found; a module's own, `self._x`, and names no module of ours defines (`os._exit`) are not."""
    sources = {
        "a.py": "def _helper(): ...\nclass Store:\n    def _rebase(self): self._rebase()\n",
        "b.py": (
            "import os\n"
            "from rewind_ls.core.a import _helper\n"
            "from rewind_ls.core import a\n"
            "def f(store):\n"
            "    store._rebase()\n"
            "    a._helper()\n"
            "    os._exit(0)\n"
            "    _own()\n"
            "def _own(): ...\n"
        ),
    }
    assert sorted(_private_uses(sources)) == [
        "b.py: a._helper",
        "b.py: from rewind_ls.core.a import _helper",
        "b.py: store._rebase",
    ]


def test_only_the_store_imports_sqlite3() -> None:
    """Records out, never database rows: no module but the store imports `sqlite3` (its errors
    are re-exported by the store for the few callers that must catch them)."""
    store = ROOT / "rewind_ls" / "core" / "store"
    bad = [
        str(path.relative_to(ROOT))
        for path in sorted((ROOT / "rewind_ls").rglob("*.py"))
        if store not in path.parents and any(n.split(".")[0] == "sqlite3" for n in _imports(path))
    ]
    assert not bad, f"sqlite3 imported outside core/store/: {bad}"


def test_one_fault_hook() -> None:
    """The crash tests' `REWIND_LS_FAULT` hook is read in one module (core/fs/faults.py)."""
    bad = [
        str(path.relative_to(ROOT))
        for path in sorted((ROOT / "rewind_ls").rglob("*.py"))
        # environment.py lists every variable for the docs; it reads none.
        if path.name not in ("faults.py", "environment.py")
        and '"REWIND_LS_FAULT"' in path.read_text(encoding="utf-8")
    ]
    assert not bad, f"REWIND_LS_FAULT read outside core/fs/faults.py: {bad}"


# The layers, lowest first: a module imports modules of its own layer or of layers below, never
# above (ARCHITECTURE.md, "Layers"). A module belongs to the first layer whose prefix names it.
LAYERS: list[tuple[str, tuple[str, ...]]] = [
    ("base", ("rewind_ls", "rewind_ls.core", "rewind_ls.core.model", "rewind_ls.core.errors")),
    ("text", ("rewind_ls.core.text",)),
    ("fs", ("rewind_ls.core.fs",)),
    ("store", ("rewind_ls.core.store",)),
    ("capture", ("rewind_ls.core.capture",)),
    ("restore", ("rewind_ls.core.restore",)),
    ("history", ("rewind_ls.core.history",)),
    ("agents", ("rewind_ls.core.agents",)),
    ("conversation", ("rewind_ls.core.conversation",)),
    ("protocol", ("rewind_ls.protocol",)),
    ("server", ("rewind_ls.server",)),
    ("mcp", ("rewind_ls.mcp_server",)),
    ("cli", ("rewind_ls.cli",)),
    ("entry", ("rewind_ls.__main__",)),
]
MAX_FILE_LINES = 600
MAX_CLASS_LINES = 400


def _modules() -> dict[str, Path]:
    out: dict[str, Path] = {}
    for path in sorted((ROOT / "rewind_ls").rglob("*.py")):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def _import_graph() -> dict[str, set[str]]:
    """Module -> the modules of ours it imports, anywhere in it (function-local imports count:
    they hide a dependency from the import block, they do not remove it)."""
    mods = _modules()

    def resolve(name: str) -> str | None:
        while name and name not in mods:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = {m: set() for m in mods}
    for mod, path in mods.items():
        package = mod if path.name == "__init__.py" else mod.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    anchor = package
                    for _ in range(node.level - 1):
                        anchor = anchor.rpartition(".")[0]
                    base = f"{anchor}.{base}" if base else anchor
                targets = [base] + [f"{base}.{a.name}" for a in node.names]
            for target in targets:
                found = resolve(target) if target.startswith("rewind_ls") else None
                if found and found != mod:
                    graph[mod].add(found)
    return graph


def _layer(module: str) -> int:
    best = (-1, 0)
    for rank, (_, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > best[1]:
                best = (rank, len(prefix))
    assert best[0] >= 0, f"{module} is in no layer: add it to LAYERS"
    return best[0]


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_no_import_cycles() -> None:
    cycles = _cycles(_import_graph())
    assert not cycles, "import cycles (function-local imports count):\n" + "\n".join(
        " <-> ".join(c) for c in cycles
    )


def test_cycle_check_finds_a_cycle() -> None:
    """The rule above can fail: a loop through three modules is found, a chain is not."""
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert _cycles(graph) == [["a", "b", "c"]]


def test_layers_import_downward_only() -> None:
    graph = _import_graph()
    bad = [
        f"{mod} ({LAYERS[_layer(mod)][0]}) imports {dep} ({LAYERS[_layer(dep)][0]})"
        for mod, deps in sorted(graph.items())
        for dep in sorted(deps)
        if _layer(dep) > _layer(mod)
    ]
    assert not bad, "imports against the layers:\n" + "\n".join(bad)


def test_core_top_level_holds_only_the_model_and_the_errors() -> None:
    core = ROOT / "rewind_ls" / "core"
    loose = sorted(p.name for p in core.glob("*.py"))
    assert loose == ["__init__.py", "errors.py", "model.py"], loose
    undocumented = [
        str(init.relative_to(ROOT))
        for init in sorted(core.rglob("__init__.py"))
        if not ast.get_docstring(ast.parse(init.read_text(encoding="utf-8")))
    ]
    assert not undocumented, f"packages without a docstring saying their job: {undocumented}"


def test_no_file_or_class_too_long() -> None:
    long_files = []
    long_classes = []
    for mod, path in _modules().items():
        text = path.read_text(encoding="utf-8")
        if text.count("\n") > MAX_FILE_LINES:
            long_files.append(f"{mod}: {text.count(chr(10))} lines")
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.ClassDef) and node.end_lineno is not None:
                size = node.end_lineno - node.lineno + 1
                if size > MAX_CLASS_LINES:
                    long_classes.append(f"{mod}.{node.name}: {size} lines")
    assert not long_files and not long_classes, (long_files, long_classes)
