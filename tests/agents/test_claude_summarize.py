"""Summarize from / up to a turn (issue #15) with the real Claude Code binary against the scripted
API stand-in: the default summarizer is the real `claude -p` talking to the stand-in; the new
session is resumed with the real binary and the conversation it sends to the model is checked."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.agents.test_claude_real import prompt_request, resume_fork
from tests.support.fake_anthropic import (
    FakeAnthropic,
    Reply,
    dialogue,
    is_compaction,
    text,
    tool_use,
)
from tests.support.real_claude import RealClaude, claude_binary

pytestmark = pytest.mark.agent

SUMMARY_UP_TO = "SUMMARY-OF-TURN-ONE: two files were written."


def summarizer_reply(body: dict[str, Any]) -> Reply | None:
    """The default summarizer's request (no tools, our summarizing prompt) gets a scripted
    summary, and so does the binary's own /compact (in the form its prompt asks for); everything
    else goes to the script."""
    if not body.get("tools") and "Summarize the conversation" in json.dumps(body["messages"]):
        return [text(SUMMARY_UP_TO)]
    if is_compaction(body):
        return [text(f"<analysis>notes</analysis>\n\n<summary>{SUMMARY_UP_TO}</summary>")]
    return None


def spoken(api: FakeAnthropic, prompt: str) -> tuple[list[Any], int]:
    """`prompt_request` without the binary's `system`-role messages (`dialogue`): the messages
    of the request that sent `prompt`, and the index of the one holding it."""
    messages, k = prompt_request(api, prompt)
    return dialogue(messages), len(dialogue(messages[:k]))


def session_files(claude: RealClaude) -> set[str]:
    """Every file in Claude Code's projects folders (sessions, temporaries)."""
    return {str(p) for p in (claude.config / "projects").rglob("*") if p.is_file()}


def summarize(claude: RealClaude, *args: str, ok: bool = True, **env: str) -> Any:
    """`rewind-ls summarize ...` with the binary's environment (so the default `claude -p` reaches
    the stand-in) and the pinned binary on PATH as `claude`."""
    import subprocess

    from tests.support.real_claude import rewind_ls_command

    proc = subprocess.run(
        [*rewind_ls_command(), "summarize", *args],
        cwd=claude.project,
        env={
            **claude.env,
            "PATH": f"{claude.binary.parent}:{claude.env['PATH']}",
            **env,
        },
        capture_output=True,
        text=True,
        timeout=120,
    )
    if ok:
        assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc


async def server_summarize(claude: RealClaude, sid: str) -> Any:
    """rewind/summarize (up to turn 3, a shell summarizer) through a real server process; a bad
    direction is refused."""
    from tests.support.lsp_client import start
    from tests.test_server import as_dict

    client, _ = await start(
        claude.project,
        claude.rewind_home,
        env={
            "CLAUDE_CONFIG_DIR": str(claude.config),
            "REWIND_LS_SUMMARIZER": "cat > /dev/null; sleep 2; echo SERVER-SUMMARY",
        },
    )
    try:
        listing = as_dict(
            await client.protocol.send_request_async("rewind/listTurns", {"sessionId": sid})
        )
        turn = next(t for s in listing["sessions"] for t in s["turns"] if t["number"] == 3)
        bad = None
        try:
            await client.protocol.send_request_async(
                "rewind/summarize", {"turnId": turn["id"], "direction": "sideways"}
            )
        except Exception as exc:  # the JSON-RPC error the server answers with
            bad = str(exc)
        assert bad is not None and "direction" in bad, bad
        running = asyncio.ensure_future(
            client.protocol.send_request_async(
                "rewind/summarize", {"turnId": turn["id"], "direction": "upTo"}
            )
        )
        await asyncio.sleep(0.5)
        # While the summarizer runs, the server answers other requests.
        await client.protocol.send_request_async("rewind/listTurns", {"sessionId": sid})
        assert not running.done(), "the summarizer was not running yet, or already done"
        return as_dict(await running)
    finally:
        await client.shutdown_session()


