"""Unsaved buffers a running rewind-ls language server knows of, told to the other processes that
restore (the CLI, `rewind-ls mcp`): each language server keeps a small file in the workspace's store
folder, `buffers/<pid>.json`, naming the open documents whose text differs from the disk (with the
sha256 of the text each holds), rewritten shortly after the buffers change and removed when none
is unsaved or the server ends. A restore that would write such a path is a conflict (forcible,
undoable; `editor_traces.mark_unsaved_elsewhere`): the disk would move under the person's unsaved
text. A file left by a server that died is ignored (its pid is gone) and removed.

What this cannot know: an editor with no rewind-ls language server and no trace of its own (VS Code
without the extension keeps unsaved text in its own backups only), and what the person typed in
the last moments before the restore (the trace follows the buffers after a short pause)."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping

from rewind_ls.core.fs.disk_sync import process_alive

FOLDER = "buffers"


def _trace(store_dir: str, pid: int) -> str:
    return os.path.join(store_dir, FOLDER, f"{pid}.json")


def write_trace(store_dir: str, dirty: Mapping[str, str]) -> None:
    """This process's unsaved buffers (workspace-relative path -> sha256 of the buffer's bytes);
    the trace is removed when there are none."""
    path = _trace(store_dir, os.getpid())
    if not dirty:
        remove_trace(store_dir)
        return
    os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
    tmp = f"{path}.tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump({"pid": os.getpid(), "paths": dict(dirty)}, f)
    os.replace(tmp, path)


def remove_trace(store_dir: str) -> None:
    try:
        os.unlink(_trace(store_dir, os.getpid()))
    except FileNotFoundError:
        pass


def unsaved_in_servers(store_dir: str) -> dict[str, int]:
    """Paths that other live language servers hold unsaved -> the server's pid."""
    folder = os.path.join(store_dir, FOLDER)
    try:
        names = os.listdir(folder)
    except OSError:
        return {}
    found: dict[str, int] = {}
    for name in names:
        stem, dot, ext = name.partition(".")
        if ext != "json" or not dot or not stem.isdigit() or int(stem) == os.getpid():
            continue
        pid = int(stem)
        path = os.path.join(folder, name)
        if not process_alive(pid):
            try:
                os.unlink(path)  # a server that died: its buffers went with it
            except OSError:
                pass
            continue
        try:
            with open(path, encoding="utf-8") as f:
                paths = json.load(f).get("paths") or {}
        except (OSError, ValueError, AttributeError):
            continue
        for rel in paths if isinstance(paths, dict) else ():
            found.setdefault(str(rel), pid)
    return found
