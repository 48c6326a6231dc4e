"""Where the store lives and the limits it keeps. Environment variables override the defaults.

`REWIND_LS_HOME`            store location (default: $XDG_DATA_HOME/rewind-ls, ~/.local/share/rewind-ls)
`REWIND_LS_MAX_FILE_BYTES`  files larger than this are recorded as "too large" (default 16 MiB)
`REWIND_LS_RETENTION_DAYS`  checkpoints older than this are pruned by gc (default 30)
`REWIND_LS_MAX_STORE_BYTES` total store size cap, oldest turns dropped first (default 5 GiB)
`REWIND_LS_MAX_LINE_BYTES`  transcript lines longer than this are recorded cut (default 64 MiB)
`REWIND_LS_MAX_HOOK_BYTES`  hook payloads larger than this are refused (default 64 MiB)
`CLAUDE_CONFIG_DIR`         Claude Code's folder (default ~/.claude); transcripts live in its projects/

The workspace scan has its own (`REWIND_LS_IGNORE`, `REWIND_LS_BASELINE_SECONDS`, `REWIND_LS_SCAN`,
`REWIND_LS_SCAN_CACHE`): see `rewind_ls/core/capture/scan_settings.py`.
"""

from __future__ import annotations

import os
import stat
from typing import TypeVar

MiB = 1024 * 1024
GiB = 1024 * MiB


Number = TypeVar("Number", int, float)


# Every limit read through `env_positive`, with its default (`limit_problems` reports them).
LIMITS: dict[str, float] = {}


def env_problem(name: str, default: Number) -> str | None:
    """Why the environment variable `name` cannot be used as a positive number (so `default` is),
    or None when it is unset or good."""
    raw = os.environ.get(name)
    if not raw:
        return None
    try:
        if type(default)(raw) > 0:
            return None
    except ValueError:
        pass
    return f"{name}={raw!r} is not a positive number; the default {default} is used"


def env_positive(name: str, default: Number) -> Number:
    """A positive number (of `default`'s type) from the environment variable `name`; `default`
    when it is unset, not a number or not positive (`limit_problems` says so)."""
    LIMITS[name] = default
    if env_problem(name, default) is not None:
        return default
    raw = os.environ.get(name)
    return type(default)(raw) if raw else default


def limit_problems() -> list[str]:
    """One line per limit variable set to something unusable (replaced by its default)."""
    for read in (max_file_bytes, retention_days, max_store_bytes, max_line_bytes, max_hook_bytes):
        read()  # registers it
    return [p for name, d in LIMITS.items() if (p := env_problem(name, d)) is not None]


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


def max_line_bytes() -> int:
    """The longest transcript line recording parses whole. A Write of the largest file recorded
    (`max_file_bytes`) carries it up to three times (the call's input, the result's content and
    `originalFile`), so the default leaves room for that; a longer line is parsed with its long
    strings cut (forks still copy every line whole)."""
    return env_positive("REWIND_LS_MAX_LINE_BYTES", 64 * MiB)


def max_hook_bytes() -> int:
    """The largest hook payload read from stdin; a larger one is refused, nothing recorded."""
    return env_positive("REWIND_LS_MAX_HOOK_BYTES", 64 * MiB)


def claude_dir() -> str:
    explicit = os.environ.get("CLAUDE_CONFIG_DIR")
    if explicit:
        return os.path.abspath(os.path.expanduser(explicit))
    return os.path.join(os.path.expanduser("~"), ".claude")


def log_path() -> str:
    return os.path.join(home_dir(), "rewind-ls.log")


_SAFE_HOMES: set[str] = set()


def _private_group(gid: int, uid: int) -> bool:
    """Whether group `gid` is `uid`'s own primary group with no other member listed (the user
    private groups of Debian, Ubuntu and Fedora: /home/alice is alice:alice 0775), so a folder
    only that group can write is as safe as 0755. Only the group's member list is checked, not
    every passwd entry for another user whose primary group it is (reading the whole passwd
    database, maybe from LDAP, on every check would cost too much): a distribution gives each
    user a group of their own."""
    import grp
    import pwd

    try:
        user = pwd.getpwuid(uid)
        members = grp.getgrgid(gid).gr_mem if user.pw_gid == gid else None
    except KeyError:
        return False
    return members is not None and all(m == user.pw_name for m in members)


