"""Rewind, revert and undo through the real CLI, on turns recorded through the real hook: bytes on disk."""

from __future__ import annotations

import os
from pathlib import Path

from tests.conftest import Cli
from tests.support.agent import FakeClaude

CRLF = b"line one\r\nline two\r\n"
EMOJI = "caf\u00e9 \U0001f600 done\n".encode()
BINARY = bytes(range(256)) * 4
NO_EOL = b"no final newline"


def test_rewind_restores_modified_created_deleted_bytes_exact(
    ws: Path, agent: FakeClaude, cli: Cli, snapshot
) -> None:  # type: ignore[no-untyped-def]
    (ws / "crlf.txt").write_bytes(CRLF)
    (ws / "emoji.txt").write_bytes(EMOJI)
    (ws / "bin.dat").write_bytes(BINARY)
    (ws / "noeol.txt").write_bytes(NO_EOL)
    (ws / "empty.txt").write_bytes(b"")
    (ws / "run.sh").write_bytes(b"#!/bin/sh\necho hi\n")
    (ws / "run.sh").chmod(0o755)
    (ws / "doomed.txt").write_bytes(b"keep me\n")
    start = snapshot()
    agent.turn(
        "mangle everything",
        {
            "crlf.txt": b"changed\n",
            "emoji.txt": b"plain\n",
            "bin.dat": b"\x00\x01 not the same",
            "noeol.txt": b"now with newline\n",
            "empty.txt": b"not empty\n",
            "run.sh": b"#!/bin/sh\necho bye\n",
            "src/new/deep.py": b"created = True\n",
            "doomed.txt": None,
        },
    )
    agent.shell("chmod 644 run.sh")
    agent.turn("more", {"crlf.txt": b"again\r\n"})
    assert snapshot() != start
    out = cli("rewind", "1", "--yes")
    assert "restored" in out.stdout
    assert snapshot() == start
    assert not (ws / "src" / "new" / "deep.py").exists()
    assert (ws / "run.sh").stat().st_mode & 0o777 == 0o755


def test_undo_and_undo_of_undo(ws: Path, agent: FakeClaude, cli: Cli, snapshot) -> None:  # type: ignore[no-untyped-def]
    (ws / "a.txt").write_text("v0\n")
    agent.turn("one", {"a.txt": "v1\n", "b.txt": "b1\n"})
    agent.turn("two", {"a.txt": "v2\n"})
    before_rewind = snapshot()
    cli("rewind", "1", "--yes")
    rewound = snapshot()
    assert rewound == {"a.txt": (b"v0\n", rewound["a.txt"][1])}
    cli("undo", "--yes")
    assert snapshot() == before_rewind
    cli("undo", "--yes")  # undo of the undo: back to the rewound state
    assert snapshot() == rewound
    cli("undo", "--yes")
    assert snapshot() == before_rewind


def test_revert_keeps_later_work_and_person_edits(ws: Path, agent: FakeClaude, cli: Cli) -> None:
    base = "".join(f"line {i}\n" for i in range(20))
    (ws / "m.py").write_text(base)
    agent.turn(
        "turn one edits the top", {"m.py": base.replace("line 1\n", "line 1 CHANGED BY ONE\n")}
    )
    after_one = (ws / "m.py").read_text()
    agent.turn(
        "turn two edits the bottom", {"m.py": after_one.replace("line 18\n", "line 18 BY TWO\n")}
    )
    cli("revert", "1", "--yes")
    text = (ws / "m.py").read_text()
    assert "CHANGED BY ONE" not in text
    assert "line 18 BY TWO" in text
    assert "line 1\n" in text
    cli("undo", "--yes")
    assert "CHANGED BY ONE" in (ws / "m.py").read_text()


