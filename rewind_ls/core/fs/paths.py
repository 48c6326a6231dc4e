"""Workspace roots and workspace-relative paths. Nothing outside the workspace root is ever captured
or written: every path goes through `relative_path` (capture) or `safe_target` (restore)."""

from __future__ import annotations

import functools
import os
import re
import stat

from rewind_ls.core.errors import BadInput, BadPath, OutsideWorkspace


def find_workspace_root(start: str) -> str:
    """The git top level above `start` if there is one (no git process: look for `.git`), else `start`."""
    here = os.path.realpath(start)
    probe = here
    while True:
        if os.path.lexists(os.path.join(probe, ".git")):
            return probe
        parent = os.path.dirname(probe)
        if parent == probe:
            return here
        probe = parent


def nested_checkout(root: str, rel: str, seen: dict[str, bool] | None = None) -> str | None:
    """The root-relative folder of another checkout that holds `rel`, or None. A folder below the
    root with a `.git` of its own (a folder: a nested clone; a file: a `git worktree add`, a
    submodule, Claude Code's `.claude/worktrees/NAME`) is another checkout: its files belong to
    it, never to the outer workspace's scans or restores. `seen` caches the answer per folder for
    a caller that asks about many paths."""
    parts = rel.split("/")[:-1]
    for i in range(1, len(parts) + 1):
        folder = "/".join(parts[:i])
        hit = seen.get(folder) if seen is not None else None
        if hit is None:
            hit = os.path.lexists(os.path.join(root, *parts[:i], ".git"))
            if seen is not None:
                seen[folder] = hit
        if hit:
            return folder
    return None


def main_checkout(root: str) -> str:
    """The main checkout of `root` when `root` is a linked git worktree (`git worktree add`,
    Claude Code's `.claude/worktrees/NAME`: its `.git` is a file naming a folder of the main
    repository's `.git/worktrees/`), else `root` (a clone, a submodule, a worktree of a bare
    repository, no git). Claude Code 2.1.332 reads a worktree's `.claude/settings.local.json` from
    the main checkout."""
    try:
        with open(os.path.join(root, ".git"), encoding="utf-8", errors="replace") as f:
            line = f.readline().strip()
    except OSError:  # none, or a folder: not a linked worktree
        return root
    if not line.startswith("gitdir:"):
        return root
    gitdir = os.path.join(root, line[len("gitdir:") :].strip())
    try:
        with open(os.path.join(gitdir, "commondir"), encoding="utf-8", errors="replace") as f:
            common = os.path.normpath(os.path.join(gitdir, f.read().strip()))
    except OSError:  # a submodule's gitdir has no commondir
        return root
    return os.path.dirname(common) if os.path.basename(common) == ".git" else root


def refuse_filesystem_root(root: str, why: str) -> str:
    """`root` unless it is the filesystem root: recording `/` would scan the whole machine and
    every later agent session anywhere would share one workspace."""
    if os.path.dirname(root) == root:
        raise BadInput(
            f"{why}: the workspace would be the filesystem root {root!r}; rewind-ls refuses it. "
            "Start the agent in your project folder (or run `git init` there) so the project "
            "has a root of its own."
        )
    return root


def is_below(path: str, folder: str) -> bool:
    """`path` is strictly below `folder` (both real paths: links resolved by the caller)."""
    return path.startswith(folder.rstrip(os.sep) + os.sep)


def is_within(path: str, folder: str) -> bool:
    """`path` is `folder` or below it (both real paths)."""
    return path == folder or is_below(path, folder)


