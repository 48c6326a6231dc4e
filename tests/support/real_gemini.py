"""Runs the real, unmodified Gemini CLI (installed by scripts/install-gemini.sh, run with node) offline
against the scripted Gemini API stand-in (`fake_gemini.FakeGemini`, reached through the SDK's
GOOGLE_GEMINI_BASE_URL), in a throwaway HOME.

The project is a trusted folder (`~/.gemini/trustedFolders.json`): Gemini CLI reads a project's
settings, and so its hooks, only there. The hooks are the ones `rewind-ls install gemini` writes.
The binary runs with a PATH that does NOT hold the virtualenv (node's folder only). The home, the
environment and `rewind-ls` are `real_agent`'s; this is Gemini CLI's part.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
from pathlib import Path
from typing import Any

from tests.support.fake_gemini import FakeGemini
from tests.support.pinned import pinned_tool
from tests.support.real_agent import SYSTEM_PATH, RealAgent

VERSION = "0.61.0"


def gemini_entry() -> Path:
    """The pinned CLI's entry point, installing it (idempotent, cached under .tools/) when missing."""
    return pinned_tool("install-gemini.sh", "GEMINI_CLI_VERSION", VERSION, "REWIND_GEMINI_ENTRY")


class RealGemini(RealAgent):
    """One throwaway Gemini CLI home and project, driven with `run()`."""

    cli_env = ("REWIND_LS_HOME", "HOME")

    def __init__(self, entry: Path, api: FakeGemini, base: Path, project: Path) -> None:
        super().__init__(base, project)
        self.entry = entry
        self.api = api
        self.gemini_home = self.home / ".gemini"
        self.gemini_home.mkdir(parents=True, exist_ok=True)
        (self.gemini_home / "settings.json").write_text(
            json.dumps({"security": {"auth": {"selectedType": "gemini-api-key"}}})
        )
        (self.gemini_home / "trustedFolders.json").write_text(
            json.dumps({str(project): "TRUST_FOLDER"})
        )
        node = shutil.which("node") or "node"
        self.node = node
        self.env |= {
            "PATH": f"{os.path.dirname(node)}:{SYSTEM_PATH}",
            "REWIND_LS_DEBUG": "1",
            "GEMINI_API_KEY": "offline-test-key",
            "GOOGLE_GEMINI_BASE_URL": api.base_url,
            "GEMINI_CLI_NO_RELAUNCH": "true",
        }

    def run(
        self,
        prompt: str,
        *,
        resume: str | None = None,
        cwd: Path | None = None,
        command: str | None = None,
    ) -> str:
        """One `gemini -p` turn (resuming session `resume`); returns the session id. `command`: a
        shell command line starting `gemini` (the resume command rewind-ls printed), run as is with
        the pinned CLI and the print-mode options added."""
        options = ["-p", prompt, "--yolo", "--output-format", "json"]
        args = [self.node, str(self.entry), *options]
        if resume:
            args += ["--resume", resume]
        if command is not None:
            pinned = f"{shlex.quote(self.node)} {shlex.quote(str(self.entry))}"
            line = re.sub(r"(^|&& )gemini\b", rf"\g<1>{pinned}", command, count=1)
            assert line != command, command
            args = ["/bin/sh", "-c", f"{line} {shlex.join(options)}"]
        proc = self.run_binary(args, cwd, timeout=120)
        try:
            out: dict[str, Any] = json.loads(proc.stdout[proc.stdout.index("{") :])
        except ValueError:
            out = {}
        if proc.returncode != 0 or "error" in out or "session_id" not in out:
            raise AssertionError(f"gemini exited {proc.returncode}:\n{proc.stdout}\n{proc.stderr}")
        return str(out["session_id"])