def test_revert_conflict_writes_nothing(ws: Path, agent: FakeClaude, cli: Cli, snapshot) -> None:  # type: ignore[no-untyped-def]
    (ws / "m.txt").write_text("a\nb\nc\n")
    (ws / "other.txt").write_text("x\n")
    agent.turn("one", {"m.txt": "a\nB1\nc\n", "other.txt": "y\n"})
    agent.turn("two", {"m.txt": "a\nB2\nc\n"})
    before = snapshot()
    proc = cli("revert", "1", "--yes", ok=False)
    assert proc.returncode == 3
    assert "m.txt" in proc.stderr and "nothing written" in proc.stderr
    assert snapshot() == before  # other.txt merges cleanly, yet nothing at all was written


def test_compare_and_swap_conflict_force_and_skip(ws: Path, agent: FakeClaude, cli: Cli) -> None:
    (ws / "a.txt").write_text("a0\n")
    (ws / "b.txt").write_text("b0\n")
    agent.turn("one", {"a.txt": "a1\n", "b.txt": "b1\n"})
    # The person edits a.txt after the turn without rewind-ls seeing it (no hook, no editor).
    (ws / "a.txt").write_text("a1 plus my own work\n")
    proc = cli("rewind", "1", "--yes", ok=False)
    assert proc.returncode == 3
    assert "a.txt" in proc.stderr
    # The terminal says how to go on (an editor's message never names flags: it asks).
    assert "--force to overwrite, --skip-conflicts to restore the rest" in proc.stderr
    assert (ws / "a.txt").read_text() == "a1 plus my own work\n"
    assert (ws / "b.txt").read_text() == "b1\n"  # all or nothing: b.txt untouched too
    cli("rewind", "1", "--yes", "--skip-conflicts")
    assert (ws / "a.txt").read_text() == "a1 plus my own work\n"
    assert (ws / "b.txt").read_text() == "b0\n"
    cli("rewind", "1", "--yes", "--force")
    assert (ws / "a.txt").read_text() == "a0\n"
    cli("undo", "--yes")  # a forced restore is undoable: the person's work comes back
    assert (ws / "a.txt").read_text() == "a1 plus my own work\n"


def test_other_session_changes_are_a_conflict(ws: Path, home: Path, cli: Cli) -> None:
    (ws / "shared.txt").write_text("s0\n")
    first = FakeClaude(ws, home)
    second = FakeClaude(ws, home)
    first.turn("first session", {"shared.txt": "s1\n"})
    second.turn("second session", {"shared.txt": "s2 from the other session\n"})
    proc = cli("rewind", "1", "--session", first.session_id, "--yes", ok=False)
    assert proc.returncode == 3
    assert "also changed by" in proc.stderr
    assert (ws / "shared.txt").read_text() == "s2 from the other session\n"


def test_dry_run_and_path_filter(ws: Path, agent: FakeClaude, cli: Cli) -> None:
    (ws / "a.txt").write_text("a0\n")
    (ws / "b.txt").write_text("b0\n")
    agent.turn("one", {"a.txt": "a1\n", "b.txt": "b1\n"})
    data = cli.json("rewind", "1", "--dry-run")
    assert data["status"] == "planned"
    assert {f["path"] for f in data["files"]} == {"a.txt", "b.txt"}
    assert (ws / "a.txt").read_text() == "a1\n"
    cli("rewind", "1", "--yes", "--path", "a.txt")
    assert (ws / "a.txt").read_text() == "a0\n"
    assert (ws / "b.txt").read_text() == "b1\n"


def test_json_outputs(ws: Path, agent: FakeClaude, cli: Cli) -> None:
    (ws / "a.txt").write_text("a0\n")
    agent.turn("first prompt", {"a.txt": "a1\n", "n.txt": "new\n"})
    agent.turn("second prompt", {})
    listing = cli.json("turns")
    session = listing["sessions"][0]
    assert session["id"] == agent.session_id
    t1, t2 = session["turns"]
    assert {"id", "number", "sessionId", "prompt", "startedAt", "files"} <= set(t1)
    assert t1["number"] == 1 and t1["prompt"] == "first prompt"
    assert {(f["path"], f["change"]) for f in t1["files"]} == {
        ("a.txt", "modified"),
        ("n.txt", "created"),
    }
    assert t2["files"] == []  # a turn that changed nothing is still a turn
    diff = cli.json("diff", "1")
    assert any("+a1" in f["diff"] for f in diff["files"])
    result = cli.json("rewind", t1["id"], "--yes")
    assert result["status"] == "applied" and result["restorePointId"]
    undo = cli.json("undo", "--yes")
    assert undo["status"] == "applied"
    revert = cli.json("revert", "1", "--yes")
    assert revert["status"] == "applied"


