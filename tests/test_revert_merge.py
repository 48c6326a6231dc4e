"""revert --merge: where later edits overlap the turn's changes, the revert is written with diff3-style
conflict markers (labelled "now" and with the turn) instead of refused; the CLI says what to run
next; the revert is undoable. Through the real CLI on turns recorded through the real hook."""

from __future__ import annotations

from pathlib import Path

from rewind_ls.core.text.merge import merge3, merge3_markers
from tests.conftest import Cli
from tests.support.agent import FakeClaude

MARKED = "a\n<<<<<<< now\nB2\n||||||| turn #1\nB1\n=======\nb\n>>>>>>> before turn #1\nc\n"


def test_merge3_markers_diff3_style_and_clean_regions_merged() -> None:
    base = b"a\nB1\nc\nd\nT1\ne\n"
    ours = b"a\nB2\nc\nd\nT1\ne\nmine\n"
    theirs = b"a\nb\nc\nd\nt\ne\n"
    assert merge3(base, ours, theirs).merged is None
    text, count = merge3_markers(base, ours, theirs, ("now", "turn #1", "before turn #1"))
    assert count == 1
    assert text == (
        b"a\n<<<<<<< now\nB2\n||||||| turn #1\nB1\n=======\nb\n>>>>>>> before turn #1\n"
        b"c\nd\nt\ne\nmine\n"
    )


def test_merge3_markers_keep_crlf_and_a_last_line_without_newline() -> None:
    text, count = merge3_markers(b"x\r\nB1", b"x\r\nB2", b"x\r\nb", ("now", "t", "before"))
    assert count == 1
    assert (
        text == b"x\r\n<<<<<<< now\r\nB2\r\n||||||| t\r\nB1\r\n=======\r\nb\r\n>>>>>>> before\r\n"
    )


def test_revert_refusal_names_the_next_steps(ws: Path, agent: FakeClaude, cli: Cli) -> None:
    (ws / "m.txt").write_text("a\nb\nc\n")
    agent.turn("one", {"m.txt": "a\nB1\nc\n"})
    agent.turn("two", {"m.txt": "a\nB2\nc\n"})
    proc = cli("revert", "1", "--yes", ok=False)
    assert proc.returncode == 3
    assert "revert 1 --merge" in proc.stderr and "rewind 1 --path" in proc.stderr, proc.stderr
    assert (ws / "m.txt").read_text() == "a\nB2\nc\n"


def test_revert_merge_writes_markers_says_what_next_and_undoes(
    ws: Path, agent: FakeClaude, cli: Cli
) -> None:
    (ws / "m.txt").write_text("a\nb\nc\n")
    (ws / "other.txt").write_text("x\n")
    agent.turn("one", {"m.txt": "a\nB1\nc\n", "other.txt": "y\n"})
    agent.turn("two", {"m.txt": "a\nB2\nc\n"})
    out = cli("revert", "1", "--merge", "--yes")
    assert (ws / "m.txt").read_text() == MARKED
    assert (ws / "other.txt").read_text() == "x\n"  # the clean part of the revert, as always
    assert "conflicts written with markers in m.txt (1)" in out.stdout, out.stdout
    assert "rewind-ls undo" in out.stdout
    cli("undo", "--yes")
    assert (ws / "m.txt").read_text() == "a\nB2\nc\n"
    assert (ws / "other.txt").read_text() == "y\n"


def test_revert_merge_dry_run_previews_the_markers(ws: Path, agent: FakeClaude, cli: Cli) -> None:
    (ws / "m.txt").write_text("a\nb\nc\n")
    agent.turn("one", {"m.txt": "a\nB1\nc\n"})
    agent.turn("two", {"m.txt": "a\nB2\nc\n"})
    out = cli("revert", "1", "--merge", "--dry-run")
    assert "m.txt: 1 conflict(s) written with markers" in out.stdout, out.stdout
    assert (ws / "m.txt").read_text() == "a\nB2\nc\n"


# --- through the language server (the question every client without its own dialog shows) ---------


async def _server(tmp_path: Path):  # type: ignore[no-untyped-def]
    from tests.support.lsp_client import start
    from tests.test_server import Session, record

    ws = tmp_path / "ws"
    ws.mkdir()
    home = tmp_path / "home"
    agent = FakeClaude(ws, home)
    client, editor = await start(ws, home, init_options={"restoreUnsaved": True})
    s = Session(ws, home, client, editor, agent)
    (ws / "m.txt").write_text("a\nb\nc\n")
    await record(s, "one", {"m.txt": b"a\nB1\nc\n"})
    await record(s, "two", {"m.txt": b"a\nB2\nc\n"})
    return s


async def test_server_question_offers_markers_or_rewinding_the_file_never_overwrite(
    tmp_path: Path,
) -> None:
    from tests.test_server import _get, execute, until

    s = await _server(tmp_path)
    try:
        s.client.answers.append("Revert with conflict markers")
        result = await execute(s.client, "rewind.revert", [1])
        assert _get(result, "status") == "asking", result
        await until(lambda: len(s.client.questions) == 1)
        question = s.client.questions[-1]
        titles = [a.title for a in question.actions]
        assert titles == ["Revert with conflict markers", "Rewind m.txt instead", "Cancel"], titles
        assert "overwrite" not in question.message.lower(), question.message
        assert "changed since rewind-ls last saw" not in question.message
        assert "Later edits overlap this turn's changes in m.txt" in question.message
        await until(lambda: (s.ws / "m.txt").read_text() == MARKED)
        undo = await s.call("rewind/undo", {})
        assert undo["status"] == "applied", undo
        assert s.editor.buffers == {} and (s.ws / "m.txt").read_text() == "a\nB2\nc\n"
        # "Rewind m.txt instead": the file as it was before turn 1.
        s.client.answers.append("Rewind m.txt instead")
        await execute(s.client, "rewind.revert", [1])
        await until(lambda: (s.ws / "m.txt").read_text() == "a\nb\nc\n")
    finally:
        await s.client.shutdown_session()


async def test_restore_request_with_merge_writes_markers(tmp_path: Path) -> None:
    s = await _server(tmp_path)
    try:
        t1, _ = await s.turn_ids()
        result = await s.call("rewind/restore", {"turnId": t1, "mode": "revert", "merge": True})
        assert result["status"] == "applied", result
        assert (s.ws / "m.txt").read_text() == MARKED
    finally:
        await s.client.shutdown_session()
