"""Gemini CLI: its hook adapter and its chat files (fork)."""
