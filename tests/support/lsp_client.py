"""A test LSP client that behaves like an editor: it keeps buffers for open documents, answers
`workspace/applyEdit` by applying the edit to those buffers (sending didChange like an editor) or to
real files on disk (closed documents), and reports what it did.

Positions are applied by this module's own code (UTF-16 via `str.encode('utf-16-le')`), independent
of the server's position math, so a bug there cannot cancel itself out.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote, urlparse

from lsprotocol import types
from pytest_lsp import LanguageClient, client_capabilities
from pytest_lsp.client import make_test_lsp_client


def uri_of(path: Path) -> str:
    return "file://" + quote(str(path.resolve()))


def path_of(uri: str) -> Path:
    return Path(unquote(urlparse(uri).path))


def _offset(text: str, pos: types.Position, encoding: str) -> int:
    # LSP line breaks are \n, \r\n and \r only (not the other Unicode separators splitlines knows).
    lines = re.findall(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$", text) or [""]
    if pos.line >= len(lines):
        return len(text)
    start = sum(len(line) for line in lines[: pos.line])
    line = lines[pos.line].rstrip("\r\n")
    if encoding == "utf-8":
        raw = line.encode("utf-8")[: pos.character]
        return start + len(raw.decode("utf-8"))
    if encoding == "utf-32":
        return start + min(pos.character, len(line))
    raw16 = line.encode("utf-16-le")[: pos.character * 2]
    return start + len(raw16.decode("utf-16-le"))


def apply_edits(text: str, edits: list[Any], encoding: str) -> str:
    spans = []
    for e in edits:
        a = _offset(text, e.range.start, encoding)
        b = _offset(text, e.range.end, encoding)
        spans.append((a, b, e.new_text))
    for a, b, new in sorted(spans, reverse=True):
        text = text[:a] + new + text[b:]
    return text


class Editor:
    """Buffers and disk, the way an editor holds them."""

    def __init__(self, client: LanguageClient, encoding: str = "utf-16") -> None:
        self.client = client
        self.encoding = encoding
        self.buffers: dict[str, list[Any]] = {}  # uri -> [text, version]
        self.edits: list[types.WorkspaceEdit] = []
        self.reject = False
        # VS Code keeps a document open after a DeleteFile (and those a diff view showed): the
        # server gets no didClose and holds a document of a file that no longer exists.
        self.keep_deleted = False

    def open(self, path: Path, text: str | None = None) -> str:
        uri = uri_of(path)
        content = text if text is not None else path.read_bytes().decode("utf-8")
        if content.startswith("\ufeff"):
            content = content[1:]
        self.buffers[uri] = [content, 1]
        self.client.text_document_did_open(
            types.DidOpenTextDocumentParams(
                types.TextDocumentItem(uri=uri, language_id="plaintext", version=1, text=content)
            )
        )
        return uri

    def type(self, path: Path, text: str) -> None:
        """The person edits the buffer (unsaved)."""
        uri = uri_of(path)
        buf = self.buffers[uri]
        buf[0], buf[1] = text, buf[1] + 1
        self.client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                types.VersionedTextDocumentIdentifier(uri=uri, version=buf[1]),
                [types.TextDocumentContentChangeWholeDocument(text=text)],
            )
        )

    def text(self, path: Path) -> str:
        return str(self.buffers[uri_of(path)][0])

    def apply(self, params: types.ApplyWorkspaceEditParams) -> types.ApplyWorkspaceEditResult:
        self.edits.append(params.edit)
        if self.reject:
            return types.ApplyWorkspaceEditResult(applied=False, failure_reason="rejected by test")
        edit = params.edit
        for change in edit.document_changes or []:
            if isinstance(change, types.TextDocumentEdit):
                uri = change.text_document.uri
                if uri in self.buffers:
                    buf = self.buffers[uri]
                    if (
                        change.text_document.version is not None
                        and change.text_document.version != buf[1]
                    ):
                        return types.ApplyWorkspaceEditResult(
                            applied=False, failure_reason="stale version"
                        )
                    self._edit_buffer(uri, list(change.edits))
                else:
                    self._edit_file(uri, list(change.edits))
            elif isinstance(change, types.CreateFile):
                path = path_of(change.uri)
                path.parent.mkdir(parents=True, exist_ok=True)
                if not path.exists():
                    path.write_bytes(b"")
            elif isinstance(change, types.DeleteFile):
                path = path_of(change.uri)
                if path.exists():
                    path.unlink()
                if change.uri in self.buffers and not self.keep_deleted:
                    del self.buffers[change.uri]
                    self.client.text_document_did_close(
                        types.DidCloseTextDocumentParams(
                            types.TextDocumentIdentifier(uri=change.uri)
                        )
                    )
        for uri, edits in (edit.changes or {}).items():
            if uri in self.buffers:
                self._edit_buffer(uri, list(edits))
            else:
                self._edit_file(uri, list(edits))
        return types.ApplyWorkspaceEditResult(applied=True)

    def _edit_buffer(self, uri: str, edits: list[Any]) -> None:
        """Apply to an open buffer and tell the server, as an editor does."""
        buf = self.buffers[uri]
        buf[0] = apply_edits(buf[0], edits, self.encoding)
        buf[1] += 1
        self.client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                types.VersionedTextDocumentIdentifier(uri=uri, version=buf[1]),
                [types.TextDocumentContentChangeWholeDocument(text=buf[0])],
            )
        )

    def _edit_file(self, uri: str, edits: list[Any]) -> None:
        """Apply to a closed file: open, edit, save (keeping a UTF-8 BOM)."""
        path = path_of(uri)
        raw = path.read_bytes() if path.exists() else b""
        bom = raw.startswith(b"\xef\xbb\xbf")
        old = raw[3 if bom else 0 :].decode("utf-8")
        new = apply_edits(old, edits, self.encoding)
        path.write_bytes((b"\xef\xbb\xbf" if bom else b"") + new.encode("utf-8"))

    def save(self, path: Path) -> None:
        """Save a buffer as an editor does: willSaveWaitUntil, write, didSave."""
        uri = uri_of(path)
        doc = types.TextDocumentIdentifier(uri=uri)
        self.client.protocol.send_request(
            types.TEXT_DOCUMENT_WILL_SAVE_WAIT_UNTIL,
            types.WillSaveTextDocumentParams(doc, types.TextDocumentSaveReason.Manual),
        )
        path.write_bytes(self.text(path).encode("utf-8"))
        self.client.text_document_did_save(types.DidSaveTextDocumentParams(doc))


def server_command() -> list[str]:
    return [sys.executable, "-m", "rewind_ls", "serve", "--log-level", "debug"]


async def start(
    workspace: Path,
    home: Path,
    caps: str = "visual_studio_code",
    init_options: dict[str, Any] | None = None,
    env: dict[str, str] | None = None,
    claude_config: Path | None = None,
) -> tuple[LanguageClient, Editor]:
    client = make_test_lsp_client()
    editor = Editor(client)
    notes: list[Any] = []
    client.turn_notes = notes  # type: ignore[attr-defined]

    # `applying`, when set to an asyncio.Event, holds the client's workspace/applyEdit until it is
    # set (an editor busy applying a large edit).
    client.applying = None  # type: ignore[attr-defined]

    @client.feature(types.WORKSPACE_APPLY_EDIT)
    async def _apply(params: types.ApplyWorkspaceEditParams) -> types.ApplyWorkspaceEditResult:
        applying = client.applying  # type: ignore[attr-defined]
        if applying is not None:
            await applying.wait()
        return editor.apply(params)

    @client.feature("rewind/didChangeTurns")
    def _turns(params: Any) -> None:
        notes.append(params)

    # The person: questions (window/showMessageRequest) are answered from `answers` (titles, in
    # order; "Cancel" when it is empty) and kept in `questions`; pytest-lsp keeps window/showMessage
    # in `client.messages`.
    # `thinking`, when set to an asyncio.Event, keeps the person from answering until it is set (a
    # person reads the preview for a while: the server must not hold a request open meanwhile).
    questions: list[types.ShowMessageRequestParams] = []
    answers: list[str] = []
    client.questions = questions  # type: ignore[attr-defined]
    client.answers = answers  # type: ignore[attr-defined]
    client.thinking = None  # type: ignore[attr-defined]

    @client.feature(types.WINDOW_SHOW_MESSAGE_REQUEST)
    async def _ask(params: types.ShowMessageRequestParams) -> types.MessageActionItem | None:
        questions.append(params)
        thinking = client.thinking  # type: ignore[attr-defined]
        if thinking is not None:
            await thinking.wait()
        title = answers.pop(0) if answers else "Cancel"
        offered = [a.title for a in params.actions or []]
        assert title in offered, f"{title!r} is not one of {offered}"
        return types.MessageActionItem(title)

    # A request a client may or may not have advertised: kept, so a test can check the server sent
    # it only to clients that did (pytest-lsp keeps window/showDocument in `shown_documents`).
    refreshes: list[Any] = []
    client.lens_refreshes = refreshes  # type: ignore[attr-defined]

    @client.feature(types.WORKSPACE_CODE_LENS_REFRESH)
    def _refresh(params: Any) -> None:
        refreshes.append(params)
        return None

    server_env = {
        **os.environ,
        "REWIND_LS_HOME": str(home),
        "CLAUDE_CONFIG_DIR": str(claude_config or home / "claude"),
        **(env or {}),
    }
    await client.start_io(*server_command(), env=server_env)
    capabilities = client_capabilities(caps)
    result = await client.initialize_session(
        types.InitializeParams(
            capabilities=capabilities,
            root_uri=uri_of(workspace),
            workspace_folders=[types.WorkspaceFolder(uri=uri_of(workspace), name="ws")],
            initialization_options=init_options,
        )
    )
    client.init_result = result  # type: ignore[attr-defined]
    enc = result.capabilities.position_encoding or "utf-16"
    editor.encoding = str(getattr(enc, "value", enc))
    return client, editor
