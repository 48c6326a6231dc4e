from __future__ import annotations

import os
import shutil
import stat
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rewind_ls.core.capture.ignore import IgnoreRules, RuleSet, parse_line
from rewind_ls.core.capture.walk import walk

GIT = shutil.which("git")
needs_git = pytest.mark.skipif(GIT is None, reason="git not installed")

# A tree exercising names that patterns commonly trip over.
FILES = [
    "a.txt",
    "b.log",
    "c.py",
    "c.pyc",
    ".env",
    ".hidden/x.txt",
    "README.md",
    "with space.txt",
    "#hash.txt",
    "!bang.txt",
    "[br].txt",
    "]bc",
    "trail ",
    "abc",
    "abd",
    "aXc",
    "Upper.txt",
    "build/out.o",
    "build/keep.txt",
    "build/sub/deep.txt",
    "src/main.py",
    "src/main.pyc",
    "src/build/gen.py",
    "src/lib/util.py",
    "src/lib/util.log",
    "src/lib/build",
    "docs/a.md",
    "docs/b.txt",
    "docs/api/index.html",
    "docs/api/x.log",
    "node_modules/pkg/index.js",
    "node_modules/pkg/package.json",
    "foo/bar/baz.txt",
    "foo/bar.txt",
    "foobar.txt",
    "foo/baz/bar/qux.txt",
    "fooX/qux.txt",
    "a/b/c/d/e.txt",
    "a/e.txt",
    "logs/today.log",
    "logs/keep/.gitkeep",
    "x/y/z.tmp",
    "deep/er/than/you/think/file.txt",
]


