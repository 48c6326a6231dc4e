"""Workspace scans: find every file that changed since rewind-ls last saw it, whoever changed it.

Edit tools report the files they touch; shell commands, formatters, code generators and `git
checkout` do not. At each turn boundary and after each shell command the hook scans the workspace:

- The walk (`core.walk`) lists every file that is not ignored (`.gitignore` files at any depth,
  `.git/info/exclude`, `.rewindignore`, `REWIND_LS_IGNORE`), never entering `.git`, an ignored
  folder or the store. Each file costs one `lstat`; only a file whose signature (size, mtime_ns,
  inode, mode) differs from the `known` row is opened, so an unchanged tree is never read and an
  ignored `node_modules` costs one pattern check.
- Listing folders and matching ignore patterns cost more than the `lstat`s: a folder cache (in the
  store folder) keeps each folder's non-ignored names under its mtime, which changes whenever an
  entry is created, deleted or renamed in it. An unchanged folder is not listed again; only its
  files are `lstat`ed. Any change to an ignore file, or a folder becoming a repository, discards the
  cache (see `_CachedWalk`); the answer is always the walk's.
- A known path that the walk did not list is `lstat`ed by name: gone means deleted; still there
  means it is ignored now but was recorded before (an edit tool wrote into an ignored folder), and
  it keeps the old re-check.
- A path never seen before is "created" (before = absent) only when the workspace baseline is
  complete and the file's ctime is after the previous scan began. Otherwise it is adopted silently:
  the file was there already (the baseline is still being taken, or the person just un-ignored it),
  and calling it created would make a rewind delete it.

The first scan of a workspace is its baseline: every file goes into the store (content-addressed,
so later scans and turns store nothing twice). Files are read, hashed and compressed in a thread
pool (hashlib and zlib release the GIL) and written in large transactions. A baseline may run under
a time budget (`REWIND_LS_BASELINE_SECONDS`, default 10 s in hooks, where the agent waits):
whatever is left is taken at the next boundary, and `rewind-ls scan` takes the rest with no limit.

Two phases keep a crash or a concurrent writer from losing a change: files are read and compressed
without holding the store's lock, then one transaction stores the blobs, records the changes and
moves each `known` row, but only if that row is still the one the scan compared against (otherwise
another process recorded the path in between, and it owns that change).

Sessions sharing a workspace: a path another session's edit tool is writing (before recorded, after
not yet) is left to that session. While another session runs a shell command (registered at its
`PreToolUse`), files whose ctime is after that command started, and deletions, are deferred: that
session's `PostToolUse` scan attributes them.

Environment:
`REWIND_LS_IGNORE`            extra ignore patterns, comma-separated, gitignore syntax
                              (e.g. `*.tmp,/data/,!keep.tmp`), on top of `.rewindignore`
`REWIND_LS_BASELINE_SECONDS`  time budget of a baseline taken by a hook (default 10; 0 = no limit)
`REWIND_LS_SCAN`              `0` turns workspace scans off (edit tools are still recorded)
`REWIND_LS_SCAN_CACHE`        `0` lists every folder at every scan (no folder cache)
"""

from __future__ import annotations

import json
import os
import re
import stat as stat_mod
import time
import zlib
from hashlib import sha256

