"""Runs the real, unmodified GitHub Copilot CLI (installed by scripts/install-copilot.sh) offline
against the scripted Anthropic Messages API stand-in (`fake_anthropic.FakeAnthropic`), in a
throwaway HOME.

Copilot CLI's own "bring your own key" mode (COPILOT_PROVIDER_BASE_URL, COPILOT_PROVIDER_TYPE
anthropic, COPILOT_MODEL) needs no GitHub account; COPILOT_OFFLINE keeps it from GitHub's services.
The project is a trusted folder (`trustedFolders` in `~/.copilot/config.json`): Copilot runs a
project's hooks, in prompt mode too, only there. The hooks are the ones `rewind-ls install copilot`
writes. The binary runs with a PATH that does NOT hold the virtualenv. The home, the environment
and `rewind-ls` are `real_agent`'s; this is Copilot's part.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from tests.support.fake_anthropic import FakeAnthropic
from tests.support.pinned import pinned_tool
from tests.support.real_agent import RealAgent

VERSION = "1.0.102"


def copilot_binary() -> Path:
    """The pinned binary, installing it (idempotent, cached under .tools/) when missing."""
    return pinned_tool("install-copilot.sh", "COPILOT_CLI_VERSION", VERSION, "REWIND_COPILOT_BIN")


class RealCopilot(RealAgent):
    """One throwaway Copilot CLI home and project, driven with `run()`."""

    cli_env = ("REWIND_LS_HOME", "HOME")

    def __init__(self, binary: Path, api: FakeAnthropic, base: Path, project: Path) -> None:
        super().__init__(base, project)
        self.binary = binary
        self.api = api
        config = self.home / ".copilot"
        config.mkdir(parents=True, exist_ok=True)
        (config / "config.json").write_text(json.dumps({"trustedFolders": [str(project)]}))
        self.env |= {
            "REWIND_LS_DEBUG": "1",
            "COPILOT_PROVIDER_BASE_URL": api.url,
            "COPILOT_PROVIDER_TYPE": "anthropic",
            "COPILOT_PROVIDER_API_KEY": "offline-test-key",
            "COPILOT_MODEL": "claude-sonnet-4",
            "COPILOT_OFFLINE": "1",
            "COPILOT_AUTO_UPDATE": "false",
            # The files the binary unpacks on its first run, unpacked once by the install script.
            "COPILOT_CACHE_HOME": str(binary.parents[2] / "cache"),
        }

    def run(self, prompt: str, *, resume: str | None = None, cwd: Path | None = None) -> str:
        """One `copilot -p` turn (resuming session `resume`); returns the session id."""
        args = [str(self.binary), "-p", prompt, "--allow-all"]
        if resume:
            args.append(f"--resume={resume}")
        proc = self.run_binary(args, cwd, timeout=180)
        # The closing summary (on stderr) names the session in its resume command.
        found = re.findall(r"copilot --resume=([0-9a-f-]{36})", proc.stdout + proc.stderr)
        if proc.returncode != 0 or not found:
            raise AssertionError(
                f"copilot exited {proc.returncode}:\n{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}"
            )
        return str(found[-1])
