"""The pinned agent binaries the real-agent tests run, installed by the project's own scripts."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def pinned_tool(script: str, version_var: str, version: str, override_var: str) -> Path:
    """The path `scripts/<script>` prints last after installing `version` (idempotent, cached under
    .tools/); `$<override_var>` names an already installed one instead."""
    override = os.environ.get(override_var)
    if override:
        return Path(override)
    out = subprocess.run(
        ["bash", str(ROOT / "scripts" / script)],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, version_var: version},
    )
    if out.returncode != 0:
        raise RuntimeError(f"scripts/{script} failed:\n{out.stdout}\n{out.stderr}")
    return Path(out.stdout.strip().splitlines()[-1])
