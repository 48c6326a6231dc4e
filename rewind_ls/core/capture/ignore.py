"""gitignore-compatible ignore rules, evaluated without running git.

Semantics follow git's ``dir.c``/``wildmatch.c``: blank lines and ``#`` comments are
skipped, unescaped trailing spaces are trimmed, ``!`` negates, a trailing ``/`` matches
directories only, a pattern with a ``/`` anywhere but at the end is anchored to the
directory of its file (otherwise it matches the basename at any depth), ``*``, ``?`` and
``[...]`` (with ``!``/``^`` negation, ranges and ``[:class:]``) never match ``/``, and
``**`` spans directories when it is a whole path component. Within one file the last
matching pattern wins; a deeper ``.gitignore`` wins over a shallower one.

Sources, lowest precedence first: the repository's ``.git/info/exclude``, the
``.gitignore`` files from the root down, ``<root>/.rewindignore`` (rewind-ls's own file,
so it can also re-include what git ignores, e.g. ``!.env``), then ``extra_patterns``.
``core.excludesFile`` is deliberately not read: snapshots must not depend on the user's
global git configuration. As in git, nothing inside an ignored directory can be
re-included.

A nested repository (a folder containing ``.git``) starts afresh, as git itself would see
it: the outer ``.gitignore``/``info/exclude`` rules decide whether the folder is ignored,
but inside it only its own ``info/exclude`` and ``.gitignore`` files apply (plus
``.rewindignore`` and ``extra_patterns``, which cover the whole workspace).

Matching is on ``str`` paths (undecodable bytes as surrogate escapes, like ``os`` does);
ignore files are decoded the same way. Comparisons are case-sensitive. ``re`` is only
imported when a pattern needs a regular expression: plain names, ``*.ext`` and plain
paths are matched with dict lookups and ``str.endswith``.
"""

from __future__ import annotations

import os
from stat import S_ISREG

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Sequence
    from re import Match

    Matcher = Callable[[str], Match[str] | None]
    # A compiled alternation plus, per capturing group, the rule index it stands for.
    _Rx = tuple[Matcher, list[int]]

__all__ = [
    "REWINDIGNORE",
    "IgnoreRules",
    "RuleSet",
    "enter_dir",
    "excluded",
    "git_common_dir",
    "load_repo_exclude",
    "parse_line",
]

REWINDIGNORE = ".rewindignore"

_SPECIAL = frozenset("*?[\\")
# Bound on memoised basename results per rule source (names are short strings).
_NAME_CACHE_MAX = 65536
# wildmatch's ASCII character classes, as Python character-class fragments.
_CLASSES = {
    "alnum": "0-9A-Za-z",
    "alpha": "A-Za-z",
    "blank": " \\t",
    "cntrl": "\\x00-\\x1f\\x7f",
    "digit": "0-9",
    "graph": "!-~",
    "lower": "a-z",
    "print": " -~",
    "punct": "!-/:-@\\[-`{-~",
    "space": " \\t\\n\\r\\f\\v",
    "upper": "A-Z",
    "xdigit": "0-9A-Fa-f",
}


def parse_line(line: str) -> tuple[str, bool, bool] | None:
    """Parse one ignore-file line into ``(pattern, negated, dir_only)``.

    Returns ``None`` for blank lines and comments. The pattern keeps its escapes and a
    leading ``/``; trailing spaces are trimmed unless backslash-escaped.
    """
    if not line or line[0] == "#":
        return None
    # git's trim_trailing_spaces: drop the trailing run of unescaped spaces.
    if line[-1] == " ":
        last_space = -1
        i, n = 0, len(line)
        while i < n:
            c = line[i]
            if c == " ":
                if last_space < 0:
                    last_space = i
            elif c == "\\":
                i += 1
                if i >= n:
                    last_space = -1  # a lone trailing backslash stops trimming
                    break
                last_space = -1
            else:
                last_space = -1
            i += 1
        if last_space >= 0:
            line = line[:last_space]
    negated = line.startswith("!")
    if negated:
        line = line[1:]
    dir_only = line.endswith("/")
    if dir_only:
        line = line[:-1]
    if not line:
        return None
    return line, negated, dir_only


