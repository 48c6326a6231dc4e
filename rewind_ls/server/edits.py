"""Text, positions and WorkspaceEdit JSON. Pure functions: no pygls, no store.

A restore edit replaces only the region that differs (common prefix and suffix kept), so cursors and
the editor's undo history stay sensible, and positions are computed in the negotiated encoding:
UTF-16 code units by default (an astral character counts 2), UTF-8 bytes, or UTF-32 code points.
A range never ends between the CR and LF of a CRLF line break.
"""

from __future__ import annotations

from typing import Any

UTF8_BOM = b"\xef\xbb\xbf"


def decode_text(data: bytes) -> str | None:
    """The text an editor shows for `data`, or None when it is not UTF-8 (binary, Latin-1, UTF-16...):
    such files are written by the server, never sent as text edits. A UTF-8 BOM is not part of the text."""
    if b"\x00" in data[:8192]:
        return None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    return text[1:] if text.startswith("\ufeff") else text


def encode_buffer(text: str, disk: bytes | None) -> bytes:
    """The bytes a buffer's text stands for: UTF-8, with the BOM the file on disk has."""
    body = text.encode("utf-8", "surrogatepass")
    if disk is not None and disk.startswith(UTF8_BOM) and not text.startswith("\ufeff"):
        return UTF8_BOM + body
    return body


def units(text: str, encoding: str) -> int:
    if encoding == "utf-8":
        return len(text.encode("utf-8", "surrogatepass"))
    if encoding == "utf-32":
        return len(text)
    return len(text) + sum(1 for c in text if ord(c) > 0xFFFF)


def position_at(text: str, offset: int, encoding: str) -> dict[str, int]:
    """LSP position of `offset` (a str index) in `text`; line breaks are \\n, \\r\\n and \\r."""
    head = text[:offset]
    line = head.count("\n") + head.count("\r") - head.count("\r\n")
    start = max(head.rfind("\n"), head.rfind("\r")) + 1
    return {"line": line, "character": units(head[start:], encoding)}


def _common_prefix(a: str, b: str) -> int:
    lo, hi = 0, min(len(a), len(b))
    while lo < hi:  # binary search with C-level slice comparison: fast on megabyte files
        mid = (lo + hi + 1) // 2
        if a[:mid] == b[:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def _common_suffix(a: str, b: str, limit: int) -> int:
    lo, hi = 0, limit
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[len(a) - mid :] == b[len(b) - mid :]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def minimal_edit(old: str, new: str, encoding: str) -> dict[str, Any] | None:
    """One TextEdit (LSP JSON) turning `old` into `new`, or None when they are equal."""
    if old == new:
        return None
    p = _common_prefix(old, new)
    s = _common_suffix(old, new, min(len(old), len(new)) - p)
    # Never split a CRLF: move the start before a CR whose LF is not kept in common.
    if p > 0 and old[p - 1] == "\r":
        p -= 1
        s = min(s, min(len(old), len(new)) - p)
    end = len(old) - s
    if s > 0 and end > 0 and old[end - 1] == "\r" and old[end] == "\n":
        s -= 1
        end += 1
    return {
        "range": {"start": position_at(old, p, encoding), "end": position_at(old, end, encoding)},
        "newText": new[p : len(new) - s],
    }


def text_document_edit(uri: str, version: int | None, edit: dict[str, Any]) -> dict[str, Any]:
    return {"textDocument": {"uri": uri, "version": version}, "edits": [edit]}


def create_file(uri: str) -> dict[str, Any]:
    return {"kind": "create", "uri": uri, "options": {"overwrite": False, "ignoreIfExists": True}}


def delete_file(uri: str) -> dict[str, Any]:
    return {"kind": "delete", "uri": uri, "options": {"ignoreIfNotExists": True}}
