"""Algorithms over bytes and lines: the galloping run finder and the three-way merge.
Imports nothing of rewind-ls but `core.errors`."""