class RuleSet:
    """The compiled patterns of one ignore source, anchored at ``base``.

    ``base`` is the POSIX path of the source's directory relative to the walk root,
    with a trailing slash ("" for the root). :meth:`match` takes root-relative paths.
    """

    __slots__ = (
        "_has_paths",
        "_name_cache",
        "_name_rx",
        "_names",
        "_negs",
        "_path_rx",
        "_paths",
        "_suffix_rules",
        "_suffixes",
        "base",
        "blen",
        "source",
    )

    def __init__(self, lines: Iterable[str], base: str = "", source: str = "") -> None:
        self.base = base
        self.blen = len(base)
        self.source = source
        negs: list[bool] = []
        # Index 0 is for files, 1 for directories (dir-only rules only land in 1).
        names: tuple[dict[str, int], dict[str, int]] = ({}, {})
        paths: tuple[dict[str, int], dict[str, int]] = ({}, {})
        suffix_rules: list[tuple[int, str, bool]] = []
        name_globs: list[tuple[int, str, bool]] = []
        path_globs: list[tuple[int, str, bool]] = []
        for raw in lines:
            parsed = parse_line(raw)
            if parsed is None:
                continue
            pat, neg, dir_only = parsed
            idx = len(negs)
            negs.append(neg)
            if "/" not in pat:
                if not _SPECIAL.intersection(pat):
                    _put(names, pat, idx, dir_only)
                elif pat[0] == "*" and not _SPECIAL.intersection(pat[1:]):
                    suffix_rules.append((idx, pat[1:], dir_only))
                else:
                    name_globs.append((idx, pat, dir_only))
            else:
                if pat[0] == "/":
                    pat = pat[1:]
                if not _SPECIAL.intersection(pat):
                    _put(paths, pat, idx, dir_only)
                else:
                    path_globs.append((idx, pat, dir_only))
        self._negs = negs
        self._names = names if names[1] else None
        self._paths = paths if paths[1] else None
        suffix_rules.reverse()  # highest precedence first
        self._suffix_rules = suffix_rules
        self._suffixes = (
            tuple(s for _, s, d in suffix_rules if not d),
            tuple(s for _, s, _ in suffix_rules),
        )
        self._name_rx = _compile(name_globs, pathname=False) if name_globs else None
        self._path_rx = _compile(path_globs, pathname=True) if path_globs else None
        self._has_paths = self._paths is not None or self._path_rx is not None
        self._name_cache: tuple[dict[str, int], dict[str, int]] = ({}, {})

    @classmethod
    def from_file(cls, path: str, base: str = "") -> RuleSet | None:
        """Load an ignore file; ``None`` if it is missing, unreadable or has no rules."""
        try:
            with open(path, "rb") as f:
                data = f.read()
        except OSError:
            return None
        if data.startswith(b"\xef\xbb\xbf"):
            data = data[3:]
        text = data.decode("utf-8", "surrogateescape")
        lines = [ln[:-1] if ln.endswith("\r") else ln for ln in text.split("\n")]
        rules = cls(lines, base, path)
        return rules if rules else None

    def __bool__(self) -> bool:
        return bool(self._negs)

    def __len__(self) -> int:
        return len(self._negs)

    def __repr__(self) -> str:
        return f"RuleSet({self.source or '<patterns>'!r}, base={self.base!r}, rules={len(self)})"

    def match(self, rel: str, name: str, is_dir: bool) -> int:
        """1 if the last matching rule ignores ``rel``, 0 if it re-includes it, -1 if no
        rule matches. ``name`` must be the last component of ``rel``."""
        kind = 1 if is_dir else 0
        # Basename results are memoised: names like index.js or __init__.py recur a lot.
        cache = self._name_cache[kind]
        best = cache.get(name)
        if best is None:
            best = self._match_name(name, kind)
            if len(cache) >= _NAME_CACHE_MAX:
                cache.clear()
            cache[name] = best
        if self._has_paths:
            sub = rel[self.blen :]
            if self._paths is not None:
                idx = self._paths[kind].get(sub, -1)
                if idx > best:
                    best = idx
            if self._path_rx is not None:
                idx = _rx_match(self._path_rx[kind], sub)
                if idx > best:
                    best = idx
        if best < 0:
            return -1
        return 0 if self._negs[best] else 1

    def _match_name(self, name: str, kind: int) -> int:
        """Index of the last basename rule matching ``name``, or -1."""
        best = -1
        if self._names is not None:
            best = self._names[kind].get(name, -1)
        if self._suffixes[kind] and name.endswith(self._suffixes[kind]):
            for idx, suffix, dir_only in self._suffix_rules:
                if idx <= best:
                    break
                if (kind or not dir_only) and name.endswith(suffix):
                    best = idx
                    break
        if self._name_rx is not None:
            idx = _rx_match(self._name_rx[kind], name)
            if idx > best:
                best = idx
        return best


