"""The mkdocs hook (mkdocs.yml `hooks:`): adds what the build makes instead of what git holds.

- The reference pages (`reference.py`): the CLI from its parser, the environment variables, the
  exit codes, the `rewind/*` protocol from `schemas/`.
- The pictures: the screenshots the real-editor tests save (`tests/editors`, VS Code in
  code-server + Chromium) and the CLI picker's SVG (`tests/test_docs_pictures.py`, rendered from
  tmux), all in `test-artifacts/` (not in git), published as `img/NAME`. A page names one as
  `img/NAME`; when the tests have not run, a one-pixel stand-in keeps the build going and the log
  says so, unless `REWIND_DOCS_SCREENSHOTS=require` (CI, after the tests): then a missing picture
  fails the build.
"""

from __future__ import annotations

import logging
import os
import re
import struct
import sys
import zlib
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import reference
from mkdocs.exceptions import PluginError
from mkdocs.structure.files import File, Files

REPO = Path(__file__).resolve().parents[2]
ARTIFACTS = Path(os.environ.get("REWIND_DOCS_ARTIFACTS", REPO / "test-artifacts"))
PICTURE = re.compile(r"\]\((?:\.\./)*img/([\w.-]+\.(?:png|svg))\)")
log = logging.getLogger("mkdocs.hooks.rewind")


def pictures_named(docs_dir: Path) -> set[str]:
    """Every `img/NAME` a page of `docs_dir` shows."""
    return {m.group(1) for md in docs_dir.rglob("*.md") for m in PICTURE.finditer(md.read_text())}


def _blank_png() -> bytes:
    """A 1x1 transparent PNG: the stand-in of a picture the tests have not made here."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    header = struct.pack(">IIBBBBB", 1, 1, 8, 6, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(b"\x00\x00\x00\x00\x00"))
        + chunk(b"IEND", b"")
    )


def on_files(files: Files, config: Any) -> Files:
    for rel, make in reference.PAGES.items():
        files.append(File.generated(config, rel, content=make()))
    required = os.environ.get("REWIND_DOCS_SCREENSHOTS") == "require"
    missing = []
    for name in sorted(pictures_named(Path(config["docs_dir"]))):
        made = ARTIFACTS / name
        if made.is_file():
            files.append(File.generated(config, f"img/{name}", abs_src_path=str(made)))
            continue
        missing.append(name)
        stand_in = (
            _blank_png() if name.endswith(".png") else b"<svg xmlns='http://www.w3.org/2000/svg'/>"
        )
        files.append(File.generated(config, f"img/{name}", content=stand_in))
    if missing:
        message = (
            f"{len(missing)} picture(s) not in {ARTIFACTS} ({', '.join(missing)}): the tests that "
            "make them have not run here (tests/editors/test_vscode_*.py, tests/test_docs_pictures.py)"
        )
        if required:
            raise PluginError(message)
        log.info(message + "; blank stand-ins used")
    return files