def test_conversation_fork(ws: Path, agent: FakeClaude, cli: Cli) -> None:
    agent.turn("first", {"a.txt": "1\n"})
    agent.turn("second", {"a.txt": "2\n"})
    agent.turn("third", {})
    original = agent.transcript.read_bytes()
    data = cli.json("rewind", "3", "--scope", "conversation", "--yes")
    conv = data["conversation"]
    # Starts in the session's folder: `--resume ID` only finds sessions of the current folder.
    assert conv["resumeCommand"] == f"cd {ws} && claude --resume {conv['sessionId']}"
    assert conv["prompt"] == "third"
    assert agent.transcript.read_bytes() == original  # never edited
    forked = Path(conv["transcriptPath"]).read_text().splitlines()
    assert len(forked) == 4  # two prompts and two answers before turn 3
    assert all(conv["sessionId"] in line for line in forked)
    assert (ws / "a.txt").read_text() == "2\n"  # conversation scope leaves code alone
    both = cli.json("rewind", "2", "--scope", "both", "--yes")
    assert both["conversation"]["prompt"] == "second"
    assert (ws / "a.txt").read_text() == "1\n"


def test_conversation_fork_follows_branch_after_native_rewind(
    ws: Path, agent: FakeClaude, cli: Cli
) -> None:
    import json

    agent.turn("alpha", {})
    agent.turn("beta", {})
    # The agent's own /rewind forks the transcript: a new branch from alpha's answer, new prompt.
    lines = [json.loads(x) for x in agent.transcript.read_text().splitlines()]
    agent._last_uuid = lines[1]["uuid"]
    agent.turn("gamma", {})
    data = cli.json("rewind", "3", "--scope", "conversation", "--yes")
    forked = [
        json.loads(x) for x in Path(data["conversation"]["transcriptPath"]).read_text().splitlines()
    ]
    texts = [ln["message"]["content"] for ln in forked if ln["type"] == "user"]
    assert texts == ["alpha"]  # beta is on the abandoned branch


def test_outside_workspace_path_is_refused_at_capture(
    ws: Path, tmp_path: Path, agent: FakeClaude, cli: Cli
) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("secret\n")
    agent.hook("UserPromptSubmit", prompt="escape")
    for path in (str(outside), "../outside.txt"):
        proc = agent.hook(
            "PreToolUse",
            tool_name="Write",
            tool_input={"file_path": path, "content": "x"},
            tool_use_id="t",
        )
        assert proc.returncode == 0
        assert "outside the workspace" in proc.stderr.decode()
    (ws / "link").symlink_to(tmp_path)
    proc = agent.hook(
        "PreToolUse",
        tool_name="Edit",
        tool_input={"file_path": str(ws / "link" / "outside.txt")},
        tool_use_id="t",
    )
    assert "outside the workspace" in proc.stderr.decode()
    agent.hook("Stop")
    assert cli.json("turns")["sessions"][0]["turns"][0]["files"] == []
    assert outside.read_text() == "secret\n"


def test_bad_input_messages(ws: Path, agent: FakeClaude, cli: Cli, home: Path) -> None:
    from tests.support.agent import run_hook

    for raw in (
        b"",
        b"{not json",
        b"[1, 2]",
        b'{"hook_event_name": "PreToolUse"}',
        b'{"session_id": 5}',
    ):
        proc = run_hook(raw, agent.env)
        assert proc.returncode == 0, raw
        assert proc.stderr.startswith(b"rewind-ls hook:"), proc.stderr
    assert (home / "rewind-ls.log").read_text().count("hook claude-code") >= 5
    agent.turn("one", {"a.txt": "x\n"})
    proc = cli("rewind", "7", "--yes", ok=False)
    assert proc.returncode == 2 and "turn 7" in proc.stderr and "1..1" in proc.stderr
    proc = cli("rewind", "tdeadbeef", "--yes", ok=False)
    assert proc.returncode == 2 and "no turn with that id" in proc.stderr
    proc = cli("undo", "--yes", ok=False)
    assert proc.returncode == 2 and "nothing to undo" in proc.stderr


