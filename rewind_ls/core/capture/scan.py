"""Workspace scans: find every file that changed since rewind-ls last saw it, whoever changed it.

Edit tools report the files they touch; shell commands, formatters, code generators and `git
checkout` do not. At each turn boundary and after each shell command the hook scans the workspace:

- The walk (`core.capture.walk`) lists every file that is not ignored (`.gitignore` files at any depth,
  `.git/info/exclude`, `.rewindignore`, `REWIND_LS_IGNORE`), never entering `.git`, an ignored
  folder or the store. Each file costs one `lstat`; only a file whose signature (size, mtime_ns,
  inode, mode) differs from the `known` row is opened (`core.capture.file_reader.same_signature`), so an
  unchanged tree is never read and an ignored `node_modules` costs one pattern check.
- Listing folders and matching ignore patterns cost more than the `lstat`s: the folder cache
  (`core.capture.folder_cache`) does not list a folder whose mtime did not change; the answer is always
  the walk's.
- A known path that the walk did not list is `lstat`ed by name: gone means deleted; still there
  means it is ignored now but was recorded before (an edit tool wrote into an ignored folder), and
  it keeps the old re-check.
- A path never seen before is "created" (before = absent) only when the workspace baseline is
  complete and the file's ctime is after the previous scan began, or it was moved: a folder renamed
  (`mv dir1 dir2`) keeps its files' ctimes, so a new path whose inode is that of a known path gone in
  this scan is the same file moved (its old path is recorded deleted, the new one created), and a
  file below a folder never seen before whose own ctime is after the previous scan (a folder moved
  in from outside the workspace) is created too. Otherwise it is adopted silently:
  the file was there already (the baseline is still being taken, or the person just un-ignored it),
  and calling it created would make a rewind delete it.

The first scan of a workspace is its baseline: every file goes into the store (content-addressed,
so later scans and turns store nothing twice). Files are read and hashed in a thread pool
(`core.capture.file_reader.read_many`) and written in large transactions, where the store packs them. A baseline may run under
a time budget (`REWIND_LS_BASELINE_SECONDS`, default 10 s in hooks, where the agent waits):
whatever is left is taken at the next boundary, and `rewind-ls scan` takes the rest with no limit.

Two phases keep a crash or a concurrent writer from losing a change: files are read without
holding the store's lock, then a compare-and-swap commit (`core.capture.scan_commit`) records them.

Sessions sharing a workspace: a path another session's edit tool is writing (before recorded, after
not yet) is left to that session. While another session runs a shell command (`core.capture.shell_runs`),
files whose ctime is after that command started, and deletions, are deferred: that session's
`PostToolUse` scan attributes them. When the scanning session's own shell command ran at the same
time (the scan is its end), such a file could be either command's work: it is recorded in both
sessions' turns as shared (`Store.record_shared`), so a rewind of either is a conflict naming the
other rather than a silent overwrite.

Settings (environment variables): `core.capture.scan_settings`.
"""

from __future__ import annotations

import json
import os
import re
import stat as stat_mod
import time
from contextlib import nullcontext

from rewind_ls.core.capture import baseline_spawn, watched_scan
from rewind_ls.core.capture.baseline_spawn import META_BASELINE as META_BASELINE
from rewind_ls.core.capture.baseline_spawn import baseline_complete as baseline_complete
from rewind_ls.core.capture.file_reader import FileRead, read_file, read_many, same_signature
from rewind_ls.core.capture.folder_cache import skip_dirs, walk_files
from rewind_ls.core.capture.ignore import IgnoreRules
from rewind_ls.core.capture.scan_commit import Candidate, commit
from rewind_ls.core.capture.scan_commit import ScanResult as ScanResult
from rewind_ls.core.capture.scan_links import META_UNRECORDED as META_UNRECORDED
from rewind_ls.core.capture.scan_links import note_links
from rewind_ls.core.capture.scan_links import unrecorded as unrecorded
from rewind_ls.core.capture.scan_settings import extra_ignore_patterns
from rewind_ls.core.capture.shell_runs import (
    BACKGROUND_JOB,
    CLOCK_SLACK_NS,
    in_flight,
    session_runs,
    surely_before,
)
from rewind_ls.core.capture.walk import relative_skips
from rewind_ls.core.fs import config
from rewind_ls.core.fs.paths import nested_checkout
from rewind_ls.core.store import ABSENT_VERSION, FILE, Store

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator, Sequence

    from rewind_ls.core.capture.scan_commit import Attribute, Change, Reads
    from rewind_ls.core.store.codec import Pack

    # (what: "changes" | "baseline", files done, files to do); called from the scanning thread.
    Progress = Callable[[str, int, int], None]
    # path -> (path, size, mtime_ns, ino, mode), as `Store.known_file_signatures` gives them.
    KnownSignatures = dict[str, tuple[str, int | None, int | None, int | None, int | None]]
    # What a scan compares: the listed files with their lstat, the known signatures, the paths
    # known to be absent.
    Listing = tuple[Iterator[tuple[str, os.stat_result]], KnownSignatures, set[str]]

