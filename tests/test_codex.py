"""Codex CLI support without the binary: the apply_patch header parser, `install codex`, and the hook
process fed the payload shapes Codex 0.169.0 sends (copied from its hook calls in
tests/agents/test_codex_real.py), including a workspace shared with a Claude Code session."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest

from rewind_ls.core.agents.codex.apply_patch import patch_operations, touched_paths
from rewind_ls.core.errors import BadInput
from tests.conftest import Cli
from tests.support.agent import FakeClaude


def test_patch_headers_in_order() -> None:
    patch = (
        "*** Begin Patch\n"
        "*** Add File: new.txt\n"
        "+*** Delete File: not-a-header.txt\n"
        "*** Update File: src/a.py\n"
        "*** Move to: src/b.py\n"
        "@@ def f():\n"
        "-    return 1\n"
        "+    return 2\n"
        "*** Delete File: /abs/gone.txt\n"
        "*** Update File: new.txt\n"
        "*** End Patch\n"
    )
    assert patch_operations(patch) == [
        ("add", "new.txt"),
        ("update", "src/a.py"),
        ("move", "src/b.py"),
        ("delete", "/abs/gone.txt"),
        ("update", "new.txt"),
    ]
    assert touched_paths(patch) == ["new.txt", "src/a.py", "src/b.py", "/abs/gone.txt"]


@pytest.mark.parametrize(
    "patch",
    [
        "*** Add File: a\n+x\n",  # no Begin Patch
        "*** Begin Patch\n*** Move to: b\n*** End Patch\n",  # move without update
        "*** Begin Patch\n*** Add File: \n*** End Patch\n",  # no path
    ],
)
def test_malformed_patches_are_refused(patch: str) -> None:
    with pytest.raises(BadInput):
        patch_operations(patch)


class FakeCodex:
    """One Codex session's hook calls, through the real `rewind-ls hook codex` process."""

    def __init__(self, ws: Path, home: Path) -> None:
        self.ws = ws
        self.session_id = str(uuid.uuid4())
        self.codex_home = home / "codex"
        self.env = {"REWIND_LS_HOME": str(home), "CODEX_HOME": str(self.codex_home)}
        self.turn_id = ""

    def hook(self, event: str, **fields: Any) -> subprocess.CompletedProcess[bytes]:
        payload = {
            "session_id": self.session_id,
            "turn_id": self.turn_id,
            "transcript_path": None,
            "cwd": str(self.ws),
            "hook_event_name": event,
            "model": "gpt-5.5",
            "permission_mode": "bypassPermissions",
            **fields,
        }
        proc = subprocess.run(
            [sys.executable, "-m", "rewind_ls", "hook", "codex"],
            input=json.dumps(payload).encode(),
            env={**os.environ, **self.env},
            capture_output=True,
            timeout=60,
        )
        assert proc.returncode == 0, proc.stderr
        return proc

    def prompt(self, text: str) -> None:
        self.turn_id = str(uuid.uuid4())
        self.hook("UserPromptSubmit", prompt=text)

    def patch(self, patch: str, apply: dict[str, bytes | None]) -> None:
        tool = {"tool_name": "apply_patch", "tool_input": {"command": patch}}
        call = "call_" + uuid.uuid4().hex[:20]
        self.hook("PreToolUse", tool_use_id=call, **tool)
        for rel, data in apply.items():
            if data is None:
                (self.ws / rel).unlink()
            else:
                (self.ws / rel).write_bytes(data)
        self.hook("PostToolUse", tool_use_id=call, tool_response="Success.", **tool)


