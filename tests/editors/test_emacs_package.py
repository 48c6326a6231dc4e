"""editors/emacs/rewind-ls.el in a real Emacs 28 (batch), with lsp-mode and with eglot: loaded as its
header says (load path + require), with no client setup of the person's; every command starts the
connection itself. The rewind is previewed in *rewind-preview* (diff-mode) and asked with
read-multiple-choice; the restored buffer is saved (disk and buffer agree); the message names the
Emacs command that undoes it; M-x rewind-ls picks a turn by its own number."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from tests.support.agent import FakeClaude  # noqa: E402

pytestmark = pytest.mark.editor


def _run(
    client: str,
    ws: Path,
    home: Path,
    out: Path,
    driver: str = "package-driver.el",
    **extra_env: str,
) -> dict[str, Any]:
    emacs = shutil.which("emacs")
    if emacs is None:
        pytest.fail("emacs is not installed: run scripts/install-emacs-env.sh")
    bindir = str(Path(sys.executable).parent)
    env = {
        **os.environ,
        "PATH": bindir + os.pathsep + os.environ.get("PATH", ""),
        "PYTHONPATH": str(REPO),
        "REWIND_LS_HOME": str(home),
        "CLAUDE_CONFIG_DIR": str(home / "claude"),
        "HOME": str(home / "emacs-home"),
        "RT_ROOT": str(ws),
        "RT_OUT": str(out),
        **extra_env,
    }
    (home / "emacs-home").mkdir(parents=True, exist_ok=True)
    setup = "(setq rewind-ls-client '%s)" % ("lsp-mode" if client == "lsp" else "eglot")
    if client == "lsp":
        # What a person's lsp-mode setup has (else lsp-mode asks where the project is).
        setup += (
            " (require 'lsp-mode) (require 'lsp-modeline nil t) (require 'lsp-headerline nil t)"
            " (setq lsp-auto-guess-root t lsp-enable-file-watchers nil"
            " lsp-headerline-breadcrumb-enable nil lsp-modeline-code-actions-enable nil"
            " lsp-modeline-diagnostics-enable nil"
            f" lsp-session-file {json.dumps(str(home / 'lsp-session'))})"
        )
    proc = subprocess.run(
        [
            *(emacs, "--batch", "-L", str(REPO / "editors" / "emacs")),
            *("--eval", f"(progn {setup})"),
            *("-l", str(HERE / "emacs" / driver)),
        ],
        cwd=ws,
        env=env,
        stdin=subprocess.DEVNULL,  # a question the driver does not script fails instead of waiting
        capture_output=True,
        text=True,
        timeout=180,
    )
    if not out.exists():
        raise AssertionError(f"emacs wrote no result ({proc.returncode}):\n{proc.stderr[-4000:]}")
    result: dict[str, Any] = json.loads(out.read_text())
    assert result["failure"] is None, (
        f"{result['failure']}\n{result.get('questions')}\n{proc.stderr[-4000:]}"
    )
    return result


@pytest.mark.parametrize("client", ["lsp", "eglot"])
def test_emacs_package(client: str, tmp_path: Path) -> None:
    ws, home = tmp_path / "ws", tmp_path / "home"
    ws.mkdir()
    subprocess.run(["git", "init", "-q", str(ws)], check=True)
    (ws / "a.txt").write_text("a0\n")
    agent = FakeClaude(ws, home)
    agent.turn("first: edit a", {"a.txt": "a1\n"})
    agent.turn("second: a and a new b", {"a.txt": "a2\n", "b.txt": "b2\n"})

    result = _run(client, ws, home, tmp_path / "result.json")
    steps = {s["step"]: s for s in result["steps"]}
    questions = result["questions"]
    # The turn asked by its own number; the preview in diff-mode before anything is written.
    assert questions[0]["answer"] == "#1" and "#2  second: a and a new b" in questions[0]["choices"]
    assert questions[1]["choices"] == ["yes", "cancel"], questions[1]
    cancelled = steps["cancelled"]
    assert cancelled["disk_a"] == "a2\n" and cancelled["disk_b"] == "b2\n"
    assert cancelled["preview_mode"] == "diff-mode", cancelled
    assert "modify" in cancelled["preview"] and "a.txt  +1 -1" in cancelled["preview"]
    assert "delete" in cancelled["preview"] and "b.txt" in cancelled["preview"]
    # Its diff is what the rewind writes (now -> before turn 1), not what turn 1 changed.
    assert "-a2\n+a0" in cancelled["preview"] and "-b2" in cancelled["preview"], cancelled
    # Rewound: disk written, the open buffer saved (not left modified).
    rewound = steps["rewound"]
    assert rewound["disk_a"] == "a0\n" and rewound["disk_b"] is None, rewound
    assert rewound["buffer_a"] == "a0\n" and not rewound["modified_a"], rewound
    assert any("M-x rewind-ls-undo" in m and "restored" in m for m in result["messages"])
    assert not any("rewind.undo" in m for m in result["messages"]), result["messages"]
    # Undone.
    undone = steps["undone"]
    assert undone["disk_a"] == "a2\n" and undone["disk_b"] == "b2\n", undone
    assert undone["buffer_a"] == "a2\n" and not undone["modified_a"], undone
    # M-x rewind-ls -> #2 -> diff: a diff-mode buffer with the turn's change.
    diff = steps["diff"]
    assert diff["mode"] == "diff-mode" and "+b2" in diff["text"], diff
    # The timeline: RET on turn 2's line, then diff (what lenses offer elsewhere).
    timeline = steps["timeline-diff"]
    assert "+b2" in timeline["text"], timeline
    assert (ws / "a.txt").read_bytes() == b"a2\n"


def _first_checkpoint_running(tmp_path: Path) -> tuple[Path, Path, Path, subprocess.Popen[str]]:
    """A workspace with one turn whose first checkpoint a worker is taking: its progress file
    says 1500 of 4000, and the worker, as the others see it, is a process holding its lock (the
    test kills it). Returns the workspace, the home, the progress file and that process."""
    from rewind_ls.core.capture import baseline_spawn
    from rewind_ls.core.store import Store

    ws, home = tmp_path / "ws", tmp_path / "home"
    ws.mkdir()
    subprocess.run(["git", "init", "-q", str(ws)], check=True)
    (ws / "a.txt").write_text("a0\n")
    agent = FakeClaude(ws, home)
    agent.turn("first: edit a", {"a.txt": "a1\n"})
    with Store.open(str(ws), home=str(home)) as store:
        store_path = store.path
    wdir = Path(baseline_spawn.worker_dir(store_path))
    wdir.mkdir(parents=True, exist_ok=True)
    progress = wdir / baseline_spawn.PROGRESS
    progress.write_text("1500 4000\n")
    hold = (
        "import fcntl, os, sys, time; fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o600); "
        "fcntl.flock(fd, fcntl.LOCK_EX); print('locked', flush=True); time.sleep(600)"
    )
    worker = subprocess.Popen(
        [sys.executable, "-c", hold, str(wdir / baseline_spawn.LOCK)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert worker.stdout is not None and worker.stdout.readline().strip() == "locked"
    except BaseException:
        worker.kill()
        raise
    return ws, home, progress, worker


@pytest.mark.parametrize("client", ["lsp", "eglot"])
def test_emacs_shows_the_first_checkpoint_while_it_runs(client: str, tmp_path: Path) -> None:
    """#29: while the first checkpoint of a large workspace runs in the background (a worker holds
    its lock; `baseline` of rewind/listTurns), the mode line says "[rewind: first checkpoint N/M]",
    as do the turn prompt and the timeline's header line; Emacs asks again every
    `rewind-ls-baseline-poll` seconds (the server sends no notification), so the figure moves
    without a command, and goes away when the worker is done."""
    ws, home, progress, worker = _first_checkpoint_running(tmp_path)
    try:
        result = _run(
            client,
            ws,
            home,
            tmp_path / "result.json",
            "progress-driver.el",
            RT_PROGRESS=str(progress),
            RT_WORKER_PID=str(worker.pid),
        )
    finally:
        worker.kill()
        worker.wait()
    steps = {s["step"]: s for s in result["steps"]}
    assert "first checkpoint" not in steps["opened"]["mode_line"], steps["opened"]
    running = steps["running"]
    assert "[rewind: first checkpoint 1500/4000]" in running["mode_line"], running
    assert running["header"] == (
        "First checkpoint of this workspace in progress (1500 of 4000 files), in the background: "
        "a rewind keeps every file not recorded yet as it is."
    ), running
    assert result["prompts"][0] == "Diff of turn [first checkpoint 1500/4000 in progress]: "
    assert "[rewind: first checkpoint 3000/4000]" in steps["moved on"]["mode_line"]
    done = steps["done"]
    assert "first checkpoint" not in done["mode_line"] and not done["header"], done
    assert "rewind-ls: the first checkpoint of this workspace is complete" in result["messages"]


def test_emacs_in_a_terminal_shows_the_first_checkpoint_on_screen(tmp_path: Path) -> None:
    """The same progress as a person sees it: Emacs in a real terminal (tmux), keystrokes in, the
    screen read back. The mode line (every window's: `global-mode-string` is in
    `mode-line-misc-info`), the timeline's header line, the figure moving on without a key pressed,
    and going away when the worker ends. One client (eglot): what is drawn is the package's own."""
    from tests.support.tmux import TmuxScreen

    ws, home, progress, worker = _first_checkpoint_running(tmp_path)
    (home / "emacs-home").mkdir(parents=True, exist_ok=True)
    env = {
        **os.environ,
        "PATH": str(Path(sys.executable).parent) + os.pathsep + os.environ.get("PATH", ""),
        "PYTHONPATH": str(REPO),
        "REWIND_LS_HOME": str(home),
        "CLAUDE_CONFIG_DIR": str(home / "claude"),
        "HOME": str(home / "emacs-home"),
        "TERM": "xterm-256color",
    }
    setup = "(progn (setq native-comp-deferred-compilation nil) (setq rewind-ls-client 'eglot) (require 'rewind-ls) (setq rewind-ls-baseline-poll 0.2))"
    screen = TmuxScreen("rewind-emacs")
    try:
        screen.start(
            " ".join(
                [
                    "emacs -nw -q",  # -q, not -Q: Debian's site files put elpa-eglot on the load path
                    "-L",
                    json.dumps(str(REPO / "editors" / "emacs")),
                    "--eval",
                    json.dumps(setup),
                    "a.txt",
                ]
            ),
            ws,
            env,
        )
        opened = screen.wait_for("a.txt")
        assert "first checkpoint" not in opened, opened  # not connected yet: no command has run
        screen.keys("M-x")
        screen.wait_for("M-x")
        screen.keys("rewind-ls-timeline", "Enter")
        running = screen.wait_for("[rewind: first checkpoint 1500/4000]")
        assert "First checkpoint of this workspace in progress (1500 of 4000 files)" in running, (
            running
        )
        assert "first: edit a" in running, running  # the timeline itself, under its header line
        progress.write_text("3000 4000\n")  # the worker goes on: the screen follows, no key pressed
        screen.wait_for("[rewind: first checkpoint 3000/4000]")
        worker.kill()  # the worker ends: its lock is released
        worker.wait()
        end = time.monotonic() + 30
        while "first checkpoint" in (text := screen.text()) and time.monotonic() < end:
            time.sleep(0.1)
        assert "first checkpoint" not in text and "First checkpoint" not in text, text
        assert "first: edit a" in text, text
    finally:
        worker.kill()
        worker.wait()
        screen.close()


