"""The workspace's folders, pinned for one restore: every read, write, move and delete of a restore
made relative to a folder descriptor opened without following links (`Pinned`), and the names of a
restore's temporary, backup and aside files (`swap_names`). No store, no journal: the file system
moves the swap (`swap.py`), its undo (`rollback.py`) and the recovery (`recovery.py`) are made of."""

from __future__ import annotations

import errno
import hashlib
import os
import stat

from rewind_ls.core.errors import ConflictError, OutsideWorkspace, RewindError
from rewind_ls.core.fs import config
from rewind_ls.core.fs.disk_sync import fsync_file, rename_noreplace
from rewind_ls.core.fs.faults import fault as _fault
from rewind_ls.core.fs.paths import is_below
from rewind_ls.core.model import ABSENT_VERSION, FILE, OTHER, Version, too_large
from rewind_ls.core.store import digest

# A name this long or longer gets a hashed temporary/backup/aside name: the longest form,
# `.<name>.rewind-<8 hex>.aside.<8 hex>`, adds 32 bytes, and a file system's names stop at 255.
_LONG_NAME = 255 - 40


def swap_names(full: str) -> tuple[str, str, str]:
    """The temporary (new content), backup (old content) and aside (what an undo moves out of the
    way) names of one path. The temporary name only ever holds what `Pinned.write_tmp` wrote, whole or in
    part, so a recovery may always delete it; the aside name can hold the person's content. A long
    name is replaced by a hash of it, so every legal name has names that fit beside it."""
    directory, name = os.path.split(full)
    if len(os.fsencode(name)) > _LONG_NAME:
        name = hashlib.sha256(os.fsencode(name)).hexdigest()[:32]
    tag = os.urandom(4).hex()
    return (
        os.path.join(directory, f".{name}.rewind-{tag}.tmp"),
        os.path.join(directory, f".{name}.rewind-{tag}.bak"),
        os.path.join(directory, f".{name}.rewind-{tag}.aside"),
    )


def missing_dirs(directory: str) -> list[str]:
    """The folders that do not exist yet on the way to `directory`, outermost first."""
    missing = []
    probe = directory
    while not os.path.isdir(probe):
        missing.append(probe)
        probe = os.path.dirname(probe)
    return list(reversed(missing))


_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


_READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


# Link-based moves: os.link never replaces an existing name, so a file that appears at the
# destination in the meantime (someone's work) is never overwritten. Filesystems without hard links
# fall back to a rename checked just before (a narrower window, not none).
_NO_LINK = {errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EXDEV, errno.EMLINK, errno.ENOSYS}


