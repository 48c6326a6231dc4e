"""`Blamer.lines` (the backward walk that answers the first hover of a long history without
replaying it) says exactly what the full replay (`Blamer.blame`) says, line by line, over random
histories: agent turns, edits nobody recorded between them, restores bringing back an earlier
content, rolled-back turns, a deleted and re-created file, an open turn still editing the path."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from rewind_ls.core.capture.recorder import REWIND_SESSION
from rewind_ls.core.history.blame import Blamer
from rewind_ls.core.model import ABSENT, FILE, TurnState, Version
from rewind_ls.core.store import Store


def _history(store: Store, rng: random.Random, turns: int) -> bytes:
    """Records a random history of f.txt; returns the current content (a buffer)."""
    store.ensure_session("A", "agent", "claude-code")
    store.ensure_session(REWIND_SESSION, "rewind", "rewind-ls")
    lines = [b"l%d\n" % i for i in range(20)]
    data = b"".join(lines)
    prev = Version(FILE, store.put_blob(data), 0o644, len(data))
    seen = [data]
    for t in range(turns):
        roll = rng.random()
        if roll < 0.15:  # an edit nobody recorded before the next turn
            lines[rng.randrange(len(lines))] = b"unrecorded %d\n" % t
            data = b"".join(lines)
            prev = Version(FILE, store.put_blob(data, previous=prev.hash), 0o644, len(data))
        session = "A"
        if roll > 0.85 and len(seen) > 2:  # a restore of an earlier content
            session = REWIND_SESSION
            data = rng.choice(seen[:-1])
            lines = data.splitlines(True)
        elif roll > 0.8:  # deleted (then the next turn writes it anew)
            lines = []
        else:
            for _ in range(rng.randint(1, 3)):
                at = rng.randrange(len(lines) + 1)
                if rng.random() < 0.3 or not lines:
                    lines.insert(at, b"ins %d\n" % t)
                elif rng.random() < 0.2 and len(lines) > 3:
                    del lines[min(at, len(lines) - 1)]
                else:
                    lines[min(at, len(lines) - 1)] = b"turn %d\n" % t
        turn = store.begin_turn(session, f"turn {t}")
        store.record_before(turn, "f.txt", prev, "tool")
        if not lines and session == "A":
            after = Version(ABSENT, None, None, None)
            data = b""
        else:
            data = b"".join(lines)
            after = Version(FILE, store.put_blob(data, previous=prev.hash), 0o644, len(data))
            seen.append(data)
        store.record_after(turn, "f.txt", after)
        store.end_turn(turn)
        if rng.random() < 0.07:  # rolled back: the replay skips it, the walk must too
            store.set_turn_state(turn, TurnState.ROLLED_BACK)
            continue
        prev = after
        if not lines:
            lines = [b"re-created %d\n" % t]
    if rng.random() < 0.5:  # an open turn still editing the path
        store.record_before(store.begin_turn("A", "open"), "f.txt", prev, "tool")
        lines.insert(0, b"pending\n")
    return b"".join(lines) + b"buffer only\n"


@pytest.mark.parametrize("seed", range(12))
def test_walk_back_says_what_the_replay_says(tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    root = tmp_path / "ws"
    root.mkdir()
    with Store.open(str(root), home=str(tmp_path / "home")) as store:
        current = _history(store, rng, rng.randint(5, 90))
        full = Blamer(store).blame("f.txt", current)
        n = len(full.origins)
        every = Blamer(store).lines("f.txt", current, range(n))
        assert every.line_count == n
        assert every.content_hash == full.content_hash
        assert [every.origins[i] for i in range(n)] == full.origins
        for line in rng.sample(range(n), min(n, 5)):  # one line at a time: an early stop
            one = Blamer(store).lines("f.txt", current, [line])
            assert one.origins == {line: full.origins[line]}


def test_walk_sees_a_turn_recorded_after_the_first_question(tmp_path: Path) -> None:
    """The walk's plan is kept between questions, and made again once a turn is recorded."""
    root = tmp_path / "ws"
    root.mkdir()
    with Store.open(str(root), home=str(tmp_path / "home")) as store:
        current = _history(store, random.Random(3), 30)
        blamer = Blamer(store)
        before = blamer.lines("f.txt", current, [0]).origins[0]
        prev = store.path_history("f.txt")[-1]
        base = prev.after if prev.after is not None else prev.before
        data = b"newest\n" + current
        turn = store.begin_turn("A", "one more")
        store.record_before(turn, "f.txt", base, "tool")
        store.record_after(turn, "f.txt", Version(FILE, store.put_blob(data), 0o644, len(data)))
        store.end_turn(turn)
        after = blamer.lines("f.txt", data, [0]).origins[0]
        assert after.turn_id == turn != before.turn_id
        assert after == Blamer(store).blame("f.txt", data).origins[0]
