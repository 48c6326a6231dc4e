"""Where the store lives and the limits it keeps. Environment variables override the defaults.

`REWIND_LS_HOME`            store location (default: $XDG_DATA_HOME/rewind-ls, ~/.local/share/rewind-ls)
`REWIND_LS_MAX_FILE_BYTES`  files larger than this are recorded as "too large" (default 16 MiB)
`REWIND_LS_RETENTION_DAYS`  checkpoints older than this are pruned by gc (default 30)
`REWIND_LS_MAX_STORE_BYTES` total store size cap, oldest turns dropped first (default 5 GiB)
`CLAUDE_CONFIG_DIR`         Claude Code's folder (default ~/.claude); transcripts live in its projects/

The workspace scan has its own (`REWIND_LS_IGNORE`, `REWIND_LS_BASELINE_SECONDS`, `REWIND_LS_SCAN`,
`REWIND_LS_SCAN_CACHE`): see `rewind_ls/core/scan_settings.py`.
"""

from __future__ import annotations

import os
from typing import TypeVar

MiB = 1024 * 1024
GiB = 1024 * MiB


Number = TypeVar("Number", int, float)


def env_positive(name: str, default: Number) -> Number:
    """A positive number (of `default`'s type) from the environment variable `name`; `default`
    when it is unset, not a number or not positive."""
    raw = os.environ.get(name)
    if not raw:
        return default
    try:
        value = type(default)(raw)
    except ValueError:
        return default
    return value if value > 0 else default


def home_dir() -> str:
    explicit = os.environ.get("REWIND_LS_HOME")
    if explicit:
        return os.path.abspath(os.path.expanduser(explicit))
    xdg = os.environ.get("XDG_DATA_HOME")
    base = (
        xdg
        if xdg and os.path.isabs(xdg)
        else os.path.join(os.path.expanduser("~"), ".local", "share")
    )
    return os.path.join(base, "rewind-ls")


def max_file_bytes() -> int:
    return env_positive("REWIND_LS_MAX_FILE_BYTES", 16 * MiB)


def retention_days() -> int:
    return env_positive("REWIND_LS_RETENTION_DAYS", 30)


def max_store_bytes() -> int:
    return env_positive("REWIND_LS_MAX_STORE_BYTES", 5 * GiB)


def claude_dir() -> str:
    explicit = os.environ.get("CLAUDE_CONFIG_DIR")
    if explicit:
        return os.path.abspath(os.path.expanduser(explicit))
    return os.path.join(os.path.expanduser("~"), ".claude")


def log_path() -> str:
    return os.path.join(home_dir(), "rewind-ls.log")


def ensure_private_dir(path: str) -> None:
    """Create `path` readable by the owner only: the store holds source code. Every folder from the
    store home down to `path` is made 0700; folders above the home are left as they are."""
    home = os.path.abspath(home_dir())
    target = os.path.abspath(path)
    os.makedirs(target, mode=0o700, exist_ok=True)
    probe = target
    while True:
        try:
            if os.stat(probe).st_mode & 0o077:
                os.chmod(probe, 0o700)
        except OSError:
            pass
        if probe == home or not probe.startswith(home + os.sep):
            break
        probe = os.path.dirname(probe)
