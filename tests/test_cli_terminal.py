"""The CLI as a person meets it on a terminal (a real pty, screen read through a VT100 emulator): the
turn picker, its numbered fallback, colour, the pager; and the per-file history, two-checkpoint
diffs, revert --path and the messages that say what to do. Restores are checked on the bytes."""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import Cli
from tests.support.agent import FakeClaude
from tests.support.terminal import Terminal

ANSI_RE = re.compile(r"\x1b\[[0-9;]*m")
CAPTURES = os.environ.get("REWIND_LS_CAPTURES")  # a folder: keep the screens for the docs/report


def _capture(name: str, text: str) -> None:
    if CAPTURES:
        Path(CAPTURES).mkdir(parents=True, exist_ok=True)
        (Path(CAPTURES) / f"{name}.txt").write_text(text + "\n")


@pytest.fixture
def three_turns(ws: Path, agent: FakeClaude) -> dict[str, bytes]:
    """app.py at the start; turn 1 edits it, turn 2 adds README.md and config.toml, turn 3 deletes
    config.toml (a shell command) and edits app.py again. Returns the files at the start."""
    (ws / "app.py").write_bytes(b"def hello():\n    print('hello')\n")
    start = {"app.py": (ws / "app.py").read_bytes()}
    agent.turn(
        "add a farewell function",
        {"app.py": b"def hello():\n    print('hello')\n\n\ndef bye():\n    print('bye')\n"},
    )
    agent.turn("write a README and config", {"README.md": b"# app\n", "config.toml": b"x = 1\n"})
    agent.turn(
        "drop the config, rename hello",
        {"config.toml": None, "app.py": b"def hi():\n    print('hello')\n\n\ndef bye():\n"},
    )
    return start


@pytest.fixture
def term(ws: Path, cli: Cli) -> Iterator[type[Terminal]]:
    opened: list[Terminal] = []

    class Opened(Terminal):
        def __init__(self, *args: str, **kw: object) -> None:
            cwd = kw.pop("cwd", ws)
            super().__init__(list(args), cwd, cli.env, **kw)  # type: ignore[arg-type]
            opened.append(self)

    yield Opened
    for t in opened:
        t.close()


# --- the full-screen picker -------------------------------------------------------------------


def test_picker_lists_previews_filters_and_rewinds(
    ws: Path, three_turns: dict[str, bytes], term: type[Terminal]
) -> None:
    t = term()
    screen = t.wait_for("preview of turn 3")
    t.settle()
    screen = t.text()
    _capture("picker-80x24", screen)
    lines = screen.splitlines()
    assert len(lines) == 24 and all(len(line) <= 80 for line in lines)
    rows = [line for line in lines if re.match(r"^[› ][ ↶]\s+\d+ ", line)]
    numbers = [int(re.findall(r"\d+", r)[0]) for r in rows]
    assert numbers == [3, 2, 1]  # newest first
    assert "› " in rows[0] and "drop the config, rename hello" in rows[0]
    assert "M app.py" in rows[0] and "A README.md" in rows[1]
    assert "claude" in rows[0] and "ago" in rows[0]
    assert "now: after turn 3" in lines[0]
    assert "-def hello():" in screen and "+def hi():" in screen  # the highlighted turn's diff
    # Type to filter: only turn 2 mentions the README.
    t.send(*"readme")
    # "rea" already selects turn 2: wait for the whole filter before reading the list.
    t.wait_for("filter: readme")
    t.wait_for("preview of turn 2")
    screen = t.settle()
    assert "drop the config" not in screen
    t.send("backspace", "backspace", "backspace", "backspace", "backspace", "backspace")
    t.wait_for("preview of turn 3")
    t.send("down", "down")  # turn 1
    t.wait_for("preview of turn 1")
    t.send("enter")
    screen = t.wait_for("what to do with turn 1")
    t.settle()
    screen = t.text()
    _capture("picker-menu", screen)
    assert re.search(r"^› 1\. code and conversation", screen, re.M)  # the highlighted action
    labels = re.findall(r"^[› ]\s*\d\. (.+?)\s*$", screen, re.M)
    assert labels == [
        "code and conversation",
        "code",
        "conversation",
        "summarize from here",
        "summarize up to here",
        "revert this turn",
        "show diff",
        "cancel",
    ]
    t.send("2")  # code
    screen = t.wait_for("Restore 2 file(s)? [y/N]")
    assert "rewind turn 1" in screen
    t.send("y", "enter")
    assert t.wait_exit() == 0
    assert "restored 2 file(s)" in t.text()
    assert {p.name for p in ws.iterdir()} == {"app.py"}
    assert (ws / "app.py").read_bytes() == three_turns["app.py"]