def session_workspace_root(session_id: str, cwd: str, project_dir: str | None) -> str:
    """The one workspace of an agent session. The agent's `cwd` follows its shell (`cd sub`), so
    it cannot name the workspace by itself: the root is found from the project folder the agent
    reports (Claude Code's CLAUDE_PROJECT_DIR), else from the session's first `cwd`, which is
    remembered (`<home>/sessions/<id>`); a later `cwd` inside that root maps to the same
    workspace. A `cwd` outside it (the agent really moved) starts from that `cwd`."""
    from rewind_ls.core.fs import config

    if project_dir and os.path.isabs(project_dir) and os.path.isdir(project_dir):
        return refuse_filesystem_root(
            find_workspace_root(project_dir), f"the agent's project folder {project_dir!r}"
        )
    here = os.path.realpath(cwd)
    folder = os.path.join(config.home_dir(), "sessions")
    safe_id = "".join(c if c.isalnum() or c in "-_." else "_" for c in session_id)[:200]
    memo = os.path.join(folder, safe_id)
    try:
        with open(memo, encoding="utf-8") as f:
            remembered = f.read().strip()
    except OSError:
        remembered = ""
    if remembered and os.path.isdir(remembered) and is_within(here, remembered):
        return remembered
    root = refuse_filesystem_root(find_workspace_root(here), f"cwd {cwd!r}")
    try:
        config.ensure_private_dir(folder)
        tmp = f"{memo}.{os.getpid()}.tmp"
        # Owner-only, like the store; never through a link.
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(root)
        os.replace(tmp, memo)
    except OSError:
        pass  # without the memo a later `cd` may split the workspace; recording still works
    return root


def _check_name(path: str) -> None:
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        raise BadPath(
            path, "the file name is not valid UTF-8; rewind-ls cannot record it"
        ) from None
    if "\x00" in path:
        raise BadPath(path, "the file name contains a NUL byte")


def relative_path(root: str, path: str, cwd: str | None = None) -> str:
    """Workspace-relative POSIX path of `path` (absolute, or relative to `cwd`), symlinks resolved.

    Raises OutsideWorkspace when the real location is not inside `root`.
    """
    _check_name(path)
    full = path if os.path.isabs(path) else os.path.join(cwd or root, path)
    real = os.path.realpath(full)
    root_real = os.path.realpath(root)
    if not is_below(real, root_real):
        raise OutsideWorkspace(path, root_real)
    rel = os.path.relpath(real, root_real)
    if rel.split(os.sep)[0] == ".git" or f"{os.sep}.git{os.sep}" in f"{os.sep}{rel}":
        raise BadPath(path, "is inside a .git folder; rewind-ls never records repository metadata")
    rel = rel.replace(os.sep, "/")
    _refuse_nested(root_real, rel)
    return rel


def _refuse_nested(root_real: str, rel: str) -> None:
    nested = nested_checkout(root_real, rel)
    if nested is not None:
        raise BadPath(
            rel,
            f"is inside {nested}/, another checkout (it has its own .git); rewind-ls leaves it "
            "to that checkout's own workspace",
        )


def check_relative(rel: str) -> None:
    """Refuse a stored or requested relative path that could escape the root."""
    _check_name(rel)
    if not rel or rel.startswith("/") or os.path.isabs(rel):
        raise BadPath(rel, "is not a workspace-relative path")
    parts = rel.split("/")
    if any(p in ("", ".", "..") for p in parts):
        raise BadPath(rel, "contains an empty, '.' or '..' component")
    if ".git" in parts:
        raise BadPath(rel, "is inside a .git folder")


def safe_target(root: str, rel: str) -> str:
    """Absolute path for writing `rel`, after checking that no existing component is a symlink that
    leads outside the workspace and that the file itself is not a symlink (we replace names, never
    write through links)."""
    return _safe_target(os.path.realpath(root), rel, {}, {})


def safe_targets(root: str, rels: list[str]) -> list[str]:
    """`safe_target` of many paths (a restore writes thousands): the root and each folder are
    resolved once for all of them, not once per path."""
    root_real = os.path.realpath(root)
    real_folders: dict[str, str] = {}
    nested: dict[str, bool] = {}
    return [_safe_target(root_real, rel, real_folders, nested) for rel in rels]