def test_unknown_events_tools_and_fields_are_ignored(ws: Path, agent: FakeClaude, cli: Cli) -> None:
    agent.hook("UserPromptSubmit", prompt="p", brand_new_field={"x": 1})
    agent.hook("Notification", message="hi")
    agent.hook("PreToolUse", tool_name="WebFetch", tool_input={"url": "http://x"}, tool_use_id="t")
    agent.hook(
        "PreToolUse",
        tool_name="Write",
        tool_input={"file_path": str(ws / "a.txt"), "content": "a", "extra": 1},
        tool_use_id="t",
        novel=True,
    )
    (ws / "a.txt").write_text("a")
    agent.hook(
        "PostToolUse",
        tool_name="Write",
        tool_input={"file_path": str(ws / "a.txt")},
        tool_use_id="t",
    )
    agent.hook("Stop")
    files = cli.json("turns")["sessions"][0]["turns"][0]["files"]
    assert files == [
        {
            "path": "a.txt",
            "uri": files[0]["uri"],
            "change": "created",
            "source": "tool",
            "sharedWith": [],
        }
    ]


def test_too_large_is_listed_not_restorable(ws: Path, agent: FakeClaude, cli: Cli) -> None:
    cli.env["REWIND_LS_MAX_FILE_BYTES"] = "100"
    agent.env["REWIND_LS_MAX_FILE_BYTES"] = "100"
    (ws / "big.txt").write_bytes(b"x" * 500)
    agent.turn("grow", {"big.txt": b"y" * 600, "small.txt": b"s\n"})
    proc = cli("rewind", "1", "--yes", ok=False)
    assert proc.returncode == 3
    assert "big.txt" in proc.stderr and "not restorable" in proc.stderr
    cli("rewind", "1", "--yes", "--skip-conflicts")
    assert not (ws / "small.txt").exists()
    assert (ws / "big.txt").read_bytes() == b"y" * 600


def test_store_is_outside_workspace_private_and_dedups(
    ws: Path, home: Path, agent: FakeClaude, cli: Cli
) -> None:
    content = "same content\n" * 100
    agent.turn("one", {"a.txt": content, "b.txt": content})
    agent.turn("two", {"c.txt": content})
    assert sorted(p.name for p in ws.iterdir()) == ["a.txt", "b.txt", "c.txt"]
    for root, _dirs, files in os.walk(home / "workspaces"):
        assert os.stat(root).st_mode & 0o777 == 0o700
        for f in files:
            assert os.stat(os.path.join(root, f)).st_mode & 0o777 == 0o600, f
    import sqlite3

    (db,) = (home / "workspaces").glob("*/store.sqlite3")
    conn = sqlite3.connect(db)
    hashes = [h for (h,) in conn.execute("SELECT hash FROM blobs")]
    conn.close()
    assert len(hashes) == len(set(hashes)) == 1  # one content, stored once across paths and turns


def test_newer_store_and_corrupt_blob(ws: Path, home: Path, agent: FakeClaude, cli: Cli) -> None:
    import sqlite3

    (ws / "a.txt").write_text("a0\n")
    agent.turn("one", {"a.txt": "a1\n"})
    (db,) = (home / "workspaces").glob("*/store.sqlite3")
    conn = sqlite3.connect(db)
    conn.execute(
        "UPDATE blobs SET data = X'00112233' WHERE size = 3 AND hash IN (SELECT before_hash FROM changes)"
    )
    conn.commit()
    proc = cli("rewind", "1", "--yes", ok=False)
    assert proc.returncode == 3 and "damaged" in proc.stderr
    assert (ws / "a.txt").read_text() == "a1\n"
    doctor = cli.json("doctor", ok=False)
    assert not doctor["ok"]
    conn.execute("UPDATE meta SET value = '99' WHERE key = 'schema_version'")
    conn.commit()
    conn.close()
    proc = cli("turns", ok=False)
    assert proc.returncode == 2 and "newer rewind-ls" in proc.stderr