def test_picker_shows_restore_points_and_escape_writes_nothing(
    ws: Path, three_turns: dict[str, bytes], cli: Cli, term: type[Terminal]
) -> None:
    cli("rewind", "3", "--yes")
    before = {p.name: p.read_bytes() for p in ws.iterdir()}
    t = term()
    t.wait_for("preview of turn")
    screen = t.settle()
    _capture("picker-after-rewind", screen)
    assert "now: rewind to turn 3 (code); undo: rewind-ls undo" in screen
    assert re.search(r"^›↶\s+1 .*restore\s+rewind to turn 3", screen, re.M)
    t.send("enter")
    t.wait_for("what to do with turn 1 (restore)")
    # A restore point has no conversation and cannot be reverted: those entries are not offered.
    assert "revert this turn" not in t.text() and "conversation" not in t.text()
    t.send("esc")
    t.wait_for("preview of turn 1")
    t.send("esc")
    assert t.wait_exit() == 1
    assert "cancelled; nothing written" in t.text()
    assert {p.name: p.read_bytes() for p in ws.iterdir()} == before


def test_menu_show_diff_runs_the_diff_command(
    ws: Path, three_turns: dict[str, bytes], cli: Cli, term: type[Terminal]
) -> None:
    cli.env["PAGER"] = "cat"
    # Started elsewhere: -C before the command reaches the command the menu runs.
    t = term("-C", str(ws), cwd=ws.parent)
    t.wait_for("preview of turn 3")
    t.send("enter")
    t.wait_for("7. show diff")
    t.send("7")
    assert t.wait_exit() == 0
    screen = t.text()
    assert "diff rewind-ls config.toml" in screen and "+++ /dev/null" in screen


def test_revert_without_turn_picks_then_confirms(
    ws: Path, three_turns: dict[str, bytes], term: type[Terminal]
) -> None:
    t = term("revert")
    t.wait_for("revert: pick a turn")
    t.send("down")  # turn 2: README.md and config.toml
    t.wait_for("preview of turn 2")
    t.send("enter")
    screen = t.wait_for("[y/N]")
    assert "revert turn 2" in screen and "README.md" in screen
    t.send("y", "enter")
    assert t.wait_exit() == 0
    assert not (ws / "README.md").exists()
    assert (ws / "app.py").read_bytes().startswith(b"def hi():")  # turn 3's work survives


def test_numbered_prompt_when_full_screen_is_impossible(
    ws: Path, three_turns: dict[str, bytes], term: type[Terminal]
) -> None:
    t = term(term="dumb")
    screen = t.wait_for("turn [number, text to filter")
    _capture("picker-term-dumb", t.settle())
    assert "\x1b[?1049h" not in t.raw.decode(errors="replace")  # never switched to full screen
    assert ANSI_RE.search(t.raw.decode(errors="replace")) is None  # no colour on a dumb terminal
    assert re.search(r"^\s+1\)\s+3 ", screen, re.M)
    t.send(*"config", "enter")
    screen = t.wait_for("turns matching 'config'")
    t.send("1", "enter")  # the newest match: turn 3
    t.wait_for("action [1-")
    choices = dict(re.findall(r"^\s+(\d)\) (.+?)\s*$", t.text(), re.M))
    code = next(k for k, v in choices.items() if v == "code")
    t.send(code, "enter")
    t.wait_for("[y/N]")
    t.send("y", "enter")
    assert t.wait_exit() == 0
    assert (ws / "config.toml").read_bytes() == b"x = 1\n"
    assert b"def bye():\n    print('bye')\n" in (ws / "app.py").read_bytes()


