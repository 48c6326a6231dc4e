"""`:Rewind browse {n} [after]` in a real Neovim: the workspace at a turn as read-only listing
buffers (<CR> opens, `-` goes up) and file buffers (gf follows a path as it was at that turn),
filled from `rewind/listFolder` and `rewind/fileAt`; the workspace untouched."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).resolve().parent
for p in (HERE, HERE.parent):
    if str(p) not in sys.path:
        sys.path.insert(0, str(p))

from test_nvim import editor, make_agent, workspace  # noqa: E402, F401

pytestmark = pytest.mark.editor

APP0 = "# helpers: lib/util.py\nprint('v0')\n"
UTIL = "def util():\n    return 1\n"

CURRENT = """
local b = vim.api.nvim_get_current_buf()
return { name = vim.api.nvim_buf_get_name(b), lines = vim.api.nvim_buf_get_lines(b, 0, -1, false),
  modifiable = vim.bo[b].modifiable, buftype = vim.bo[b].buftype, filetype = vim.bo[b].filetype }
"""


def current(ed: Any, name_end: str) -> dict[str, Any]:
    """The current buffer, once its name ends with `name_end` (a listing loads after the command)."""
    ed.nv.wait_for(
        f"vim.endswith(vim.api.nvim_buf_get_name(0), {name_end!r})",
        what=f"a buffer named …{name_end}",
    )
    return ed.nv.luajson(CURRENT)


def press(ed: Any, line: str, keys: str) -> None:
    """Puts the cursor on the first line equal to `line` (or containing it) and types `keys`."""
    ed.nv.lua(
        "local want = ... for i, l in ipairs(vim.api.nvim_buf_get_lines(0, 0, -1, false)) do"
        " if l == want or l:find(want, 1, true) then vim.api.nvim_win_set_cursor(0, { i, l:find(want, 1, true) - 1 })"
        " return end end error('no line ' .. want)",
        line,
    )
    ed.nv.command(f'exe "normal {keys}"')


def test_browse_a_turn_read_only(workspace: tuple[Path, Path], editor: Any) -> None:  # noqa: F811
    ws, home = workspace
    (ws / "src").mkdir()
    (ws / "lib").mkdir()
    (ws / "src" / "app.py").write_text(APP0)
    (ws / "lib" / "util.py").write_text(UTIL)
    (ws / "top.txt").write_text("top\n")
    agent = make_agent(ws, home)
    agent.turn("edit app", {"src/app.py": "print('v1')\n"})
    agent.hook("UserPromptSubmit", prompt="drop lib")
    agent.shell("rm -rf lib")
    agent.hook("Stop", stop_hook_active=False)
    before = {p: p.read_bytes() for p in ws.rglob("*") if p.is_file()}
    ed = editor()
    ed.open("top.txt")

    last = ed.run("Rewind browse 1")
    assert last["status"] == "shown", last
    root = current(ed, "/before/")
    assert root["name"].startswith("rewind-turn://") and root["buftype"] == "nofile"
    assert root["lines"][0].startswith('" Turn #1, its start')
    assert root["lines"][1:] == ["lib/", "src/", "top.txt"]
    assert root["modifiable"] is False and root["filetype"] == "rewindbrowse"

    press(ed, "src/", "\\<CR>")
    src = current(ed, "/before/src/")
    assert src["lines"][1:] == ["../", "app.py"]
    press(ed, "app.py", "\\<CR>")
    app = current(ed, "/before/src/app.py")
    assert app["lines"] == APP0.splitlines() and app["filetype"] == "python"
    assert app["modifiable"] is False
    press(ed, "lib/util.py", "gf")  # the path as it was at turn 1: lib/ is gone now
    util = current(ed, "/before/lib/util.py")
    assert util["lines"] == UTIL.splitlines()
    ed.nv.lua("vim.cmd.edit(vim.fn.fnameescape(...))", src["name"])  # :edit works on the names
    press(ed, "../", "-")
    assert current(ed, "/before/")["lines"][1:] == ["lib/", "src/", "top.txt"]

    # Turn 2 at its end: lib/ went with the shell command.
    ed.run("Rewind browse 2 after")
    end = current(ed, "/after/")
    assert end["lines"][0].startswith('" Turn #2, its end') and end["lines"][1:] == [
        "src/",
        "top.txt",
    ]
    assert {p: p.read_bytes() for p in ws.rglob("*") if p.is_file()} == before
    assert not ed.nv.luajson(
        "local out = {} for _, b in ipairs(vim.api.nvim_list_bufs()) do"
        " if vim.bo[b].modified then out[#out + 1] = vim.api.nvim_buf_get_name(b) end end"
        " return out"
    )