def _put(maps: tuple[dict[str, int], dict[str, int]], key: str, idx: int, dir_only: bool) -> None:
    # Later rules have higher indexes, so a plain assignment keeps the winner.
    if not dir_only:
        maps[0][key] = idx
    maps[1][key] = idx


def _compile(rules: list[tuple[int, str, bool]], pathname: bool) -> tuple[_Rx | None, _Rx | None]:
    """Build (files, directories) matchers from ``(index, pattern, dir_only)`` rules.

    Alternatives are ordered by descending rule index and ``re`` tries them in order,
    so the group that matched is the last matching rule of the source.
    """
    import re  # only sources with real globs pay for it

    out: list[_Rx | None] = []
    for want_dir in (False, True):
        parts: list[str] = []
        groups = [-1]
        for idx, pat, dir_only in reversed(rules):
            if dir_only and not want_dir:
                continue
            rx = _translate(pat, pathname)
            if rx is None:
                continue
            parts.append(f"({rx})")
            groups.append(idx)
        if parts:
            out.append((re.compile("|".join(parts), re.DOTALL).fullmatch, groups))
        else:
            out.append(None)
    return out[0], out[1]


def _rx_match(rx: _Rx | None, text: str) -> int:
    if rx is None:
        return -1
    m = rx[0](text)
    if m is None:
        return -1
    return rx[1][m.lastindex or 0]


def _translate(pat: str, pathname: bool) -> str | None:
    """wildmatch pattern -> regex (no capturing groups); ``None`` if it can never match
    (unterminated ``[``, trailing backslash, unknown ``[:class:]``), as in git."""
    from re import escape

    out: list[str] = []
    i, n = 0, len(pat)
    # git strips the wildcard-free prefix before calling wildmatch, so a "**" right after
    # it counts as starting the pattern: "foo**/x" spans directories like "foo/**/x".
    literal_end = next((k for k, ch in enumerate(pat) if ch in _SPECIAL), n)
    while i < n:
        c = pat[i]
        if c == "*":
            j = i
            while j < n and pat[j] == "*":
                j += 1
            spans = (
                pathname
                and j - i >= 2
                and (i == 0 or i == literal_end or pat[i - 1] == "/")
                and (j == n or pat[j] == "/" or pat[j : j + 2] == "\\/")
            )
            if not spans:
                out.append("[^/]*")
            elif j == n:
                out.append(".*")
            else:
                out.append("(?:.*/)?")  # "**/": zero or more whole directories
                j += 1 if pat[j] == "/" else 2
            i = j
        elif c == "?":
            out.append("[^/]")
            i += 1
        elif c == "[":
            parsed = _bracket(pat, i + 1)
            if parsed is None:
                return None
            frag, i = parsed
            out.append(frag)
        elif c == "\\":
            if i + 1 >= n:
                return None
            out.append(escape(pat[i + 1]))
            i += 2
        else:
            out.append(escape(c))
            i += 1
    return "".join(out)


