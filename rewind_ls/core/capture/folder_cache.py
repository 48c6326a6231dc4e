"""The scan's folder cache: `core.capture.walk.walk`'s answer without listing folders that cannot have changed.

Listing folders and matching ignore patterns cost more than the `lstat`s of the files in them. The
cache (a file in the store folder) keeps each folder's non-ignored names under the folder's mtime,
which changes whenever an entry is created, deleted or renamed in it: an unchanged folder is not
listed again, only its files are `lstat`ed. Any change to an ignore file, or a folder becoming a
repository, discards the cache (see `CachedWalk`); the answer is always the walk's.
"""

from __future__ import annotations

import os
import stat as stat_mod
import time

from rewind_ls.core.capture.file_reader import RACY_NS
from rewind_ls.core.capture.ignore import excluded, git_common_dir
from rewind_ls.core.capture.scan_settings import folder_cache_enabled
from rewind_ls.core.capture.walk import relative_skips, unrecordable, walk
from rewind_ls.core.fs import config

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence
    from typing import Any

    from rewind_ls.core.capture.ignore import IgnoreRules, RuleSet
    from rewind_ls.core.store import Store

# Per directory (root-relative prefix, "" or "a/b/"): (mtime_ns or None when too recent to trust,
# inode, file names, subdirectory names (both not ignored, each list NUL-joined: one string per
# folder loads several times faster than a tuple of names), .gitignore signature, info/exclude
# signature or None when the folder is not a repository). A signature is (size, mtime_ns, inode).
_DirEntry = tuple[
    "int | None",
    int,
    str,
    str,
    "tuple[int, int, int] | None",
    "tuple[int, int, int] | None",
]
_CACHE_NAME = "scan-dirs.v3"  # v3: nested checkouts are not listed


def skip_dirs(store: Store) -> list[str]:
    """Folders no walk enters. The store normally lives outside the workspace; REWIND_LS_HOME may
    point inside it."""
    return [store.path, config.home_dir()]


def walk_files(
    store: Store,
    rules: IgnoreRules,
    patterns: Sequence[str],
    start_ns: int,
    links: list[tuple[str, os.stat_result]] | None = None,
    deadline: float | None = None,
) -> Iterator[tuple[str, os.stat_result]]:
    """Every non-ignored regular file with its lstat: `core.capture.walk.walk`'s answer, from the folder
    cache when it is valid (`REWIND_LS_SCAN_CACHE=0` turns the cache off). Symbolic links listed
    go to `links`. Past `deadline` (time.monotonic()) the walk stops where it is: what it listed
    so far is yielded and the cache is left as it was (a hook's budget on a first checkpoint,
    whose caller then knows the listing is partial from the clock)."""
    skips = skip_dirs(store)
    if not folder_cache_enabled():
        yield from walk(store.root, rules, skips, links)
        return
    root = store.root
    racy_from = start_ns - RACY_NS
    skip = relative_skips(root, skips)
    rewindignore = _sig(os.path.join(root, ".rewindignore"), racy_from)
    fingerprint = (3, root, tuple(patterns), tuple(sorted(skip)), rewindignore)
    cache = None
    if rewindignore is None or rewindignore[1] >= 0:
        cache = _load(store, fingerprint)
    walker = CachedWalk(root, rules, skip, cache, racy_from)
    found: list[tuple[str, os.stat_result]] = []
    try:
        # Collected first: an invalid cache is found part-way, and the walk then starts over.
        cut = _collect(walker.walk(), found, deadline)
    except _Invalid:
        walker = CachedWalk(root, rules, skip, None, racy_from)
        found = []
        cut = _collect(walker.walk(), found, deadline)
    if not cut and (walker.listed or walker.new.keys() != walker.old.keys()):
        _save(store, fingerprint, walker.new)
    if links is not None:
        links.extend(walker.links)
    yield from found


