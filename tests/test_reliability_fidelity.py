"""Fidelity corpus: awkward files, changed by an agent, restored byte-exact (and with their mode)
through the CLI and through the LSP WorkspaceEdit path with VS Code's capabilities (UTF-16 positions,
documentChanges) and Neovim's (negotiated encoding, plain `changes`, no resource operations), with the
documents open in the test editor and closed. A file over the size cap is refused with a reason.

The test editor applies edits with its own position math (tests/support/lsp_client.py). For an open
document the restored content is the buffer, saved the way an editor saves (keeping a UTF-8 BOM).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from rewind_ls.server.edits import decode_text
from tests.support.agent import FakeClaude
from tests.support.fault import Tally, cli, query, reset_tree, tree_state
from tests.support.lsp_client import start, uri_of

MiB = 1024 * 1024


def _big_text() -> bytes:
    return b"".join(
        b"line %07d of a ten megabyte text file, padded....\n" % i for i in range(200_000)
    )


CORPUS: dict[str, tuple[bytes, int]] = {
    "crlf.txt": (b"one\r\ntwo\r\nthree\r\n", 0o644),
    "mixed-eol.txt": (b"a\r\nb\nc\rd\r\ne", 0o644),
    "bom.txt": (b"\xef\xbb\xbfwith a UTF-8 BOM\r\nsecond\n", 0o644),
    "utf16.txt": ("UTF-16 with BOM: caf\u00e9 \U0001f600\r\n".encode("utf-16"), 0o644),
    "latin1.txt": ("caf\u00e9 na\u00efve \u00e0 la carte\n".encode("latin-1"), 0o644),
    "astral.txt": (
        "emoji \U0001f600\U0001f9d1\u200d\U0001f680 and \U0001d11e end\n".encode(),
        0o644,
    ),
    "no-final-newline.txt": (b"no final newline", 0o644),
    "empty.txt": (b"", 0o644),
    "binary.bin": (bytes(range(256)) * 16 + b"\x00\xff", 0o644),
    "exec.sh": (b"#!/bin/sh\necho hi\n", 0o755),
    "readonly.txt": (b"read only\n", 0o444),
    "long-line.txt": (b"x" * MiB, 0o644),
    "ten-mb.txt": (_big_text(), 0o644),
    "nested/deep/file.txt": (b"deep\n", 0o644),
    "deleted-by-agent.txt": (b"the agent deletes me\n", 0o644),
}
CREATED = "created-by-agent.txt"


def _agent_version(name: str, data: bytes) -> bytes:
    if name == "long-line.txt":
        return data[: len(data) // 2] + b"Y" + data[len(data) // 2 + 1 :]
    if name == "ten-mb.txt":
        middle = len(data) // 2
        return data[:middle] + b"<<the agent was here>>" + data[middle:]
    if name == "astral.txt":
        return "emoji \U0001f600 changed \U0001d11e\n".encode()
    return b"changed by the agent\n"


class Corpus:
    def __init__(self, base: Path) -> None:
        self.ws, self.home = base / "ws", base / "home"
        self.pristine_ws, self.pristine_home = base / "p-ws", base / "p-home"
        self.ws.mkdir()
        for name, (data, mode) in CORPUS.items():
            path = self.ws / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
            os.chmod(path, mode)
        self.original = tree_state(self.ws, empty_folders=False)
        agent = FakeClaude(self.ws, self.home, session_id="fidelity")
        agent.hook("SessionStart", source="startup")
        agent.turns += 1
        agent.hook("UserPromptSubmit", prompt="mangle everything")
        for name, (data, _mode) in CORPUS.items():
            if name == "deleted-by-agent.txt":
                continue
            agent.write(name, _agent_version(name, data))
        agent.write(CREATED, b"new file\n")
        agent.shell("rm deleted-by-agent.txt && chmod -x exec.sh")
        agent.hook("Stop", stop_hook_active=False)
        self.changed = tree_state(self.ws, empty_folders=False)
        for name in CORPUS:
            assert self.changed.get(name) != self.original[name], name
        self.turn = str(query(self.ws, self.home, "SELECT id FROM turns WHERE number = 1")[0][0])
        reset_tree(self.pristine_ws, self.ws)
        reset_tree(self.pristine_home, self.home)

    def reset(self) -> None:
        reset_tree(self.ws, self.pristine_ws)
        reset_tree(self.home, self.pristine_home)

    def byte_exact(self) -> list[str]:
        """Paths that hold their original bytes and mode now (the created file must be gone)."""
        now = tree_state(self.ws, empty_folders=False)
        assert CREATED not in now, "the file the agent created was not deleted"
        return [name for name in CORPUS if now.get(name) == self.original[name]]


FIGURES = Tally(
    f"reliability/fidelity byte-exact restores of {len(CORPUS)} files (+1 created, deleted)"
)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Corpus]:
    yield Corpus(tmp_path_factory.mktemp("fidelity"))
    FIGURES.report()


def test_cli_restores_the_corpus_byte_exact(corpus: Corpus) -> None:
    corpus.reset()
    proc = cli(corpus.ws, corpus.home, "rewind", "1", "--yes", "--json")
    assert proc.returncode == 0, proc.stderr
    exact = corpus.byte_exact()
    assert sorted(exact) == sorted(CORPUS), sorted(set(CORPUS) - set(exact))
    FIGURES["cli"] = len(exact)
    # And back: undo restores the agent's versions byte-exact too.
    proc = cli(corpus.ws, corpus.home, "undo", "--yes")
    assert proc.returncode == 0, proc.stderr
    now = tree_state(corpus.ws, empty_folders=False)
    assert now == corpus.changed


def _save_like_an_editor(path: Path, text: str, disk_before: bytes | None) -> None:
    bom = (
        b"\xef\xbb\xbf"
        if disk_before is not None and disk_before.startswith(b"\xef\xbb\xbf")
        else b""
    )
    mode = path.stat().st_mode if path.exists() else None
    path.write_bytes(bom + text.encode("utf-8"))
    if mode is not None:
        os.chmod(path, mode)


@pytest.mark.asyncio
@pytest.mark.parametrize("caps", ["visual_studio_code", "neovim"])
@pytest.mark.parametrize("opened", [False, True], ids=["closed", "open"])
async def test_lsp_restores_the_corpus_byte_exact(corpus: Corpus, caps: str, opened: bool) -> None:
    corpus.reset()
    client, editor = await start(corpus.ws, corpus.home, caps)
    open_names: list[str] = []
    try:
        if opened:
            for name in [*CORPUS, CREATED]:
                path = corpus.ws / name
                if path.exists() and decode_text(path.read_bytes()) is not None:
                    editor.open(path)
                    open_names.append(name)
            assert len(open_names) >= 9, open_names
        result: Any = await client.protocol.send_request_async(
            "rewind/restore", {"turnId": corpus.turn}
        )
        status = result["status"] if isinstance(result, dict) else result.status
        assert status == "applied", result
        # Open documents: the buffer holds the restored text; save it as the editor would.
        for name in open_names:
            uri = uri_of(corpus.ws / name)
            if uri not in editor.buffers:
                assert name == CREATED, name  # closed by the delete
                continue
            text = editor.text(corpus.ws / name)
            original = corpus.original.get(name)
            if original is None:
                continue
            expected = decode_text(original[0])
            if expected is None:
                # Not text (UTF-16, Latin-1, ...): restored on disk by the server; the buffer still
                # shows the agent's text until the editor reloads the file (not saved here).
                continue
            assert text == expected, (name, text[:80], (expected or "")[:80])
            disk = (corpus.ws / name).read_bytes() if (corpus.ws / name).exists() else None
            _save_like_an_editor(corpus.ws / name, text, disk)
    finally:
        await client.shutdown_session()
    if opened and caps == "neovim" and (corpus.ws / CREATED).exists():
        # Neovim announces no resource operations: the created file was deleted by the server,
        # or it is still open in a buffer the client keeps; either way it must not stay on disk.
        raise AssertionError("the created file is still on disk")
    exact = corpus.byte_exact()
    missing = sorted(set(CORPUS) - set(exact))
    assert not missing, {
        name: (
            tree_state(corpus.ws, empty_folders=False).get(name, (b"<absent>", 0))[0][:60],
            oct(tree_state(corpus.ws, empty_folders=False).get(name, (b"", 0))[1]),
        )
        for name in missing
    }
    FIGURES[f"lsp {caps} {'open' if opened else 'closed'} (encoding {editor.encoding})"] = len(
        exact
    )


def test_over_the_size_cap_is_refused_with_a_reason(tmp_path: Path) -> None:
    ws, home = tmp_path / "ws", tmp_path / "home"
    ws.mkdir()
    (ws / "big.txt").write_bytes(b"b" * 5000)
    (ws / "small.txt").write_bytes(b"small\n")
    agent = FakeClaude(ws, home, session_id="cap")
    env = {"REWIND_LS_MAX_FILE_BYTES": "1000"}
    agent.env.update(env)
    agent.turn("grow", {"big.txt": b"B" * 6000, "small.txt": b"SMALL\n"})
    too_large = query(ws, home, "SELECT before_kind FROM changes WHERE path = 'big.txt'")
    assert too_large == [("too-large",)], too_large
    proc = cli(ws, home, "rewind", "1", "--yes", "--json", extra_env=env)
    assert proc.returncode == 3, (proc.returncode, proc.stdout, proc.stderr)
    out = json.loads(proc.stdout)
    assert out["status"] == "conflict" and out["paths"] == ["big.txt"], out
    assert "size cap" in out["message"] and "not restorable" in out["message"], out
    # Nothing written: not a silent partial restore.
    assert (ws / "small.txt").read_bytes() == b"SMALL\n"
    assert (ws / "big.txt").read_bytes() == b"B" * 6000
    # The preview names it too; --skip-conflicts restores the rest and says what it left.
    preview = cli(ws, home, "rewind", "1", "--dry-run", "--json", extra_env=env)
    files = {f["path"]: f for f in json.loads(preview.stdout)["files"]}
    assert files["big.txt"]["conflict"]["kind"] == "not-restorable", files
    proc = cli(ws, home, "rewind", "1", "--yes", "--skip-conflicts", extra_env=env)
    assert proc.returncode == 0, proc.stderr
    assert (ws / "small.txt").read_bytes() == b"small\n"
    assert b"left alone" in proc.stdout or b"conflict" in proc.stdout, proc.stdout
    FIGURES["over the size cap: refused with a reason"] = 1


@pytest.mark.asyncio
async def test_over_the_size_cap_in_the_editor(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws, home = tmp_path / "ws", tmp_path / "home"
    ws.mkdir()
    (ws / "big.txt").write_bytes(b"b" * 5000)
    agent = FakeClaude(ws, home, session_id="cap")
    agent.env["REWIND_LS_MAX_FILE_BYTES"] = "1000"
    agent.turn("grow", {"big.txt": b"B" * 6000})
    monkeypatch.setenv("REWIND_LS_MAX_FILE_BYTES", "1000")
    turn = str(query(ws, home, "SELECT id FROM turns WHERE number = 1")[0][0])
    client, _editor = await start(ws, home)
    try:
        preview: Any = await client.protocol.send_request_async("rewind/preview", {"turnId": turn})
        files = preview["files"] if isinstance(preview, dict) else preview.files
        conflict = files[0]["conflict"] if isinstance(files[0], dict) else files[0].conflict
        kind = conflict["kind"] if isinstance(conflict, dict) else conflict.kind
        assert kind == "not-restorable"
        with pytest.raises(Exception) as info:
            await client.protocol.send_request_async("rewind/restore", {"turnId": turn})
        assert "size cap" in str(info.value) and "big.txt" in str(info.value), info.value
    finally:
        await client.shutdown_session()
    assert (ws / "big.txt").read_bytes() == b"B" * 6000
