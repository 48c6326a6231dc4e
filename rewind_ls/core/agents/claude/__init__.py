"""Claude Code: its hook adapter, its transcript (fork, events, recorder, follower, check)."""