def test_install_codex_keeps_foreign_hooks_and_says_how_to_trust(
    ws: Path, cli: Cli, home: Path, tmp_path: Path
) -> None:
    hooks = ws / ".codex" / "hooks.json"
    hooks.parent.mkdir()
    foreign = {"type": "command", "command": "my-own-hook"}
    hooks.write_text(json.dumps({"hooks": {"PreToolUse": [{"hooks": [foreign]}]}}))
    out = cli("install", "codex").stdout
    assert '"Trust all and continue"' in out  # the choice in Codex's "Hooks need review" screen
    data = json.loads(hooks.read_text())
    assert {"hooks": [foreign]} in data["hooks"]["PreToolUse"]
    assert set(data["hooks"]) == {
        "SessionStart",
        "UserPromptSubmit",
        "PreToolUse",
        "PostToolUse",
        "Stop",
        "Interrupt",  # the person stopped the turn (Codex 0.169.0 has no StopFailure)
        "SessionEnd",
    }
    ours = [g for g in data["hooks"]["PreToolUse"] if g.get("matcher") == "apply_patch|Bash"]
    assert len(ours) == 1 and ours[0]["hooks"][0]["command"].endswith(" hook codex")
    assert "already installed" in cli("install", "codex").stdout
    doctor = cli.json("doctor", ok=False)
    codex_checks = [c for c in doctor["checks"] if c["name"] == "Codex CLI hooks"]
    assert len(codex_checks) == 1 and codex_checks[0]["ok"], codex_checks
    cli("install", "codex", "--uninstall")
    assert json.loads(hooks.read_text()) == {"hooks": {"PreToolUse": [{"hooks": [foreign]}]}}

    # --user: $CODEX_HOME/hooks.json; Claude Code's settings are not touched.
    codex_home = tmp_path / "codex-home"
    proc = subprocess.run(
        [sys.executable, "-m", "rewind_ls", "install", "codex", "--user"],
        cwd=ws,
        env={**os.environ, "REWIND_LS_HOME": str(home), "CODEX_HOME": str(codex_home)},
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    assert "hook codex" in (codex_home / "hooks.json").read_text()
    assert not (ws / ".claude").exists()


def test_two_agents_in_one_workspace_are_two_sessions_with_conflicts(
    ws: Path, home: Path, cli: Cli
) -> None:
    (ws / "a.txt").write_bytes(b"base\n")
    codex = FakeCodex(ws, home)
    claude = FakeClaude(ws, home)
    codex.hook("SessionStart", source="startup")
    codex.prompt("codex: edit a")
    codex.patch(
        "*** Begin Patch\n*** Update File: a.txt\n@@\n-base\n+codex\n*** End Patch\n",
        {"a.txt": b"codex\n"},
    )
    codex.hook("Stop", stop_hook_active=False, last_assistant_message="ok")
    claude.turn("claude: edit a", {"a.txt": "claude\n"})

    listing = cli.json("turns", "--all")
    agents = {s["agent"]: s for s in listing["sessions"] if s["kind"] == "agent"}
    assert set(agents) == {"codex", "claude-code"}
    assert agents["codex"]["id"] == codex.session_id
    assert [f["path"] for f in agents["codex"]["turns"][0]["files"]] == ["a.txt"]
    # Rewinding Codex's turn would undo Claude's later edit: a conflict, like any two sessions'.
    dry = cli("rewind", "1", "--session", codex.session_id, "--dry-run", ok=False)
    assert dry.returncode == 3, dry.stdout + dry.stderr
    assert "conflict (other-session): a.txt" in dry.stdout
    assert (ws / "a.txt").read_bytes() == b"claude\n"


def test_a_tool_call_of_a_new_codex_turn_opens_a_new_turn(ws: Path, home: Path, cli: Cli) -> None:
    """turn_id keys the turn: a missed UserPromptSubmit does not merge two Codex turns."""
    codex = FakeCodex(ws, home)
    codex.prompt("first")
    codex.patch("*** Begin Patch\n*** Add File: one.txt\n+1\n*** End Patch\n", {"one.txt": b"1\n"})
    codex.turn_id = str(uuid.uuid4())  # the next turn's prompt hook never arrived
    codex.patch("*** Begin Patch\n*** Add File: two.txt\n+2\n*** End Patch\n", {"two.txt": b"2\n"})
    codex.hook("Stop", stop_hook_active=False)
    turns = cli.json("turns", "--session", codex.session_id)["sessions"][0]["turns"]
    assert [[f["path"] for f in t["files"]] for t in turns] == [["one.txt"], ["two.txt"]]
    cli("rewind", "2", "--session", codex.session_id, "--yes")
    assert (ws / "one.txt").exists() and not (ws / "two.txt").exists()


def test_compaction_inside_a_codex_turn_stays_in_the_turn(ws: Path, home: Path, cli: Cli) -> None:
    codex = FakeCodex(ws, home)
    codex.prompt("long task")
    (ws / "by_shell.txt").write_text("x\n")  # a shell edit not yet scanned
    codex.hook("SessionStart", source="compact")
    codex.hook("Stop", stop_hook_active=False)
    listing = cli.json("turns", "--all")
    by_kind = {s["kind"]: s for s in listing["sessions"]}
    assert [f["path"] for f in by_kind["agent"]["turns"][0]["files"]] == ["by_shell.txt"]


def test_a_bad_patch_never_blocks_codex(ws: Path, home: Path) -> None:
    codex = FakeCodex(ws, home)
    codex.prompt("bad")
    proc = codex.hook("PreToolUse", tool_name="apply_patch", tool_input={"command": "garbage"})
    assert b"Begin Patch" in proc.stderr


def test_a_rollout_without_the_turn_is_refused_and_nothing_is_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from rewind_ls.core.agents.codex import rollout as codex_rollout
    from rewind_ls.core.errors import RewindError

    home = tmp_path / "codex"
    rollout = home / "sessions" / "2026" / "11" / "23" / "rollout-x-abc.jsonl"
    rollout.parent.mkdir(parents=True)
    meta = {"type": "session_meta", "payload": {"id": "abc", "session_id": "abc", "cwd": "/p"}}
    start = {"type": "event_msg", "payload": {"type": "task_started", "turn_id": "t1"}}
    rollout.write_text(json.dumps(meta) + "\n" + json.dumps(start) + "\n")
    monkeypatch.setenv("CODEX_HOME", str(home))
    with pytest.raises(RewindError, match="t2"):
        codex_rollout.fork(str(rollout), "t2", "p")
    assert [p.name for p in rollout.parent.iterdir()] == [rollout.name]
    fork = codex_rollout.fork(str(rollout), "t1", "p")
    assert [p.name for p in rollout.parent.iterdir() if p.suffix == ".jsonl"] == [rollout.name]
    fork.staged.publish()  # fork_turn publishes it once the store has adopted the fork
    lines = [json.loads(x) for x in Path(fork.path).read_text().splitlines()]
    assert lines == [
        {
            "type": "session_meta",
            "payload": {
                **meta["payload"],
                "id": fork.session_id,
                "session_id": fork.session_id,
            },
        }
    ]
    assert fork.resume_command == f"cd /p && codex resume {fork.session_id}"


def test_interrupt_ends_the_turn_and_its_shell_run(ws: Path, home: Path, cli: Cli) -> None:
    """Issue #24: Codex fires `Interrupt` when the person stops a turn (0.169.0 has no StopFailure
    or PostToolUseFailure). It closes the turn with what its interrupted shell command wrote, so
    the person's edit afterwards is external, and its shell run no longer holds other sessions'
    changes back."""
    (ws / "notes.txt").write_text("original\n")
    codex = FakeCodex(ws, home)
    codex.hook("SessionStart", source="startup")
    codex.prompt("build")
    codex.hook("PreToolUse", tool_name="Bash", tool_input={"command": "make"}, tool_use_id="c1")
    (ws / "built.txt").write_text("half\n")
    codex.hook("Interrupt")
    (ws / "notes.txt").write_text("fixed by hand\n")
    listing = cli.json("turns", "--all")
    by_kind: dict[str, list[str]] = {}
    for s in listing["sessions"]:
        for t in s["turns"]:
            by_kind.setdefault(s["kind"], []).extend(f["path"] for f in t["files"])
    (codex_session,) = [s for s in listing["sessions"] if s["id"] == codex.session_id]
    assert [f["path"] for f in codex_session["turns"][0]["files"]] == ["built.txt"]
    assert codex_session["turns"][0]["endedAt"] is not None
    assert "notes.txt" not in by_kind.get("agent", [])


@pytest.mark.parametrize("commit", [1, 2, 3, 4])
def test_a_prompt_hook_run_again_after_dying_opens_one_turn(
    ws: Path, home: Path, cli: Cli, commit: int
) -> None:
    """UserPromptSubmit killed at one of its commits, then run again with the same payload (the
    hook server's client does when its child died): one turn, with the prompt."""
    codex = FakeCodex(ws, home)
    codex.hook("SessionStart", source="startup")
    codex.turn_id = "turn-1"
    payload = {
        "session_id": codex.session_id,
        "turn_id": codex.turn_id,
        "transcript_path": None,
        "cwd": str(ws),
        "hook_event_name": "UserPromptSubmit",
        "prompt": "keep me once",
    }

    def hook(env: dict[str, str]) -> subprocess.CompletedProcess[bytes]:
        return subprocess.run(
            [sys.executable, "-m", "rewind_ls", "hook", "codex"],
            input=json.dumps(payload).encode(),
            env={**os.environ, **codex.env, **env},
            capture_output=True,
            timeout=60,
        )

    assert hook({"REWIND_LS_FAULT": f"after-commit:{commit}"}).returncode in (0, 137)
    again = hook({})
    assert again.returncode == 0 and not again.stderr, again.stderr
    codex.patch("*** Begin Patch\n*** Add File: a.txt\n+x\n*** End Patch\n", {"a.txt": b"x\n"})
    codex.hook("Stop")
    turns = cli.json("turns", "--session", codex.session_id)["sessions"][0]["turns"]
    assert [t["prompt"] for t in turns] == ["keep me once"], turns


def test_every_codex_hook_delivered_twice_records_each_turn_once(
    ws: Path, home: Path, cli: Cli
) -> None:
    """Issue #38 item 2 for Codex: every hook delivered twice at once (two installs); each
    `turn_id` is one turn holding its shell command's file."""
    from tests.support.agent import run_hook_twice

    codex = FakeCodex(ws, home)
    argv = [sys.executable, "-m", "rewind_ls", "hook", "codex"]

    def twice(event: str, **fields: Any) -> None:
        payload = {
            "session_id": codex.session_id,
            "turn_id": codex.turn_id,
            "transcript_path": None,
            "cwd": str(ws),
            "hook_event_name": event,
            "model": "gpt-5.5",
            "permission_mode": "bypassPermissions",
            **fields,
        }
        run_hook_twice(payload, codex.env, argv)

    (ws / "seed.txt").write_text("seed\n")
    twice("SessionStart", source="startup")
    for n in range(1, 4):
        codex.turn_id = f"turn-{n}"
        twice("UserPromptSubmit", prompt=f"prompt {n}")
        bash = {"command": f"echo {n} > out{n}.txt"}
        twice("PreToolUse", tool_name="Bash", tool_input=bash, tool_use_id=f"call_{n}")
        (ws / f"out{n}.txt").write_text(f"{n}\n")
        twice("PostToolUse", tool_name="Bash", tool_input=bash, tool_use_id=f"call_{n}")
        twice("Stop")
    turns = cli.json("turns", "--session", codex.session_id)["sessions"][0]["turns"]
    assert [t["prompt"] for t in turns] == ["prompt 1", "prompt 2", "prompt 3"]
    assert [[f["path"] for f in t["files"]] for t in turns] == [
        ["out1.txt"],
        ["out2.txt"],
        ["out3.txt"],
    ]


def test_the_turns_hint_names_a_session_by_a_prefix_no_other_shares(
    ws: Path, home: Path, cli: Cli
) -> None:
    """Issue #38 item 6: Codex session ids are UUIDv7 (time first), so two sessions a minute
    apart share their first 8 characters. The hint `turns` prints for the other live session
    works as printed."""
    first, second = FakeCodex(ws, home), FakeCodex(ws, home)
    first.session_id = "019ac1f2-7d31-7c4e-9a55-3f0c2b1e6a01"
    second.session_id = "019ac1f2-9b02-7e11-8c3d-6a7f0e2d4b02"
    for codex, name in ((first, "a"), (second, "b")):
        codex.turn_id = f"turn-{name}"
        codex.hook("SessionStart", source="startup")
        codex.hook("UserPromptSubmit", prompt=f"prompt {name}")
        (ws / f"{name}.txt").write_text(name)
        bash = {"command": f"echo {name} > {name}.txt"}
        codex.hook("PreToolUse", tool_name="Bash", tool_input=bash, tool_use_id=f"c-{name}")
        codex.hook("PostToolUse", tool_name="Bash", tool_input=bash, tool_use_id=f"c-{name}")
    out = cli("turns").stdout
    hint = out.split("see it with: ")[1].split("  (or --all)")[0]
    assert hint == "rewind-ls turns --session 019ac1f2-7", out
    shown = cli(*hint.split()[1:]).stdout
    assert "a.txt" in shown and "b.txt" not in shown
