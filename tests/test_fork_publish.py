"""A conversation fork or summary is a new session file in the agent's projects folder. The language
server's transcript follower lists that folder on every poll; a file it saw before the store had
adopted the session would be read as a session whose hooks never fired, its copied prompts
recorded as reconstructed turns, and the inherited turns then kept out (`inherit_turns` does
nothing for a session that exists). Seen once in CI with the real binary
(tests/agents/test_claude_summarize.py). Here the follower's poll is made to land in that gap."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from rewind_ls.core.agents.claude.check import hooks_not_firing
from rewind_ls.core.agents.claude.follower import TranscriptFollower, project_slug
from rewind_ls.core.capture.recorder import is_reconstructed
from rewind_ls.core.conversation.fork import fork_turn
from rewind_ls.core.conversation.summarize import summarize_turn
from rewind_ls.core.store import Store
from tests.support.agent import FakeClaude


def _summary_up_to(store: Store, turn: Any) -> Any:
    return summarize_turn(store, turn, "upTo")


def _summary_from(store: Store, turn: Any) -> Any:
    return summarize_turn(store, turn, "from")


@pytest.mark.parametrize(
    ("make", "inherited"),
    [
        (fork_turn, ["first", "second"]),
        (_summary_up_to, ["first", "second", "third"]),
        (_summary_from, ["first", "second"]),
    ],
    ids=["fork", "summary-up-to", "summary-from"],
)
def test_a_follower_polling_while_a_fork_is_made_never_sees_it_before_the_store(
    ws: Path,
    home: Path,
    monkeypatch: pytest.MonkeyPatch,
    make: Callable[[Store, Any], Any],
    inherited: list[str],
) -> None:
    monkeypatch.setenv("REWIND_LS_HOME", str(home))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(home / "claude"))
    monkeypatch.setenv("REWIND_LS_SUMMARIZER", "cat > /dev/null; echo THE-SUMMARY")
    folder = home / "claude" / "projects" / project_slug(str(ws))
    agent = FakeClaude(ws, home, transcript_dir=folder, prompt_ids=True)
    agent.turn("first", {"a.txt": "1\n"})
    agent.turn("second", {"a.txt": "2\n"})
    agent.turn("third", {"a.txt": "3\n"})
    with Store.open(str(ws)) as store:
        follower = TranscriptFollower(store)
        follower.poll()  # the session so far, all claimed by its hooks
        real_inherit = store.inherit_turns
        polled: list[int] = []

        def inherit_after_a_poll(*args: Any) -> int:
            polled.append(follower.poll())  # the server's timer, between the two steps
            return real_inherit(*args)

        monkeypatch.setattr(store, "inherit_turns", inherit_after_a_poll)
        third = next(t for t in store.turns(agent.session_id) if t.prompt == "third")
        made = make(store, third)
        assert polled == [0], "the follower recorded the new session before the store adopted it"
        assert Path(made.path).is_file() and not list(agent.transcript.parent.glob(".*-tmp"))
        follower.poll()  # the published file: its lines are the inherited turns' own
        turns = store.turns(made.session_id)
        assert [t.prompt for t in turns] == inherited
        assert not any(is_reconstructed(t) for t in turns)
        assert hooks_not_firing(store) == []


def test_a_fork_the_store_refuses_leaves_no_session_file(
    ws: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The store's side fails: the staged file is removed, the agent's resume offers nothing."""
    monkeypatch.setenv("REWIND_LS_HOME", str(home))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(home / "claude"))
    agent = FakeClaude(ws, home)
    agent.turn("first", {"a.txt": "1\n"})
    agent.turn("second", {"a.txt": "2\n"})
    before = sorted(p.name for p in agent.transcript.parent.iterdir())
    with Store.open(str(ws)) as store:

        def refuse(*args: Any) -> int:
            raise OSError("database or disk is full")

        monkeypatch.setattr(store, "inherit_turns", refuse)
        second = store.turns(agent.session_id)[1]
        with pytest.raises(OSError, match="disk is full"):
            fork_turn(store, second)
    assert sorted(p.name for p in agent.transcript.parent.iterdir()) == before