def test_summarize_from_and_up_to(tmp_path: Path) -> None:
    binary = claude_binary()
    project = tmp_path / "proj"
    with FakeAnthropic(responder=summarizer_reply) as api:
        claude = RealClaude(binary, api, tmp_path, project)
        claude.install_hooks()
        claude.allow("Write", "Bash")
        p = str(project)
        # Turn 1: two tools in one message (parallel results).
        api.add(
            [
                text("writing one-a and one-b"),
                tool_use("Write", {"file_path": p + "/one-a.txt", "content": "ONE-A\n"}),
                tool_use("Write", {"file_path": p + "/one-b.txt", "content": "ONE-B\n"}),
            ],
            [text("turn one reply MARK1")],
        )
        sid = claude.run("turn one prompt MARK1")["session_id"]
        # Turn 2: a Bash tool whose result is checked verbatim later.
        api.add(
            [tool_use("Bash", {"command": "echo BASH-RESULT-MARK2"})],
            [text("turn two reply MARK2")],
        )
        claude.run("turn two prompt MARK2", resume=sid)
        api.add([text("turn three reply MARK3")])
        claude.run("turn three prompt MARK3", resume=sid)
        original = claude.transcript(sid).read_bytes()

        # Up to turn 2, default summarizer (the real `claude -p` asking the stand-in).
        before = len(api.requests)
        up = json.loads(summarize(claude, "2", "--up-to", "--session", sid, "--json").stdout)
        conv = up["conversation"]
        asked = [r for r in api.requests[before:] if not r.get("tools")]
        assert len(asked) == 1, "the summarizer made no request, or more than one"
        sent = json.dumps(asked[0]["messages"])
        assert "MARK1" in sent and "ONE-A" in sent and "MARK2" not in sent
        api.add([text("after up-to reply")])
        resume_fork(claude, conv, "after up-to prompt", tmp_path)
        orig, k3 = spoken(api, "turn three prompt MARK3")
        k2 = next(i for i, m in enumerate(orig) if "turn two prompt MARK2" in json.dumps(m))
        new, k = spoken(api, "after up-to prompt")
        # The summary, then turn 2 onward exactly as the original sent it (tool result included),
        # nothing of turn 1.
        assert SUMMARY_UP_TO in json.dumps(new[0]) and "turn two prompt MARK2" in json.dumps(new[0])
        k3_new = next(i for i, m in enumerate(new) if "turn three prompt MARK3" in json.dumps(m))
        assert new[1:k3_new] == orig[k2 + 1 : k3]
        assert "BASH-RESULT-MARK2" in json.dumps(new[1:k3_new])
        assert "turn three reply MARK3" in json.dumps(new[k3_new + 1 : k])
        for mark in ("MARK1", "ONE-A", "one-a.txt", "writing one-a"):
            assert mark not in json.dumps(new[:k]), mark

        # From turn 2, the person's shell command as the summarizer.
        seen = tmp_path / "seen.txt"
        command = f"cat > {seen}; printf 'SUMMARY-FROM-TWO: %s' \"$REWIND_LS_SUMMARY_INSTRUCTIONS\""
        out = json.loads(
            summarize(
                claude,
                "2",
                "--from",
                "--session",
                sid,
                "--instructions",
                "focus on bash",
                "--json",
                REWIND_LS_SUMMARIZER=command,
            ).stdout
        )
        fr = out["conversation"]
        assert out["direction"] == "from" and fr["prompt"] == "turn two prompt MARK2"
        given = seen.read_text()
        assert "BASH-RESULT-MARK2" in given and "MARK3" in given and "MARK1" not in given
        api.add([text("after from reply")])
        resume_fork(claude, fr, "after from prompt", tmp_path)
        new, k = spoken(api, "after from prompt")
        # Turn 1 exactly as the original sent it before turn 2, then the summary.
        assert new[:k2] == orig[:k2]
        assert "SUMMARY-FROM-TWO: focus on bash" in json.dumps(new[k2:])
        for mark in ("MARK2", "MARK3"):
            assert mark not in json.dumps(new[:k]), mark
        assert "ONE-A" in json.dumps(new[:k2])  # turn 1's parallel tool results

        # The resumed sessions carry their turns: up-to all three, from only turn 1.
        turns = json.loads(claude.rewind_ls("turns", "--all", "--json").stdout)["sessions"]
        numbers = {s["id"]: [t["prompt"] for t in s["turns"]] for s in turns}
        assert numbers[conv["sessionId"]][:3] == [
            "turn one prompt MARK1",
            "turn two prompt MARK2",
            "turn three prompt MARK3",
        ]
        assert numbers[fr["sessionId"]] == ["turn one prompt MARK1", "after from prompt"]

        # The language server's rewind/summarize, through a real server process.
        served = asyncio.run(server_summarize(claude, sid))
        assert served["direction"] == "upTo" and served["status"] == "applied"
        assert served["prompt"] == "turn three prompt MARK3"
        assert served["conversation"]["resumeCommand"] in served["message"]
        api.add([text("after server reply")])
        resume_fork(claude, served["conversation"], "after server prompt", tmp_path)
        new, k = spoken(api, "after server prompt")
        assert "SERVER-SUMMARY" in json.dumps(new[0]) and "MARK3" in json.dumps(new[0])
        for mark in ("MARK1", "MARK2", "ONE-A"):
            assert mark not in json.dumps(new[:k]), mark
        turns = json.loads(claude.rewind_ls("turns", "--all", "--json").stdout)["sessions"]
        # The server's transcript follower read the new sessions' copied lines (their prompt and
        # tool ids): the turns they inherited are not recorded a second time.
        for listed in turns:
            prompts = [t["prompt"] for t in listed["turns"]]
            assert len(prompts) == len(set(prompts)), listed
            assert not any(t["reconstructed"] for t in listed["turns"]), listed

        # Failing, silent and slow summarizers: a clear error naming the command, nothing left.
        files = session_files(claude)
        sessions = len(turns)
        for command, env, said in (
            ("echo broken >&2; exit 3", {}, "failed (exit 3): broken"),
            ("cat > /dev/null", {}, "printed nothing"),
            ("sleep 30", {"REWIND_LS_SUMMARIZER_TIMEOUT": "1"}, "timed out after 1s"),
        ):
            proc = summarize(
                claude,
                "2",
                "--up-to",
                "--session",
                sid,
                ok=False,
                REWIND_LS_SUMMARIZER=command,
                **env,
            )
            assert proc.returncode == 2, proc.stdout + proc.stderr
            assert f"summarizer {command!r}" in proc.stderr and said in proc.stderr, proc.stderr
            assert session_files(claude) == files
        listing = json.loads(claude.rewind_ls("turns", "--all", "--json").stdout)["sessions"]
        assert len(listing) == sessions
        assert claude.transcript(sid).read_bytes() == original  # never edited

        # The compaction lines have the binary's own shape: /compact the original and compare.
        ours = [json.loads(x) for x in Path(conv["transcriptPath"]).read_text().splitlines()]
        claude.run("/compact", resume=sid)
        theirs = [json.loads(x) for x in claude.transcript(sid).read_text().splitlines()]
        check_compaction_lines(ours, theirs, str(claude.transcript(sid)))
        # From: the boundary, turn 1 re-linked under it (its preserved segment), the summary last.
        from_lines = [json.loads(x) for x in Path(fr["transcriptPath"]).read_text().splitlines()]
        head, segment = from_lines[0], from_lines[0]["compactMetadata"]["preservedSegment"]
        assert head["subtype"] == "compact_boundary" and head["parentUuid"] is None
        first = next(x for x in from_lines[1:] if "uuid" in x)
        assert first["uuid"] == segment["headUuid"] and "turn one prompt MARK1" in json.dumps(first)
        assert first["parentUuid"] == head["uuid"] == segment["anchorUuid"]
        summary_line = next(x for x in from_lines if x.get("isCompactSummary"))  # then the resume
        assert summary_line["parentUuid"] == segment["tailUuid"]
        assert summary_line["summarizeMetadata"]["direction"] == "from"
        assert summary_line["summarizeMetadata"]["userContext"] == "focus on bash"

        # After that /compact, a new turn: summarizing from turn 2 still reaches it (the
        # conversation goes on past the compaction's boundary).
        api.add([text("turn four reply MARK4")])
        claude.run("turn four prompt MARK4", resume=sid)
        summarize(
            claude,
            "2",
            "--from",
            "--session",
            sid,
            REWIND_LS_SUMMARIZER=f"cat > {seen}; echo AFTER-COMPACT",
        )
        assert "turn four prompt MARK4" in seen.read_text()