def test_without_a_terminal_a_missing_turn_is_a_clear_error(
    three_turns: dict[str, bytes], cli: Cli
) -> None:
    for command in ("rewind", "revert", "diff"):
        proc = cli(command, ok=False)
        assert proc.returncode == 2, proc
        assert f"{command}: TURN is missing" in proc.stderr and "rewind-ls turns" in proc.stderr
        assert "the following arguments are required" not in proc.stderr
    proc = cli(ok=False)
    assert proc.returncode == 2 and "a COMMAND is needed" in proc.stderr


def test_no_checkpoints_says_what_to_do(cli: Cli) -> None:
    proc = cli("turns", ok=False)
    assert proc.returncode == 2
    assert "no checkpoints recorded" in proc.stderr
    assert "rewind-ls install claude-code" in proc.stderr


# --- colour, pager, width -------------------------------------------------------------------------


def test_diff_colour_and_pager_on_a_terminal_only(
    ws: Path, three_turns: dict[str, bytes], cli: Cli, term: type[Terminal]
) -> None:
    cli.env["PAGER"] = "cat"
    t = term("diff", "3")
    assert t.wait_exit() == 0
    raw = t.raw.decode(errors="replace")
    assert "\x1b[31m-def hello():" in raw and "\x1b[32m+def hi():" in raw
    cli.env["PAGER"] = "sed s/^/PAGED:/"
    t = term("diff", "3")
    assert t.wait_exit() == 0
    assert "PAGED:diff rewind-ls app.py" in t.text()
    proc = cli("diff", "3")  # a pipe: no pager, no colour
    assert "PAGED" not in proc.stdout and ANSI_RE.search(proc.stdout) is None
    assert "-def hello():" in proc.stdout
    # The preview of a restore: actions and conflicts in colour on a terminal, plain in a pipe.
    (ws / "app.py").write_bytes(b"edited by hand\n")
    t = term("rewind", "1", "--dry-run")
    assert t.wait_exit() == 3
    raw = t.raw.decode(errors="replace")
    assert "\x1b[31mconflict (modified-outside): app.py" in raw
    assert "\x1b[31mdelete   " in raw  # README.md goes away
    proc = cli("rewind", "1", "--dry-run", ok=False)
    assert "conflict (modified-outside)" in proc.stdout and ANSI_RE.search(proc.stdout) is None


def test_no_color_is_respected(
    three_turns: dict[str, bytes], cli: Cli, term: type[Terminal]
) -> None:
    cli.env["PAGER"] = "cat"
    t = term("diff", "3", extra_env={"NO_COLOR": "1"})
    assert t.wait_exit() == 0
    raw = t.raw.decode(errors="replace")
    assert "-def hello():" in raw and ANSI_RE.search(raw) is None
    # The picker: no colour anywhere on screen, the selection still shown (pointer, reverse video).
    t = term(extra_env={"NO_COLOR": "1"})
    t.wait_for("preview of turn 3")
    screen = t.settle()
    colours = {t.colour_at(y, x) for y in range(24) for x in range(80)}
    assert colours == {"default"}, colours
    row = next(y for y, line in enumerate(screen.splitlines()) if line.startswith("›"))
    assert t.screen.buffer[row][5].reverse
    t.send("esc")
    assert t.wait_exit() == 1


def test_turns_fit_the_terminal_without_cutting_words(
    ws: Path, agent: FakeClaude, term: type[Terminal]
) -> None:
    agent.turn(
        "please refactor the configuration loader so that every option has a documented default",
        {f"src/module_{i}.py": f"x = {i}\n" for i in range(8)},
    )
    t = term("turns", columns=60)
    assert t.wait_exit() == 0
    lines = [line for line in t.text().splitlines() if line.strip()]
    _capture("turns-60-columns", "\n".join(lines))
    row = next(line for line in lines if line.lstrip().startswith("1 "))
    assert len(row) <= 60
    assert "…" in row
    assert re.search(r"\+src/module_0\.py(, \+src/module_\d\.py)* \+\d$", row), row  # whole paths
    # A cut ends after a whole word: the text before … is a prefix of the prompt ending in a word.
    cut = re.search(r"(please[^…]*)…", row)
    assert cut is not None and "please refactor the configuration".startswith(cut.group(1).strip())
    t = term("log", "src/module_3.py", columns=60)
    assert t.wait_exit() == 0
    lines = [line for line in t.text().splitlines() if line.strip()]
    assert len(lines) == 2 and all(len(line) <= 60 for line in lines), lines
    assert lines[0].startswith("A ") and lines[0].endswith("…")
    assert "turn 1 claude" in lines[0] and lines[1].split()[0] == "first"


