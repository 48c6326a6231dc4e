"""The core: everything rewind-ls knows without an editor. Packages along the way the data flows,
each importing only those before it: `model` and `errors`, `text`, `fs`, `store`, `capture`,
`restore`, `history`, `agents`, `conversation` (tests/test_architecture.py holds the order)."""