def _bracket(pat: str, i: int) -> tuple[str, int] | None:
    """Translate a bracket expression whose body starts at ``pat[i]``; returns the
    regex fragment and the index just past the closing ``]``."""
    n = len(pat)
    negated = i < n and pat[i] in "!^"
    if negated:
        i += 1
    items: list[str] = []
    prev = ""  # previous literal member, for ranges
    first = True
    while True:
        if i >= n:
            return None
        c = pat[i]
        if c == "]" and not first:
            break
        first = False
        if c == "\\":
            i += 1
            if i >= n:
                return None
            c = pat[i]
            items.append(_cls_escape(c))
            prev = c
            i += 1
        elif c == "-" and prev and i + 1 < n and pat[i + 1] != "]":
            ranged = _bracket_range(pat, i + 1, prev)
            if ranged is None:
                return None
            frag, i = ranged
            items.append(frag)
            prev = ""
        elif c == "[" and i + 1 < n and pat[i + 1] == ":":
            cls = _bracket_class(pat, i)
            if cls is None:
                return None
            frag, i, prev = cls
            items.append(frag)
        else:
            items.append(_cls_escape(c))
            prev = c
            i += 1
    body = "".join(items)
    if negated:
        return f"[^/{body}]", i + 1
    if not body:
        return "(?!)", i + 1
    return f"(?!/)[{body}]", i + 1


def _bracket_range(pat: str, i: int, lo: str) -> tuple[str, int] | None:
    """The range ``lo-<pat[i]>`` inside a bracket (its ``-`` just before ``pat[i]``): the
    fragment ("" when reversed) and the index past it; ``None`` on a trailing backslash."""
    hi = pat[i]
    i += 1
    if hi == "\\":
        if i >= len(pat):
            return None
        hi = pat[i]
        i += 1
    # The start character already matched as a literal; a reversed range adds nothing
    # more, as in wildmatch.
    return (f"{_cls_escape(lo)}-{_cls_escape(hi)}" if lo <= hi else ""), i


def _bracket_class(pat: str, i: int) -> tuple[str, int, str] | None:
    """``[:class:]`` at ``pat[i]`` inside a bracket: (fragment, index past it, the literal
    for a following range); ``None`` for an unterminated or unknown class, as in git."""
    end = pat.find("]", i + 2)
    if end < 0:
        return None
    if end - 1 < i + 2 or pat[end - 1] != ":":
        return "\\[", i + 1, "["  # no ":]": a plain "["
    cls = _CLASSES.get(pat[i + 2 : end - 1])
    if cls is None:
        return None
    return cls, end + 1, ""


def _cls_escape(c: str) -> str:
    return "\\" + c if c in "\\]^-[" else c


def git_common_dir(repo_dir: str) -> str | None:
    """The common git directory of the repository at ``repo_dir``, if it has one."""
    dotgit = os.path.join(repo_dir, ".git")
    if os.path.isdir(dotgit):
        gitdir = dotgit
    else:
        try:
            with open(dotgit, "rb") as f:
                head = f.read(4096).decode("utf-8", "surrogateescape")
        except OSError:
            return None
        if not head.startswith("gitdir:"):
            return None
        gitdir = os.path.join(repo_dir, head[7:].strip())
    try:
        # Linked worktrees keep info/exclude in the main repository's directory.
        with open(os.path.join(gitdir, "commondir"), "rb") as f:
            common = f.read().decode("utf-8", "surrogateescape").strip()
        return os.path.join(gitdir, common)
    except OSError:
        return gitdir


def load_repo_exclude(repo_dir: str, base: str) -> RuleSet | None:
    """``info/exclude`` of the repository whose work tree is ``repo_dir``."""
    gitdir = git_common_dir(repo_dir)
    if gitdir is None:
        return None
    return RuleSet.from_file(os.path.join(gitdir, "info", "exclude"), base)