META_WATERMARK = "scan.watermark_ns"  # when the last scan began (ctime test for new files)
# Timestamps come from the kernel's coarse clock, which lags time.time_ns() by up to a tick or two.
_CLOCK_SLACK_NS = CLOCK_SLACK_NS
# A baseline taken in one process (no worker: `REWIND_LS_BASELINE_SECONDS` set, `rewind-ls scan`)
# commits this many files at a time: fewer, larger transactions rewrite the random-keyed hash
# index less often (100k files: the scanning thread's commits 2.0 -> 1.7 s CPU against 2,000).
_BATCH_FILES = 10000
_BATCH_BYTES = 48 << 20
_WORKER_BATCH_FILES = 500

# apply_disk's temporary, backup and aside names: `.<name>.rewind-<8 hex>.tmp|bak|aside[.<8 hex>]`.
_RESTORE_TEMP = re.compile(r"(^|/)\.[^/]*\.rewind-[0-9a-f]{8}\.(tmp|bak|aside)(\.[0-9a-f]{8})?$")
# Claude Code's atomic writes: `<name>.tmp.<pid>.<hex>`, renamed over `<name>` an instant later (seen
# with 2.1.197). A scan that catches one mid-write would record a file that never really existed.
_AGENT_TEMP = re.compile(r"\.tmp\.[0-9]+\.[0-9a-f]{8,}$")


def scan(
    store: Store,
    attribute: Attribute,
    session_id: str | None = None,
    budget: float | None = None,
    progress: Progress | None = None,
    workers: int | None = None,
    extra_patterns: Sequence[str] | None = None,
    background: bool = False,
    adopt_only: bool = False,
) -> ScanResult:
    """Find and record every change in the workspace since rewind-ls last saw it (module docstring).

    `attribute` is called inside the recording transaction with the changes (never with an empty
    list) and returns the turn that owns them. `session_id` is the scanning session: its own open
    edits and shell runs are not deferred. `budget` bounds the time spent adding files to an
    incomplete baseline (changes to known files are always recorded). `progress(what, done, total)`
    reports reading. `background`: when the budget cuts the baseline short, a detached worker
    takes the rest (`core.capture.baseline_spawn`), and while one runs this scan adopts nothing.
    `adopt_only` (that worker): only files never seen go into the baseline, with no change
    recorded and the watermark and the watcher's mark left to the hooks' scans.
    """
    started = time.monotonic()
    run = ScanRun(store, attribute, session_id, progress, workers)
    if run.others and run.own_from is not None:
        run.attribute = run.sharing(run.attribute)
    if budget is not None:
        run.deadline = started + budget
    have_baseline = baseline_complete(store)
    if adopt_only:
        return _adopt_only(store, run, have_baseline, extra_patterns, started)
    worker = background and not have_baseline
    lean = False  # the worker is taking the baseline: only the known files are looked at
    if worker:
        lean = baseline_spawn.busy(store.path)
    raw_mark = store.meta(META_WATERMARK)
    watermark = int(raw_mark) - _CLOCK_SLACK_NS if raw_mark and raw_mark.isdigit() else None
    patterns = extra_ignore_patterns() if extra_patterns is None else list(extra_patterns)
    # The watcher syncs before anything is read (rules too): only what it saw change, or all.
    if lean:
        run.deadline = started
        listing, watched = _lean_listing(store, run, patterns, have_baseline)
    else:
        watched = watched_scan.begin(store, patterns, have_baseline)
        # A walk longer than the budget stops there: the worker lists the rest, and the known
        # paths the walk did not reach are still checked by name (`_compare_unlisted`).
        until = run.deadline if worker else None
        listing = _listing(store, patterns, run, watched, until)
    cut: list[bool] = []
    if worker and run.deadline is not None and not lean:
        listing = _until(listing[0], run.deadline, cut), listing[1], listing[2]
    changed, new = run.compare(*listing)
    if changed:
        fill_old_versions(store, changed)
    created, adopt = _created_or_adopted(store, run, new, have_baseline, watermark)
    complete = run.record(changed + created, adopt) and not cut and not lean
    # Not when the worker completed the baseline while this scan ran (a lean scan is never
    # complete): a new one would only start to find nothing, and keep the checkpoint "running".
    if not complete and worker and not baseline_complete(store):
        baseline_spawn.ensure_running(store.root, store.path)
    note_links(store, run.links, watermark if have_baseline else None)
    run.finish(complete and not have_baseline, watched, complete, lean)
    run.result.baseline_complete = complete or have_baseline
    run.result.elapsed = time.monotonic() - started
    return run.result


