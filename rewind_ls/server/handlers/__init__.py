"""The server's handlers, one module per area: `lifecycle` (initialize, the store poll, shutdown),
`documents` (saves), `turns` (listing, timeline, file contents, recording, the diff command),
`restore` (preview, restore, undo, summarize and the restore commands, over `restore_driver`),
`review` (hover, code actions, code lenses, blame, a turn's hunks, the hunk commands).

Each handler says what it answers with `lsp.request` / `lsp.feature` / `lsp.command`; `app.py`
imports these modules and `lsp.install` registers them, `rewind/*` requests from the protocol's
METHODS table. A handler is thin: it calls one `Service` method on the store's worker thread.
"""