def _safe_target(
    root_real: str, rel: str, real_folders: dict[str, str], nested: dict[str, bool]
) -> str:
    check_relative(rel)
    if nested_checkout(root_real, rel, nested) is not None:
        _refuse_nested(root_real, rel)
    full = os.path.join(root_real, *rel.split("/"))
    parent = os.path.dirname(full)
    real_parent = real_folders.get(parent)
    if real_parent is None:
        probe = parent
        # The nearest existing ancestor must resolve inside the root.
        while not os.path.lexists(probe):
            probe = os.path.dirname(probe)
        real_parent = os.path.realpath(probe)
        if probe == parent:
            real_folders[parent] = real_parent
    if not is_within(real_parent, root_real):
        if not os.path.isdir(root_real):  # a removed worktree whose history is read with -C
            raise BadPath(
                rel,
                f"the workspace folder {root_real} no longer exists; nothing is written there "
                f"(its files as a turn left them: rewind-ls -C {root_real} export TURN --after "
                "--to DIR)",
            )
        raise OutsideWorkspace(
            rel, root_real, "a parent folder is a link that leads outside the workspace"
        )
    try:
        st = os.lstat(full)
    except FileNotFoundError:
        return full
    except NotADirectoryError:
        raise BadPath(rel, "a parent folder is a file now; rewind-ls will not replace it") from None
    if stat.S_ISLNK(st.st_mode):
        raise BadPath(rel, "is a symbolic link; rewind-ls does not write through links")
    if stat.S_ISDIR(st.st_mode):
        raise BadPath(rel, "is a folder now; rewind-ls will not replace a folder with a file")
    return full


def check_not_nested(root: str, rel: str, seen: dict[str, bool] | None = None) -> None:
    """Refuse to write `rel` when it lies in another checkout below the root (`nested_checkout`;
    `seen`: its cache, for a caller asking about many paths)."""
    if nested_checkout(root, rel, seen) is not None:
        _refuse_nested(os.path.realpath(root), rel)


def to_uri(root: str, rel: str) -> str:
    return real_uri(real_root(root), rel)


def real_root(root: str) -> str:
    """The workspace's real path, as `to_uri` names files under it."""
    return os.path.realpath(root)


def real_uri(root_real: str, rel: str) -> str:
    """`to_uri` for a root already resolved by `real_root` (a listing of many files resolves it
    once). Percent-encoding works character by character, so the root's part and the path's part
    are quoted apart and remembered: a page of a listing quotes each name once, not per turn."""
    return _quoted_root(root_real) + _quoted_rel(rel)


@functools.lru_cache(maxsize=64)
def _quoted_root(root_real: str) -> str:
    from urllib.parse import quote

    return "file://" + quote(root_real.replace(os.sep, "/").rstrip("/")) + "/"


@functools.lru_cache(maxsize=8192)
def _quoted_rel(rel: str) -> str:
    from urllib.parse import quote

    return quote(os.path.join(*rel.split("/")).replace(os.sep, "/"))


def from_uri(uri: str) -> str:
    from urllib.parse import unquote, urlparse

    parsed = urlparse(uri)
    if parsed.scheme != "file":
        raise BadPath(uri, "is not a file: URI")
    if parsed.netloc not in ("", "localhost"):
        raise BadPath(uri, "names a remote host")
    path = unquote(parsed.path)
    if not path.startswith("/") or parsed.query or parsed.fragment:
        raise BadPath(uri, "is not a well-formed file: URI (file:///absolute/path)")
    return path


# A URI's scheme (RFC 3986): a letter, then letters, digits, '+', '-' or '.', then ':'.
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")


def looks_like_uri(text: str) -> bool:
    """`text` starts with a URI scheme (`file:`, `untitled:`, `vscode-notebook-cell:`): to be read
    as a URI, never as a file name that happens to hold a colon."""
    return bool(_SCHEME.match(text))