def _lean_listing(
    store: Store, run: ScanRun, patterns: Sequence[str], have_baseline: bool
) -> tuple[Listing, watched_scan.Watched]:
    """A lean scan's listing (the worker is taking the baseline): no walk (the worker lists every
    file) and nothing adopted; each known file that may have changed is `lstat`ed by name, so a
    change to one is recorded in this turn: only what the watcher journaled since the last
    scan's mark plus the rows written since (the worker's adoptions) when it saw the whole
    interval, else every known file."""
    watched = watched_scan.begin(store, patterns, have_baseline, lean=True)
    nothing: Iterator[tuple[str, os.stat_result]] = iter(())
    if watched.entries is None:
        known = store.known_file_signatures()
    else:
        run.result.watched = True
        known = watched.known(store)[0]
    return (nothing, known, set[str]()), watched  # nothing listed: no gone


def _created_or_adopted(
    store: Store, run: ScanRun, new: list[Candidate], have_baseline: bool, watermark: int | None
) -> tuple[list[Candidate], list[Candidate]]:
    """Split the paths never seen into (created: before = absent, adopted into the baseline), by
    their ctime against the watermark, a known inode gone in this scan (moved) or a folder moved
    in since (module docstring)."""
    created: list[Candidate] = []
    adopt: list[Candidate] = []
    moved_in = _MovedIn(store, watermark)
    for c in new:
        assert c.st is not None
        if (
            have_baseline
            and watermark is not None
            and (
                c.st.st_ctime_ns >= watermark
                or c.st.st_ino in run.gone_inodes
                or moved_in.below_new_folder(c.rel)
            )
        ):
            c.old = ABSENT_VERSION
            created.append(c)
        else:
            adopt.append(c)
    return created, adopt


def _until(
    items: Iterator[tuple[str, os.stat_result]], deadline: float, cut: list[bool]
) -> Iterator[tuple[str, os.stat_result]]:
    """`items` until `deadline` (time.monotonic()); `cut` gets True when it stopped early, or
    when the deadline passed by the end (the folder-cached walk stops at it on its own:
    `folder_cache.walk_files`)."""
    for i, item in enumerate(items):
        if not i & 1023 and time.monotonic() > deadline:
            cut.append(True)
            return
        yield item
    if time.monotonic() > deadline:
        cut.append(True)


def _adopt_only(
    store: Store,
    run: ScanRun,
    have_baseline: bool,
    extra_patterns: Sequence[str] | None,
    started: float,
) -> ScanResult:
    """The baseline worker's scan (see `scan`): a full walk, every file never seen adopted."""
    if not have_baseline:
        run.in_worker = True
        patterns = extra_ignore_patterns() if extra_patterns is None else list(extra_patterns)
        full = watched_scan.Watched(None, None, 0, patterns)
        _, new = run.compare(*_listing(store, patterns, run, full))
        # Files left to another session's running shell command are not in it yet: not whole.
        if run.record([], new) and not run.result.deferred:
            with store.transaction():
                store.set_meta(META_BASELINE, "complete")
            have_baseline = True
    run.result.baseline_complete = have_baseline
    run.result.elapsed = time.monotonic() - started
    return run.result


