"""The traces an editor leaves beside a file or in Neovim's swap folder, as a restore of many files
looks for them (each folder listed once, a path without a trace passed over): every kind of trace
still makes its path a conflict, and only its path. The real editors: tests/editors/test_editor_traces.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from rewind_ls.core.model import FILE, RestoreMode, Turn, TurnState, Version
from rewind_ls.core.restore.editor_traces import mark_unsaved_elsewhere
from rewind_ls.core.restore.plan import PathPlan, Plan


def _dirty_swap(path: Path) -> None:
    block0 = bytearray(b"b0" + bytes(1100))
    block0[1007] = 0x55
    path.write_bytes(bytes(block0))


def _plan(paths: list[str]) -> Plan:
    turn = Turn("t", "s", 1, 1, "p", 0.0, None, TurnState.CLOSED, None)
    plan = Plan(RestoreMode.REWIND, turn, "")
    for p in paths:
        pp = PathPlan(p, Version(FILE, "0" * 64, 0o644, 1), b"x")
        pp.set_target(Version(FILE, "1" * 64, 0o644, 1), b"y")
        plan.paths.append(pp)
    return plan


@pytest.mark.parametrize("trace", ["emacs-lock", "vim-swap-beside", "nvim-swap-folder"])
def test_each_trace_makes_only_its_path_a_conflict(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, trace: str
) -> None:
    root = tmp_path / "ws"
    (root / "sub").mkdir(parents=True)
    names = [f"sub/f{i}.txt" for i in range(50)]
    for n in names:
        (root / n).write_text("x")
    state = tmp_path / "state"
    (state / "nvim" / "swap").mkdir(parents=True)
    monkeypatch.setenv("XDG_STATE_HOME", str(state))
    held = root / "sub" / "f7.txt"
    if trace == "emacs-lock":
        (root / "sub" / ".#f7.txt").symlink_to("me@host.123:456")
    elif trace == "vim-swap-beside":
        _dirty_swap(root / "sub" / ".f7.txt.swo")
    else:
        _dirty_swap(state / "nvim" / "swap" / (str(held).replace("/", "%") + ".swp"))
    plan = _plan(names)
    mark_unsaved_elsewhere(plan, str(root))
    conflicted = [pp.path for pp in plan.paths if pp.conflict is not None]
    assert conflicted == ["sub/f7.txt"]