def _collect(
    items: Iterator[tuple[str, os.stat_result]],
    into: list[tuple[str, os.stat_result]],
    deadline: float | None,
) -> bool:
    """Append `items` to `into` until `deadline` (checked every 1024 files); True when cut.
    Without it, the first hook of a large workspace walked every file before its budget was
    looked at (0.7 s of CPU at 100k files, the longest hook of a first checkpoint)."""
    if deadline is None:
        into.extend(items)
        return False
    append, now = into.append, time.monotonic
    for i, item in enumerate(items):
        if not i & 1023 and now() > deadline:
            return True
        append(item)
    return False


class _Invalid(Exception):
    """The directory cache no longer describes the ignore rules: walk without it."""


def _sig(path: str, racy_from: int) -> tuple[int, int, int] | None:
    try:
        st = os.lstat(path)
    except OSError:
        return None
    if not stat_mod.S_ISREG(st.st_mode):
        return None
    # A file changed within the timestamp tick could change again unseen: never matches.
    mtime = st.st_mtime_ns if st.st_mtime_ns < racy_from else -1
    return (st.st_size, mtime, st.st_ino)


class CachedWalk:
    """The same files as `core.capture.walk.walk`, without listing folders whose listing cannot have changed.

    A folder's mtime changes whenever an entry is created, deleted or renamed in it, so a folder
    whose (mtime, inode) match the cache has the same names as last time; only its files are
    `lstat`ed, and no ignore pattern is evaluated. Folders that changed are listed and filtered with
    the very rules the walk uses (`ignore.enter_dir` / `excluded`). Ignore rules live in files that
    change in place (`.gitignore`, `info/exclude`, `.rewindignore`): their signatures are part of
    the cache, and any difference (or a folder becoming or ceasing to be a repository, or gaining
    or losing a `.gitignore`) discards the whole cache. This is what git's untracked cache does.
    """

    def __init__(
        self,
        root: str,
        rules: IgnoreRules,
        skip: frozenset[str],
        cache: dict[str, _DirEntry] | None,
        racy_from: int,
    ) -> None:
        self.root = root
        self.links: list[tuple[str, os.stat_result]] = []  # symbolic links listed
        self.rules = rules
        self.skip = skip
        self.old = cache or {}
        self.new: dict[str, _DirEntry] = {}
        self.racy_from = racy_from
        self.listed = 0  # folders listed (not answered from the cache)
        self._sets: dict[str, tuple[RuleSet, ...]] = {}

    def walk(self) -> Iterator[tuple[str, os.stat_result]]:
        """(root-relative path, lstat) of every non-ignored regular file; raises `_Invalid` when
        the cache turns out not to describe the ignore rules any more."""
        stack = [""]
        lstat = os.lstat
        while stack:
            prefix = stack.pop()
            path = os.path.join(self.root, prefix) if prefix else self.root
            try:
                dst = lstat(path)
            except OSError:
                continue
            names = self._names(prefix, path, dst)
            if names is None:
                continue
            files, dirs = names
            base = (
                path.rstrip("/") + "/"
            )  # plain concatenation: os.path.join costs as much as lstat
            for name in files:
                try:
                    st = lstat(base + name)
                except OSError:
                    continue  # vanished since the listing
                if st.st_mode & 0o170000 == 0o100000:  # S_ISREG, without a call per file
                    yield prefix + name, st
                elif st.st_mode & 0o170000 == 0o120000:  # S_ISLNK
                    self.links.append((prefix + name, st))
            stack.extend(prefix + d + "/" for d in reversed(dirs))

    def _names(
        self, prefix: str, path: str, dst: os.stat_result
    ) -> tuple[Sequence[str], Sequence[str]] | None:
        """The folder's non-ignored (file names, subfolder names): from the cache when its entry
        still holds, else listed (None: it cannot be listed)."""
        e = self.old.get(prefix)
        if e is not None and e[0] is not None and e[0] == dst.st_mtime_ns and e[1] == dst.st_ino:
            gi = (
                _sig(os.path.join(path, ".gitignore"), self.racy_from) if e[4] is not None else None
            )
            if gi != e[4] or (gi is not None and gi[1] < 0):
                raise _Invalid(f"{prefix or '.'}/.gitignore changed")
            if e[5] is not None and self._exclude_sig(path) != e[5]:
                raise _Invalid(f"{prefix or '.'}: info/exclude changed")
            self.new[prefix] = e
            return (e[2].split("\0") if e[2] else ()), (e[3].split("\0") if e[3] else ())
        self.listed += 1
        try:
            with os.scandir(path) as it:
                entries = list(it)
        except OSError:
            return None
        is_repo = any(x.name == ".git" for x in entries)
        gi = _sig(os.path.join(path, ".gitignore"), self.racy_from)
        ex = self._exclude_sig(path) if is_repo else None
        # Cached listings below were filtered with this folder's rules as they were.
        if e is not None and (e[4] != gi or e[5] != ex):
            raise _Invalid(f"{prefix or '.'}: its ignore rules or repository changed")
        # Another checkout below the root (its own .git) is not walked (`walk`): nothing listed.
        files, dirs = ([], []) if is_repo and prefix else self._filter(prefix, entries)
        mtime = dst.st_mtime_ns if dst.st_mtime_ns < self.racy_from else None
        self.new[prefix] = (mtime, dst.st_ino, "\0".join(files), "\0".join(dirs), gi, ex)
        return files, dirs

    def _filter(self, prefix: str, entries: list[os.DirEntry[str]]) -> tuple[list[str], list[str]]:
        """Names of the listed entries the walk would yield or enter, by its very rules."""
        sets = self.rules.top + self._dirsets(prefix)
        files: list[str] = []
        dirs: list[str] = []
        for x in entries:
            name = x.name
            if name == ".git" or unrecordable(name):
                continue
            rel = prefix + name
            try:
                if x.is_dir(follow_symlinks=False):
                    if rel in self.skip or (sets and excluded(sets, rel, name, True)):
                        continue
                    dirs.append(name)
                elif x.is_file(follow_symlinks=False) or x.is_symlink():
                    if sets and excluded(sets, rel, name, False):
                        continue
                    files.append(name)
            except OSError:
                continue
        return files, dirs

    def _dirsets(self, prefix: str) -> tuple[RuleSet, ...]:
        """Rule sets in force for the children of `prefix`, as the walk computes them."""
        got = self._sets.get(prefix)
        if got is None:
            if prefix:
                parent = prefix[: prefix.rstrip("/").rfind("/") + 1]
                got = self.rules.context(prefix, self._dirsets(parent))
            else:
                got = self.rules.context("")
            self._sets[prefix] = got
        return got

    def _exclude_sig(self, path: str) -> tuple[int, int, int]:
        gitdir = git_common_dir(path)
        sig = _sig(os.path.join(gitdir, "info", "exclude"), self.racy_from) if gitdir else None
        # A repository without an exclude file still differs from a plain folder.
        return sig if sig is not None else (0, 0, 0)


def _load(store: Store, fingerprint: object) -> dict[str, _DirEntry] | None:
    import marshal

    try:
        with open(os.path.join(store.path, _CACHE_NAME), "rb") as f:
            data = marshal.load(f)
    except (OSError, EOFError, ValueError, TypeError):
        return None
    if not isinstance(data, tuple) or len(data) != 2 or data[0] != fingerprint:
        return None
    cache = data[1]
    return cache if isinstance(cache, dict) else None


def _save(store: Store, fingerprint: object, cache: dict[str, _DirEntry]) -> None:
    import marshal

    path = os.path.join(store.path, _CACHE_NAME)
    tmp = f"{path}.{os.getpid()}.tmp"
    data: Any = (fingerprint, cache)
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "wb") as f:
            marshal.dump(data, f)
        os.replace(tmp, path)  # atomic: a concurrent scan reads the old or the new cache
    except OSError:
        try:
            os.unlink(tmp)
        except OSError:
            pass