def test_record_commands_for_other_agents(ws: Path, cli: Cli) -> None:
    (ws / "f.txt").write_text("before\n")
    turn = cli(
        "record", "begin-turn", "--session", "codex-1", "--prompt", "do it", "--agent", "codex"
    ).stdout.strip()
    assert turn.startswith("t")
    cli("record", "edit", "--session", "codex-1", "--phase", "before", "f.txt")
    (ws / "f.txt").write_text("after\n")
    cli("record", "edit", "--session", "codex-1", "--phase", "after", "f.txt")
    cli("record", "end-turn", "--session", "codex-1")
    cli("rewind", "1", "--session", "codex-1", "--yes")
    assert (ws / "f.txt").read_text() == "before\n"


def test_gc_keeps_live_content(ws: Path, agent: FakeClaude, cli: Cli) -> None:
    (ws / "a.txt").write_text("a0\n")
    for i in range(1, 5):
        agent.turn(f"turn {i}", {"a.txt": f"a{i}\n" * 50})
    result = cli.json("gc", "--retention-days", "3650")
    assert result["turnsDropped"] == 0
    cli("rewind", "1", "--yes")
    assert (ws / "a.txt").read_text() == "a0\n"
    cli("undo", "--yes")
    result = cli.json("gc", "--max-bytes", "1", "--yes")  # drops the older restore point
    assert result["turnsDropped"] >= 1
    assert cli.json("doctor")["ok"]


def test_demo_runs(cli: Cli) -> None:
    proc = cli("demo")
    assert "Rewind the code to the start of turn 2" in proc.stdout
    assert "conversation forked before turn 3" in proc.stdout
    assert "Traceback" not in proc.stderr


def test_help_answers(cli: Cli) -> None:
    for cmd in (
        "turns",
        "diff",
        "rewind",
        "revert",
        "undo",
        "gc",
        "doctor",
        "install",
        "hook",
        "record",
        "serve",
        "demo",
    ):
        out = cli(cmd, "--help").stdout
        assert "usage: rewind-ls " + cmd in out
    assert "rewind-ls 0." in cli("--version").stdout


def test_retention_is_applied_opportunistically(
    ws: Path, home: Path, agent: FakeClaude, cli: Cli
) -> None:
    import sqlite3

    (ws / "a.txt").write_text("a0\n")
    agent.turn("old turn", {"a.txt": "a1\n"})
    agent.turn("new turn", {"a.txt": "a2\n"})
    (db,) = (home / "workspaces").glob("*/store.sqlite3")
    conn = sqlite3.connect(db)
    long_ago = 1_000_000_000.0  # 2001: far beyond the 30-day retention
    conn.execute(
        "UPDATE turns SET started_at = ?, ended_at = ? WHERE prompt = 'old turn'",
        (long_ago, long_ago),
    )
    conn.commit()
    conn.close()
    listing = cli.json("turns")  # any command prunes at most once a day, without being asked
    prompts = [t["prompt"] for t in listing["sessions"][0]["turns"]]
    assert prompts == ["new turn"]
    proc = cli("rewind", "1", "--yes", ok=False)  # numbers stay stable: the remaining turn is #2
    assert "has turns 2..2" in proc.stderr
    cli("rewind", "2", "--yes")
    assert (ws / "a.txt").read_text() == "a1\n"


def test_restore_point_preview_is_named_for_the_restore(
    ws: Path, agent: FakeClaude, cli: Cli
) -> None:
    """A restore point's internal number reads like one of the agent's turns: its preview names the
    restore it belongs to instead."""
    (ws / "a.txt").write_text("v0\n")
    agent.turn("one", {"a.txt": "v1\n"})
    point = cli.json("rewind", "1", "--yes")["restorePointId"]
    out = cli("revert", point, "--yes").stdout
    assert out.splitlines()[0] == "undo of: rewind to turn 1 (code)", out
    assert (ws / "a.txt").read_text() == "v1\n"


