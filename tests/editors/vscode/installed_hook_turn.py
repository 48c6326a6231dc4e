"""One Claude Code turn through the hook command the project's .claude/settings.local.json (the
per-person file) or .claude/settings.json holds (as `rewind-ls install claude-code` wrote it), run by `sh -c` the way Claude Code runs a command hook,
in the person's environment (HOME, PATH given here): no rewind-ls of the test's own.

    python installed_hook_turn.py WORKSPACE HOME PATH XDG_DATA_HOME PROMPT FILE CONTENT
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # tests/: support.agent

import support.agent as agent_mod


def main() -> None:
    ws, home, path, data_home, prompt, rel, content = sys.argv[1:8]
    # Claude Code reads both; the per-person file is where "Just for me" puts the hooks.
    claude = Path(ws) / ".claude"
    local = claude / "settings.local.json"
    settings = json.loads((local if local.is_file() else claude / "settings.json").read_text())
    commands = {
        h["command"]
        for groups in settings["hooks"].values()
        for g in groups
        for h in g["hooks"]
        if "hook claude-code" in h["command"]
    }
    assert len(commands) == 1, commands
    command = commands.pop()
    # REWIND_LS_WATCH=0: no detached workspace watcher outliving the test.
    env = {"HOME": home, "PATH": path, "XDG_DATA_HOME": data_home, "REWIND_LS_WATCH": "0"}

    def run_hook(
        payload: Mapping[str, Any] | bytes, _env: Mapping[str, str]
    ) -> subprocess.CompletedProcess[bytes]:
        data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        return subprocess.run(
            ["sh", "-c", command], input=data, env=env, cwd=ws, capture_output=True, timeout=60
        )

    agent_mod.run_hook = run_hook  # FakeClaude.hook calls the module's run_hook
    claude = agent_mod.FakeClaude(
        Path(ws),
        Path(home),
        session_id="5e55a0e0-0000-4000-8000-000000000001",
        transcript_dir=Path(home) / ".claude" / "projects" / "ws",
    )
    # A second turn of the same session continues its transcript.
    claude.transcript.parent.mkdir(parents=True, exist_ok=True)
    claude.turn(prompt, {rel: content})
    print(command)


if __name__ == "__main__":
    main()
