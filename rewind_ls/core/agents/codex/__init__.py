"""Codex CLI: its hook adapter, `apply_patch` headers, its rollout files (fork)."""
