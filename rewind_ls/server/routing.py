"""Where one planned path of an editor restore goes: a part of the WorkspaceEdit the client applies,
a write the server does itself (`restore.swap.swap`, journaled like the CLI's restore), or both.

A pure function over plain facts (`PathFacts`, `ClientEditSupport`); `Service.prepare` gathers the
facts and builds the edit. The rules, in order:
- the target is absent: a DeleteFile when the client can delete and the file is open or closed
  files take edits; the server deletes it otherwise;
- the target is not UTF-8 text (binary, too large): the server writes it;
- the file is open: a versioned TextDocumentEdit of its buffer; the server writes the disk too
  when the buffer already shows the target (no edit would save it), the file is gone from disk,
  or the executable bit or a UTF-8 BOM changes (a text edit carries neither);
- the file is closed: a TextDocumentEdit of the file (after a CreateFile when it does not exist)
  only when the client takes edits of closed files (`closedFiles: "edit"`), can create files, the
  disk holds UTF-8 text, and neither the mode nor a BOM changes; the server writes it otherwise.
"""

from __future__ import annotations

from typing import NamedTuple

# What a path's content is, as far as an edit is concerned.
ABSENT = "absent"
TEXT = "text"  # UTF-8 text an editor buffer can hold
NOT_TEXT = "not-text"  # binary, not UTF-8, or too large to read

# The part of the WorkspaceEdit that carries a path.
DELETE = "delete"  # DeleteFile
EDIT_BUFFER = "edit-buffer"  # TextDocumentEdit with the open buffer's version
EDIT_CLOSED = "edit-closed"  # TextDocumentEdit of a closed file (version null)
CREATE_EDIT = "create-edit"  # CreateFile, then a TextDocumentEdit of the new file


class ClientEditSupport:
    """What the client's WorkspaceEdit support allows (from its capabilities and our options)."""

    def __init__(
        self,
        document_changes: bool = True,
        create: bool = True,
        delete: bool = True,
        closed_files: str = "server",
        encoding: str = "utf-16",
        restore_unsaved: bool = False,
    ) -> None:
        self.document_changes = document_changes
        self.create = create and document_changes
        self.delete = delete and document_changes
        self.closed_files = closed_files
        self.encoding = encoding
        # The client puts back a buffer's unsaved text after saving (the result's `unsaved`), so an
        # undo returns an unsaved buffer as unsaved text over its last saved bytes.
        self.restore_unsaved = restore_unsaved


class PathFacts(NamedTuple):
    """What routing needs to know of one planned path."""

    target: str  # ABSENT, TEXT or NOT_TEXT: the content the restore reaches
    disk: str  # ABSENT, TEXT or NOT_TEXT: what the file on disk holds now
    open: bool  # the editor has the file open
    buffer_is_target: bool = False  # the open buffer already shows the target text
    mode_changes: bool = False  # the executable bit differs between disk and target
    bom_changes: bool = False  # a UTF-8 BOM is added or removed


class Route(NamedTuple):
    edit: str | None  # the WorkspaceEdit part (DELETE, EDIT_BUFFER, ...), or None
    verify: bool  # the editor's part: checked after the client applied the edit
    server: bool  # the server writes the file on disk


SERVER = Route(None, False, True)


def route(facts: PathFacts, support: ClientEditSupport) -> Route:
    """The route of one path (see the module's rules)."""
    edit_closed = support.closed_files == "edit"
    if facts.target == ABSENT:
        if support.delete and (facts.open or edit_closed):
            return Route(DELETE, True, False)
        return SERVER
    if facts.target != TEXT:
        return SERVER
    if facts.open:
        disk_also = (
            facts.buffer_is_target
            or facts.mode_changes
            or facts.bom_changes
            or facts.disk == ABSENT
        )
        return Route(None if facts.buffer_is_target else EDIT_BUFFER, True, disk_also)
    if not edit_closed or facts.disk == NOT_TEXT or facts.mode_changes or facts.bom_changes:
        return SERVER
    if facts.disk == ABSENT:
        return Route(CREATE_EDIT, True, False) if support.create else SERVER
    return Route(EDIT_CLOSED, True, False)