def _listing(
    store: Store,
    patterns: Sequence[str],
    run: ScanRun,
    watched: watched_scan.Watched,
    until: float | None = None,
) -> Listing:
    """The paths a scan compares (each non-ignored regular file with its lstat) and the known
    signatures and known-absent paths to compare them with: all of them from a full walk (the
    folder cache helps; it stops at `until`, time.monotonic()), or, when the workspace watcher
    covered the whole interval since the last clean scan, only what it saw change
    (`core.capture.watched_scan`)."""
    rules = IgnoreRules.load(store.root, patterns)
    if watched.entries is None:
        listing = walk_files(store, rules, patterns, run.start_ns, run.links, until)
        return listing, store.known_file_signatures(), store.known_absent_paths()
    run.result.watched = True
    known, gone = watched.known(store)
    skips = relative_skips(store.root, skip_dirs(store))
    return watched.files(rules, skips, run.links), known, gone


class ScanRun:
    """One scan's inputs and running result, shared by its steps."""

    __slots__ = (
        "attribute",
        "busy",
        "deadline",
        "defer_from",
        "gone_inodes",
        "in_worker",
        "jobs",
        "links",
        "others",
        "own_from",
        "own_start",
        "progress",
        "result",
        "shared",
        "start_ns",
        "store",
        "workers",
    )

    def __init__(
        self,
        store: Store,
        attribute: Attribute,
        session_id: str | None,
        progress: Progress | None,
        workers: int | None,
    ) -> None:
        self.store = store
        self.progress = progress
        self.workers = workers
        self.result = ScanResult()
        self.start_ns = time.time_ns()
        self.deadline: float | None = None  # time.monotonic() past which the baseline stops
        self.in_worker = False  # the baseline worker: small batches, the WAL checkpointed as usual
        # Another session's shell command running since then: files changed after it are its,
        # or, when this session's own shell command ran then too, both sessions'.
        self.others = in_flight(store, session_id, self.start_ns)
        self.defer_from = self.others[0].start_ns - _CLOCK_SLACK_NS if self.others else None
        own = session_runs(store, session_id) if session_id is not None else []
        self.own_from = own[0].start_ns - _CLOCK_SLACK_NS if own else None
        self.own_start = own[0].start_ns if own else None
        self.attribute = attribute
        self.jobs = bool(store.meta_with_prefix(BACKGROUND_JOB))
        if self.jobs:  # background jobs' writes go to the turns that started them, first
            from rewind_ls.core.capture import background_shell

            self.attribute = background_shell.claiming(store, attribute, self.own_start)
        self.shared: dict[str, list[str]] = {}  # path -> the other sessions it is shared with
        self.gone_inodes: set[int] = set()  # inodes of known files gone now (moved, or deleted)
        self.links: list[tuple[str, os.stat_result]] = []  # symbolic links the walk listed
        # Paths another session's edit tool is writing right now: left to it.
        self.busy = store.paths_in_flight(except_session=session_id)

    def compare(
        self, listing: Iterable[tuple[str, os.stat_result]], known: KnownSignatures, gone: set[str]
    ) -> tuple[list[Candidate], list[Candidate]]:
        """(known or known-absent paths whose signature differs, paths never seen). The signature
        of every known file is all a scan compares; versions and row sequence numbers are fetched
        only for paths that differ."""
        changed, new = self._compare_listed(listing, known, gone)
        changed.extend(self._compare_unlisted(known))
        return changed, new

    def _compare_listed(
        self, listing: Iterable[tuple[str, os.stat_result]], known: KnownSignatures, gone: set[str]
    ) -> tuple[list[Candidate], list[Candidate]]:
        """Compare what the walk listed, taking each listed path out of `known`."""
        result, busy, defer_from = self.result, self.busy, self.defer_from
        changed: list[Candidate] = []
        new: list[Candidate] = []
        pop = known.pop
        for rel, st in listing:
            if ".rewind-" in rel and _RESTORE_TEMP.search(rel):
                continue  # a restore's own temporary or backup file (apply_disk._names)
            if ".tmp." in rel and _AGENT_TEMP.search(rel):
                continue  # an agent's write in flight
            result.files += 1
            k = pop(rel, None)
            if k is not None and same_signature(st, k[1], k[2], k[3], k[4]):
                continue
            if rel in busy:
                continue
            late = defer_from is not None and st.st_ctime_ns >= defer_from
            if late and not self._share(rel, st.st_ctime_ns):
                result.deferred += 1
                continue
            if k is None and rel not in gone:
                new.append(Candidate(rel, st, None, None))
            else:
                changed.append(Candidate(rel, st, None, None))
        return changed, new

    def _compare_unlisted(self, known: KnownSignatures) -> list[Candidate]:
        """Known paths the walk did not list: deleted, or ignored now (then re-checked by name)."""
        changed: list[Candidate] = []
        # Paths are "/"-separated (POSIX): one concatenation, not a join per path (the lean scan
        # of a baseline in progress checks every known file by name).
        top = self.store.root.rstrip("/") + "/"
        busy, lstat = self.busy, os.lstat
        nested: dict[str, bool] = {}
        for rel, k in known.items():
            if rel in busy:
                continue
            try:
                st: os.stat_result | None = lstat(top + rel)
            except (FileNotFoundError, NotADirectoryError):
                st = None
            except OSError as exc:  # an unreadable folder: unknown, so not a deletion
                self.result.skipped.append(f"{rel}: {exc.strerror or exc}")
                continue
            if st is not None and not stat_mod.S_ISREG(st.st_mode):
                # A link, folder or device where a file was: not recorded, so said by name.
                self.result.skipped.append(f"{rel}: {_what(st)} now where a file was; not recorded")
                continue
            if st is not None and same_signature(st, k[1], k[2], k[3], k[4]):
                continue
            if nested_checkout(self.store.root, rel, nested) is not None:
                continue  # now in another checkout (a folder that became one): not ours to record
            if st is None and k[3]:
                self.gone_inodes.add(k[3])
            # A deletion has no time: any command running since the last scan may have done it.
            ctime = None if st is None else st.st_ctime_ns
            late = self.defer_from is not None and (ctime is None or ctime >= self.defer_from)
            if late and not self._share(rel, ctime):
                self.result.deferred += 1
                continue
            changed.append(Candidate(rel, st, None, None))
        return changed

    def _share(self, rel: str, ctime_ns: int | None) -> bool:
        """A path changed while another session's shell command ran: shared with those sessions
        when the scanning session's own shell command ran then too (True), else left to them.
        A change timed before a command started is not that command's (`_before`): left to the
        others when it is before this session's own, this session's alone when it is before
        every other's."""
        if self.own_start is None or surely_before(ctime_ns, self.own_start):
            return False
        partners = [r.session_id for r in self.others if not surely_before(ctime_ns, r.start_ns)]
        if partners:
            self.shared[rel] = partners
        return True

    def sharing(self, attribute: Attribute) -> Attribute:
        """`attribute`, then the shared changes (`_share`) also go to the other sessions' open
        turns, each marked as shared (inside the same transaction)."""
        store = self.store

        def attribute_shared(found: list[Change]) -> str | None:
            turn = attribute(found)
            if turn is None:
                return turn
            for rel, old, new in found:
                partners = []
                for sid in self.shared.get(rel, []):
                    row = store.session(sid)
                    if row is not None and row.open_turn and row.open_turn not in partners:
                        partners.append(row.open_turn)
                if partners:
                    store.record_shared([turn, *partners], rel, old, new)
            return turn

        return attribute_shared

    def record(self, must: list[Candidate], adopt: list[Candidate]) -> bool:
        """Read the candidates and record them: changes first (always, in one transaction, so a
        turn's changes are recorded together), then the baseline in batches under the budget.
        Returns False when the budget cut the baseline short."""
        limit = config.max_file_bytes()
        if must:
            reads: Reads = []
            for c in must:
                if c.st is None:
                    reads.append((c, None))
                    continue
                keep = c.old is not None and c.old.kind == FILE  # to delta-encode the old version
                reads.append(
                    (c, read_file(os.path.join(self.store.root, *c.rel.split("/")), keep, limit))
                )
            commit(self.store, self.attribute, reads, self.result, record=True)
            if self.progress is not None:
                self.progress("changes", len(must), len(must))
        return self._adopt(adopt, limit) if adopt else True

    def _adopt(self, adopt: list[Candidate], limit: int) -> bool:
        """Add files never seen to the baseline until the deadline; False when it stopped early."""
        complete = True
        batch: Reads = []
        packs: list[Pack] = []
        batch_bytes = done = 0
        rels = [c.rel for c in adopt]
        sizes = [c.st.st_size if c.st is not None else 0 for c in adopt]
        # A baseline writes the tree's content once: one WAL checkpoint at the end, not an fsync
        # every 4 MB. Not in the worker: its final TRUNCATE would hold every hook's write (and its
        # smaller batches hold the lock less long).
        batch_files = _WORKER_BATCH_FILES if self.in_worker else _BATCH_FILES
        bulk = nullcontext() if self.in_worker else self.store.checkpoint_at_end()
        with bulk:
            for chunk in read_many(
                self.store.root, rels, sizes, limit, self.workers, self.deadline
            ):
                if chunk is None:  # the budget ran out
                    complete = False
                    break
                # A batch holds whole chunks: a PACKED read's content is in its chunk's packs,
                # written in the same transaction as its row.
                for i, r in enumerate(chunk.reads, chunk.first):
                    batch.append((adopt[i], r))
                    if isinstance(r, FileRead):
                        batch_bytes += r.version.size or 0
                packs.extend(chunk.packs)
                done += len(chunk.reads)
                if len(batch) >= batch_files or batch_bytes >= _BATCH_BYTES:
                    commit(self.store, self.attribute, batch, self.result, False, packs)
                    batch, packs, batch_bytes = [], [], 0
                    if self.progress is not None:
                        self.progress("baseline", done, len(adopt))
            if batch:
                commit(self.store, self.attribute, batch, self.result, False, packs)
        if self.progress is not None:
            self.progress("baseline", done, len(adopt))
        return complete

    def finish(
        self,
        baseline_now_complete: bool,
        watched: watched_scan.Watched,
        complete: bool,
        lean: bool = False,
    ) -> None:
        """Move the watermark, say what could not be recorded, mark a baseline complete, and
        leave the watcher's mark (clean only when nothing was left for a later scan; a lean
        scan's mark says every known file was checked, not that every file is known)."""
        start_ns, defer_from = self.start_ns, self.defer_from
        # The watermark must not pass a deferred run's start, or its new files would later look old.
        mark = start_ns if defer_from is None else min(start_ns, defer_from + _CLOCK_SLACK_NS)
        store = self.store
        with store.transaction():
            store.set_meta(META_WATERMARK, str(mark))
            # What this scan could not record, by name: `turns`, `doctor` and previews show it.
            skipped = json.dumps(sorted(set(self.result.skipped))[:200])
            if store.meta(META_UNRECORDED) != skipped:
                store.set_meta(META_UNRECORDED, skipped)
            if baseline_now_complete:
                store.set_meta(META_BASELINE, "complete")
            result = self.result
            clean = (
                (complete or lean) and not result.deferred and not result.skipped and not self.busy
            )
            watched.save_mark(store, clean, lean)
            if self.jobs and not result.deferred:
                from rewind_ls.core.capture import background_shell

                background_shell.forget_ended(store, start_ns)