def git_env(home: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(
        HOME=home,
        XDG_CONFIG_HOME=home,
        GIT_CONFIG_NOSYSTEM="1",
        GIT_CONFIG_GLOBAL=os.devnull,
    )
    return env


def git(repo: Path, *args: str) -> bytes:
    assert GIT is not None
    return subprocess.run(
        [GIT, *args], cwd=repo, env=git_env(str(repo)), capture_output=True, check=True
    ).stdout


def git_files(repo: Path) -> set[str]:
    """What git lists; a nested repository (listed as "dir/") is another checkout, which neither
    git nor rewind-ls lists the files of."""
    out = git(repo, "ls-files", "-z", "--others", "--cached", "--exclude-standard")
    result: set[str] = set()
    for raw in out.split(b"\0"):
        if not raw:
            continue
        p = os.fsdecode(raw)
        if not p.endswith("/"):  # "dir/": an untracked nested repository
            result.add(p)
    return result


def make_tree(root: Path, files: list[str]) -> None:
    for f in files:
        p = root / f
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(f.encode() + b"\n")


def walked(root: Path, **kw: object) -> set[str]:
    return {rel for rel, _ in walk(str(root), **kw)}  # type: ignore[arg-type]


def init_repo(root: Path) -> None:
    git(root, "-c", "init.defaultBranch=main", "init", "-q")


# (id, {directory: .gitignore text}, info/exclude text)
CASES: list[tuple[str, dict[str, str], str]] = [
    ("empty", {}, ""),
    ("extensions", {"": "*.log\n*.pyc\n"}, ""),
    ("negate_file", {"": "*.log\n!logs/today.log\n"}, ""),
    ("negate_inside_ignored_dir", {"": "build/\n!build/keep.txt\n"}, ""),
    ("negate_inside_ignored_dir_star", {"": "build/*\n!build/keep.txt\n"}, ""),
    ("dir_only", {"": "build/\n"}, ""),
    ("no_slash_matches_file_and_dir", {"": "build\n"}, ""),
    ("anchored", {"": "/build\n"}, ""),
    ("anchored_nested_path", {"": "src/build\n"}, ""),
    ("middle_slash_is_anchored", {"": "bar/baz.txt\n"}, ""),
    ("leading_doublestar", {"": "**/build\n"}, ""),
    ("leading_doublestar_dir", {"": "**/bar/\n"}, ""),
    ("leading_doublestar_path", {"": "**/bar/baz.txt\n"}, ""),
    ("middle_doublestar", {"": "a/**/e.txt\n"}, ""),
    ("middle_triple_star", {"": "a/***/e.txt\n"}, ""),
    ("trailing_doublestar", {"": "docs/**\n"}, ""),
    ("trailing_doublestar_negate_dirs", {"": "docs/**\n!docs/**/\n!*.md\n"}, ""),
    ("doublestar_not_component", {"": "foo**/qux.txt\n"}, ""),
    ("doublestar_suffix", {"": "foo/**bar.txt\n"}, ""),
    ("doublestar_alone_nested", {"docs": "**\n"}, ""),
    ("star_in_dir", {"foo": "*\n!bar.txt\n"}, ""),
    ("star_slash", {"": "foo/*\n"}, ""),
    ("star_slash_star", {"": "*/bar\n"}, ""),
    ("ignore_all_reinclude", {"": "*\n!*/\n!*.py\n"}, ""),
    ("question_mark", {"": "ab?\n"}, ""),
    ("question_no_slash", {"": "foo?bar.txt\n"}, ""),
    ("star_no_slash", {"": "foo*baz.txt\n"}, ""),
    ("bracket", {"": "a[bX]?\n"}, ""),
    ("bracket_negated_bang", {"": "[!a]*.txt\n"}, ""),
    ("bracket_negated_caret", {"": "[^a]*.txt\n"}, ""),
    ("bracket_range", {"": "[a-c]*\n"}, ""),
    ("bracket_reversed_range", {"": "[c-a]*\n*.md\n"}, ""),
    ("bracket_dash_edges", {"": "[c-]*\n[-a]bd\n[!c-a]b?\n"}, ""),
    ("bracket_close_first", {"": "[]a]bc\n"}, ""),
    ("bracket_slash", {"": "foo[/]bar.txt\n"}, ""),
    ("bracket_unterminated", {"": "[abc\n*.md\n"}, ""),
    ("char_class_upper", {"": "[[:upper:]]*\n"}, ""),
    ("char_class_mix", {"": "[[:digit:][:punct:]]*\n"}, ""),
    ("char_class_unknown", {"": "[[:nope:]]*\n*.log\n"}, ""),
    ("escapes", {"": "\\#hash.txt\n\\!bang.txt\n\\[br\\].txt\n"}, ""),
    ("comment_not_pattern", {"": "#hash.txt\n# *.txt\n"}, ""),
    ("bang_alone", {"": "!\n*.log\n"}, ""),
    ("slash_alone", {"": "/\n*.log\n"}, ""),
    ("trailing_spaces", {"": "a.txt   \nc.py \t\n"}, ""),
    ("escaped_trailing_space", {"": "trail\\ \n"}, ""),
    ("trailing_backslash", {"": "abc\\\n"}, ""),
    ("spaces_inside", {"": "with space.txt\n"}, ""),
    ("nested_negates_parent", {"": "*.log\n", "src": "!*.log\n*.py\n"}, ""),
    ("nested_anchored", {"src": "/build/\n"}, ""),
    ("nested_overrides_parent", {"": "!build/\n", "src": "build\n"}, ""),
    ("deeper_wins_over_later", {"": "!*.txt\n", "docs": "*.txt\n"}, ""),
    ("nested_path_relative", {"foo": "bar/baz.txt\n"}, ""),
    ("hidden_files", {"": ".*\n!.gitignore\n"}, ""),
    ("node_modules", {"": "node_modules/\n"}, ""),
    ("gitignore_ignores_itself", {"": ".gitignore\n*.log\n"}, ""),
    ("dir_only_path", {"": "foo/bar/\n"}, ""),
    ("ext_dir_only_no_match", {"": "*.txt/\n"}, ""),
    ("star_dir_only", {"": "*/\n"}, ""),
    ("suffix_dir_only", {"": "*ar/\n*ld/\n"}, ""),
    ("negated_dir_keeps_files_ignored", {"": "*.txt\n!foo/\n"}, ""),
    ("reinclude_dir_then_file", {"": "foo/\n!foo/\n"}, ""),
    ("crlf_file", {"": "*.log\r\nbuild/\r\n"}, ""),
    ("utf8_bom", {"": "\ufeff*.log\n"}, ""),
    ("info_exclude", {"": "!a.txt\n"}, "*.txt\n"),
    ("info_exclude_dir", {}, "docs/\nnode_modules\n"),
    ("many_rules", {"": "".join(f"*.e{i}\nname{i}\n/p{i}/x\n" for i in range(60)) + "*.log\n"}, ""),
]


@needs_git
@pytest.mark.parametrize(
    ("gitignores", "exclude"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_matches_git(tmp_path: Path, gitignores: dict[str, str], exclude: str) -> None:
    make_tree(tmp_path, FILES)
    init_repo(tmp_path)
    for d, text in gitignores.items():
        (tmp_path / d / ".gitignore").write_bytes(text.encode())
    if exclude:
        (tmp_path / ".git" / "info").mkdir(exist_ok=True)
        (tmp_path / ".git" / "info" / "exclude").write_text(exclude)
    expected = git_files(tmp_path)
    assert walked(tmp_path) == expected
    # The standalone check agrees with the walk for every file in the tree.
    rules = IgnoreRules.load(str(tmp_path))
    all_files = set(FILES) | {f"{d}/.gitignore".lstrip("/") for d in gitignores}
    for f in sorted(all_files):
        assert rules.is_ignored(f, is_dir=False) == (f not in expected), f


@needs_git
def test_nested_repository_is_another_checkout(tmp_path: Path) -> None:
    make_tree(tmp_path, FILES)
    inner = tmp_path / "vendor" / "lib"
    make_tree(inner, ["a.log", "b.txt", "c.tmp", "sub/f.txt"])
    init_repo(tmp_path)
    init_repo(inner)
    (tmp_path / ".gitignore").write_text("*.log\n*.tmp\n")
    expected = git_files(tmp_path)
    assert not any(rel.startswith("vendor/lib/") for rel in expected)
    assert walked(tmp_path) == expected
    # The nested repository walked as a workspace of its own sees its files.
    assert walked(inner) == git_files(inner) == {"a.log", "b.txt", "c.tmp", "sub/f.txt"}


@needs_git
def test_worktree_inside_the_workspace_is_not_walked(tmp_path: Path) -> None:
    """`git worktree add` inside the project (Claude Code's `.claude/worktrees/NAME`): a `.git`
    file makes the folder another checkout, whose files are not the outer workspace's."""
    init_repo(tmp_path)
    make_tree(tmp_path, ["x.txt"])
    git(tmp_path, "add", "x.txt")
    git(tmp_path, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "init")
    nest = tmp_path / ".claude" / "worktrees" / "nest"
    git(tmp_path, "worktree", "add", "-q", str(nest))
    make_tree(nest, ["a.txt", "deep/b.txt"])
    make_tree(tmp_path, [".claude/settings.json"])
    assert (nest / ".git").is_file()
    assert walked(tmp_path) == {"x.txt", ".claude/settings.json"}
    assert walked(nest) == {"x.txt", "a.txt", "deep/b.txt"}


@needs_git
def test_gitfile_worktree_uses_common_info_exclude(tmp_path: Path) -> None:
    main = tmp_path / "main"
    main.mkdir()
    init_repo(main)
    make_tree(main, ["x.txt"])
    git(main, "add", "x.txt")
    git(main, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "init")
    (main / ".git" / "info").mkdir(exist_ok=True)
    (main / ".git" / "info" / "exclude").write_text("*.tmp\n")
    wt = tmp_path / "wt"
    git(main, "worktree", "add", "-q", str(wt))
    make_tree(wt, ["new.tmp", "new.txt"])
    assert (wt / ".git").is_file()
    assert walked(wt) == git_files(wt) == {"x.txt", "new.txt"}


# --- random patterns against git ---------------------------------------------------

ATOMS = [
    "*.log", "*.txt", "*.py", "build", "build/", "/build", "src/build", "**/bar", "bar/",
    "a/**/e.txt", "docs/**", "foo/*", "*", "*/", "ab?", "[a-c]*", "[!a]*.txt", "!*.txt",
    "!*/", "!build/", "!foo/", "!docs/", "!*.md", "!a.txt", "src/", "/foo", "foo/bar",
    "**/*.log", "x/**", ".*", "!.gitignore", "node_modules/", "*.md", "lib", "!lib/",
    "e.txt", "d/", "**/c/", "[[:upper:]]*", "\\#hash.txt", "foo**/qux.txt", "[c-a]*", "*ar/",
    "**", "a/**", "/a/**/e.txt", "!**/keep/", "!src/lib/", "!**/*.py", "*.t?t", "!x/y/",
    "deep/**/file.txt", "**/er/", "logs/*", "!logs/keep/", "src/**/build", "/*.txt", "*/*",
    "!*/*/", "docs/*/", "?", "[[:lower:]]*.txt", "build/**/", "**/*", "!d/",
]  # fmt: skip


@pytest.fixture(scope="module")
def random_repo() -> Iterator[Path]:
    with tempfile.TemporaryDirectory() as d:
        root = Path(d)
        make_tree(root, FILES)
        init_repo(root)
        yield root


@needs_git
@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    st.dictionaries(
        st.sampled_from(["", "src", "docs", "foo", "a/b", "build", "logs", "deep/er"]),
        st.lists(st.sampled_from(ATOMS), min_size=1, max_size=6),
        max_size=4,
    )
)
def test_random_patterns_match_git(random_repo: Path, gitignores: dict[str, list[str]]) -> None:
    for d in ["", "src", "docs", "foo", "a/b", "build", "logs", "deep/er"]:
        p = random_repo / d / ".gitignore"
        if d in gitignores:
            p.write_text("".join(x + "\n" for x in gitignores[d]))
        elif p.exists():
            p.unlink()
    assert walked(random_repo) == git_files(random_repo)


# --- walk behaviour ----------------------------------------------------------------


def test_ignored_dirs_are_never_listed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    make_tree(tmp_path, FILES)
    (tmp_path / ".gitignore").write_text("node_modules/\nbuild\n")
    seen: list[str] = []
    real = os.scandir

    def recording(path: str) -> object:
        seen.append(os.path.relpath(path, tmp_path))
        return real(path)

    monkeypatch.setattr(os, "scandir", recording)
    files = walked(tmp_path)
    assert "src/main.py" in files
    assert not any(s.startswith(("node_modules", "build", "src/build")) for s in seen), seen
    assert not any(f.startswith(("node_modules/", "build/")) for f in files)


def test_unlistable_dir_is_skipped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    make_tree(tmp_path, ["ok.txt", "locked/secret.txt", "locked/inner/x.txt"])
    real = os.scandir

    def failing(path: str) -> object:
        if os.path.basename(path) == "locked":
            raise PermissionError(13, "Permission denied", path)
        return real(path)

    monkeypatch.setattr(os, "scandir", failing)
    assert walked(tmp_path) == {"ok.txt"}


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="needs non-root POSIX")
def test_unreadable_dirs_chmod(tmp_path: Path) -> None:
    make_tree(tmp_path, ["ok.txt", "locked/secret.txt", "ignored/x.txt"])
    (tmp_path / ".gitignore").write_text("ignored/\n")
    (tmp_path / "locked").chmod(0)
    (tmp_path / "ignored").chmod(0)
    try:
        assert walked(tmp_path) == {"ok.txt", ".gitignore"}
    finally:
        (tmp_path / "locked").chmod(0o755)
        (tmp_path / "ignored").chmod(0o755)


def test_symlinks_and_special_files_skipped(tmp_path: Path) -> None:
    make_tree(tmp_path, ["real.txt", "dir/inner.txt"])
    (tmp_path / "link.txt").symlink_to("real.txt")
    (tmp_path / "dirlink").symlink_to("dir")
    (tmp_path / "dangling").symlink_to("nowhere")
    (tmp_path / "dir" / "loop").symlink_to("..")
    if hasattr(os, "mkfifo"):
        os.mkfifo(tmp_path / "fifo")
    assert walked(tmp_path) == {"real.txt", "dir/inner.txt"}


def test_symlinked_gitignore_not_followed(tmp_path: Path) -> None:
    make_tree(tmp_path, ["a.log", "rules"])
    (tmp_path / "rules").write_text("*.log\n")
    (tmp_path / ".gitignore").symlink_to("rules")
    assert walked(tmp_path) == {"a.log", "rules"}
    assert not IgnoreRules.load(str(tmp_path)).is_ignored("a.log", False)


def test_git_dir_and_gitfile_not_content(tmp_path: Path) -> None:
    make_tree(tmp_path, [".git/config", ".git/objects/ab/cd", "a.txt", "sub/.git", "sub/b.txt"])
    (tmp_path / "sub" / ".git").write_text("gitdir: ../.git/modules/sub\n")
    assert walked(tmp_path) == {"a.txt"}  # sub/ is a submodule: another checkout
    assert walked(tmp_path / "sub") == {"b.txt"}


def test_skip_dirs(tmp_path: Path) -> None:
    make_tree(tmp_path, ["a.txt", ".rewind/store/obj", "deep/store/x", "deep/keep.txt"])
    got = walked(tmp_path, skip_dirs=[str(tmp_path / ".rewind"), str(tmp_path / "deep" / "store")])
    assert got == {"a.txt", "deep/keep.txt"}
    # Paths outside the workspace and the root itself are harmless.
    assert walked(tmp_path, skip_dirs=[str(tmp_path.parent), "/nonexistent"]) == {
        "a.txt",
        ".rewind/store/obj",
        "deep/store/x",
        "deep/keep.txt",
    }


def test_skip_dirs_through_symlinked_root(tmp_path: Path) -> None:
    real = tmp_path / "real"
    make_tree(real, ["a.txt", "store/x"])
    (tmp_path / "alias").symlink_to("real")
    assert walked(tmp_path / "alias", skip_dirs=[str(real / "store")]) == {"a.txt"}


def test_yields_lstat(tmp_path: Path) -> None:
    (tmp_path / "f.bin").write_bytes(b"12345")
    [(rel, st)] = list(walk(str(tmp_path)))
    assert rel == "f.bin" and st.st_size == 5 and stat.S_ISREG(st.st_mode)


def test_order_is_deterministic(tmp_path: Path) -> None:
    make_tree(tmp_path, ["b.txt", "a.txt", "z/1", "c/2", "c/a/3"])
    assert [r for r, _ in walk(str(tmp_path))] == ["a.txt", "b.txt", "c/2", "c/a/3", "z/1"]


def test_missing_root_yields_nothing(tmp_path: Path) -> None:
    assert walked(tmp_path / "nope") == set()


def test_rewindignore_and_extra_patterns(tmp_path: Path) -> None:
    make_tree(tmp_path, [".env", "a.txt", "b.log", "cache/x", "keep.log"])
    (tmp_path / ".gitignore").write_text(".env\n*.log\n")
    (tmp_path / ".rewindignore").write_text("!.env\ncache/\n")
    got = walked(tmp_path)
    assert got == {".env", "a.txt", ".gitignore", ".rewindignore"}
    rules = IgnoreRules.load(str(tmp_path), extra_patterns=["!keep.log", "a.txt"])
    assert walked(tmp_path, rules=rules) == {".env", "keep.log", ".gitignore", ".rewindignore"}
    assert rules.is_ignored("cache", is_dir=True)
    assert rules.is_ignored("cache/x", is_dir=False)
    assert not rules.is_ignored(".env", is_dir=False)


def test_is_ignored_reads_nested_gitignore_and_parents(tmp_path: Path) -> None:
    make_tree(tmp_path, ["pkg/src/a.gen.py", "pkg/src/b.py"])
    (tmp_path / "pkg" / ".gitignore").write_text("*.gen.py\nout/\n")
    rules = IgnoreRules.load(str(tmp_path))
    assert rules.is_ignored("pkg/src/a.gen.py", False)
    assert not rules.is_ignored("pkg/src/b.py", False)
    assert rules.is_ignored("pkg/out", True)
    assert not rules.is_ignored("pkg/out", False)  # dir-only pattern, file named out
    assert rules.is_ignored("pkg/out/deep/file.txt", False)  # via its parent
    assert rules.is_ignored("./pkg//src/a.gen.py", False)
    assert not rules.is_ignored("", True)
    assert not rules.is_ignored("a.gen.py", False)  # pkg/.gitignore does not reach up


def test_walk_many_files_skips_ignored_trees(tmp_path: Path) -> None:
    (tmp_path / ".gitignore").write_text(
        "node_modules/\n*.pyc\n__pycache__/\n/dist\n**/tmp/*.bak\n*.[oa]\n!keep.o\n"
    )
    for d in range(300):
        sub = tmp_path / f"pkg{d % 10}" / f"mod{d}"
        sub.mkdir(parents=True)
        for f in range(100):
            (sub / f"file{f}.py").touch()
    nm = tmp_path / "node_modules"
    for d in range(200):
        sub = nm / f"dep{d}"
        sub.mkdir(parents=True)
        for f in range(100):
            (sub / f"index{f}.js").touch()
    n = sum(1 for _ in walk(str(tmp_path)))
    assert n == 30_001


# --- parsing / matching units -----------------------------------------------------


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("", None),
        ("# comment", None),
        ("   ", None),
        ("!", None),
        ("/", None),
        ("foo", ("foo", False, False)),
        ("!foo/", ("foo", True, True)),
        ("\\#x", ("\\#x", False, False)),
        ("\\!x", ("\\!x", False, False)),
        ("a  ", ("a", False, False)),
        ("a\\  ", ("a\\ ", False, False)),
        ("a\\", ("a\\", False, False)),
        ("a \\ ", ("a \\ ", False, False)),
        ("a\t", ("a\t", False, False)),
        ("/a/b/", ("/a/b", False, True)),
    ],
)
def test_parse_line(line: str, expected: tuple[str, bool, bool] | None) -> None:
    assert parse_line(line) == expected


