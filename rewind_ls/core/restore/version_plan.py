"""Restoring one recorded version of one file (`rewind-ls restore PATH --version HASH`): finding
the version by its hash (or a prefix of it) among what rewind-ls recorded of the path, and the
restore's plan, which the one restore flow (`flow.RestoreFlow`) previews, asks about and applies
like any other: compare-and-swap against what rewind-ls last saw, a restore point first, so
`rewind-ls undo` takes it back. A file that no longer exists is planned the same way (created).
"""

from __future__ import annotations

from typing import NamedTuple

from rewind_ls.core.errors import CorruptBlob, RewindError
from rewind_ls.core.model import FILE, ConflictKind, RestoreMode, Turn, Version
from rewind_ls.core.restore.plan import Conflict, Plan, Reader, check_cas, read_path_plan
from rewind_ls.core.store import Store

VERSION = RestoreMode.VERSION
# Shorter prefixes than this are refused: "a" would match too much to be meant.
MIN_PREFIX = 4


class FoundVersion(NamedTuple):
    """A recorded version of a path: its content's `version`, the turn that recorded it (the
    change holding it as its after, or for the first version seen, as its before), and when."""

    version: Version
    turn: Turn
    at: float


def find_version(store: Store, path: str, spec: str) -> FoundVersion:
    """The version of `path` whose content hash starts with `spec`; RewindError naming the
    path when none or several do."""
    prefix = spec.strip().lower()
    if len(prefix) < MIN_PREFIX or any(c not in "0123456789abcdef" for c in prefix):
        raise RewindError(
            f"{path}: --version takes a content hash or its first {MIN_PREFIX}+ hex digits, "
            f"not {spec!r} (rewind-ls log {path} lists them)"
        )
    found: dict[str, FoundVersion] = {}
    for row in store.path_history(path):
        for version in (row.before, row.after):
            if version is None or version.kind != FILE or version.hash is None:
                continue
            if version.hash.startswith(prefix):
                turn = store.turn(row.turn_id)
                if turn is not None:
                    # The newest record of a content wins (its mode is the latest seen).
                    found[version.hash] = FoundVersion(version, turn, turn.started_at)
    if not found:
        raise RewindError(
            f"{path}: no recorded version's hash starts with {prefix} "
            f"(rewind-ls log {path} lists them)"
        )
    if len(found) > 1:
        raise RewindError(
            f"{path}: {len(found)} versions' hashes start with {prefix}: "
            + ", ".join(sorted(h[:12] for h in found))
            + "; give more digits"
        )
    return next(iter(found.values()))


def version_label(path: str, version: Version) -> str:
    """The restore point's name: "restore a.txt to version 3f2a9c01d2"."""
    return f"restore {path} to version {(version.hash or '')[:10]}"


def plan_version(store: Store, found: FoundVersion, path: str, reader: Reader) -> Plan:
    """The plan writing `found`'s content back to `path` (its mode too), checked against what
    rewind-ls last saw of the path."""
    plan = Plan(VERSION, found.turn, version_label(path, found.version))
    pp = read_path_plan(reader, path)
    plan.paths.append(pp)
    if pp.conflict is not None:
        return plan
    assert found.version.hash is not None
    try:
        data = store.get_blob(found.version.hash)
    except CorruptBlob as exc:
        pp.conflict = Conflict(ConflictKind.NOT_RESTORABLE, f"{path}: {exc}")
        return plan
    pp.set_target(found.version, data)
    check_cas(store, pp)
    return plan
