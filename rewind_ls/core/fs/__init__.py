"""The machine under the store: workspace paths, the environment's settings, platform calls
(`disk_sync`), and the crash tests' fault points. Imports only `core.model` and `core.errors`."""
