"""Runs the real, unmodified OpenCode binary (installed by scripts/install-opencode.sh) offline against
the scripted Anthropic Messages API stand-in (`fake_anthropic.FakeAnthropic`), in a throwaway HOME.

The model is a custom provider in the user's `opencode.json`: OpenCode's bundled `@ai-sdk/anthropic`
with its `baseURL` on loopback. OPENCODE_DISABLE_MODELS_FETCH keeps it from fetching the model
catalogue. OpenCode installs `@opencode-ai/plugin` into every `.opencode/` folder it loads (the
project's, once `rewind-ls install opencode` made one) and waits for it at start-up: npm offline,
its registry a closed loopback port, makes that fail at once instead of reaching out (or, with
the registry alone unreachable, retrying for over a minute per start). The plugin is the one `rewind-ls
install opencode` writes. The binary runs with a PATH that does NOT hold the virtualenv. The home,
the environment and `rewind-ls` are `real_agent`'s; this is OpenCode's part.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.support.fake_anthropic import FakeAnthropic
from tests.support.pinned import pinned_tool
from tests.support.real_agent import RealAgent

VERSION = "1.18.33"
MODEL = "standin/stand-in"


def opencode_binary() -> Path:
    """The pinned binary, installing it (idempotent, cached under .tools/) when missing."""
    return pinned_tool("install-opencode.sh", "OPENCODE_VERSION", VERSION, "REWIND_OPENCODE_BIN")


class RealOpenCode(RealAgent):
    """One throwaway OpenCode home and project, driven with `run()`."""

    # `rewind-ls` runs the pinned `opencode` too (its export and import fork a conversation),
    # offline like the agent.
    cli_env = (
        "REWIND_LS_HOME",
        "HOME",
        "REWIND_LS_OPENCODE",
        "OPENCODE_DISABLE_MODELS_FETCH",
        "OPENCODE_DISABLE_AUTOUPDATE",
        "NPM_CONFIG_REGISTRY",
        "NPM_CONFIG_OFFLINE",
    )

    def __init__(self, binary: Path, api: FakeAnthropic, base: Path, project: Path) -> None:
        super().__init__(base, project)
        self.binary = binary
        self.api = api
        config = self.home / ".config" / "opencode"
        config.mkdir(parents=True, exist_ok=True)
        provider, model = MODEL.split("/")
        (config / "opencode.json").write_text(
            json.dumps(
                {
                    "$schema": "https://opencode.ai/config.json",
                    "provider": {
                        provider: {
                            "npm": "@ai-sdk/anthropic",
                            "name": "scripted stand-in",
                            "options": {"baseURL": f"{api.url}/v1", "apiKey": "offline-test-key"},
                            "models": {model: {"name": model, "tool_call": True}},
                        }
                    },
                    "model": MODEL,
                    "small_model": MODEL,
                    "permission": {"edit": "allow", "bash": "allow"},
                    "autoupdate": False,
                    "share": "disabled",
                }
            )
        )
        self.env |= {
            "REWIND_LS_DEBUG": "1",
            "OPENCODE_DISABLE_MODELS_FETCH": "1",
            "OPENCODE_DISABLE_AUTOUPDATE": "1",
            "OPENCODE_DISABLE_LSP_DOWNLOAD": "1",
            "OPENCODE_DISABLE_SHARE": "1",
            "NPM_CONFIG_REGISTRY": "http://127.0.0.1:9/",
            "NPM_CONFIG_OFFLINE": "true",
            "REWIND_LS_OPENCODE": str(binary),
        }

    def run(self, *words: str, session: str | None = None, cwd: Path | None = None) -> str:
        """One `opencode run` turn (continuing `session`); returns the session id. The message is
        `words` joined by spaces, as OpenCode joins its arguments."""
        args = [str(self.binary), "run", "--format", "json"]
        if session:
            args += ["--session", session]
        proc = self.run_binary([*args, *words], cwd, timeout=180)
        events: list[dict[str, Any]] = []
        for line in proc.stdout.splitlines():
            try:
                events.append(json.loads(line))
            except ValueError:
                continue
        ids = {e.get("sessionID") for e in events} - {None}
        errors = [e for e in events if e.get("type") == "error"]
        if proc.returncode != 0 or errors or len(ids) != 1:
            raise AssertionError(
                f"opencode exited {proc.returncode}:\n{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}"
            )
        return str(ids.pop())
