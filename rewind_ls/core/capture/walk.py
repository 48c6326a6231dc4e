"""Walk a workspace the way git sees it, without running git.

Yields every regular file that git would list as tracked-or-untracked-not-ignored
(``git ls-files --cached --others --exclude-standard``), with two deliberate differences:
the git index is not read, so a committed file that matches an ignore pattern is skipped.
Like git, the walk stops at a nested checkout: a folder below the root with its own ``.git``
(a folder, or the file of a ``git worktree add``, a submodule, Claude Code's
``.claude/worktrees/NAME``) is another workspace, not part of this one. Ignore semantics are
those of :mod:`rewind_ls.core.capture.ignore`.
"""

from __future__ import annotations

import os
from operator import attrgetter

from rewind_ls.core.capture.ignore import IgnoreRules, enter_dir, excluded

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence

    from rewind_ls.core.capture.ignore import RuleSet

__all__ = ["relative_skips", "unrecordable", "walk", "walk_below"]

_NAME = attrgetter("name")
# A folder to list: (absolute path, root-relative prefix with trailing "/", rule sets from above).
_Folder = tuple[str, str, "tuple[RuleSet, ...]"]


def walk(
    root: str,
    rules: IgnoreRules | None = None,
    skip_dirs: Sequence[str] = (),
    links: list[tuple[str, os.stat_result]] | None = None,
) -> Iterator[tuple[str, os.stat_result]]:
    """Yield ``(posix relpath, lstat result)`` for each non-ignored regular file under
    ``root``.

    Ignored directories are never opened, so an ignored ``node_modules`` costs one
    pattern check. ``.git`` entries are neither descended into nor yielded, nor is any folder
    below the root that holds one (another checkout); symlinks
    (not followed) and special files are skipped; so are the absolute paths in
    ``skip_dirs`` (e.g. a store directory inside the workspace). Folders that cannot be
    listed, and files that vanish mid-walk, are silently skipped. Within a directory,
    files come in name order, before the contents of its subdirectories. Non-ignored symbolic
    links go to `links` when given (a scan names them: they are not recorded).
    """
    root = os.path.abspath(root)
    if rules is None:
        rules = IgnoreRules.load(root)
    skip = relative_skips(root, skip_dirs)
    yield from walk_below(root, rules, "", rules.root_sets, skip, links)


def walk_below(
    root: str,
    rules: IgnoreRules,
    prefix: str,
    dirsets: tuple[RuleSet, ...],
    skip: frozenset[str],
    links: list[tuple[str, os.stat_result]] | None = None,
) -> Iterator[tuple[str, os.stat_result]]:
    """`walk` from the folder `prefix` ("a/b/", or "" for the root) down, given the rule sets in
    force from above it (`dirsets`: those of its parent, as `IgnoreRules.context` computes them)
    and the root-relative folders to skip."""
    stack: list[_Folder] = [(os.path.join(root, prefix) if prefix else root, prefix, dirsets)]
    while stack:
        path, prefix, dirsets = stack.pop()
        try:
            with os.scandir(path) as it:
                entries = sorted(it, key=_NAME)
        except OSError:
            continue
        subdirs: list[_Folder] = []
        yield from _folder(entries, path, prefix, dirsets, rules.top, skip, subdirs, links)
        stack.extend(reversed(subdirs))


def _folder(
    entries: list[os.DirEntry[str]],
    path: str,
    prefix: str,
    dirsets: tuple[RuleSet, ...],
    top: tuple[RuleSet, ...],
    skip: frozenset[str],
    subdirs: list[_Folder],
    links: list[tuple[str, os.stat_result]] | None = None,
) -> Iterator[tuple[str, os.stat_result]]:
    """One listed folder: yield its non-ignored files, append the subfolders to enter."""
    names = [e.name for e in entries]
    is_repo = ".git" in names
    if is_repo and prefix:
        return  # another checkout (paths.nested_checkout): its files are its own workspace's
    has_gitignore = ".gitignore" in names and _is_file(entries[names.index(".gitignore")])
    if is_repo or has_gitignore:
        dirsets = enter_dir(path, prefix, dirsets, is_repo, has_gitignore)
    sets = top + dirsets
    for entry, name in zip(entries, names, strict=True):
        if name == ".git" or unrecordable(name):
            continue  # a .git folder, or a gitfile (submodule, worktree), is not content
        rel = prefix + name
        try:
            if entry.is_dir(follow_symlinks=False):
                if rel not in skip and not excluded(sets, rel, name, True):
                    subdirs.append((entry.path, rel + "/", dirsets))
            elif entry.is_file(follow_symlinks=False) and not excluded(sets, rel, name, False):
                yield rel, entry.stat(follow_symlinks=False)
            elif links is not None and entry.is_symlink() and not excluded(sets, rel, name, False):
                links.append((rel, entry.stat(follow_symlinks=False)))
        except OSError:
            continue  # vanished or unreadable between listing and stat


def unrecordable(name: str) -> bool:
    """A name whose bytes are not UTF-8 (os.scandir hands them over surrogate-escaped). The store
    keeps UTF-8 paths, so such a file (or a folder, with all below it) is passed over rather than
    letting one odd name stop every checkpoint."""
    if name.isascii():
        return False
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _is_file(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_file(follow_symlinks=False)
    except OSError:
        return False


def relative_skips(root: str, skip_dirs: Sequence[str]) -> frozenset[str]:
    """Root-relative POSIX forms of ``skip_dirs`` that lie inside ``root``, comparing
    both the given and the symlink-resolved spellings of each side."""
    if not skip_dirs:
        return frozenset()
    roots = {root, os.path.realpath(root)}
    out: set[str] = set()
    for d in skip_dirs:
        for cand in {os.path.abspath(d), os.path.realpath(d)}:
            for r in roots:
                try:
                    rel = os.path.relpath(cand, r)
                except ValueError:  # different drives on Windows
                    continue
                if rel != "." and rel != os.pardir and not rel.startswith(os.pardir + os.sep):
                    out.add(rel.replace(os.sep, "/"))
    return frozenset(out)