class _MovedIn:
    """Whether a new file sits below a folder moved into the workspace since the last scan: its
    topmost folder that rewind-ls never saw a file in has a ctime after the previous scan (a
    rename gives the moved folder a new ctime, not the files in it)."""

    def __init__(self, store: Store, watermark: int | None) -> None:
        self.store = store
        self.watermark = watermark
        self.answers: dict[str, bool] = {}  # topmost never-seen folder -> moved in since
        self.known: set[str] = set()  # folders a file was seen in

    def below_new_folder(self, rel: str) -> bool:
        if self.watermark is None:
            return False
        parts = rel.split("/")[:-1]
        for i in range(1, len(parts) + 1):
            folder = "/".join(parts[:i])
            if folder in self.answers:
                return self.answers[folder]
            if folder in self.known or self.store.has_known_under(folder):
                self.known.add(folder)
                continue  # a folder seen before: not the one moved in; look deeper
            try:
                ctime = os.lstat(os.path.join(self.store.root, *parts[:i])).st_ctime_ns
            except OSError:
                ctime = 0
            self.answers[folder] = ctime >= self.watermark
            return self.answers[folder]
        return False


def fill_old_versions(store: Store, cands: list[Candidate]) -> None:
    by_rel = {c.rel: c for c in cands}
    for rel, (version, seq) in store.known_versions(list(by_rel)).items():
        c = by_rel[rel]
        c.old = version
        # The row this scan's change is relative to; the commit checks it is still there.
        c.known_seq = seq


def _what(st: os.stat_result) -> str:
    if stat_mod.S_ISLNK(st.st_mode):
        return "a symbolic link"
    if stat_mod.S_ISDIR(st.st_mode):
        return "a folder"
    return "not a regular file"
