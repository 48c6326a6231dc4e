"""Unsaved buffers that rewind-ls is not told about, found by the traces their editors leave:

- Emacs: a lock file `.#NAME` next to a file whose buffer has unsaved changes (a symbolic link to
  `user@host.PID:boot`), removed when the buffer is saved or killed;
- Vim and Neovim: a swap file (`.NAME.swp`, `.swo`, ... next to the file, or Neovim's default
  `$XDG_STATE_HOME/nvim/swap/` with the full path's slashes as `%`) whose block 0 has the
  "modified" mark (byte 1007 == 0x55, Vim's `B0_DIRTY`, as Neovim 0.11 writes it too).

- an editor with a rewind-ls language server: the server's list of its unsaved buffers in the
  store folder (`buffer_traces`).

A restore that writes such a file would put the disk under the person's unsaved text: a conflict
(forcible, and undoable like any restore). The editor that asks for the restore and tells the
server about its buffers is not a stranger: its open files are passed as `skip`.
"""

from __future__ import annotations

import os
from collections.abc import Collection

from rewind_ls.core.model import ConflictKind
from rewind_ls.core.restore.buffer_traces import unsaved_in_servers
from rewind_ls.core.restore.plan import Conflict, Plan

# Vim's block 0: the "modified" flag sits in the last byte of the 900-byte file name field.
_B0_DIRTY_OFFSET = 1007
_B0_DIRTY = 0x55
_B0_PID_OFFSET = 24
_SWAP_SUFFIXES = tuple(f".sw{c}" for c in "ponmlkjihgfedcba")


def _pid_note(pid: int) -> str:
    if pid <= 0:
        return ""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return f", process {pid} not running: recover it with `vim -r`"
    except OSError:
        pass
    return f", process {pid}"


def _swap_dirty(swap: str) -> int | None:
    """The pid of a swap file whose buffer has unsaved changes; None when clean or unreadable."""
    try:
        with open(swap, "rb") as f:
            block0 = f.read(_B0_DIRTY_OFFSET + 1)
    except OSError:
        return None
    if len(block0) <= _B0_DIRTY_OFFSET or not block0.startswith(b"b0"):
        return None
    if block0[_B0_DIRTY_OFFSET] != _B0_DIRTY:
        return None
    return int.from_bytes(block0[_B0_PID_OFFSET : _B0_PID_OFFSET + 4], "little")


def _nvim_swap_dirs() -> list[str]:
    state = os.environ.get("XDG_STATE_HOME") or os.path.join(
        os.path.expanduser("~"), ".local", "state"
    )
    return [os.path.join(state, "nvim", "swap")]


def _names(folder: str, listed: dict[str, frozenset[str]] | None) -> frozenset[str] | None:
    """The names in `folder`, listed once per restore (`listed`); None without a cache."""
    if listed is None:
        return None
    names = listed.get(folder)
    if names is None:
        try:
            names = frozenset(os.listdir(folder))
        except OSError:
            names = frozenset()
        listed[folder] = names
    return names


def unsaved_trace(
    root: str, rel: str, listed: dict[str, frozenset[str]] | None = None
) -> str | None:
    """Why `rel` has unsaved text in an editor that did not tell rewind-ls, or None. `listed`:
    folder listings kept across the paths of one restore, so a folder is read once instead of
    probing 33 names (a lock file and 32 swap names) per path."""
    full = os.path.join(root, *rel.split("/"))
    folder, name = os.path.split(full)
    here = _names(folder, listed)
    lock = os.path.join(folder, ".#" + name)
    if (here is None or ".#" + name in here) and os.path.islink(lock):
        try:
            owner = os.readlink(lock)
        except OSError:
            owner = ""
        who = f" ({owner})" if owner else ""
        return f"an unsaved Emacs buffer holds it (lock file .#{name}{who})"
    candidates = [
        os.path.join(folder, "." + name + s)
        for s in _SWAP_SUFFIXES
        if here is None or "." + name + s in here
    ]
    encoded = full.replace(os.sep, "%")
    for d in _nvim_swap_dirs():
        there = _names(d, listed)
        candidates.extend(
            os.path.join(d, encoded + s)
            for s in _SWAP_SUFFIXES
            if there is None or encoded + s in there
        )
    for swap in candidates:
        if not os.path.exists(swap):
            continue
        pid = _swap_dirty(swap)
        if pid is not None:
            return (
                f"an unsaved Vim/Neovim buffer holds it (swap file {swap} marked modified"
                f"{_pid_note(pid)})"
            )
    return None


def _traced(folder: str, listed: dict[str, frozenset[str]], beside: bool) -> frozenset[str]:
    """The names that have an editor's trace in `folder` (its listing, read once): beside the files,
    `NAME` of a lock `.#NAME` or a swap `.NAME.swp`...; in Neovim's swap folder, the encoded path of
    a swap `PATH.swp`..."""
    key = f"{folder}\0{beside}"  # (no folder name holds a NUL)
    traced = listed.get(key)
    if traced is None:
        names = _names(folder, listed) or frozenset()
        if beside:
            traced = frozenset(n[2:] for n in names if n.startswith(".#")) | frozenset(
                n[1:-4] for n in names if n.startswith(".") and n.endswith(_SWAP_SUFFIXES)
            )
        else:
            traced = frozenset(n[:-4] for n in names if n.endswith(_SWAP_SUFFIXES))
        listed[key] = traced
    return traced


def mark_unsaved_elsewhere(
    plan: Plan, root: str, skip: Collection[str] = (), store_dir: str | None = None
) -> None:
    """Give every path `plan` would write a conflict when another editor holds it unsaved.
    `store_dir`: the workspace's store folder, where running language servers list their unsaved
    buffers (`buffer_traces`; this process's own list is never read)."""
    listed: dict[str, frozenset[str]] = {}
    elsewhere = [_traced(d, listed, beside=False) for d in _nvim_swap_dirs()]
    servers = unsaved_in_servers(store_dir) if store_dir is not None else {}
    for pp in plan.paths:
        if pp.conflict is not None or not pp.will_write or pp.path in skip:
            continue
        if pp.path in servers:
            pp.conflict = Conflict(
                ConflictKind.MODIFIED_OUTSIDE,
                f"{pp.path}: an unsaved buffer in an editor holds it (its rewind-ls language "
                f"server, pid {servers[pp.path]}, says so); restoring would write under the "
                "unsaved text: save or close it first",
            )
            continue
        # A path no trace names (nearly all of a large restore) needs no closer look: the same
        # listings `unsaved_trace` probes.
        full = os.path.join(root, *pp.path.split("/"))
        folder, name = os.path.split(full)
        if name not in _traced(folder, listed, beside=True) and not any(
            full.replace(os.sep, "%") in there for there in elsewhere
        ):
            continue
        reason = unsaved_trace(root, pp.path, listed)
        if reason is not None:
            pp.conflict = Conflict(
                ConflictKind.MODIFIED_OUTSIDE,
                f"{pp.path}: {reason}; restoring would write under the unsaved text",
            )
