"""What the editor has open, seen from the store's side: a reader that prefers buffers to disk.

A document is evidence of what the editor holds, never of what is on disk: editors keep documents of
files that are gone (VS Code keeps those a diff view showed and those a restore deleted, with no
`didClose`). Over a missing file, a document that still shows the file's last recorded content is
such a leftover and the path reads as absent; one whose text differs is unsaved text and is read.

The store is touched from one worker thread only (SQLite connections are not shared across threads);
the open documents are snapshotted on the event loop and handed over as plain data.
"""

from __future__ import annotations

import os
from collections.abc import Callable

from rewind_ls.core.capture.recorder import read_current
from rewind_ls.core.fs.paths import from_uri
from rewind_ls.core.restore.plan import Reader
from rewind_ls.core.store import FILE, Version, digest
from rewind_ls.server.edits import UTF8_BOM, decode_text, encode_buffer


class OpenDoc:
    __slots__ = ("text", "uri", "version")

    def __init__(self, uri: str, text: str, version: int | None) -> None:
        self.uri = uri
        self.text = text
        self.version = version


def open_docs_by_path(root: str, docs: dict[str, OpenDoc]) -> dict[str, OpenDoc]:
    """Open documents keyed by workspace-relative path (URIs differ in escaping between clients)."""
    out: dict[str, OpenDoc] = {}
    root_real = os.path.realpath(root)
    for uri, doc in docs.items():
        try:
            path = os.path.realpath(from_uri(uri))
        except Exception:
            continue
        if path.startswith(root_real + os.sep):
            out[os.path.relpath(path, root_real).replace(os.sep, "/")] = doc
    return out


def buffer_reader(
    root: str,
    docs: dict[str, OpenDoc],
    last_on_disk: Callable[[str], Version | None] | None = None,
) -> Reader:
    """Current content of a path: the open buffer's text when the file is text, else the disk.
    `last_on_disk`: the path's last recorded content on disk (`history.versions.last_on_disk`),
    which tells a leftover document of a deleted file from unsaved text."""

    def read(rel: str) -> tuple[Version, bytes | None]:
        version, data, _ = read_current(root, rel)
        doc = docs.get(rel)
        if doc is None:
            return version, data
        if data is None and last_on_disk is not None and is_leftover(doc, last_on_disk(rel)):
            return version, data
        if data is not None and decode_text(data) is None:
            return version, data  # not a text file: the editor's view of it is not comparable
        body = encode_buffer(doc.text, data)
        mode = version.mode if version.kind == FILE else 0o644
        return Version(FILE, digest(body), mode, len(body)), body

    return read


def is_leftover(doc: OpenDoc, last: Version | None) -> bool:
    """Whether `doc`, open over a file that does not exist, only shows what the file last held
    (`last`, its last recorded content on disk): nothing the person typed."""
    if last is None or last.hash is None:
        return False
    body = encode_buffer(doc.text, None)
    return last.hash in (digest(body), digest(UTF8_BOM + body))