@pytest.mark.parametrize("client", ["lsp", "eglot"])
def test_emacs_undo_over_an_unsaved_buffer_returns_it_unsaved(client: str, tmp_path: Path) -> None:
    """Issue 36 item 4: a rewind forced over an unsaved buffer, then M-x rewind-ls-undo: the buffer
    holds the unsaved text again, still unsaved, and the disk its last saved bytes (as in VS Code
    and Neovim); the unsaved text was never written to disk."""
    ws, home = tmp_path / "ws", tmp_path / "home"
    ws.mkdir()
    subprocess.run(["git", "init", "-q", str(ws)], check=True)
    (ws / "a.txt").write_text("a0\n")
    agent = FakeClaude(ws, home)
    agent.turn("first: edit a", {"a.txt": "a1\n"})
    agent.turn("second: a and a new b", {"a.txt": "a2\n", "b.txt": "b2\n"})

    result = _run(client, ws, home, tmp_path / "result.json", "unsaved-driver.el")
    steps = {s["step"]: s for s in result["steps"]}
    typed = steps["typed"]
    assert typed["buffer_a"] == "mine\na2\n" and typed["modified_a"], typed
    rewound = steps["rewound"]
    assert rewound["disk_a"] == "a0\n" and rewound["buffer_a"] == "a0\n", rewound
    undone = steps["undone"]
    assert undone["disk_a"] == "a2\n", undone  # the last saved bytes, not the unsaved text
    assert undone["buffer_a"] == "mine\na2\n" and undone["modified_a"], undone
    assert undone["disk_b"] == "b2\n", undone
    assert any("unsaved edits in a.txt are back, not saved" in m for m in result["messages"]), (
        result["messages"]
    )


