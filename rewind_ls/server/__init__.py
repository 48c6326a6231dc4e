"""The language server: thin glue over the core. `lsp.py` (the server object, errors, routes from
the protocol's METHODS table), `handlers/` (one module per area), `restore_driver.py` (a restore's
conversation with the client), `service/` (the work, pygls-free, on the store's thread)."""
