"""The scan's seam with the workspace watcher: which paths a scan must look at.

Before a scan looks at anything it asks the watcher to sync (`watch_journal.sync`). The scan then
`lstat`s only the paths the watcher journaled since the last scan's sync (and walks the folders
that appeared, vanished or moved, and re-checks the `known` rows written since), when ALL of these
hold; otherwise it walks the whole workspace, exactly as without a watcher:

- the last full or watched scan recorded a mark (`scan.watch-mark`: epoch, journal offset, row
  seq, root, extra ignore patterns) and it was clean (nothing deferred, busy or unreadable);
- the watcher answered this sync in the same epoch: it ran, one inotify instance, through the
  whole interval (a watcher started later, killed, restarted or overflowed has another epoch, or
  an `X` line in between);
- the baseline is complete, the root and the extra ignore patterns are the mark's;
- a lean scan (while the baseline worker runs: it only re-checks known files, adopting nothing)
  leaves a mark flagged `lean`, which only another lean scan uses: the first scan after the
  worker walks, since new files the lean scans passed over are known to no one yet. A lean scan
  may use any mark, with the baseline incomplete: it looks only at known files;
- no ignore rule can have changed: no `.gitignore`, `.rewindignore`, `info/exclude` or `.git`
  among the journaled paths.

Whatever the scan decides, a sync answered before it started lets it leave a mark for the next
one. `REWIND_LS_WATCH=0` turns all of this off.
"""

from __future__ import annotations

import json
import os
import stat as stat_mod

from rewind_ls.core.capture import watch_journal

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence
    from typing import Any

    from rewind_ls.core.capture.ignore import IgnoreRules, RuleSet
    from rewind_ls.core.store import Store

META_MARK = "scan.watch-mark"
_RULE_NAMES = frozenset((".gitignore", ".rewindignore", ".git", "exclude"))

Sigs = dict[str, tuple[str, "int | None", "int | None", "int | None", "int | None"]]


class Watched:
    """What the watcher says about this scan's interval."""

    __slots__ = ("entries", "patterns", "seq", "since", "synced")

    def __init__(
        self,
        synced: watch_journal.Synced | None,
        entries: list[tuple[str, str]] | None,
        seq: int,
        patterns: list[str],
        since: int = 0,
    ) -> None:
        self.synced = synced
        self.entries = entries  # None: walk everything
        self.seq = seq  # the row seq before the sync: the next mark's
        self.since = since  # the mark's: rows written after it are re-checked
        self.patterns = patterns

    def known(self, store: Store) -> tuple[Sigs, set[str]]:
        """The `known` rows the scan compares: the journaled paths, those under journaled
        folders, and rows written since the mark."""
        assert self.entries is not None
        paths = [rel for _, rel in self.entries]
        prefixes = [rel + "/" for kind, rel in self.entries if kind == "D"]
        return store.known_signatures_for(paths, prefixes, self.since)

    def files(
        self,
        rules: IgnoreRules,
        skip: frozenset[str],
        links: list[tuple[str, os.stat_result]] | None = None,
    ) -> Iterator[tuple[str, os.stat_result]]:
        """The walk's answer restricted to the journaled paths: non-ignored regular files, and
        everything the walk would list below the journaled folders."""
        from rewind_ls.core.capture.walk import unrecordable
        from rewind_ls.core.fs.paths import nested_checkout

        assert self.entries is not None
        seen: set[str] = set()
        nested: dict[str, bool] = {}
        for kind, rel in self.entries:
            parts = rel.split("/")
            if any(p in skip for p in _ancestors(parts)) or any(unrecordable(p) for p in parts):
                continue
            if nested_checkout(rules.root, rel, nested) is not None:
                continue  # another checkout's file (the walk does not enter it either)
            try:
                st = os.lstat(os.path.join(rules.root, *parts))
            except OSError:
                continue
            if stat_mod.S_ISREG(st.st_mode):
                if rel not in seen and not rules.is_ignored(rel, False):
                    seen.add(rel)
                    yield rel, st
            elif stat_mod.S_ISLNK(st.st_mode):
                if links is not None and not rules.is_ignored(rel, False):
                    links.append((rel, st))
            elif kind == "D" and stat_mod.S_ISDIR(st.st_mode) and not rules.is_ignored(rel, True):
                for found in _walk_below(rules, rel + "/", skip, links):
                    if found[0] not in seen:
                        seen.add(found[0])
                        yield found

    def save_mark(self, store: Store, clean: bool, lean: bool = False) -> None:
        """Leave a mark for the next scan (inside the scan's last transaction). A scan that left
        something for later (deferred, busy, unreadable) keeps the previous mark: the next scan
        then covers this interval again. `lean`: the scan checked the known files only."""
        if self.synced is None or not clean:
            return
        mark: dict[str, object] = {
            "epoch": self.synced.epoch,
            "offset": self.synced.offset,
            "seq": self.seq,
            "root": store.root,
            "patterns": self.patterns,
        }
        if lean:
            mark["lean"] = True
        store.set_meta(META_MARK, json.dumps(mark))


def _ancestors(parts: list[str]) -> Iterator[str]:
    for i in range(1, len(parts) + 1):
        yield "/".join(parts[:i])


def _dirsets(rules: IgnoreRules, prefix: str) -> tuple[RuleSet, ...]:
    if not prefix:
        return rules.context("")
    parent = prefix[: prefix.rstrip("/").rfind("/") + 1]
    return rules.context(prefix, _dirsets(rules, parent))


def _walk_below(
    rules: IgnoreRules,
    top: str,
    skip: frozenset[str],
    links: list[tuple[str, os.stat_result]] | None = None,
) -> Iterator[tuple[str, os.stat_result]]:
    """`core.capture.walk.walk` from the folder `top` ("a/b/", not ignored itself) down."""
    from rewind_ls.core.capture.walk import walk_below

    parent = top[: top.rstrip("/").rfind("/") + 1]
    return walk_below(rules.root, rules, top, _dirsets(rules, parent), skip, links)


def begin(
    store: Store, patterns: Sequence[str], baseline_complete: bool, lean: bool = False
) -> Watched:
    """Sync with the watcher (starting one if none runs) and decide what the scan looks at.
    `lean`: the scan only re-checks known files (see the module docstring)."""
    pats = list(patterns)
    if not watch_journal.enabled():
        return Watched(None, None, 0, pats)
    seq = store.seq_now()
    synced = watch_journal.sync(store.path)
    if synced is None:
        watch_journal.ensure_running(store.root, store.path)
        return Watched(None, None, seq, pats)
    entries = None
    mark = _load_mark(store)
    if (
        (baseline_complete or lean)
        and mark is not None
        and (lean or not mark.get("lean"))
        and mark.get("epoch") == synced.epoch
        and mark.get("root") == store.root
        and mark.get("patterns") == pats
        and isinstance(mark.get("offset"), int)
        and isinstance(mark.get("seq"), int)
    ):
        entries = synced.entries(mark["offset"])
        if entries is not None and any(rel.rsplit("/", 1)[-1] in _RULE_NAMES for _, rel in entries):
            entries = None  # ignore rules may have changed: only the walk knows what they hide
    since = mark["seq"] if entries is not None and mark is not None else 0
    return Watched(synced, entries, seq, pats, since)


def _load_mark(store: Store) -> dict[str, Any] | None:
    raw = store.meta(META_MARK)
    try:
        mark = json.loads(raw) if raw else None
    except ValueError:
        return None
    return mark if isinstance(mark, dict) else None
