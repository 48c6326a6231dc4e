"""GitHub Copilot CLI: its hook adapter (code only: no conversation fork)."""