def test_every_option_has_help_with_its_default() -> None:
    from rewind_ls.cli.app import build_parser

    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    seen = 0

    def check(name: str, p: argparse.ArgumentParser) -> None:
        nonlocal seen
        for action in p._actions:
            if isinstance(action, argparse._SubParsersAction):
                for child_name, child in action.choices.items():
                    check(f"{name} {child_name}", child)
                continue
            if isinstance(action, (argparse._HelpAction, argparse._VersionAction)):
                continue
            seen += 1
            assert action.help, f"{name}: {action.dest} has no help"
            has_default = action.default not in (None, False) and action.option_strings
            if has_default and action.dest != "func":
                assert "default" in action.help, f"{name}: {action.dest} does not say its default"

    for name, p in sub.choices.items():
        check(name, p)
        assert p.description and p.description in " ".join(p.format_help().split()), name
    check("rewind-ls", parser)
    assert seen > 40
    # -C only where it is used: the hook's workspace comes from its payload, the server's from the
    # editor, the demo's is a temporary folder.
    for name, p in sub.choices.items():
        has_c = "-C" in p._option_string_actions
        assert has_c == (name not in ("hook", "serve", "demo")), name


# --- per-file history, revert --path, checkpoint diffs ----------------------------------------


def test_log_lists_every_version_with_its_source(
    ws: Path, three_turns: dict[str, bytes], cli: Cli, agent: FakeClaude
) -> None:
    (ws / "config.toml").write_bytes(b"by hand\n")  # outside any turn: found at the next boundary
    cli("scan")
    cli("rewind", "3", "--path", "app.py", "--yes")
    log = cli.json("log", "config.toml")
    sources = [(v["source"], v["change"], v["number"]) for v in log["versions"]]
    assert sources == [
        ("outside", "created", 1),
        ("shell", "deleted", 3),
        ("agent", "created", 2),
        ("first seen", "absent", None),
    ]
    log = cli.json("log", "app.py")
    assert [v["source"] for v in log["versions"]] == [
        "restore",
        "agent",
        "agent",
        "first seen",
    ]
    text = cli("log", "app.py").stdout
    assert f"turn 3 claude {agent.session_id[:4]}: drop the config, rename hello" in text
    assert "restore" in text
    proc = cli("log", "nope.py", ok=False)
    assert proc.returncode == 2 and "nope.py: rewind-ls has no record" in proc.stderr