def test_ruleset_basics() -> None:
    rs = RuleSet(["*.log", "!keep.log", "tmp/", "/top.txt", "a/**/b", "x?z"], "sub/")
    assert len(rs) == 6 and bool(rs) and "rules=6" in repr(rs)
    assert rs.match("sub/x.log", "x.log", False) == 1
    assert rs.match("sub/keep.log", "keep.log", False) == 0
    assert rs.match("sub/tmp", "tmp", True) == 1
    assert rs.match("sub/tmp", "tmp", False) == -1
    assert rs.match("sub/top.txt", "top.txt", False) == 1
    assert rs.match("sub/d/top.txt", "top.txt", False) == -1
    assert rs.match("sub/a/b", "b", False) == 1
    assert rs.match("sub/a/q/r/b", "b", True) == 1
    assert rs.match("sub/xyz", "xyz", False) == 1
    assert not RuleSet(["# only comments", ""])


def test_unreadable_ignore_file_is_empty(tmp_path: Path) -> None:
    assert RuleSet.from_file(str(tmp_path / "missing")) is None
    (tmp_path / "dir").mkdir()
    assert RuleSet.from_file(str(tmp_path / "dir")) is None


def test_non_utf8_names(tmp_path: Path) -> None:
    if os.name != "posix":
        pytest.skip("bytes file names")
    name = b"caf\xe9.log"
    (tmp_path / os.fsdecode(name)).write_bytes(b"x")
    (tmp_path / "ok.txt").write_bytes(b"x")
    (tmp_path / ".gitignore").write_bytes(b"caf\xe9.log\n")
    assert walked(tmp_path) == {"ok.txt", ".gitignore"}