class Pinned:
    """The workspace's folders as a restore found them: each opened once, by walking from the root
    one name at a time without following links (O_NOFOLLOW), and every move, write and delete made
    relative to that descriptor (renameat, unlinkat, openat). A folder swapped for a link after it
    was opened cannot redirect a move elsewhere; `check` refuses a folder that no longer sits at its
    path (moved out of the workspace, or replaced) just before each swap. Paths outside the root,
    or not in normal form (a journal's, say), are refused."""

    def __init__(self, root: str) -> None:
        self.root = os.path.realpath(root)
        # The folders above the root, outermost first (`/` itself cannot be replaced).
        above: list[str] = []
        probe = os.path.dirname(self.root)
        while probe != os.path.dirname(probe):
            above.append(probe)
            probe = os.path.dirname(probe)
        self._above = above[::-1]
        self._fds: dict[str, int] = {}
        self._ids: dict[str, tuple[int, int]] = {}

    def __enter__(self) -> Pinned:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        for fd in self._fds.values():
            os.close(fd)
        self._fds.clear()
        self._ids.clear()

    def rel(self, full: str) -> str:
        return os.path.relpath(full, self.root).replace(os.sep, "/")

    def folder(self, directory: str, created: list[str] | None = None) -> int:
        """The descriptor of `directory` (absolute, inside the root); missing folders are made
        (and appended to `created`) when `created` is given, else FileNotFoundError."""
        fd = self._fds.get(directory)
        if fd is not None:
            return fd
        if directory == self.root:
            fd = os.open(self.root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        else:
            if not is_below(directory, self.root) or os.path.normpath(directory) != directory:
                raise OutsideWorkspace(directory, self.root, "not a folder of the workspace")
            parent, name = os.path.split(directory)
            parent_fd = self.folder(parent, created)
            try:
                fd = os.open(name, _DIR_FLAGS, dir_fd=parent_fd)
            except FileNotFoundError:
                if created is None:
                    raise
                os.mkdir(name, 0o755, dir_fd=parent_fd)
                created.append(directory)
                fd = os.open(name, _DIR_FLAGS, dir_fd=parent_fd)
            except OSError as exc:
                if exc.errno not in (errno.ELOOP, errno.ENOTDIR):
                    raise
                rel = self.rel(directory)
                raise ConflictError(
                    f"{rel}: a link or a file now where a folder was; left as found", [rel]
                ) from None
        kept = self._fds.setdefault(directory, fd)  # two threads may open one folder at once
        if kept != fd:
            os.close(fd)
        return kept

    def at(self, full: str) -> tuple[int, str]:
        """(descriptor of the folder, name) of the absolute path `full`."""
        directory, name = os.path.split(full)
        if not name or name in (".", ".."):
            raise OutsideWorkspace(full, self.root, "not a file name of the workspace")
        return self.folder(directory), name

    def check(self, full: str) -> None:
        """ConflictError when the folder of `full`, as pinned, is no longer at its path inside the
        workspace (moved away, or a link put in its place since it was checked), or when the
        workspace itself is not (a link put in place of it or of a folder above it)."""
        if not self._root_in_place():
            raise ConflictError(
                f"{self.root}: the workspace folder was moved, or a link put on its path, during "
                "the restore; left as found",
                [self.rel(full)],
            )
        directory = os.path.dirname(full)
        if directory == self.root:
            return
        self.folder(directory)
        if not self._in_place(directory):
            rel = self.rel(directory)
            raise ConflictError(
                f"{rel}: this folder was moved or replaced during the restore; left as found",
                [self.rel(full)],
            )

    def _identity(self, directory: str) -> tuple[int, int]:
        """(device, inode) of the pinned folder `directory`: what its descriptor is, for good."""
        known = self._ids.get(directory)
        if known is None:
            st = os.fstat(self._fds[directory])
            known = self._ids.setdefault(directory, (st.st_dev, st.st_ino))
        return known

    def _in_place(self, directory: str) -> bool:
        """Each folder from `directory` up to the root's child is still the entry of its name in
        its pinned parent, and not a link: the path, walked from the root today, leads through no
        link to the very folder pinned (with `_root_in_place`, what `realpath(directory) ==
        directory` and a stat of it said, in one `fstatat` per level instead of a walk from `/`)."""
        while directory != self.root:
            parent, name = os.path.split(directory)
            try:
                st = os.stat(name, dir_fd=self._fds[parent], follow_symlinks=False)
            except (OSError, KeyError):
                return False
            if not stat.S_ISDIR(st.st_mode) or (st.st_dev, st.st_ino) != self._identity(directory):
                return False
            directory = parent
        return True

    def _root_in_place(self) -> bool:
        """The root is still the folder pinned, at its path, reached through no link: each folder
        above it is a folder (not a link) and the root's own entry is the pinned folder (what
        `realpath(root) == root` and a stat said, one lstat per level instead of realpath's
        Python walk). A link put in place of a folder above the root would lead the path to
        another folder, or to this one moved elsewhere."""
        try:
            for folder in self._above:
                if not stat.S_ISDIR(os.stat(folder, follow_symlinks=False).st_mode):
                    return False
            st = os.stat(self.root, follow_symlinks=False)
            self.folder(self.root)
        except OSError:
            return False
        return stat.S_ISDIR(st.st_mode) and (st.st_dev, st.st_ino) == self._identity(self.root)

    def lstat(self, full: str) -> os.stat_result | None:
        """What the name `full` is now (not following a link); None when it or its folder is gone."""
        try:
            fd, name = self.at(full)
            return os.stat(name, dir_fd=fd, follow_symlinks=False)
        except (FileNotFoundError, NotADirectoryError):
            return None

    def exists(self, full: str) -> bool:
        return self.lstat(full) is not None

    def rename(self, src: str, dst: str) -> None:
        sfd, sname = self.at(src)
        dfd, dname = self.at(dst)
        os.rename(sname, dname, src_dir_fd=sfd, dst_dir_fd=dfd)

    def unlink(self, full: str) -> None:
        fd, name = self.at(full)
        os.unlink(name, dir_fd=fd)

    def fsync_dir(self, directory: str) -> None:
        try:
            fsync_file(self.folder(directory))
        except (OSError, RewindError):
            pass

    def write_tmp(
        self, tmp: str, data: bytes, mode: int | None, sync: bool = True, index: int = 0
    ) -> None:
        """Write a temporary file; `sync=False` leaves the flush to `flush_files` (one for many)."""
        dir_fd, name = self.at(tmp)
        fd = os.open(
            name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600, dir_fd=dir_fd
        )
        try:
            view = memoryview(data)
            half = len(view) // 2
            view = view[os.write(fd, view[:half]) :] if half else view
            _fault("tmp-half-written", index)  # crash tests: a temporary file cut short
            while view:
                view = view[os.write(fd, view) :]
            os.fchmod(fd, mode if mode is not None else 0o644)
            if sync:
                fsync_file(fd)
        finally:
            os.close(fd)

    def makedirs(self, directory: str, created: list[str]) -> None:
        self.folder(directory, created)

    def place(self, src: str, dst: str) -> bool:
        """Move `src` to `dst` unless `dst` exists. False (and `src` left where it is) when it does."""
        sfd, sname = self.at(src)
        dfd, dname = self.at(dst)
        moved = rename_noreplace(sname, dname, src_dir_fd=sfd, dst_dir_fd=dfd)
        if moved is not None:
            return moved
        try:
            os.link(sname, dname, src_dir_fd=sfd, dst_dir_fd=dfd, follow_symlinks=False)
        except FileExistsError:
            return False
        except OSError as exc:
            if exc.errno not in _NO_LINK:
                raise
            if self.exists(dst):
                return False
            os.rename(sname, dname, src_dir_fd=sfd, dst_dir_fd=dfd)  # no hard links here
            return True
        os.unlink(sname, dir_fd=sfd)
        return True

    def read(self, full: str, whole: bool = False) -> tuple[Version, bytes | None]:
        """What the absolute path `full` holds now, read through its pinned folder without following
        a link: kind `other` for a link, folder or anything else; `absent` when it or its folder is
        gone. A file over the size cap is `too-large` (its stat signature), unless `whole`: then it
        is read and hashed like any other (a restore point holding it)."""
        try:
            dir_fd, name = self.at(full)
            fd = os.open(name, _READ_FLAGS, dir_fd=dir_fd)
        except (FileNotFoundError, NotADirectoryError):
            return ABSENT_VERSION, None
        except (OSError, RewindError):
            return Version(OTHER), None
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                return Version(OTHER), None
            if st.st_size > config.max_file_bytes() and not whole:
                return too_large(st), None
            chunks = []
            while chunk := os.read(fd, 1 << 20):
                chunks.append(chunk)
            data = b"".join(chunks)
        except OSError:
            return Version(OTHER), None
        finally:
            os.close(fd)
        return Version(FILE, digest(data), stat.S_IMODE(st.st_mode), len(data)), data

    def held(self, full: str) -> Version:
        """What the absolute path `full` holds now; kind `other` for a link, folder or anything else."""
        return self.read(full)[0]

    def same_inode(self, a: str, b: str) -> bool:
        sa, sb = self.lstat(a), self.lstat(b)
        if sa is None or sb is None:
            return False
        return (sa.st_dev, sa.st_ino) == (sb.st_dev, sb.st_ino)

    def sig(self, full: str) -> list[int] | None:
        try:
            st = self.lstat(full)
        except (OSError, RewindError):
            return None
        if st is None:
            return None
        return [st.st_size, st.st_mtime_ns, st.st_ino]