def test_summarize_up_to_in_a_running_session_keeps_the_turns_after_a_checkpoint(
    tmp_path: Path,
) -> None:
    """The session is still running (one `claude -p --input-format stream-json` process, as the
    interactive UI): the binary's latest `last-prompt` line is the checkpoint it wrote inside turn
    2 once its Write of a large file passed 32 KiB, naming a line of turn 2; turn 3 came after it
    and no `last-prompt` since. Summarizing up to turn 2 keeps turn 2 and turn 3 whole."""
    with FakeAnthropic() as api:
        claude = RealClaude(claude_binary(), api, tmp_path, tmp_path / "proj")
        claude.install_hooks()
        claude.allow("Write")
        big = "x" * 40_000 + "\n"
        api.add(
            [text("turn one reply")],
            [tool_use("Write", {"file_path": str(claude.project / "big.txt"), "content": big})],
            [text("turn two reply MARK2")],
            [text("turn three reply MARK3")],
        )
        with claude.session() as live:
            sid = live.prompt("turn one prompt")["session_id"]
            live.prompt("turn two prompt")
            live.prompt("turn three prompt MARK3")
            lines = [json.loads(x) for x in claude.transcript(sid).read_text().splitlines()]
            third = next(i for i, ln in enumerate(lines) if "turn three prompt" in json.dumps(ln))
            written = [i for i, ln in enumerate(lines) if ln.get("type") == "last-prompt"]
            two = next(i for i, ln in enumerate(lines) if "turn two prompt" in json.dumps(ln))
            assert written and two < written[-1] < third, (two, written, third)
            summary = "cat > /dev/null; echo RUNNING-SUMMARY"
            out = summarize(
                claude, "2", "--up-to", "--session", sid, "--json", REWIND_LS_SUMMARIZER=summary
            )
        kept = Path(json.loads(out.stdout)["conversation"]["transcriptPath"]).read_text()
        for said in (
            "RUNNING-SUMMARY",
            "turn two reply MARK2",
            "turn three prompt MARK3",
            "turn three reply MARK3",
        ):
            assert said in kept, said
        assert "turn one reply" not in kept