BASE = "".join(f"line {i}\n" for i in range(1, 31))
TURN1 = BASE.replace("line 2\n", "TWO\n").replace("line 15\n", "FIFTEEN\n")
TURN1 = TURN1.replace("line 28\n", "X28\n")
TURN2 = TURN1.replace("line 8\n", "EIGHT\n")


@pytest.mark.parametrize("client", ["lsp", "eglot"])
def test_emacs_code_action_is_previewed_and_saved(client: str, tmp_path: Path) -> None:
    """Issue 36 item 3: "Revert this change" run from the client's own code-action command goes
    through the package's flow: the preview (the file, the turn's diff) asked first, the hunk
    reverted, the buffer saved like after every other restore; the undo brings it back."""
    ws, home = tmp_path / "ws", tmp_path / "home"
    ws.mkdir()
    subprocess.run(["git", "init", "-q", str(ws)], check=True)
    (ws / "a.txt").write_text(BASE)
    agent = FakeClaude(ws, home)
    agent.turn("make the numbers words", {"a.txt": TURN1})
    agent.turn("and eight", {"a.txt": TURN2})

    result = _run(client, ws, home, tmp_path / "result.json", "action-driver.el")
    steps = {s["step"]: s for s in result["steps"]}
    want = TURN2.replace("FIFTEEN\n", "line 15\n")
    asked = [q for q in result["questions"] if q["choices"] == ["yes", "cancel"]]
    assert asked and "Revert hunk 2 of turn #1 in a.txt" in asked[0]["prompt"], result["questions"]
    assert "modify" in asked[0]["preview"] and "a.txt" in asked[0]["preview"], asked[0]
    reverted = steps["reverted"]
    assert reverted["buffer_a"] == want and reverted["disk_a"] == want, reverted
    assert not reverted["modified_a"], reverted  # saved, like every restore
    undone = steps["undone"]
    assert undone["disk_a"] == TURN2 and undone["buffer_a"] == TURN2, undone
    assert not undone["modified_a"], undone
    # Issue 36 item 9: no false "partial restore" (eglot's late didChange is sent while the
    # package waits), and no second question from the client ("Server wants to edit").
    messages = result["messages"]
    assert not any("partial" in m or "y-or-n-p" in m for m in messages), messages


