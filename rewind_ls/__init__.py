"""rewind-ls: checkpoint and rewind for AI coding agents."""

__version__ = "0.1.0"
