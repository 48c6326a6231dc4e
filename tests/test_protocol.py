"""The protocol models are the source of truth: schemas/ must match them, and the server's position
math must agree with an independent implementation on the text that breaks editors."""

from __future__ import annotations

import subprocess
import sys

from hypothesis import given, settings
from hypothesis import strategies as st

from rewind_ls.server.edits import decode_text, encode_buffer, minimal_edit
from tests.support.lsp_client import apply_edits


def test_schemas_match_models() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "rewind_ls.server.schemas", "--check"],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


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