@pytest.mark.parametrize("client", ["lsp", "eglot"])
def test_emacs_readme_install_lines_work_on_emacs_28_as_written(
    client: str, tmp_path: Path
) -> None:
    """Issue 36 item 10: the first elisp block of editors/emacs/README.md, as written (the clone's
    path put in for /path/to/rewind-ls), in Emacs 28 with no init file: the package loads and its
    first command connects and lists the turns."""
    readme = (REPO / "editors" / "emacs" / "README.md").read_text()
    block = readme.split("```elisp\n", 1)[1].split("```", 1)[0]
    assert "/path/to/rewind-ls" in block and "use-package" not in block, block
    init = tmp_path / "init.el"
    init.write_text(block.replace("/path/to/rewind-ls", str(REPO)))
    ws, home = tmp_path / "ws", tmp_path / "home"
    ws.mkdir()
    subprocess.run(["git", "init", "-q", str(ws)], check=True)
    (ws / "a.txt").write_text("a0\n")
    FakeClaude(ws, home).turn("first: edit a", {"a.txt": "a1\n"})
    (home / "emacs-home").mkdir(parents=True, exist_ok=True)
    setup = "(setq rewind-ls-client '%s)" % ("lsp-mode" if client == "lsp" else "eglot")
    if client == "lsp":
        setup += f" (setq lsp-auto-guess-root t lsp-session-file {json.dumps(str(home / 'ls'))})"
    probe = (
        f"(progn {setup} (find-file {json.dumps(str(ws / 'a.txt'))})"
        ' (princ (format "turns=%s\\n" (length (rewind-ls--turns)))))'
    )
    emacs = shutil.which("emacs")
    assert emacs, "emacs is not installed: run scripts/install-emacs-env.sh"
    proc = subprocess.run(
        [emacs, "--batch", "-l", str(init), "--eval", probe],
        cwd=ws,
        env={
            **os.environ,
            "PATH": str(Path(sys.executable).parent) + os.pathsep + os.environ.get("PATH", ""),
            "PYTHONPATH": str(REPO),
            "REWIND_LS_HOME": str(home),
            "CLAUDE_CONFIG_DIR": str(home / "claude"),
            "HOME": str(home / "emacs-home"),
        },
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert "turns=1" in proc.stdout, f"{proc.returncode}\n{proc.stdout}\n{proc.stderr[-3000:]}"
    version = subprocess.run([emacs, "--version"], capture_output=True, text=True).stdout
    assert version.startswith("GNU Emacs 28"), version  # the oldest Emacs the package supports


@pytest.mark.parametrize("client", ["lsp", "eglot"])
def test_emacs_skipped_conflict_is_left_unsaved_and_not_called_restored(
    client: str, tmp_path: Path
) -> None:
    """Issue 36 item 9: a rewind over an unsaved buffer, the conflict skipped: the buffer keeps its
    unsaved text, unsaved (it was saved to disk before), the disk keeps its bytes, and the message
    names it as left alone, not as restored."""
    ws, home = tmp_path / "ws", tmp_path / "home"
    ws.mkdir()
    subprocess.run(["git", "init", "-q", str(ws)], check=True)
    (ws / "a.txt").write_text("a0\n")
    agent = FakeClaude(ws, home)
    agent.turn("first: edit a", {"a.txt": "a1\n"})
    agent.turn("second: a and a new b", {"a.txt": "a2\n", "b.txt": "b2\n"})

    result = _run(client, ws, home, tmp_path / "result.json", "skip-driver.el")
    skipped = {s["step"]: s for s in result["steps"]}["skipped"]
    assert skipped["disk_b"] is None, skipped  # restored: b.txt did not exist before turn 1
    assert skipped["disk_a"] == "a2\n", skipped  # left alone...
    assert skipped["buffer_a"] == "mine\na2\n" and skipped["modified_a"], skipped  # ...unsaved
    said = [m for m in result["messages"] if "Rewind to before turn #1:" in m]
    assert said and "restored b.txt" in said[-1] and "restored a.txt" not in said[-1], said
    assert "left as they are: a.txt" in said[-1], said


@pytest.mark.parametrize("client", ["lsp", "eglot"])
def test_emacs_newcomer_path(client: str, tmp_path: Path) -> None:
    """Issue 36, done-when: the whole path a newcomer takes with the package: review a turn,
    rewind, undo, revert one change (the code action), undo, a conflict on undo answered in the
    editor (overwrite), then the undo of that undo and its undo: every file byte-exact as before,
    the buffer as before and saved; no message naming a flag or a protocol id."""
    ws, home = tmp_path / "ws", tmp_path / "home"
    ws.mkdir()
    subprocess.run(["git", "init", "-q", str(ws)], check=True)
    (ws / "a.txt").write_text(BASE)
    agent = FakeClaude(ws, home)
    agent.turn("make the numbers words", {"a.txt": TURN1, "notes.txt": "notes 1\n"})
    agent.turn("and eight", {"a.txt": TURN2})
    before = {p.name: p.read_bytes() for p in ws.iterdir() if p.is_file()}

    result = _run(client, ws, home, tmp_path / "result.json", "newcomer-driver.el")
    steps = {s["step"]: s for s in result["steps"]}
    reverted = TURN2.replace("FIFTEEN\n", "line 15\n")
    want = {
        "rewound": BASE,
        "undone": TURN2,
        "reverted": reverted,
        "revert-undone": TURN2,
        "saved-mine": "mine\n" + BASE,
        "overwritten": TURN2,
        "mine-back": "mine\n" + BASE,
        "end": TURN2,
    }
    for name, text in want.items():
        step = steps[name]
        assert step["disk_a"] == text and step["buffer_a"] == text, (name, step)
        assert not step["modified_a"], (name, step)
    conflict = [q for q in result["questions"] if "overwrite" in q["choices"]]
    assert conflict and "conflict" in conflict[0]["preview"], result["questions"]
    assert {p.name: p.read_bytes() for p in ws.iterdir() if p.is_file()} == before
    flag = re.compile(r"--(force|skip-conflicts|merge|scope|path|yes)\b|rewind\.undo")
    assert not [m for m in result["messages"] if flag.search(m)], result["messages"]
