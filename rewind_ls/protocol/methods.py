"""The tables of the protocol: every custom method (params and result models) and every
workspace/executeCommand command. The schema generator, the TypeScript generator and the server's
routes (`rewind_ls.server.lsp.install`) all read them, so a method cannot exist in one and not
the others."""

from __future__ import annotations

from pydantic import BaseModel

from rewind_ls.protocol.contents import (
    FileAtParams,
    FileAtResult,
    ListFolderParams,
    ListFolderResult,
    TimelinePageParams,
    TimelinePageResult,
    TimelineParams,
    TimelineResult,
)
from rewind_ls.protocol.history import FileVersionsParams, FileVersionsResult
from rewind_ls.protocol.recording import (
    BeginTurnParams,
    DidChangeTurnsParams,
    EndTurnParams,
    RecordEditParams,
    RecordEditResult,
)
from rewind_ls.protocol.restore import (
    PreviewParams,
    PreviewResult,
    RestoreParams,
    RestoreResult,
    SummarizeParams,
    SummarizeResult,
    UndoParams,
)
from rewind_ls.protocol.review import BlameParams, BlameResult, TurnHunksParams, TurnHunksResult
from rewind_ls.protocol.turns import ListTurnsParams, ListTurnsResult, TurnInfo

# Every custom method: name -> (params model, result model). The schema generator and the server's
# dispatcher both read this table, so a method cannot exist in one and not the other.
METHODS: dict[str, tuple[type[BaseModel], type[BaseModel] | None]] = {
    "rewind/listTurns": (ListTurnsParams, ListTurnsResult),
    "rewind/preview": (PreviewParams, PreviewResult),
    "rewind/restore": (RestoreParams, RestoreResult),
    "rewind/undo": (UndoParams, RestoreResult),
    "rewind/summarize": (SummarizeParams, SummarizeResult),
    "rewind/fileAt": (FileAtParams, FileAtResult),
    "rewind/listFolder": (ListFolderParams, ListFolderResult),
    "rewind/timeline": (TimelineParams, TimelineResult),
    "rewind/timelinePage": (TimelinePageParams, TimelinePageResult),
    "rewind/beginTurn": (BeginTurnParams, TurnInfo),
    "rewind/recordEdit": (RecordEditParams, RecordEditResult),
    "rewind/endTurn": (EndTurnParams, TurnInfo),
    "rewind/didChangeTurns": (DidChangeTurnsParams, None),
    "rewind/blame": (BlameParams, BlameResult),
    "rewind/turnHunks": (TurnHunksParams, TurnHunksResult),
    "rewind/fileVersions": (FileVersionsParams, FileVersionsResult),
}
# The server's notifications to the client (no result): the client never sends them.
NOTIFICATIONS = frozenset(method for method, (_, result) in METHODS.items() if result is None)


# workspace/executeCommand commands (arguments are positional, as code lenses send them).
COMMANDS = {
    "rewind.rewind": "[turnId, scope?='code', options?] -> RestoreResult",
    "rewind.revert": "[turnId, options?] -> RestoreResult",
    "rewind.undo": "[options?] -> RestoreResult",
    "rewind.diff": "[turnId, uri?] -> shows the turn's diff (a .diff document via showDocument)",
    "rewind.revertHunk": "[turnId, uri, hunkIndex, options?] -> RestoreResult (asks first)",
    "rewind.revertInFile": "[turnId, uri, options?] -> RestoreResult (asks first)",
    "rewind.restoreVersion": "[uri, hash, options?] -> RestoreResult (asks first): the file back "
    "to one recorded version (rewind/fileVersions)",
}