def home_problem(home: str | None = None) -> str | None:
    """Why the store home cannot be trusted, or None. The home and every folder in it must be
    ours; every folder above it must be ours or root's, and writable by nobody else unless it is
    sticky (as /tmp is) and root's or ours (a group that is ours alone is no one else:
    `_private_group`). Otherwise another user could plant a link as the log
    (so our hooks append to our own files), move the store aside, or edit a restore journal."""
    home = os.path.abspath(home or home_dir())
    me = os.geteuid()
    chains = [home]
    try:
        real = os.path.realpath(home)
        if real != home:
            chains.append(real)
    except OSError:
        pass
    for chain in chains:
        probe = chain
        inside = True  # the home itself, then (once we reach an existing parent) those above
        while True:
            try:
                st = os.lstat(probe)
            except FileNotFoundError:
                st = None
            except OSError as exc:
                return f"{probe}: {exc.strerror}"
            if st is not None and not stat.S_ISLNK(st.st_mode):
                # Group-writable is loose unless the group is ours alone (asked only then: the
                # group database is not read on the hook path's every call).
                loose = st.st_mode & 0o002 or (
                    st.st_mode & 0o020 and not _private_group(st.st_gid, me)
                )
                sticky = st.st_mode & stat.S_ISVTX
                if inside and st.st_uid != me:
                    return f"{probe} is owned by user {st.st_uid}, not by you (user {me})"
                if inside and loose:
                    return f"{probe} is writable by other users"
                if not inside and st.st_uid not in (me, 0):
                    return f"{probe} (above it) is owned by user {st.st_uid}, not by you or root"
                if not inside and loose and not sticky:
                    return f"{probe} (above it) is writable by other users"
            parent = os.path.dirname(probe)
            if parent == probe:
                break
            inside = False
            probe = parent
    return None


def check_home(home: str | None = None) -> None:
    """StoreError when the store home cannot be trusted (see `home_problem`); checked once per
    process and home."""
    home = os.path.abspath(home or home_dir())
    if home in _SAFE_HOMES:
        return
    problem = home_problem(home)
    if problem is not None:
        from rewind_ls.core.errors import StoreError

        raise StoreError(
            f"store home {home} refused: {problem}; another user could change what rewind-ls "
            "keeps there. Use a folder only you can write (REWIND_LS_HOME)"
        )
    _SAFE_HOMES.add(home)


def ensure_private_dir(path: str) -> None:
    """Create `path` readable by the owner only: the store holds source code. Every folder from the
    store home down to `path` is made 0700; folders above the home are left as they are. The
    home is checked first (`check_home`): a home another user can change is refused."""
    home = os.path.abspath(home_dir())
    target = os.path.abspath(path)
    if target == home or target.startswith(home + os.sep):
        check_home(home)
    make_private_dirs(target)
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


def make_private_dirs(target: str) -> None:
    """`os.makedirs(target)` with every folder it creates made 0700 whatever the umask (makedirs
    gives only the leaf its mode, the parents 0777 & ~umask: under umask 000 a fresh account's
    `~/.local` came out world-writable, and the store home under it was then refused for good)."""
    missing = []
    probe = os.path.abspath(target)
    while not os.path.isdir(probe):
        missing.append(probe)
        parent = os.path.dirname(probe)
        if parent == probe:
            break
        probe = parent
    for folder in reversed(missing):
        try:
            os.mkdir(folder, 0o700)
        except FileExistsError:
            if not os.path.isdir(folder):
                raise
            continue  # made meanwhile by another process: as that one left it
        os.chmod(folder, 0o700)  # a umask with owner bits (0o277) would leave it unusable
