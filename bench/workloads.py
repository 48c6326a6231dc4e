"""Workloads the benchmark builds for itself: a JavaScript-monorepo-like tree, a 1 MB text file.

Content is generated from a seeded corpus of JS-like lines, sliced at random offsets, so files are
distinct (no free deduplication), compress like source code, and the same seed gives the same tree.
"""

from __future__ import annotations

import os
import random

_WORDS = [
    "const",
    "let",
    "var",
    "function",
    "return",
    "import",
    "export",
    "default",
    "from",
    "async",
    "await",
    "if",
    "else",
    "for",
    "while",
    "switch",
    "case",
    "break",
    "new",
    "this",
    "class",
    "extends",
    "super",
    "props",
    "state",
    "useEffect",
    "useState",
    "render",
    "component",
    "value",
    "index",
    "item",
    "items",
    "list",
    "map",
    "filter",
    "reduce",
    "length",
    "push",
    "key",
    "id",
    "name",
    "type",
    "string",
    "number",
    "boolean",
    "null",
    "undefined",
    "true",
    "false",
    "error",
    "result",
    "data",
    "response",
    "request",
    "config",
    "options",
    "handler",
    "callback",
    "promise",
    "then",
    "catch",
    "finally",
    "console",
    "log",
    "warn",
    "module",
    "require",
]


def _corpus(rng: random.Random, size: int) -> bytes:
    lines: list[str] = []
    total = 0
    while total < size:
        indent = "  " * rng.randint(0, 4)
        words = " ".join(rng.choice(_WORDS) for _ in range(rng.randint(2, 9)))
        ident = f"{rng.choice(_WORDS)}{rng.randint(0, 99999)}"
        line = f"{indent}{words} {ident}({rng.randint(0, 999)});\n"
        lines.append(line)
        total += len(line)
    return "".join(lines).encode()


def _size(rng: random.Random) -> int:
    """Log-normal around 2 KB with a long tail (a few files of hundreds of KB), like a JS repo."""
    return max(16, min(int(rng.lognormvariate(7.6, 1.1)), 600_000))


_EXTS = (".ts", ".tsx", ".js", ".json", ".md", ".css", ".ts", ".tsx", ".js", ".ts")


def make_tree(root: str, files: int, ignored: int, seed: int = 1) -> list[str]:
    """Write `files` tracked files and `ignored` files under node_modules/ (ignored by .gitignore).
    Returns the tracked files' relative paths (POSIX)."""
    rng = random.Random(seed)
    corpus = _corpus(rng, 8 << 20)
    span = len(corpus) - 700_000
    os.makedirs(root, exist_ok=True)
    with open(os.path.join(root, ".gitignore"), "w") as f:
        f.write("node_modules/\ndist/\n*.log\n")
    rels: list[str] = [".gitignore"]
    made_dirs: set[str] = set()

    def write(rel: str, data: bytes) -> None:
        d = os.path.dirname(rel)
        if d not in made_dirs:
            os.makedirs(os.path.join(root, d), exist_ok=True)
            made_dirs.add(d)
        with open(os.path.join(root, rel), "wb") as fh:
            fh.write(data)

    def content(n: int) -> bytes:
        if rng.random() < 0.03:  # icons, fonts: incompressible
            return rng.randbytes(min(n, 40_000))
        start = rng.randrange(span)
        return corpus[start : start + n]

    packages = max(1, files // 300)
    subdirs = ("src", "src/components", "src/utils", "src/hooks", "test", "docs", "styles")
    for i in range(files - 1):
        pkg = f"packages/pkg-{i % packages:03d}"
        sub = subdirs[(i // packages) % len(subdirs)]
        rel = f"{pkg}/{sub}/file-{i:05d}{_EXTS[i % len(_EXTS)]}"
        write(rel, content(_size(rng)))
        rels.append(rel)
    mods = max(1, ignored // 50)
    for i in range(ignored):
        write(f"node_modules/mod-{i % mods:03d}/lib/f{i:05d}.js", content(_size(rng) // 2 + 16))
    return rels


def make_big_text(path: str, size: int = 1 << 20, seed: int = 2) -> None:
    rng = random.Random(seed)
    with open(path, "wb") as f:
        f.write(_corpus(rng, size)[:size])


def change_line(path: str, turn: int) -> None:
    """Rewrite one line near the middle of a text file (an agent's one-line edit)."""
    with open(path, "rb") as f:
        lines = f.read().split(b"\n")
    i = (len(lines) // 2 + turn * 37) % len(lines)
    lines[i] = f"  const changed{turn} = {turn * 7};".encode()
    with open(path, "wb") as f:
        f.write(b"\n".join(lines))
