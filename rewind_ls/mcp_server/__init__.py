"""`rewind-ls mcp`: the Model Context Protocol server through which an agent rewinds its own work.

Thin glue over the core, like the language server: `session` decides whose turns the numbers are,
`tools` does each tool's work on plain data (the same core calls as the CLI: the timeline, the
diff, blame, the one restore flow), `text` says each answer in words for the model, `app` is the
only module that imports the MCP SDK (`mcp` on PyPI: its `MCPServer`, tools with JSON schemas
from typed signatures). The hook process never imports this package."""
