"""The docs' picture of the CLI's turn picker, made from the real thing: `rewind-ls` with no command
runs in a tmux pane (its own tmux server on a private socket) over a workspace with three recorded
turns; the pane, colours included (`capture-pane -e`), is rendered to SVG with rich and saved as
test-artifacts/cli-picker.svg, which the docs build publishes (scripts/docs/hooks.py). The VS Code
screenshots come from tests/editors the same way."""

from __future__ import annotations

import io
import shutil
import subprocess
import sys
import time
from pathlib import Path

from rich.console import Console
from rich.text import Text

from tests.conftest import Cli
from tests.support.agent import FakeClaude

ARTIFACTS = Path(__file__).resolve().parents[1] / "test-artifacts"
WIDTH, HEIGHT = 100, 26


def _tmux(sock: Path, *args: str, env: dict[str, str] | None = None) -> str:
    proc = subprocess.run(
        ["tmux", "-S", str(sock), "-f", "/dev/null", *args],
        capture_output=True,
        text=True,
        timeout=30,
        env=env,
    )
    assert proc.returncode == 0, f"tmux {' '.join(args)}: {proc.stderr}"
    return proc.stdout


def _wait_for(sock: Path, text: str, timeout: float = 60) -> str:
    """The pane's text once it shows `text` (a loaded machine may take a while to start Python)."""
    deadline = time.monotonic() + timeout
    screen = ""
    while time.monotonic() < deadline:
        screen = _tmux(sock, "capture-pane", "-p", "-t", "pick")
        if text in screen:
            return screen
        time.sleep(0.2)
    raise AssertionError(f"the picker never showed {text!r}; the pane:\n{screen}")


def to_svg(ansi: str, title: str) -> str:
    """A terminal's text with its colour escapes, as an SVG of a terminal window."""
    console = Console(
        record=True, width=WIDTH, file=io.StringIO(), force_terminal=True, color_system="truecolor"
    )
    console.print(Text.from_ansi(ansi), end="")
    return console.export_svg(title=title)


def test_picker_picture_from_tmux(ws: Path, agent: FakeClaude, cli: Cli, tmp_path: Path) -> None:
    assert shutil.which("tmux"), "tmux is missing: run `bash scripts/install-docs-env.sh`"
    (ws / "app.py").write_bytes(b"def hello():\n    print('hello')\n")
    agent.turn(
        "add a farewell function",
        {"app.py": b"def hello():\n    print('hello')\n\n\ndef bye():\n    print('bye')\n"},
    )
    agent.turn("write a README and config", {"README.md": b"# app\n", "config.toml": b"x = 1\n"})
    agent.turn(
        "drop the config, rename hello",
        {"config.toml": None, "app.py": b"def hi():\n    print('hello')\n\n\ndef bye():\n"},
    )
    sock = tmp_path / "tmux.sock"
    env = {k: v for k, v in cli.env.items() if k != "NO_COLOR"}
    command = f"{sys.executable} -m rewind_ls"
    _tmux(sock, "new-session", "-d", "-s", "pick", "-x", str(WIDTH), "-y", str(HEIGHT),
          "-c", str(ws), command, env=env)  # fmt: skip
    try:
        screen = _wait_for(sock, "preview of turn 3")
        time.sleep(0.5)  # the preview's diff is drawn after its title
        screen = _tmux(sock, "capture-pane", "-p", "-t", "pick")
        ansi = _tmux(sock, "capture-pane", "-p", "-e", "-t", "pick")
    finally:
        subprocess.run(["tmux", "-S", str(sock), "kill-server"], capture_output=True, timeout=30)
    # The picture shows the picker as a person sees it: the newest turn first and highlighted, its
    # diff, in colour.
    assert "drop the config, rename hello" in screen and "add a farewell function" in screen
    assert screen.index("drop the config") < screen.index("add a farewell")
    assert "+def hi():" in screen
    assert "\x1b[" in ansi, "no colour in the pane"
    svg = to_svg(ansi.rstrip("\n"), "rewind-ls")
    assert svg.startswith("<svg") and "rename" in svg
    ARTIFACTS.mkdir(exist_ok=True)
    (ARTIFACTS / "cli-picker.svg").write_text(svg)
