"""The summarizer runner's small parts (the whole flow runs against the real binary in
tests/agents/test_claude_summarize.py): progress while it runs, the time limit stopping everything
it started, the conversation as text."""

from __future__ import annotations

import time

import pytest

from rewind_ls.core.conversation import summarize
from rewind_ls.core.errors import RewindError


def test_progress_is_reported_while_the_summarizer_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(summarize, "PROGRESS_EVERY", 0.2)
    monkeypatch.setenv("REWIND_LS_SUMMARIZER", "cat > /dev/null; sleep 1; echo the summary")
    said: list[str] = []
    assert summarize.run_summarizer("text", progress=said.append) == "the summary"
    assert said and all(s.startswith("summarizing with cat > /dev/null; sleep 1") for s in said)


def test_time_limit_stops_the_summarizer_and_what_it_started(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The background sleep keeps stdout open: only killing the whole process group ends the wait.
    monkeypatch.setenv("REWIND_LS_SUMMARIZER", "sleep 30 & wait")
    monkeypatch.setenv("REWIND_LS_SUMMARIZER_TIMEOUT", "0.5")
    started = time.monotonic()
    with pytest.raises(RewindError, match=r"summarizer 'sleep 30 & wait' timed out after 0.5s"):
        summarize.run_summarizer("text", progress=lambda _: None)
    assert time.monotonic() - started < 5


def test_default_summarizer_is_claude_print_mode_without_tools(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("REWIND_LS_SUMMARIZER", raising=False)
    argv, name = summarize.summarizer_command("mind the tests")
    assert isinstance(argv, list) and argv[:2] == ["claude", "-p"]
    assert argv[argv.index("--tools") + 1] == ""
    assert "--no-session-persistence" in argv and "mind the tests" in argv[2]
    assert "<summarizing prompt>" in name


def test_conversation_text_carries_tool_calls_and_results() -> None:
    lines = [
        {"type": "user", "message": {"role": "user", "content": "do it"}},
        {
            "type": "assistant",
            "message": {
                "content": [
                    {"type": "thinking", "thinking": "hidden"},
                    {"type": "tool_use", "name": "Bash", "input": {"command": "ls"}},
                ]
            },
        },
        {
            "type": "user",
            "message": {
                "content": [{"type": "tool_result", "content": [{"type": "text", "text": "a.txt"}]}]
            },
        },
        {"type": "user", "isMeta": True, "message": {"content": "meta"}},
        {"type": "attachment", "attachment": {}},
    ]
    text = summarize.conversation_text(lines)
    assert text == (
        'User: do it\n\nAssistant: [tool call Bash: {"command": "ls"}]\n\n'
        "User: [tool result: a.txt]\n"
    )


def test_summary_text_is_the_binarys_compact_summary() -> None:
    """The binary's cleaning of a summary (an <analysis> dropped, <summary> as `Summary:`, blank
    runs squeezed), its preamble, the tools used before the summary (2.1.332), and where the full
    transcript is."""
    text = summarize.summary_text(
        "<analysis>draft</analysis>\n<summary>A\n\n\nB</summary>", "/t.jsonl", ["Bash", "Write"]
    )
    used = (
        "<system-reminder>\n<tools-used-before-summary>Bash, Write</tools-used-before-summary>\n"
        "</system-reminder>\n"
    )
    assert text == (
        summarize.PREAMBLE + used + "Summary:\nA\n\nB" + summarize.TRANSCRIPT_NOTE + "/t.jsonl"
    )
    assert summarize.summary_text("plain", "/t.jsonl").startswith(
        summarize.PREAMBLE
        + "<system-reminder>\n<tools-used-before-summary></tools-used-before-summary>\n"
        + "</system-reminder>\nSummary:\nplain\n\nIf you need specific details"
    )


def test_tools_used_are_the_summarized_parts_tool_calls_sorted() -> None:
    def call(name: str) -> dict[str, object]:
        block = {"type": "tool_use", "id": name, "name": name, "input": {}}
        return {"type": "assistant", "message": {"content": [block]}}

    lines = [call("Write"), call("Bash"), call("Write"), call("mcp__x__y"), call("bad name")]
    assert summarize.tools_used(lines) == ["Bash", "Write", "mcp__x__y"]


def test_the_conversation_goes_on_after_a_checkpoint_not_after_a_rewind() -> None:
    """Where summarize up to a turn ends (`leaf_under`): the binary's latest `last-prompt` leaf,
    followed to the lines written after it that continue from it (a checkpoint the binary wrote
    every 32 KiB, inside a turn too, in a session still running), but not to a branch written
    before it (what the agent's own /rewind left behind)."""
    from rewind_ls.core.agents.claude.transcript import leaf_under

    def line(uid: str, parent: str | None) -> dict[str, object]:
        return {"type": "user", "uuid": uid, "parentUuid": parent}

    def last_prompt(leaf: str) -> dict[str, object]:
        return {"type": "last-prompt", "leafUuid": leaf}

    start = [line("u1", None), line("a1", "u1")]
    went_on = [*start, last_prompt("a1"), line("u2", "a1"), line("a2", "u2")]
    assert leaf_under(went_on, "u1") == "a2"
    rewound = [*start, line("u2", "a1"), line("a2", "u2"), last_prompt("a1")]
    assert leaf_under(rewound, "u1") == "a1"
    again = [*rewound, line("u3", "a1"), line("a3", "u3")]
    assert leaf_under(again, "u1") == "a3"
    assert leaf_under([*start, line("u2", "a1")], "u1") == "u2"  # no last-prompt: the latest