def test_log_names_your_saves(
    ws: Path,
    home: Path,
    three_turns: dict[str, bytes],
    cli: Cli,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A save in an editor (recorded by the language server's service) is "your save"."""
    monkeypatch.setenv("REWIND_LS_HOME", str(home))
    from rewind_ls.server.service import Service

    service = Service(str(ws))
    uri = (ws / "README.md").as_uri()
    service.will_save(uri)
    (ws / "README.md").write_bytes(b"# app, edited and saved\n")
    assert service.did_save(uri)
    service.store.close()
    log = cli.json("log", "README.md")
    assert [(v["source"], v["change"]) for v in log["versions"]] == [
        ("your save", "modified"),
        ("agent", "created"),
        ("first seen", "absent"),
    ]
    assert "your save" in cli("log", "README.md").stdout


def test_revert_path_reverts_one_file_of_a_turn(
    ws: Path, three_turns: dict[str, bytes], cli: Cli
) -> None:
    out = cli("revert", "2", "--path", "README.md", "--yes").stdout
    assert "README.md" in out and "config.toml" not in out
    assert not (ws / "README.md").exists()
    assert not (ws / "config.toml").exists()  # untouched: turn 3 deleted it, it stays deleted
    proc = cli("revert", "2", "--path", "nope.py", "--yes", ok=False)
    assert proc.returncode == 2
    assert "did not change nope.py" in proc.stderr and "README.md" in proc.stderr


def test_diff_between_checkpoints_and_with_now(
    ws: Path, three_turns: dict[str, bytes], cli: Cli
) -> None:
    # Start of turn 1 against start of turn 3: turn 1 and turn 2's changes.
    out = cli("diff", "1", "3").stdout
    assert "+def bye():" in out and "+++ b/README.md" in out and "+++ b/config.toml" in out
    data = cli.json("diff", "1", "3")
    assert {f["path"]: f["change"] for f in data["files"]} == {
        "app.py": "modified",
        "README.md": "created",
        "config.toml": "created",
    }
    assert cli.json("diff", "3", "1", "README.md")["files"][0]["change"] == "deleted"
    (ws / "app.py").write_bytes(b"edited by hand\n")
    now = cli("diff", "3", "--current").stdout
    assert "+++ now/app.py" in now and "+edited by hand" in now and "config.toml" in now
    assert "README.md" not in now  # same at the start of turn 3 and now
    assert cli("diff", "2", "3", "app.py").stdout.startswith("no difference")
    proc = cli("diff", "2", "nope.py", ok=False)
    assert proc.returncode == 2 and "nope.py" in proc.stderr
    proc = cli("diff", "2", "app.py", ok=False)  # recorded, but turn 2 did not change it
    assert proc.returncode == 2 and "turn 2 did not change app.py" in proc.stderr
    proc = cli("diff", "1", "2", "--current", ok=False)
    assert proc.returncode == 2 and "not both" in proc.stderr


def test_picker_and_prompt_toolkit_stay_off_other_paths(
    three_turns: dict[str, bytes], cli: Cli, ws: Path
) -> None:
    probe = (
        "import sys\n"
        "from rewind_ls.cli.app import run_cli\n"
        "assert run_cli(['turns']) == 0\n"
        "assert run_cli(['diff', '1']) == 0\n"
        "assert run_cli(['log', 'app.py']) == 0\n"
        "print(sorted(m for m in sys.modules if m.startswith(('prompt_toolkit', 'rewind_ls.cli.picker'))))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", probe], cwd=ws, env=cli.env, capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().splitlines()[-1] == "[]"


# --- the picker with many sessions and many turns; the default pager; the workspace ------------


@pytest.fixture
def three_sessions(ws: Path, home: Path, agent: FakeClaude, cli: Cli) -> list[str]:
    """Newest first: a second Claude Code session, outside changes, an aider session recorded with
    `rewind-ls record`, the first Claude Code session. Returns their session ids, newest first."""
    (ws / "app.py").write_bytes(b"v0\n")
    agent.turn("first claude session edits app", {"app.py": b"v1\n"})
    aider = str(uuid.uuid4())
    who = ("--session", aider, "--agent", "aider")
    cli("record", "begin-turn", *who, "--prompt", "aider adds util")
    cli("record", "edit", *who, "util.py")
    (ws / "util.py").write_bytes(b"u\n")
    cli("record", "edit", *who, "--phase", "after", "util.py")
    cli("record", "end-turn", *who)
    (ws / "notes.txt").write_bytes(b"by hand\n")
    cli("scan")
    other = FakeClaude(ws, home)
    other.turn("second claude session edits app", {"app.py": b"v2\n"})
    return [other.session_id, "external", aider, agent.session_id]


def test_picker_tells_sessions_and_agents_apart(
    three_sessions: list[str], term: type[Terminal]
) -> None:
    t = term()
    t.wait_for("preview of turn 1")
    screen = t.settle()
    lines = screen.splitlines()
    rows = [(y, line) for y, line in enumerate(lines) if re.match(r"^[› ][ ↶]\s+\d+ ", line)]
    second, _, aider, first = three_sessions
    labels = [f"claude {second[:4]}", "outside", f"aider {aider[:4]}", f"claude {first[:4]}"]
    assert len(rows) == 4
    for (_, line), label in zip(rows, labels, strict=True):
        assert f"  {label} " in line, (label, line)
    # Each session's label in its own colour: two sessions of one agent differ in colour too.
    colours = [
        t.colour_at(y, line.index(label)) for (y, line), label in zip(rows, labels, strict=True)
    ]
    assert len(set(colours)) == 4 and "default" not in colours, colours
    t.send("esc")
    assert t.wait_exit() == 1
    # A summary needs a conversation: its picker offers only the Claude Code turns.
    t = term("summarize", "--up-to")
    t.wait_for("summarize: pick a turn")
    screen = t.settle()
    rows = [line for line in screen.splitlines() if re.match(r"^[› ][ ↶]\s+\d+ ", line)]
    assert len(rows) == 2 and all(" claude " in row for row in rows), rows
    t.send("esc")
    assert t.wait_exit() == 1


def test_picker_scrolls_and_fits_with_many_turns(
    ws: Path, home: Path, term: type[Terminal], monkeypatch: pytest.MonkeyPatch
) -> None:
    """30 turns with long prompts (wide characters too) and many files, at 80x24: the list scrolls
    with the selection, no line is longer than the screen."""
    monkeypatch.setenv("REWIND_LS_HOME", str(home))
    from rewind_ls.core.capture.recorder import Recorder
    from rewind_ls.core.store import Store

    names = ["app.py", *(f"src/package/module_{i}.py" for i in range(6))]
    for name in names:
        (ws / name).parent.mkdir(parents=True, exist_ok=True)
        (ws / name).write_text("0\n")
    with Store.open(str(ws), create=True) as store:
        rec = Recorder(store)
        for i in range(1, 31):
            prompt = f"turn {i}: 設定ファイルを読み込む処理を直して please fix the loader again"
            rec.begin_turn("s1", prompt, "agent", "claude-code")
            for name in names[: 1 + i % len(names)]:
                rec.before("s1", name)
                (ws / name).write_text(f"{i}\n")
                rec.after("s1", name)
            rec.end_turn("s1")
    t = term()
    t.wait_for("preview of turn 30")
    t.send("pagedown", "pagedown", "pagedown", "down")  # 8 + 8 + 8 + 1 down: turn 5
    t.wait_for("preview of turn 5 (")
    t.settle()
    screen = t.text()
    _capture("picker-scrolled", screen)
    lines = screen.splitlines()
    assert len(lines) == 24
    chosen = [line for line in lines if line.startswith("›")]
    assert len(chosen) == 1 and re.match(r"^›\s+5 ", chosen[0]), screen
    assert "turn 30:" not in screen  # scrolled past the newest
    # Whole file names or "+N", never a path cut in the middle; the prompt cut with "…".
    assert re.search(r"M app\.py( M src/\S+)* \+\d+\s*$", chosen[0]), chosen[0]
    assert "…" in chosen[0]
    t.send("esc")
    assert t.wait_exit() == 1
    # The numbered prompt shows the newest 20 and says how to reach the rest.
    t = term(term="dumb")
    t.wait_for("10 older not shown: type text to filter")
    t.send(*"turn 3:", "enter")
    t.wait_for("turns matching 'turn 3:'")
    t.send("enter")
    assert t.wait_exit() == 1


def test_menu_code_and_conversation_then_summarize(
    ws: Path,
    home: Path,
    three_turns: dict[str, bytes],
    cli: Cli,
    agent: FakeClaude,
    term: type[Terminal],
) -> None:
    t = term()
    t.wait_for("preview of turn 3")
    t.send("down")
    t.wait_for("preview of turn 2")
    t.send("enter")
    t.wait_for("1. code and conversation")
    t.send("1")
    t.wait_for("[y/N]")
    t.send("y", "enter")
    assert t.wait_exit() == 0
    raw = t.raw.decode(errors="replace")
    assert "conversation forked before turn 2" in raw
    fork = re.search(r"claude --resume ([0-9a-f-]{36})", raw)
    assert fork is not None
    transcripts = home / "claude" / "projects" / "ws"
    forked = (transcripts / f"{fork.group(1)}.jsonl").read_text()
    assert "add a farewell function" in forked and "write a README" not in forked
    # The files as at the start of turn 2.
    assert sorted(p.name for p in ws.iterdir()) == ["app.py"]
    assert b"def bye():\n    print('bye')\n" in (ws / "app.py").read_bytes()
    # The restore point is listed first now; below it, turn 3: summarize everything before it.
    summary = "SUMMARY-OF-THE-FIRST-TWO-TURNS"
    t = term(extra_env={"REWIND_LS_SUMMARIZER": f"echo {summary}"})
    t.wait_for("preview of turn 1 (restore)")
    t.send("down")
    t.wait_for("preview of turn 3")
    t.send("enter")
    t.wait_for("5. summarize up to here")
    t.send("5")
    assert t.wait_exit() == 0
    raw = t.raw.decode(errors="replace")
    assert "conversation summarized up to turn 3" in raw
    new = re.search(r"claude --resume ([0-9a-f-]{36})", raw)
    assert new is not None and new.group(1) != fork.group(1)
    text = (transcripts / f"{new.group(1)}.jsonl").read_text()
    assert summary in text and "drop the config, rename hello" in text
    assert sorted(p.name for p in ws.iterdir()) == ["app.py"]  # a summary leaves the files alone
    # The forks carry copies of the turns before them: one recorded version is still listed once.
    versions = cli.json("log", "app.py")["versions"]
    assert [(v["source"], v["number"]) for v in versions] == [
        ("restore", 1),
        ("agent", 3),
        ("agent", 1),
        ("first seen", None),
    ]
    assert {v["sessionId"] for v in versions if v["source"] == "agent"} == {agent.session_id}


def test_diff_pages_through_less_by_default(
    ws: Path, agent: FakeClaude, cli: Cli, term: type[Terminal]
) -> None:
    (ws / "big.py").write_text("".join(f"line {i}\n" for i in range(100)))
    agent.turn("rewrite big", {"big.py": "".join(f"LINE {i}\n" for i in range(100))})
    agent.turn("small", {"small.py": "x\n"})
    for name in ("PAGER", "LESS"):
        cli.env.pop(name, None)
    t = term("diff", "1")
    if shutil.which("less") is None:  # no pager on this machine: the diff is printed
        assert t.wait_exit() == 0 and "-line 0" in t.text()
        return
    screen = t.wait_for("-line 0")
    t.settle()
    screen = t.text()
    assert screen.splitlines()[-1].startswith(":"), screen  # less waits at its prompt
    assert t.proc.poll() is None
    assert "\x1b[31m-line 0" in t.raw.decode(errors="replace")  # -R: colour passes through
    t.send("q")
    assert t.wait_exit() == 0
    # A diff that fits the screen stays on it and returns at once (LESS=FRX).
    t = term("diff", "2")
    assert t.wait_exit() == 0
    assert "+x" in t.text()


def test_the_filesystem_root_is_not_a_workspace(cli: Cli, home: Path) -> None:
    for args in (["turns"], ["diff", "1"], ["log", "etc/hosts"], ["-C", "/", "turns"]):
        proc = subprocess.run(
            [sys.executable, "-m", "rewind_ls", *args],
            cwd="/",
            env=cli.env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert proc.returncode == 2, (args, proc)
        assert "the filesystem root is not a workspace" in proc.stderr, proc.stderr
        assert "-C DIR" in proc.stderr
    assert not (home / "workspaces").exists()
    # Hooks for the user's settings need no workspace: fine from anywhere.
    proc = subprocess.run(
        [sys.executable, "-m", "rewind_ls", "install", "claude-code", "--user"],
        cwd="/",
        env=cli.env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    assert (home / "claude" / "settings.json").exists()


def test_a_session_is_named_by_its_id_or_its_start(
    three_turns: dict[str, bytes], cli: Cli, agent: FakeClaude
) -> None:
    sid = agent.session_id
    assert f"session {sid}" in cli("turns", "--session", sid[:8]).stdout
    assert cli.json("rewind", "2", "--session", sid[:4], "--dry-run")["number"] == 2
    for args in (("turns",), ("rewind", "1", "--dry-run")):
        proc = cli(*args, "--session", "nope", ok=False)
        assert proc.returncode == 2, proc
        assert "--session nope: no such session" in proc.stderr
        assert "rewind-ls turns --all" in proc.stderr