def check_compaction_lines(
    ours: list[dict[str, Any]], theirs: list[dict[str, Any]], original: str
) -> None:
    """Our summarize-up-to lines against the real binary's own /compact of the same session: the
    same boundary and summary fields, the same preserved-segment link, and the summary's text
    word for word (the binary's preamble, `Summary:`, where the full transcript is), up to the
    "Continue the conversation" line /compact adds and the binary's own partial compaction (its
    "Summarize up to here") leaves out, as does ours: the kept turns follow the summary."""
    boundary = next(x for x in theirs if x.get("subtype") == "compact_boundary")
    summary = next(x for x in theirs if x.get("isCompactSummary"))
    assert ours[0]["parentUuid"] is None and boundary["parentUuid"] is None
    assert ours[1]["parentUuid"] == ours[0]["uuid"] and summary["parentUuid"] == boundary["uuid"]
    for mine, binary_line in ((ours[0], boundary), (ours[1], summary)):
        # isVisibleInTranscriptOnly: a full compaction's; a partial one has summarizeMetadata.
        missing = set(binary_line) - set(mine) - {"promptId", "slug", "isVisibleInTranscriptOnly"}
        # 2.1.332 stamps each user line its own session sends with when and where it sent it
        # (`sentAtMs`, `rowSource`) and its place among the session's prompts (`turnPosition`):
        # not the loader's (the resumed forks above send the original conversation without them).
        missing -= {"sentAtMs", "rowSource", "turnPosition"}
        assert not missing, missing
        for key in ("type", "subtype", "content", "level", "isMeta"):
            if key in binary_line and binary_line is boundary:
                assert mine[key] == binary_line[key], key
    ours_meta, their_meta = ours[0]["compactMetadata"], boundary["compactMetadata"]
    assert ours_meta["trigger"] == their_meta["trigger"] == "manual"
    assert set(their_meta["preservedSegment"]) == set(ours_meta["preservedSegment"])
    assert their_meta["preservedSegment"]["anchorUuid"] == summary["uuid"]
    assert ours_meta["preservedSegment"]["anchorUuid"] == ours[1]["uuid"]
    assert ours[2]["uuid"] == ours_meta["preservedSegment"]["headUuid"]
    assert ours[2]["parentUuid"] == ours[1]["uuid"]
    # The loader's walk from the tail up its parents reaches the head (the binary's re-link).
    by_uuid = {x["uuid"]: x for x in ours if "uuid" in x}
    segment = ours_meta["preservedSegment"]
    walked, cur = [], segment["tailUuid"]
    while cur in by_uuid and cur != segment["headUuid"]:
        walked.append(cur)
        cur = by_uuid[cur]["parentUuid"]
    assert cur == segment["headUuid"] and walked, walked
    text, their_text = ours[1]["message"]["content"], summary["message"]["content"]
    # The tools called before the summary (2.1.332): ours, turn 1's; the binary's /compact, the
    # whole session's. Otherwise the same text.
    used = re.compile(r"<tools-used-before-summary>([^<]*)</tools-used-before-summary>")
    assert [m.group(1) for m in (used.search(text), used.search(their_text)) if m] == [
        "Write",
        "Bash, Write",
    ], (text, their_text)
    text, their_text = used.sub("", text), used.sub("", their_text)
    assert SUMMARY_UP_TO in their_text and text.endswith(f"read the full transcript at: {original}")
    assert their_text.startswith(text), (text, their_text)
    assert their_text[len(text) :].startswith("\nContinue the conversation from where it left off")
    meta = ours[1]["summarizeMetadata"]
    assert meta["direction"] == "up_to" and meta["messagesSummarized"] >= 4, meta  # turn 1's
    assert ours_meta["messagesSummarized"] == meta["messagesSummarized"]