def enter_dir(
    abs_dir: str, prefix: str, dirsets: tuple[RuleSet, ...], is_repo: bool, has_gitignore: bool
) -> tuple[RuleSet, ...]:
    """Directory-level rule sets (deepest first) that apply to the children of ``abs_dir``.

    ``prefix`` is the root-relative path of ``abs_dir`` with a trailing slash. A nested
    repository drops the enclosing repository's rules, as git would.
    """
    if is_repo and prefix:
        exclude = load_repo_exclude(abs_dir, prefix)
        dirsets = (exclude,) if exclude is not None else ()
    if has_gitignore:
        rules = RuleSet.from_file(os.path.join(abs_dir, ".gitignore"), prefix)
        if rules is not None:
            dirsets = (rules, *dirsets)
    return dirsets


def _is_regular(path: str) -> bool:
    # Like git >= 2.32, a symlinked .gitignore is not followed.
    try:
        return S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False


def excluded(sets: tuple[RuleSet, ...], rel: str, name: str, is_dir: bool) -> bool:
    """Whether the highest-precedence source with a matching rule ignores ``rel``."""
    for rules in sets:
        r = rules.match(rel, name, is_dir)
        if r >= 0:
            return r == 1
    return False


class IgnoreRules:
    """Ignore rules for a workspace root; see the module docstring for the semantics."""

    __slots__ = ("_contexts", "root", "root_sets", "top")

    def __init__(self, root: str, top: tuple[RuleSet, ...], root_sets: tuple[RuleSet, ...]) -> None:
        self.root = root
        # Workspace-wide sources, highest precedence first: extra patterns, .rewindignore.
        self.top = top
        # Directory-level sources in force at the root (the repository's info/exclude).
        self.root_sets = root_sets
        self._contexts: dict[str, tuple[RuleSet, ...]] = {}

    @classmethod
    def load(cls, root: str, extra_patterns: Sequence[str] = ()) -> IgnoreRules:
        root = os.path.abspath(root)
        top: list[RuleSet] = []
        if extra_patterns:
            extra = RuleSet(extra_patterns, "", "<extra patterns>")
            if extra:
                top.append(extra)
        own = RuleSet.from_file(os.path.join(root, REWINDIGNORE))
        if own is not None:
            top.append(own)
        exclude = load_repo_exclude(root, "")
        return cls(root, tuple(top), (exclude,) if exclude is not None else ())

    def is_ignored(self, relpath: str, is_dir: bool) -> bool:
        """Whether ``relpath`` (POSIX, relative to the root) is ignored, itself or through
        an ignored parent directory. ``.gitignore`` files along the way are read from
        disk (and cached); anything inside a ``.git`` directory counts as ignored."""
        parts = [p for p in relpath.split("/") if p and p != "."]
        if not parts:
            return False
        dirsets = self.context("")
        prefix = ""
        last = len(parts) - 1
        for k, name in enumerate(parts):
            if name == ".git":
                return True
            rel = prefix + name
            if excluded(self.top + dirsets, rel, name, is_dir if k == last else True):
                return True
            prefix = rel + "/"
            if k < last:
                dirsets = self.context(prefix, dirsets)
        return False

    def context(self, prefix: str, parent: tuple[RuleSet, ...] = ()) -> tuple[RuleSet, ...]:
        cached = self._contexts.get(prefix)
        if cached is None:
            abs_dir = os.path.join(self.root, prefix) if prefix else self.root
            if not prefix:
                parent = self.root_sets
            is_repo = os.path.lexists(os.path.join(abs_dir, ".git"))
            has_gitignore = _is_regular(os.path.join(abs_dir, ".gitignore"))
            cached = enter_dir(abs_dir, prefix, parent, is_repo, has_gitignore)
            self._contexts[prefix] = cached
        return cached
