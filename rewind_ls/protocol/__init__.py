"""Every wire shape, once: the custom `rewind/*` protocol (params, results, notifications) and the
CLI's `--json` objects, as pydantic models, by area: `base` (the shared literals, `Params`,
`Result`), `turns` (listing), `restore` (preview, restore, undo, summarize), `contents` (fileAt,
timeline), `recording` (an agent in the editor), `review` (blame, a turn's hunks), `methods` (the
table of methods and commands the server registers its handlers from), `cli_output` (the CLI's
`--json` objects and `wire`).

A neutral layer: the server and the CLI both import it; it imports pydantic and nothing of
rewind_ls but itself (never `server` or `cli`).

Generated from these models, never written by hand: `schemas/*.json` (`python -m
rewind_ls.protocol.schemas --write`, a test fails on drift) and the VS Code client's
`editors/vscode/src/protocol.ts` (`python -m rewind_ls.protocol.typescript`, at build time).
Field names are snake_case here and in core; camelCase exists only on the wire, made by the alias
generator when the server answers and when the CLI prints `--json` (`wire`). Params reject unknown
fields so a typo is an error, not a silent default.
"""