from rewind_ls.core import config
from rewind_ls.core.store import (
    ABSENT,
    ABSENT_VERSION,
    FILE,
    RAW,
    ZLIB,
    Store,
    Version,
    too_large,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator, Sequence
    from typing import Any

    from rewind_ls.core.ignore import IgnoreRules, RuleSet

    # (what: "changes" | "baseline", files done, files to do); called from the scanning thread.
    Progress = Callable[[str, int, int], None]
    # Called inside the scan's transaction with the changes found (path, before, after); records
    # them in a turn and returns its id (None: recorded nowhere).
    Change = tuple[str, Version, Version]
    Attribute = Callable[[list[Change]], "str | None"]

META_BASELINE = "scan.baseline"  # "complete" once every non-ignored file has been stored
META_WATERMARK = "scan.watermark_ns"  # when the last scan began (ctime test for new files)
META_UNRECORDED = "scan.unrecorded"  # JSON list of "path: reason" the last scan could not record
SHELL_RUN = "scan.shell-run:"  # meta key prefix: "<prefix><session> <tool_use_id>" -> start ns

# Timestamps come from the kernel's coarse clock, which lags time.time_ns() by up to a tick or two.
_CLOCK_SLACK_NS = 2_000_000_000
# A file whose mtime is this close to the moment it was read could be rewritten within the same
# timestamp tick with the same size; its signature is not trusted (the next scan reads it again).
_RACY_NS = 100_000_000
# A shell run whose PostToolUse never came (agent killed) stops deferring after this long.
_SHELL_RUN_EXPIRY_NS = 15 * 60 * 1_000_000_000
_BATCH_FILES = 2000
_BATCH_BYTES = 48 << 20
# Below this many files to read, a thread pool costs more than it saves.
_POOL_MIN = 64


def extra_ignore_patterns() -> list[str]:
    raw = os.environ.get("REWIND_LS_IGNORE", "")
    return [p.strip() for p in raw.split(",") if p.strip()]


def scans_enabled() -> bool:
    return os.environ.get("REWIND_LS_SCAN", "1") != "0"


def hook_baseline_budget() -> float | None:
    raw = os.environ.get("REWIND_LS_BASELINE_SECONDS")
    try:
        value = float(raw) if raw else 10.0
    except ValueError:
        value = 10.0
    return None if value <= 0 else value


def baseline_complete(store: Store) -> bool:
    return store.meta(META_BASELINE) == "complete"


class ScanResult:
    """What one scan saw and did."""

    __slots__ = (
        "adopted",
        "baseline_complete",
        "changes",
        "deferred",
        "elapsed",
        "files",
        "read",
        "skipped",
        "turn",
        "watched",
    )

    def __init__(self) -> None:
        self.changes: list[Change] = []  # recorded (or found, when nothing was open to record into)
        self.turn: str | None = None  # where the changes were recorded
        self.files = 0  # files the walk listed
        self.read = 0  # files opened
        self.adopted = 0  # files added to the baseline
        self.deferred = 0  # left to another session's running shell command
        self.skipped: list[str] = []  # "path: reason" for files that could not be read
        self.baseline_complete = False
        self.elapsed = 0.0
        self.watched = False  # only the paths the workspace watcher reported were looked at

    def __repr__(self) -> str:
        return (
            f"ScanResult(files={self.files}, read={self.read}, changes={len(self.changes)}, "
            f"adopted={self.adopted}, deferred={self.deferred}, baseline={self.baseline_complete})"
        )


class _Candidate:
    """A path whose signature differs from its known row."""

    __slots__ = ("known_seq", "old", "rel", "st")

    def __init__(
        self, rel: str, st: os.stat_result | None, old: Version | None, known_seq: int | None
    ) -> None:
        self.rel = rel
        self.st = st
        self.old = old
        self.known_seq = known_seq


class _Read:
    """A file's content as read by a worker: version, stored form, the fstat it was read under."""

    __slots__ = ("codec", "data", "payload", "st", "version")

    def __init__(
        self,
        version: Version,
        st: os.stat_result,
        payload: bytes | None,
        codec: int,
        data: bytes | None,
    ) -> None:
        self.version = version
        self.st = st
        self.payload = payload
        self.codec = codec
        self.data = data


def _read_file(full: str, keep_raw: bool, limit: int) -> _Read | str:
    """Read, hash and compress one file; a string says why it could not be read. Thread-safe."""
    try:
        # O_NOFOLLOW: a path swapped for a link after the walk is not followed out of the workspace;
        # O_NONBLOCK: a path swapped for a FIFO does not hang the hook.
        fd = os.open(
            full, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
        )
    except FileNotFoundError:
        return "vanished"
    except OSError as exc:
        return exc.strerror or str(exc)
    try:
        st = os.fstat(fd)
        if not stat_mod.S_ISREG(st.st_mode):
            return "is not a regular file"
        mode = stat_mod.S_IMODE(st.st_mode)
        if st.st_size > limit:
            return _Read(too_large(st), st, None, RAW, None)
        # Read to end of file: it may have grown since fstat, and a read may come back short.
        parts = [os.read(fd, st.st_size + 1)]
        while parts[-1]:
            parts.append(os.read(fd, 1 << 20))
        data = parts[0] if len(parts) == 2 else b"".join(parts)
    except OSError as exc:
        return exc.strerror or str(exc)
    finally:
        os.close(fd)
    h = sha256(data).hexdigest()
    # Level 1 like git's loose objects: source compresses nearly as well, several times faster.
    packed = zlib.compress(data, 1)
    payload, codec = (packed, ZLIB) if len(packed) < len(data) else (data, RAW)
    return _Read(Version(FILE, h, mode, len(data)), st, payload, codec, data if keep_raw else None)


def _sig_matches(
    st: os.stat_result, size: int | None, mtime_ns: int | None, ino: int | None, mode: int | None
) -> bool:
    return (
        mtime_ns == st.st_mtime_ns
        and ino == st.st_ino
        and size == st.st_size
        and mode == stat_mod.S_IMODE(st.st_mode)
    )


def _in_flight_shell_start(store: Store, session_id: str | None, now_ns: int) -> int | None:
    """When the oldest shell command of another session still running began (None: none is)."""
    rows = store.meta_with_prefix(SHELL_RUN)
    oldest: int | None = None
    for key, value in rows:
        owner = key[len(SHELL_RUN) :].split(" ", 1)[0]
        try:
            started = int(value)
        except ValueError:
            continue
        if owner == session_id or now_ns - started > _SHELL_RUN_EXPIRY_NS:
            continue
        oldest = started if oldest is None else min(oldest, started)
    return oldest


def shell_started(store: Store, session_id: str, tool_use_id: str) -> None:
    """A session's shell command is about to run: other sessions' scans leave its effects to it."""
    store.set_meta(f"{SHELL_RUN}{session_id} {tool_use_id}", str(time.time_ns()))


def shell_finished(store: Store, session_id: str, tool_use_id: str | None = None) -> None:
    """Forget one shell run of the session (all of them, at a turn boundary), and expired ones."""
    now = time.time_ns()
    with store.transaction():
        if tool_use_id is None:
            store.delete_meta_prefix(f"{SHELL_RUN}{session_id} ")
        else:
            store.delete_meta(f"{SHELL_RUN}{session_id} {tool_use_id}")
        store.delete_meta_prefix(SHELL_RUN, value_below=now - _SHELL_RUN_EXPIRY_NS)


class _Invalid(Exception):
    """The directory cache no longer describes the ignore rules: walk without it."""


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
_CACHE_NAME = "scan-dirs.v2"


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


class _CachedWalk:
    """The same files as `core.walk.walk`, without listing folders whose listing cannot have changed.

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
        self.rules = rules
        self.skip = skip
        self.old = cache or {}
        self.new: dict[str, _DirEntry] = {}
        self.racy_from = racy_from
        self.listed = 0  # folders listed (not answered from the cache)
        self._sets: dict[str, tuple[RuleSet, ...]] = {}

    def _dirsets(self, prefix: str) -> tuple[RuleSet, ...]:
        """Rule sets in force for the children of `prefix`, as the walk computes them."""
        got = self._sets.get(prefix)
        if got is None:
            if prefix:
                parent = prefix[: prefix.rstrip("/").rfind("/") + 1]
                got = self.rules._context(prefix, self._dirsets(parent))
            else:
                got = self.rules._context("")
            self._sets[prefix] = got
        return got

    def _exclude_sig(self, path: str) -> tuple[int, int, int]:
        from rewind_ls.core.ignore import _gitdir

        gitdir = _gitdir(path)
        sig = _sig(os.path.join(gitdir, "info", "exclude"), self.racy_from) if gitdir else None
        # A repository without an exclude file still differs from a plain folder.
        return sig if sig is not None else (0, 0, 0)

    def walk(self) -> Iterator[tuple[str, os.stat_result]]:
        from rewind_ls.core.ignore import excluded
        from rewind_ls.core.walk import unrecordable

        stack = [""]
        lstat = os.lstat
        join = os.path.join
        while stack:
            prefix = stack.pop()
            path = join(self.root, prefix) if prefix else self.root
            try:
                dst = lstat(path)
            except OSError:
                continue
            e = self.old.get(prefix)
            mtime = dst.st_mtime_ns if dst.st_mtime_ns < self.racy_from else None
            if (
                e is not None
                and e[0] is not None
                and e[0] == dst.st_mtime_ns
                and e[1] == dst.st_ino
            ):
                gi = _sig(join(path, ".gitignore"), self.racy_from) if e[4] is not None else None
                if gi != e[4] or (gi is not None and gi[1] < 0):
                    raise _Invalid(f"{prefix or '.'}/.gitignore changed")
                if e[5] is not None and self._exclude_sig(path) != e[5]:
                    raise _Invalid(f"{prefix or '.'}: info/exclude changed")
                files = e[2].split("\0") if e[2] else ()
                dirs = e[3].split("\0") if e[3] else ()
                self.new[prefix] = e
            else:
                self.listed += 1
                try:
                    with os.scandir(path) as it:
                        entries = list(it)
                except OSError:
                    continue
                is_repo = any(x.name == ".git" for x in entries)
                gi = _sig(join(path, ".gitignore"), self.racy_from)
                ex = self._exclude_sig(path) if is_repo else None
                # Cached listings below were filtered with this folder's rules as they were.
                if e is not None and (e[4] != gi or e[5] != ex):
                    raise _Invalid(f"{prefix or '.'}: its ignore rules or repository changed")
                sets = self.rules.top + self._dirsets(prefix)
                fl: list[str] = []
                dl: list[str] = []
                for x in entries:
                    name = x.name
                    if name == ".git" or unrecordable(name):
                        continue
                    rel = prefix + name
                    try:
                        if x.is_dir(follow_symlinks=False):
                            if rel in self.skip or (sets and excluded(sets, rel, name, True)):
                                continue
                            dl.append(name)
                        elif x.is_file(follow_symlinks=False):
                            if sets and excluded(sets, rel, name, False):
                                continue
                            fl.append(name)
                    except OSError:
                        continue
                files, dirs = fl, dl
                self.new[prefix] = (mtime, dst.st_ino, "\0".join(fl), "\0".join(dl), gi, ex)
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
            stack.extend(prefix + d + "/" for d in reversed(dirs))


def _load_dir_cache(store: Store, fingerprint: object) -> dict[str, _DirEntry] | None:
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


def _save_dir_cache(store: Store, fingerprint: object, cache: dict[str, _DirEntry]) -> None:
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


# apply_disk's temporary, backup and aside names: `.<name>.rewind-<8 hex>.tmp|bak[.<8 hex>]`.
_RESTORE_TEMP = re.compile(r"(^|/)\.[^/]*\.rewind-[0-9a-f]{8}\.(tmp|bak)(\.[0-9a-f]{8})?$")
# Claude Code's atomic writes: `<name>.tmp.<pid>.<hex>`, renamed over `<name>` an instant later (seen
# with 2.1.197). A scan that catches one mid-write would record a file that never really existed.
_AGENT_TEMP = re.compile(r"\.tmp\.[0-9]+\.[0-9a-f]{8,}$")


def _what(st: os.stat_result) -> str:
    if stat_mod.S_ISLNK(st.st_mode):
        return "a symbolic link"
    if stat_mod.S_ISDIR(st.st_mode):
        return "a folder"
    return "not a regular file"


def unrecorded(store: Store) -> list[str]:
    """ "path: reason" for every file the last scan could not record (unreadable, a link or a
    folder where a file was)."""
    raw = store.meta(META_UNRECORDED)
    try:
        found = json.loads(raw) if raw else []
    except ValueError:
        return []
    return [str(x) for x in found] if isinstance(found, list) else []


def _walk_files(
    store: Store, rules: IgnoreRules, patterns: Sequence[str], start_ns: int
) -> Iterator[tuple[str, os.stat_result]]:
    """Every non-ignored regular file with its lstat: `core.walk.walk`'s answer, from the folder
    cache when it is valid (`REWIND_LS_SCAN_CACHE=0` turns the cache off)."""
    from rewind_ls.core.walk import _relative_skips, walk

    skip_dirs = _skip_dirs(store)
    if os.environ.get("REWIND_LS_SCAN_CACHE", "1") == "0":
        yield from walk(store.root, rules, skip_dirs)
        return
    root = store.root
    racy_from = start_ns - _RACY_NS
    skip = _relative_skips(root, skip_dirs)
    rewindignore = _sig(os.path.join(root, ".rewindignore"), racy_from)
    fingerprint = (2, root, tuple(patterns), tuple(sorted(skip)), rewindignore)
    cache = None
    if rewindignore is None or rewindignore[1] >= 0:
        cache = _load_dir_cache(store, fingerprint)
    walker = _CachedWalk(root, rules, skip, cache, racy_from)
    found: list[tuple[str, os.stat_result]] = []
    try:
        # Collected first: an invalid cache is found part-way, and the walk then starts over.
        found.extend(walker.walk())
    except _Invalid:
        walker = _CachedWalk(root, rules, skip, None, racy_from)
        found = list(walker.walk())
    if walker.listed or walker.new.keys() != walker.old.keys():
        _save_dir_cache(store, fingerprint, walker.new)
    yield from found


def _skip_dirs(store: Store) -> list[str]:
    # The store normally lives outside the workspace; REWIND_LS_HOME may point inside it.
    return [store.path, config.home_dir()]


def scan(
    store: Store,
    attribute: Attribute,
    session_id: str | None = None,
    budget: float | None = None,
    progress: Progress | None = None,
    workers: int | None = None,
    extra_patterns: Sequence[str] | None = None,
) -> ScanResult:
    """Find and record every change in the workspace since rewind-ls last saw it (module docstring).

    `attribute` is called inside the recording transaction with the changes (never with an empty
    list) and returns the turn that owns them. `session_id` is the scanning session: its own open
    edits and shell runs are not deferred. `budget` bounds the time spent adding files to an
    incomplete baseline (changes to known files are always recorded). `progress(what, done, total)`
    reports reading.
    """
    from rewind_ls.core import watched_scan
    from rewind_ls.core.ignore import IgnoreRules
    from rewind_ls.core.walk import _relative_skips

    started = time.monotonic()
    start_ns = time.time_ns()
    result = ScanResult()
    root = store.root
    have_baseline = baseline_complete(store)
    raw_mark = store.meta(META_WATERMARK)
    watermark = int(raw_mark) - _CLOCK_SLACK_NS if raw_mark and raw_mark.isdigit() else None
    defer_from = _in_flight_shell_start(store, session_id, start_ns)
    if defer_from is not None:
        defer_from -= _CLOCK_SLACK_NS
    busy = store.paths_in_flight(except_session=session_id)

    # The signature of every known file is all a scan compares; versions and row sequence numbers
    # are fetched only for paths that differ.
    patterns = extra_ignore_patterns() if extra_patterns is None else list(extra_patterns)
    # The watcher syncs before anything is read (rules too): only what it saw change, or all.
    watched = watched_scan.begin(store, patterns, have_baseline)
    rules = IgnoreRules.load(root, patterns)
    if watched.entries is None:
        known = store.known_file_signatures()
        gone = store.known_absent_paths()
        files = _walk_files(store, rules, patterns, start_ns)
    else:
        result.watched = True
        known, gone = watched.known(store)
        files = watched.files(rules, _relative_skips(root, _skip_dirs(store)))
    changed: list[_Candidate] = []  # known paths (or known-absent) whose signature differs
    new: list[_Candidate] = []  # never seen
    pop = known.pop
    for rel, st in files:
        if ".rewind-" in rel and _RESTORE_TEMP.search(rel):
            continue  # a restore's own temporary or backup file (apply_disk._names)
        if ".tmp." in rel and _AGENT_TEMP.search(rel):
            continue  # an agent's write in flight
        result.files += 1
        k = pop(rel, None)
        if (
            k is not None
            and k[2] == st.st_mtime_ns
            and k[1] == st.st_size
            and k[3] == st.st_ino
            and k[4] == st.st_mode & 0o7777
        ):
            continue
        if rel in busy:
            continue
        if defer_from is not None and st.st_ctime_ns >= defer_from:
            result.deferred += 1
            continue
        if k is None and rel not in gone:
            new.append(_Candidate(rel, st, None, None))
        else:
            changed.append(_Candidate(rel, st, None, None))
    # Known paths the walk did not list: deleted, or ignored now (then re-checked by name).
    for rel, k in known.items():
        if rel in busy:
            continue
        try:
            st2: os.stat_result | None = os.lstat(os.path.join(root, *rel.split("/")))
        except (FileNotFoundError, NotADirectoryError):
            st2 = None
        except OSError as exc:  # an unreadable folder: unknown, so not a deletion
            result.skipped.append(f"{rel}: {exc.strerror or exc}")
            continue
        if st2 is not None and not stat_mod.S_ISREG(st2.st_mode):
            # A link, folder or device where a file was: not recorded, so said by name.
            result.skipped.append(f"{rel}: {_what(st2)} now where a file was; not recorded")
            continue
        if st2 is not None and _sig_matches(st2, k[1], k[2], k[3], k[4]):
            continue
        if defer_from is not None and (st2 is None or st2.st_ctime_ns >= defer_from):
            result.deferred += 1
            continue
        changed.append(_Candidate(rel, st2, None, None))
    del known, gone

    if changed:
        _fill_old_versions(store, changed)
    # New files: created (before = absent) or adopted into the baseline, by their ctime.
    created_new: list[_Candidate] = []
    adopt: list[_Candidate] = []
    for c in new:
        assert c.st is not None
        if have_baseline and watermark is not None and c.st.st_ctime_ns >= watermark:
            c.old = ABSENT_VERSION
            created_new.append(c)
        else:
            adopt.append(c)

    must = changed + created_new
    deadline = None if budget is None else started + budget
    complete = _process(
        store, attribute, session_id, must, adopt, deadline, progress, workers, result, start_ns
    )
    # The watermark must not pass a deferred run's start, or its new files would later look old.
    mark = start_ns if defer_from is None else min(start_ns, defer_from + _CLOCK_SLACK_NS)
    with store.transaction():
        store.set_meta(META_WATERMARK, str(mark))
        # What this scan could not record, by name: `turns`, `doctor` and previews show it.
        unrecorded = json.dumps(sorted(set(result.skipped))[:200])
        if store.meta(META_UNRECORDED) != unrecorded:
            store.set_meta(META_UNRECORDED, unrecorded)
        if complete and not have_baseline:
            store.set_meta(META_BASELINE, "complete")
        clean = complete and not result.deferred and not result.skipped and not busy
        watched.save_mark(store, clean)
    result.baseline_complete = complete or have_baseline
    result.elapsed = time.monotonic() - started
    return result


def _fill_old_versions(store: Store, cands: list[_Candidate]) -> None:
    by_rel = {c.rel: c for c in cands}
    for rel, (version, seq) in store.known_versions(list(by_rel)).items():
        c = by_rel[rel]
        c.old = version
        # The row this scan's change is relative to; the commit checks it is still there.
        c.known_seq = seq


def _process(
    store: Store,
    attribute: Attribute,
    session_id: str | None,
    must: list[_Candidate],
    adopt: list[_Candidate],
    deadline: float | None,
    progress: Progress | None,
    workers: int | None,
    result: ScanResult,
    start_ns: int,
) -> bool:
    """Read the candidates and record them. Returns False when the budget cut the baseline short."""
    root = store.root
    limit = config.max_file_bytes()
    # Changes first (always, in one transaction, so a turn's changes are recorded together), then
    # the baseline in batches under the budget.
    reads: list[tuple[_Candidate, _Read | str | None]] = []
    for c in must:
        if c.st is None:
            reads.append((c, None))
        else:
            full = os.path.join(root, *c.rel.split("/"))
            keep = c.old is not None and c.old.kind == FILE
            reads.append((c, _read_file(full, keep, limit)))
    done = len(reads)
    if must:
        _commit(store, attribute, reads, result, start_ns, record=True)
        if progress is not None:
            progress("changes", done, len(must))
    if not adopt:
        return True

    complete = True
    batch: list[tuple[_Candidate, _Read | str | None]] = []
    batch_bytes = 0
    # A baseline writes the tree's content once: check the WAL into the database once at the end
    # (and truncate it) rather than every 4 MB, each time with an fsync.
    with store.checkpoint_at_end():
        for c, r in _read_many(root, adopt, limit, workers, deadline):
            if r is None:  # the budget ran out
                complete = False
                break
            batch.append((c, r))
            done += 1
            if isinstance(r, _Read) and r.payload is not None:
                batch_bytes += len(r.payload)
            if len(batch) >= _BATCH_FILES or batch_bytes >= _BATCH_BYTES:
                _commit(store, attribute, batch, result, start_ns, record=False)
                batch, batch_bytes = [], 0
                if progress is not None:
                    progress("baseline", done - len(must), len(adopt))
        if batch:
            _commit(store, attribute, batch, result, start_ns, record=False)
    if progress is not None:
        progress("baseline", done - len(must), len(adopt))
    return complete


def _read_chunk(fulls: list[str], limit: int) -> list[_Read | str]:
    return [_read_file(full, False, limit) for full in fulls]


def _read_many(
    root: str, cands: list[_Candidate], limit: int, workers: int | None, deadline: float | None
) -> Iterable[tuple[_Candidate, _Read | str | None]]:
    """Read files in order, in a thread pool when there are many; (c, None) once past `deadline`."""
    base = root.rstrip("/") + "/"
    fulls = [base + c.rel for c in cands]
    if len(cands) < _POOL_MIN or workers == 1:
        for c, full in zip(cands, fulls, strict=True):
            if deadline is not None and time.monotonic() > deadline:
                yield c, None
                return
            yield c, _read_file(full, False, limit)
        return
    from collections import deque
    from concurrent.futures import Future, ThreadPoolExecutor

    n = workers or max(2, min(8, os.cpu_count() or 2))
    # Files go to the pool in chunks: one task per file costs more in executor overhead than
    # hashing and compressing a typical 2 KB source file does.
    chunk = 64
    window = n * 4  # chunks in flight: bounded look-ahead, memory stays flat on huge trees
    with ThreadPoolExecutor(n, thread_name_prefix="rewind-ls-read") as pool:
        pending: deque[tuple[int, Future[list[_Read | str]]]] = deque()
        stopped = False
        for start in range(0, len(cands), chunk):
            if deadline is not None and time.monotonic() > deadline:
                stopped = True
                break
            pending.append((start, pool.submit(_read_chunk, fulls[start : start + chunk], limit)))
            if len(pending) >= window:
                first, fut = pending.popleft()
                for i, r in enumerate(fut.result()):
                    yield cands[first + i], r
        while pending:
            first, fut = pending.popleft()
            for i, r in enumerate(fut.result()):
                yield cands[first + i], r
        if stopped:
            yield cands[0], None


def _commit(
    store: Store,
    attribute: Attribute,
    reads: list[tuple[_Candidate, _Read | str | None]],
    result: ScanResult,
    start_ns: int,
    record: bool,
) -> None:
    """Store blobs, record changes and move `known` rows, in one transaction (module docstring)."""
    racy_from = time.time_ns() - _RACY_NS
    blobs: list[tuple[str, int, int, bytes]] = []
    rebase: list[tuple[str, str, bytes]] = []
    updates: list[tuple[_Candidate, Version, os.stat_result | None]] = []
    for c, r in reads:
        if isinstance(r, str):
            if r != "vanished":
                result.skipped.append(f"{c.rel}: {r}")
                continue
            r = None
            if c.old is None or c.old.kind == ABSENT:
                continue  # came and went between the walk and the read
        if r is None:
            updates.append((c, ABSENT_VERSION, None))
            continue
        result.read += 1
        v = r.version
        if r.payload is not None and v.hash is not None:
            blobs.append((v.hash, v.size, r.codec, r.payload))
            if r.data is not None and c.old is not None and c.old.kind == FILE and c.old.hash:
                rebase.append((c.old.hash, v.hash, r.data))
        updates.append((c, v, r.st))
    if not updates:
        return
    with store.transaction():
        if blobs:
            store.insert_packed_blobs(blobs)
        for old_hash, new_hash, data in rebase:
            if old_hash != new_hash:
                store._rebase_as_delta(old_hash, new_hash, data)
        found: list[Change] = []
        rows: list[tuple[object, ...]] = []
        for c, v, st in updates:
            if c.known_seq is not None:
                # Still the row the scan compared against? Otherwise another process recorded it.
                if store.known_seq(c.rel) != c.known_seq:
                    continue
            elif record and store.known_seq(c.rel) is not None:
                continue
            mtime = None
            if st is not None:
                mtime = st.st_mtime_ns if st.st_mtime_ns < racy_from else None
            rows.append(
                (c.rel, v.kind, v.hash, v.mode, v.size, mtime, None if st is None else st.st_ino)
            )
            old = c.old
            if (
                record
                and old is not None
                and (not old.same_content(v) or (old.mode or 0) != (v.mode or 0))
            ):
                found.append((c.rel, old, v))
            elif not record:
                result.adopted += 1
        if found:
            result.changes.extend(found)
            result.turn = attribute(found) or result.turn
        if rows:
            # Adoptions never replace a row: one that appeared meanwhile is someone else's record.
            store.set_known_many(rows, replace=record)
