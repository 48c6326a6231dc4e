"""OpenCode: its hook adapter and the plugin that feeds it (code only: no conversation fork)."""
