"""The docs site (mkdocs.yml, docs/) stays true to the code it documents:

- it builds with `mkdocs build --strict` (no broken link, anchor or nav entry), with its reference
  pages generated from the code (scripts/docs/reference.py);
- every `rewind-ls ...` command line in a code block of the docs or the README parses with the real
  argument parser;
- every environment variable the code reads is in `core/fs/environment.py` (the reference's
  source), and nothing listed there is read nowhere;
- the Neovim page lists the commands and options of the Neovim help (editors/nvim/doc/rewind.txt);
- every picture a page shows is one a test writes (the hook takes it from test-artifacts/).
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
DOCS = REPO / "docs"
sys.path.insert(0, str(REPO / "scripts" / "docs"))

import reference  # noqa: E402

from rewind_ls.cli.app import COMMANDS, build_parser  # noqa: E402
from rewind_ls.core.fs.environment import ENVIRONMENT  # noqa: E402


def _pages() -> list[Path]:
    return [REPO / "README.md", *sorted(DOCS.rglob("*.md"))]


def test_site_builds_strict(tmp_path: Path) -> None:
    site = tmp_path / "site"
    env = {
        **os.environ,
        "NO_MKDOCS_2_WARNING": "1",
        "REWIND_DOCS_ARTIFACTS": str(tmp_path / "none"),
    }
    proc = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    cli = (site / "reference" / "cli" / "index.html").read_text()
    for _, names in COMMANDS:
        for name in names:
            assert f"rewind-ls {name}" in cli, f"the CLI reference lacks {name}"
    env_page = (site / "reference" / "environment" / "index.html").read_text()
    assert all(var.name in env_page for var in ENVIRONMENT)
    protocol = (site / "reference" / "protocol" / "index.html").read_text()
    for schema in (REPO / "schemas").glob("rewind.*.params.json"):
        assert f"rewind/{schema.name.split('.')[1]}" in protocol
    # A missing picture is a blank stand-in here, and an error where the tests must have made it.
    required = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "s2")],
        cwd=REPO,
        env={**env, "REWIND_DOCS_SCREENSHOTS": "require"},
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert required.returncode != 0 and "not in" in required.stdout + required.stderr


# --- command lines in code blocks ----------------------------------------------------------------

FENCE = re.compile(r"^\s*```")
# A command after a prompt, `&&` or at a line's start; what follows `#` is a comment.
COMMAND = re.compile(r"(?:^\s*(?:\$\s+)?|&&\s*)(rewind-ls(?:\s[^#&|;]*)?)")


def documented_commands(text: str) -> list[str]:
    """The `rewind-ls ...` command lines in the fenced code blocks of a Markdown text."""
    found, inside = [], False
    for line in text.splitlines():
        if FENCE.match(line):
            inside = not inside
            continue
        if inside:
            found.extend(m.group(1).strip() for m in COMMAND.finditer(line))
    return found


def parse_error(command: str) -> str | None:
    """None when the real parser accepts `command`, else what it said."""
    argv = shlex.split(command)[1:]
    parser = build_parser()
    import contextlib
    import io

    err = io.StringIO()
    try:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            parser.parse_args(argv)
    except SystemExit as exc:
        if exc.code not in (0, None):
            return err.getvalue().strip() or f"exit {exc.code}"
    return None


def test_every_documented_command_parses() -> None:
    seen, bad = 0, []
    for page in _pages():
        for command in documented_commands(page.read_text()):
            seen += 1
            problem = parse_error(command)
            if problem:
                bad.append(f"{page.relative_to(REPO)}: {command}: {problem}")
    assert seen >= 15, f"only {seen} documented commands found: is the extraction broken?"
    assert not bad, "documented commands the parser refuses:\n" + "\n".join(bad)


def test_the_command_check_can_fail() -> None:
    text = "```sh\n$ rewind-ls rewind 2 --scope everything\nrewind-ls frobnicate\n```\n"
    commands = documented_commands(text)
    assert commands == ["rewind-ls rewind 2 --scope everything", "rewind-ls frobnicate"]
    assert all(parse_error(c) for c in commands)
    assert parse_error("rewind-ls rewind 2 --scope both --dry-run") is None


# --- environment variables -----------------------------------------------------------------------

# Read the standard way for their standard meaning; not rewind-ls settings.
STANDARD = {"PATH", "HOME", "COLUMNS", "VIRTUAL_ENV", "XDG_CONFIG_HOME"}
READ = re.compile(
    r"""(?:environ\.get|environ\[|_env|env_positive|getenv)\(?\s*b?["']([A-Z][A-Z0-9_]+)["']"""
)
OURS = re.compile(r"""["'](REWIND_LS_[A-Z0-9_]+)["']""")


def test_every_environment_variable_is_in_the_reference() -> None:
    used: set[str] = set()
    for path in (REPO / "rewind_ls").rglob("*.py"):
        if path.name == "environment.py":
            continue
        text = path.read_text()
        used |= set(READ.findall(text)) | set(OURS.findall(text))
    listed = {var.name for var in ENVIRONMENT}
    assert not (used - STANDARD) - listed, "not in core/fs/environment.py"
    assert not listed - used, "listed in core/fs/environment.py but read nowhere"


def test_exit_codes_are_the_ones_raised() -> None:
    from rewind_ls.core.errors import EXIT_CODES, ConflictError, RewindError

    assert set(EXIT_CODES) == {0, 1, RewindError.exit_code, ConflictError.exit_code}
    page = reference.exit_codes_reference()
    assert all(f"| {code} |" in page for code in EXIT_CODES)


# --- the Neovim help and the Neovim page ---------------------------------------------------------

HELP = REPO / "editors" / "nvim" / "doc" / "rewind.txt"
NVIM_PAGE = DOCS / "editors" / "neovim.md"


SUBCOMMAND = re.compile(r"^(:Rewind)(?: ([a-z]+)\b)?")


def _command(usage: str) -> str:
    """`:Rewind` or `:Rewind sub` of a usage line (`{n}` and `[{path}]` are arguments)."""
    m = SUBCOMMAND.match(usage)
    assert m, usage
    return " ".join(g for g in m.groups() if g)


def _help_commands() -> set[str]:
    """`:Rewind` and its subcommands, as the help's command headings name them."""
    return {_command(line) for line in HELP.read_text().splitlines() if line.startswith(":Rewind")}


def _help_options() -> set[str]:
    """The setup() options, as the help's defaults block lists them."""
    text = HELP.read_text()
    block = text[
        text.index("require('rewind').setup({\n") : text.index(
            "    })", text.index("require('rewind').setup({\n")
        )
    ]
    return set(re.findall(r"^\s{6}(\w+)\s*=", block, re.M))


def test_neovim_page_follows_the_help() -> None:
    page = NVIM_PAGE.read_text()
    page_commands = {_command(m) for m in re.findall(r"^\| `(:Rewind[^`]*)`", page, re.M)}
    page_options = set(re.findall(r"^\| `(\w+)` \|", page, re.M))
    help_commands, help_options = _help_commands(), _help_options()
    assert len(help_commands) >= 8 and len(help_options) >= 10, "the help's layout changed"
    assert page_commands == help_commands, (
        f"only in the help: {help_commands - page_commands}; only on the page: {page_commands - help_commands}"
    )
    assert page_options == help_options, (
        f"only in the help: {help_options - page_options}; only on the page: {page_options - help_options}"
    )


# --- pictures ------------------------------------------------------------------------------------


def test_every_picture_is_made_by_a_test() -> None:
    import hooks

    named = hooks.pictures_named(DOCS)
    assert named, "the docs show no picture: is the pattern broken?"
    tests_text = "\n".join(p.read_text() for p in (REPO / "tests").rglob("*.py"))
    unmade = sorted(n for n in named if f'"{n}"' not in tests_text)
    assert not unmade, f"pictures no test writes: {unmade}"


@pytest.mark.parametrize("page", ["README.md"])
def test_readme_fits(page: str) -> None:
    assert (REPO / page).stat().st_size <= 12_000


def test_architecture_fits() -> None:
    assert (REPO / "ARCHITECTURE.md").stat().st_size <= 20_000