def test_a_file_over_the_cap_is_held_by_the_restore_point(
    ws: Path, agent: FakeClaude, cli: Cli
) -> None:
    """Issue #38 item 3: a turn created a file larger than the store's cap. Rewinding that turn
    deletes it and leaves nothing in the project (no `.big.bin.rewind-*.bak`); the restore point
    holds its content anyway, so `undo` brings it back byte for byte."""
    cli.env["REWIND_LS_MAX_FILE_BYTES"] = "1000"
    agent.env["REWIND_LS_MAX_FILE_BYTES"] = "1000"
    big = os.urandom(50_000)
    agent.turn("make a big file", {"big.bin": big, "small.txt": b"s\n"})
    cli("rewind", "1", "--yes")
    assert sorted(p.name for p in ws.iterdir()) == []
    cli("undo", "--yes")
    assert (ws / "big.bin").read_bytes() == big
    assert (ws / "small.txt").read_bytes() == b"s\n"
    assert sorted(p.name for p in ws.iterdir()) == ["big.bin", "small.txt"]
    # And once more: the undo's own restore point holds it too.
    cli("rewind", "1", "--yes")
    cli("undo", "--yes")
    assert (ws / "big.bin").read_bytes() == big


def test_rewind_after_the_agents_own_restore_is_no_conflict(
    ws: Path, agent: FakeClaude, cli: Cli
) -> None:
    """Issue #38 item 6: the agent's own restore (Claude Code's /rewind, Gemini's /restore; no
    hook fires) puts back turn 1's version of f.txt; a scan records it as an outside change.
    Rewinding turn 1 then discards nobody's work (that content is the session's own): no
    conflict, no --force. An outside change to content the session never wrote still is one."""
    (ws / "f.txt").write_text("v0\n")
    (ws / "g.txt").write_text("g0\n")
    agent.turn("one", {"f.txt": "v1\n", "g.txt": "g1\n"})
    agent.turn("two", {"f.txt": "v2\n", "g.txt": "g2\n"})
    (ws / "f.txt").write_text("v1\n")  # the agent's own restore, no hook
    cli("scan")
    cli("rewind", "1", "--session", agent.session_id, "--yes", "--path", "f.txt")
    assert (ws / "f.txt").read_text() == "v0\n"
    (ws / "g.txt").write_text("the person's own\n")
    cli("scan")
    proc = cli("rewind", "1", "--session", agent.session_id, "--yes", ok=False)
    assert proc.returncode == 3, proc.stdout + proc.stderr
    assert "g.txt: also changed by a change made outside agent turns" in proc.stdout + proc.stderr


def test_a_folder_that_became_another_checkout_is_left_alone_by_a_rewind(
    ws: Path, agent: FakeClaude, cli: Cli
) -> None:
    """Issue #38 item 1: files recorded in a plain folder that later got a `.git` of its own
    (`git init`, a clone or a worktree put there) are another checkout's now: a rewind names
    them as a conflict and never writes there; `--skip-conflicts` restores the rest."""
    agent.turn("one", {"sub/a.txt": "a1\n", "top.txt": "t1\n"})
    (ws / "sub" / ".git").write_text("gitdir: /elsewhere/.git/worktrees/sub\n")
    (ws / "sub" / "a.txt").write_text("the other checkout's\n")
    proc = cli("rewind", "1", "--yes", ok=False)
    assert proc.returncode == 3, proc.stdout + proc.stderr
    assert "sub/a.txt" in proc.stderr and "another checkout" in proc.stderr, proc.stderr
    cli("rewind", "1", "--yes", "--skip-conflicts")
    assert not (ws / "top.txt").exists()
    assert (ws / "sub" / "a.txt").read_text() == "the other checkout's\n"
