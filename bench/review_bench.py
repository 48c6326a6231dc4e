"""Review figures (issue #28): the cost of the code actions and the hover of one line of a
10,000-line file whose history holds 1,000 recorded turns, each of them an edit of that file, through
the real language server; against a plain hover round trip of the same server (a file with no
history) measured in the same session, and against the issue's 100 ms target.

Each measured request pair follows an edit of the open buffer (`didChange`), so nothing the server
kept from the previous request answers the next one for free: what is measured is one hover and one
code action request on a buffer that changed, as a person typing and hovering meets them. The first
pair after the server starts (on the line the newest turn wrote) is a row of its own, against the
same 100 ms target, and so is a first hover of a line no turn changed (the history walked to its
start: the worst case of `Blamer.lines`).
"""

from __future__ import annotations

import os
import random
import time
from typing import Any

from bench.rpc import LspClient

TARGET_SECONDS = 0.1


def _fill(ws: str, home: str, lines: int, turns: int) -> bytes:
    """`turns` agent turns, each rewriting a few lines of big.txt (some insert or delete a line),
    recorded into the store as the hooks record them; returns the file's last content."""
    from rewind_ls.core.store import FILE, Store, Version, digest

    rng = random.Random(28)
    content = [f"line {i}: {'x' * (i % 40)}\n".encode() for i in range(lines)]
    path = os.path.join(ws, "big.txt")
    data = b"".join(content)
    with open(path, "wb") as f:
        f.write(data)
    with Store.open(ws, home=home) as store:
        store.ensure_session("bench", "agent", "bench")
        prev = Version(FILE, store.put_blob(data), 0o644, len(data))
        with store.transaction():
            for t in range(turns):
                turn = store.begin_turn("bench", f"turn {t}: tidy section {t % 97}")
                for _ in range(rng.randint(1, 3)):
                    at = rng.randrange(len(content))
                    kind = rng.random()
                    if kind < 0.15:
                        content.insert(at, f"inserted in turn {t}\n".encode())
                    elif kind < 0.25 and len(content) > lines // 2:
                        del content[at]
                    else:
                        content[at] = f"line changed in turn {t}\n".encode()
                new = b"".join(content)
                h = store.put_blob(new, previous=prev.hash)
                after = Version(FILE, h, 0o644, len(new))
                store.record_before(turn, "big.txt", prev, "tool")
                store.record_after(turn, "big.txt", after)
                store.end_turn(turn)
                prev = after
        with open(path, "wb") as f:
            f.write(new)
        st = os.stat(path)
        assert digest(new) == prev.hash
        store.set_known("big.txt", prev, st)
    return new


def _pair(client: LspClient, uri: str, line: int) -> tuple[Any, Any]:
    pos = {"line": line, "character": 1}
    hover = client.request("textDocument/hover", {"textDocument": {"uri": uri}, "position": pos})
    actions = client.request(
        "textDocument/codeAction",
        {
            "textDocument": {"uri": uri},
            "range": {"start": pos, "end": pos},
            "context": {"diagnostics": []},
        },
    )
    return hover, actions


def bench_review(
    tmp: str, lines: int, turns: int, runs: int, env: dict[str, str], notes: list[str]
) -> list[tuple[str, float | None, float | None, float | None]]:
    """(figure, ours, baseline, target ratio) rows."""
    ws = os.path.join(tmp, "review-ws")
    home = os.path.join(tmp, "review-home")
    os.makedirs(ws)
    text = _fill(ws, home, lines, turns).decode()
    with open(os.path.join(ws, "plain.txt"), "w") as f:
        f.write("nothing recorded here\n")
    client = LspClient(ws, {**env, "REWIND_LS_HOME": home})
    figure = f"code actions + hover, {lines:,}-line file after {turns:,} turns"
    try:
        client.initialize()
        uri = "file://" + os.path.realpath(os.path.join(ws, "big.txt"))
        plain = "file://" + os.path.realpath(os.path.join(ws, "plain.txt"))
        client.notify(
            "textDocument/didOpen",
            {"textDocument": {"uri": uri, "languageId": "text", "version": 1, "text": text}},
        )
        client.notify(
            "textDocument/didOpen",
            {
                "textDocument": {
                    "uri": plain,
                    "languageId": "text",
                    "version": 1,
                    "text": "nothing recorded here\n",
                }
            },
        )
        # The line last changed by the newest turn: its hunk is offered for revert.
        target = next(
            i for i, t in enumerate(text.splitlines()) if f"turn {turns - 1}\n" in t + "\n"
        )
        t0 = time.perf_counter()
        hover, actions = _pair(client, uri, target)
        cold = time.perf_counter() - t0
        if not hover or f"turn {turns}" not in str(hover):
            raise RuntimeError(f"hover on line {target} named no turn {turns}: {hover}")
        if not actions:
            raise RuntimeError(f"no code action on line {target}")
        notes.append(
            f"review: hover on line {target + 1} says {hover['contents']['value'][:60]!r}; "
            f"actions {[a['title'][:40] for a in actions]}"
        )
        plain_times = []
        for _ in range(max(runs, 5) * 4):
            t0 = time.perf_counter()
            client.request(
                "textDocument/hover",
                {"textDocument": {"uri": plain}, "position": {"line": 0, "character": 1}},
            )
            plain_times.append(time.perf_counter() - t0)
        times = []
        version = 1
        for i in range(max(runs, 5) * 4):
            version += 1
            # The person types on a line far from the one hovered: the buffer is new each time.
            edited = text.replace("line 5: ", f"line 5 (edit {i}): ", 1)
            client.notify(
                "textDocument/didChange",
                {
                    "textDocument": {"uri": uri, "version": version},
                    "contentChanges": [{"text": edited}],
                },
            )
            t0 = time.perf_counter()
            _pair(client, uri, target)
            times.append(time.perf_counter() - t0)
        # The worst first hover: a line no turn changed, whose author only the start of the
        # history says (no full replay is made by a hover: each such hover walks it all).
        old_line = next(i for i, t in enumerate(text.splitlines()) if t.startswith("line 9"))
        t0 = time.perf_counter()
        deep = client.request(
            "textDocument/hover",
            {"textDocument": {"uri": uri}, "position": {"line": old_line, "character": 1}},
        )
        deepest = time.perf_counter() - t0
        notes.append(f"review: hover on unchanged line {old_line + 1}: {deep}")
    finally:
        client.close()
    times.sort()
    plain_times.sort()
    warm = times[len(times) // 2]
    base = plain_times[len(plain_times) // 2]
    return [
        (f"{figure} (vs a plain hover of the same server)", warm, base, None),
        (f"{figure} (vs the 100 ms target)", warm, TARGET_SECONDS, 1.0),
        (f"{figure}: first request (vs 100 ms)", cold, TARGET_SECONDS, 1.0),
        (
            f"{figure}: first hover of a line no turn changed (vs 100 ms)",
            deepest,
            TARGET_SECONDS,
            1.0,
        ),
    ]
