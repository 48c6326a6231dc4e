"""Writing a snapshot (`snapshot.Snapshot`) into a folder: `rewind-ls export TURN --to DIR`.

The folder must not exist or be empty, and must not be inside the workspace (the workspace is never
touched: a file written there would be a change of its own). Everything is written into a new
folder beside DIR first and moved to DIR in one rename, so an export killed midway never leaves a
DIR that looks complete. Bytes and executable bits are the recorded ones; a file whose content
rewind-ls does not hold (over the size cap, never seen) is not written and is named.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from typing import NamedTuple

from rewind_ls.core.errors import CorruptBlob, RewindError
from rewind_ls.core.fs.paths import check_relative, is_within
from rewind_ls.core.history.snapshot import Snapshot
from rewind_ls.core.model import FILE
from rewind_ls.core.store import Store

# Contents read from the store per pass: a 10k-file export holds at most this many in memory.
READ_BATCH = 1000


class Exported(NamedTuple):
    folder: str
    written: int
    bytes: int
    unwritable: list[str]  # in the state, content not kept (over the size cap, never seen)


def check_destination(dest: str, root: str) -> str:
    """DIR as an absolute path, after checking it may receive an export: not inside the workspace
    (nor the workspace itself), and missing or an empty folder."""
    full = os.path.abspath(dest)
    real = os.path.realpath(full)
    real_root = os.path.realpath(root)
    if is_within(real, real_root):
        raise RewindError(
            f"{dest}: inside the workspace {root}; export writes outside it (the workspace is "
            "never touched): name a folder elsewhere"
        )
    if os.path.lexists(full):
        if not os.path.isdir(full) or os.path.islink(full):
            raise RewindError(f"{dest}: exists and is not a folder; name a new or empty folder")
        if os.listdir(full):
            raise RewindError(f"{dest}: not empty; name a new or empty folder")
    elif not os.path.isdir(os.path.dirname(full)):
        raise RewindError(f"{dest}: its parent folder {os.path.dirname(full)} does not exist")
    return full


def export_snapshot(store: Store, snapshot: Snapshot, dest: str) -> Exported:
    """Write `snapshot` into `dest` (checked by `check_destination`)."""
    full = check_destination(dest, store.root)
    parent = os.path.dirname(full)
    staging = tempfile.mkdtemp(prefix=".rewind-export-", dir=parent)
    try:
        written, size = _write_files(store, snapshot, staging)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(staging, 0o777 & ~umask)
        try:
            # Replaces DIR when it is an empty folder; fails when something appeared in it meanwhile.
            os.rename(staging, full)
        except OSError as exc:
            raise RewindError(
                f"{dest}: could not move the export in place: {exc.strerror}"
            ) from exc
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return Exported(full, written, size, snapshot.unwritable)


def _write_files(store: Store, snapshot: Snapshot, into: str) -> tuple[int, int]:
    paths = [p for p, v in snapshot.files.items() if v.hash is not None and v.kind == FILE]
    written = size = 0
    made: set[str] = {""}
    for start in range(0, len(paths), READ_BATCH):
        part = paths[start : start + READ_BATCH]
        try:
            blobs = store.get_blobs(snapshot.files[p].hash or "" for p in part)
        except CorruptBlob:
            blobs = {}  # one of them is damaged: read each alone below, to name it
        for rel in part:
            version = snapshot.files[rel]
            assert version.hash is not None
            data = blobs.get(version.hash)
            if data is None:
                try:
                    data = store.get_blob(version.hash)
                except CorruptBlob as exc:
                    raise RewindError(f"{rel}: its content at this turn is damaged: {exc}") from exc
            check_relative(rel)
            folder = rel.rpartition("/")[0]
            if folder not in made:
                os.makedirs(os.path.join(into, *folder.split("/")), exist_ok=True)
                made.add(folder)
            _write(os.path.join(into, *rel.split("/")), rel, data, version.mode)
            written += 1
            size += len(data)
    return written, size


def _write(target: str, rel: str, data: bytes, mode: int | None) -> None:
    bits = (mode or 0o644) & 0o777
    try:
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    except OSError as exc:
        # A file and a folder of the same name in one state (a history that never settled).
        raise RewindError(f"{rel}: cannot be written: {exc.strerror}") from exc
    try:
        _write_all(fd, data)
        os.fchmod(fd, bits)  # the recorded bits, not the umask's: the executable bit is content
    finally:
        os.close(fd)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]
