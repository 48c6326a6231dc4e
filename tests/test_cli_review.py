"""`rewind-ls revert TURN -p` on a real terminal (keys in, screen and bytes checked) and
`rewind-ls blame PATH`: the turn, agent, shell command or outside change of every line."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import Cli
from tests.support.agent import FakeClaude
from tests.support.terminal import Terminal

BASE = b"".join(b"line %d\n" % i for i in range(1, 31))
TURN1 = BASE.replace(b"line 2\n", b"TWO\n").replace(b"line 15\n", b"FIFTEEN\n")
TURN1 = TURN1.replace(b"line 28\n", b"X28\n")
OTHER = b"alpha\nbeta\n"


@pytest.fixture
def term(ws: Path, cli: Cli) -> Iterator[type[Terminal]]:
    opened: list[Terminal] = []

    class Opened(Terminal):
        def __init__(self, *args: str, **kw: object) -> None:
            super().__init__(list(args), ws, cli.env, lines=40, **kw)  # type: ignore[arg-type]
            opened.append(self)

    yield Opened
    for t in opened:
        t.close()


@pytest.fixture
def turns(ws: Path, agent: FakeClaude) -> None:
    """Turn 1 changes f.txt in three hunks and g.txt in one; turn 2 edits another line of f.txt."""
    (ws / "f.txt").write_bytes(BASE)
    (ws / "g.txt").write_bytes(OTHER)
    agent.turn("number words", {"f.txt": TURN1, "g.txt": b"alpha\nBETA\n"})
    agent.turn("eight", {"f.txt": TURN1.replace(b"line 8\n", b"EIGHT\n")})


def test_revert_patch_walks_hunks_and_reverts_the_chosen(
    ws: Path, turns: None, term: type[Terminal], cli: Cli
) -> None:
    t = term("revert", "1", "-p")
    screen = t.wait_for("(1/3) Revert this hunk [y,n,q,a,d,?]?")
    assert "diff rewind-ls f.txt" in screen and "-line 2" in screen and "+TWO" in screen
    t.send("?", "enter")
    screen = t.wait_for("d - do not revert this hunk or any of the later hunks in the file")
    t.send("n", "enter")
    screen = t.wait_for("(2/3) Revert this hunk")
    assert "-line 15" in screen and "+FIFTEEN" in screen
    t.send("y", "enter")
    t.wait_for("(3/3) Revert this hunk")
    t.send("n", "enter")
    t.wait_for("diff rewind-ls g.txt")
    t.send("d", "enter")
    assert t.wait_exit() == 0
    screen = t.text()
    assert "modify    f.txt" in screen and "undo: rewind-ls undo" in screen
    after = TURN1.replace(b"line 8\n", b"EIGHT\n")
    assert (ws / "f.txt").read_bytes() == after.replace(b"FIFTEEN\n", b"line 15\n")
    assert (ws / "g.txt").read_bytes() == b"alpha\nBETA\n"  # d: left alone
    cli("undo", "-y")
    assert (ws / "f.txt").read_bytes() == after


def test_revert_patch_all_in_file_quit_and_edited_hunks(
    ws: Path, turns: None, term: type[Terminal]
) -> None:
    # The person edits hunk 1's line since: it is shown and skipped, never asked.
    now = (ws / "f.txt").read_bytes().replace(b"TWO\n", b"TWO!\n")
    (ws / "f.txt").write_bytes(now)
    t = term("revert", "1", "-p")
    screen = t.wait_for("Revert this hunk [y,n,q,a,d,?]?")
    assert "edited since the turn: cannot be reverted alone; skipped" in screen
    t.send("a", "enter")  # hunks 2 and 3 of f.txt
    t.wait_for("diff rewind-ls g.txt")
    t.send("q", "enter")
    assert t.wait_exit() == 0
    want = now.replace(b"FIFTEEN\n", b"line 15\n").replace(b"X28\n", b"line 28\n")
    assert (ws / "f.txt").read_bytes() == want
    assert (ws / "g.txt").read_bytes() == b"alpha\nBETA\n"


def test_revert_patch_nothing_chosen_writes_nothing(
    ws: Path, turns: None, term: type[Terminal]
) -> None:
    before = (ws / "f.txt").read_bytes()
    t = term("revert", "1", "-p")
    t.wait_for("Revert this hunk")
    t.send("q", "enter")
    assert t.wait_exit() == 0
    assert "nothing chosen; nothing written" in t.text()
    assert (ws / "f.txt").read_bytes() == before


def test_blame_names_turns_shell_and_outside(ws: Path, agent: FakeClaude, cli: Cli) -> None:
    (ws / "f.txt").write_bytes(b"a\nb\nc\nd\ne\n")
    agent.turn("first", {"f.txt": b"A1\nb\nc\nd\ne\n"})
    agent.hook("UserPromptSubmit", prompt="run sed")
    agent.shell("sed -i 's/^c$/C-sed/' f.txt")
    agent.hook("Stop", stop_hook_active=False)
    assert (ws / "f.txt").read_bytes() == b"A1\nb\nC-sed\nd\ne\n"
    (ws / "f.txt").write_bytes(b"A1\nb\nC-sed\nD-outside\ne\n")  # between turns
    agent.turn("third", {"f.txt": b"A1\nb\nC-sed\nD-outside\nE3\n"})
    out = cli.json("blame", "f.txt")
    who = {}
    for run in out["runs"]:
        for line in range(run["start"], run["end"]):
            who[line] = (run["source"], run["number"])
    assert who == {
        0: ("agent", 1),
        1: ("original", None),
        2: ("shell", 2),
        3: ("outside", who[3][1]),
        4: ("agent", 3),
    }
    text = cli("blame", "f.txt").stdout.splitlines()
    assert text[0].split()[:2] == ["1", "t1"] and text[0].endswith("| A1")
    assert "t2 shell" in text[2] and "run sed" in text[2]
    assert "outside" in text[3] and text[4].split()[1] == "t3"


def test_blame_of_latin1_and_binary_files(ws: Path, agent: FakeClaude, cli: Cli) -> None:
    """Issue #38 item 6: a Latin-1 file is blamed line by line (it was all `unrecorded`) and
    shown decoded; a binary file is named binary with its author, no raw bytes printed."""
    (ws / "l1.txt").write_bytes("caf\xe9 un\nligne deux\n".encode("latin-1"))
    (ws / "b.bin").write_bytes(bytes(range(256)))
    agent.turn("latin", {"l1.txt": "caf\xe9 un\nligne deux\ntrois \xe0\n".encode("latin-1")})
    agent.turn("bytes", {"b.bin": bytes(range(256)) * 2})
    runs = cli.json("blame", "l1.txt")["runs"]
    assert [(r["start"], r["end"], r["source"], r["number"]) for r in runs] == [
        (0, 2, "original", None),
        (2, 3, "agent", 1),
    ]
    text = cli("blame", "l1.txt").stdout.splitlines()
    assert text[0].endswith("| caf\xe9 un") and text[2].endswith("| trois \xe0"), text
    assert "t1" in text[2]
    out = cli("blame", "b.bin").stdout
    assert out == (
        f"b.bin: binary file (512 bytes), not shown by line; last written by t2, "
        f"{out.split('t2, ')[1].split(', ')[0]}, bytes\n"
    ), out
    assert "\x00" not in out
    runs = cli.json("blame", "b.bin")["runs"]
    assert {(r["source"], r["number"]) for r in runs} == {("agent", 2)}


def test_blame_errors_name_the_path(ws: Path, agent: FakeClaude, cli: Cli) -> None:
    agent.turn("one", {"a.txt": b"x\n"})
    proc = cli("blame", "missing.txt", ok=False)
    assert proc.returncode == 2 and "missing.txt: no such file" in proc.stderr
    (ws / "never.txt").write_bytes(b"x\n")
    proc = cli("blame", "never.txt", ok=False)
    assert proc.returncode == 2 and "no record of this path" in proc.stderr
