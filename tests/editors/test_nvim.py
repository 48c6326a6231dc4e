"""The Neovim plugin (editors/nvim) in a real headless Neovim 0.11 against the real server.

Agent turns are recorded through the real Claude Code hook (tests/support/agent.py). Neovim runs
with tests/editors/nvim/minimal_init.lua: the plugin from this repository, the server command
`[sys.executable, "-m", "rewind_ls", "serve"]`, and recording stubs for vim.ui.select/vim.notify so
a test answers pickers by label; every plugin code path (commands, LSP client, the default
workspace/applyEdit handler, writing buffers) is the real one. Waits are bounded polls.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).resolve().parent
for p in (HERE, HERE.parent):  # nvim_support, and support.agent (tests/ has no package __init__)
    if str(p) not in sys.path:
        sys.path.insert(0, str(p))

from nvim_support import REPO, Nvim, nvim_env  # noqa: E402
from support.agent import FakeClaude  # noqa: E402
from support.baseline import first_checkpoint_running, write_progress  # noqa: E402

pytestmark = pytest.mark.editor

OP_TIMEOUT = 60.0


class Editor:
    """One Neovim session on a workspace, with helpers that speak in files and buffers."""

    def __init__(self, nv: Nvim, ws: Path) -> None:
        self.nv = nv
        self.ws = ws

    def open(self, rel: str) -> None:
        """:edit a file and wait until rewind-ls is attached to its buffer and initialized."""
        self.nv.command("edit " + rel)
        state = self.nv.wait_for(
            "(function() local c = vim.lsp.get_clients({ name = 'rewind', bufnr = 0 })[1]"
            " if c ~= nil and c.initialized then return 'attached' end"
            " for _, n in ipairs(_G.rewind_test.notes) do"
            "   if n.msg:find('quit with exit code', 1, true) then return 'server exited' end"
            " end end)()",
            what=f"rewind-ls attached to {rel}",
        )
        assert state == "attached", f"rewind-ls: {state}\n{self.nv.debug_dump()}"
        # The server sets its workspace up after `initialized`; a request sent in that window fails
        # ("no workspace yet", .coordination/nvim-needs.md #1). A person takes longer than that to type
        # a command; the test waits until the server answers.
        self.nv.wait_for(
            "(function() local c = vim.lsp.get_clients({ name = 'rewind', bufnr = 0 })[1]"
            " local r = c:request_sync('rewind/listTurns', vim.empty_dict(), 2000, 0)"
            " return r ~= nil and r.err == nil end)()",
            what="rewind-ls to answer rewind/listTurns",
        )

    def buffers(self) -> dict[str, dict[str, Any]]:
        """Every loaded file buffer: workspace-relative name -> {text, modified}."""
        return (
            self.nv.luajson(  # an empty Lua table arrives as [], so `or {}`
                """
            local out = {}
            for _, b in ipairs(vim.api.nvim_list_bufs()) do
              local name = vim.api.nvim_buf_get_name(b)
              if vim.api.nvim_buf_is_loaded(b) and vim.bo[b].buftype == '' and name ~= '' then
                local lines = vim.api.nvim_buf_get_lines(b, 0, -1, false)
                local text = table.concat(lines, '\\n')
                if vim.bo[b].eol and not (#lines == 1 and lines[1] == '') then
                  text = text .. '\\n'
                end
                out[vim.fn.fnamemodify(name, ':.')] = { text = text, modified = vim.bo[b].modified }
              end
            end
            return out
            """
            )
            or {}
        )

    def set_buffer(self, rel: str, text: str) -> None:
        """An unsaved change by the person: replaces the buffer's text (it stays modified)."""
        lines = text.split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        self.nv.lua(
            "local b = vim.fn.bufnr(...)"
            " vim.api.nvim_buf_set_lines(b, 0, -1, false, select(2, ...))",
            rel,
            lines,
        )

    def status(self) -> dict[str, Any]:
        return self.nv.luajson(
            "local s = require('rewind').status()"
            " return { busy = s.busy, seq = s.seq, last = s.last }"
        )

    def run(self, cmd: str, answers: list[str] | None = None) -> dict[str, Any]:
        """Runs an ex command that starts a rewind operation and waits until it finished."""
        seq = self.status()["seq"]
        self.nv.lua("_G.rewind_test.answers = ...", answers or [])
        self.nv.command(cmd)
        self.nv.wait_for(
            f"require('rewind').status().seq > {seq} and require('rewind').status().busy == nil",
            timeout=OP_TIMEOUT,
            what=f"{cmd} to finish",
        )
        last = self.status()["last"]
        assert last is not None
        return last

    def notes(self) -> list[dict[str, Any]]:
        return self.nv.luajson("return _G.rewind_test.notes")

    def selects(self) -> list[dict[str, Any]]:
        return self.nv.luajson("return _G.rewind_test.selects")

    def clear_records(self) -> None:
        self.nv.lua("_G.rewind_test.notes = {}; _G.rewind_test.selects = {}")


@pytest.fixture
def workspace(tmp_path: Path) -> tuple[Path, Path]:
    ws = tmp_path / "ws"
    ws.mkdir()
    home = tmp_path / "store"
    home.mkdir()
    return ws, home


@pytest.fixture
def editor(tmp_path: Path, workspace: tuple[Path, Path]) -> Iterator[Any]:
    """A factory: call it (after recording turns, if you like) to start Neovim in the workspace."""
    ws, home = workspace
    started: list[Nvim] = []

    def start() -> Editor:
        ntmp = tmp_path / f"nvim{len(started)}"
        ntmp.mkdir()
        nv = Nvim(ws, nvim_env(ntmp, home, user_home(ws)), ntmp)
        started.append(nv)
        return Editor(nv, ws)

    yield start
    for nv in started:
        nv.close()


# The highlight group of the title line of the :Rewind last float (the current window).
LAST_HL = (
    "return vim.api.nvim_buf_get_extmarks(0, vim.api.nvim_create_namespace('rewind.last'), 0, -1,"
    " { details = true })[1][4].hl_group"
)


def user_home(ws: Path) -> Path:
    """$HOME of the agent, the server and Neovim: Claude Code's transcripts live in ~/.claude/projects."""
    home = ws.parent / "userhome"
    home.mkdir(exist_ok=True)
    return home


def make_agent(ws: Path, home: Path) -> FakeClaude:
    """A Claude Code session whose transcript is where Claude Code keeps it (under our $HOME)."""
    agent = FakeClaude(ws, home, transcript_dir=user_home(ws) / ".claude" / "projects" / "ws")
    agent.env["HOME"] = str(user_home(ws))
    return agent


def read(ws: Path, rel: str) -> bytes | None:
    p = ws / rel
    return p.read_bytes() if p.exists() else None


def two_turns(ws: Path, home: Path) -> FakeClaude:
    """a.txt, b.txt exist; turn 1 edits a.txt and creates c.txt; turn 2 edits a.txt and b.txt."""
    (ws / "a.txt").write_bytes(b"a0\n")
    (ws / "b.txt").write_bytes(b"b0\n")
    (ws / "notes.txt").write_bytes(b"my notes\n")
    agent = make_agent(ws, home)
    agent.turn("first prompt: make c", {"a.txt": "a1\n", "c.txt": "c1\n"})
    agent.turn("second prompt: touch b", {"a.txt": "a2\n", "b.txt": "b2\n"})
    return agent


def test_rewind_code_then_undo(workspace: tuple[Path, Path], editor: Any) -> None:
    ws, home = workspace
    two_turns(ws, home)
    ed = editor()
    ed.open("a.txt")  # a file the rewind changes, unmodified
    ed.open("notes.txt")  # a file it does not touch, with an unsaved change
    ed.set_buffer("notes.txt", "my notes\nunsaved line\n")

    last = ed.run("Rewind 1 code")
    assert last["status"] == "applied", last
    bufs = ed.buffers()
    assert bufs["a.txt"] == {"text": "a0\n", "modified": False}  # restored and written
    assert bufs["notes.txt"] == {"text": "my notes\nunsaved line\n", "modified": True}
    assert read(ws, "a.txt") == b"a0\n"
    assert read(ws, "b.txt") == b"b0\n"  # closed: written by the server
    assert read(ws, "c.txt") is None  # created in turn 1: gone
    assert read(ws, "notes.txt") == b"my notes\n"
    assert "c.txt" not in bufs and "b.txt" not in bufs  # no hidden buffers for closed files
    assert any("Rewind to #1" in n["msg"] for n in ed.notes())

    last = ed.run("Rewind undo")
    assert last["status"] == "applied", last
    bufs = ed.buffers()
    assert bufs["a.txt"] == {"text": "a2\n", "modified": False}
    assert bufs["notes.txt"] == {"text": "my notes\nunsaved line\n", "modified": True}
    assert read(ws, "a.txt") == b"a2\n"
    assert read(ws, "b.txt") == b"b2\n"
    assert read(ws, "c.txt") == b"c1\n"
    assert read(ws, "notes.txt") == b"my notes\n"


def test_rewind_open_buffer_with_astral_chars(workspace: tuple[Path, Path], editor: Any) -> None:
    """The edit's positions must match the negotiated encoding (emoji: 2 UTF-16 units, 4 bytes)."""
    ws, home = workspace
    # The server sends a minimal edit (common prefix and suffix kept): its range starts after the
    # emoji on line 1 and ends before the ones on line 2, so a wrong encoding puts it in the wrong place.
    before = "title\nx 😀😀 é OLD 😀 y\nz 😀 OLD2 😀 w\nend\n".encode()
    (ws / "u.txt").write_bytes(before)
    make_agent(ws, home).turn(
        "rewrite u", {"u.txt": "title\nx 😀😀 é NEW 😀 y\nz 😀 NEW2 😀 w\nend\n"}
    )
    ed = editor()
    ed.open("u.txt")
    last = ed.run("Rewind 1 code")
    assert last["status"] == "applied", last
    assert ed.buffers()["u.txt"] == {"text": before.decode(), "modified": False}
    assert read(ws, "u.txt") == before


def test_rewind_with_no_buffer_open(workspace: tuple[Path, Path], editor: Any) -> None:
    """:Rewind starts the server for the cwd's workspace when no file buffer has started it."""
    ws, home = workspace
    two_turns(ws, home)
    ed = editor()
    assert ed.nv.luajson("return #vim.lsp.get_clients({ name = 'rewind' })") == 0
    last = ed.run("Rewind 1")
    assert last["status"] == "applied", last
    assert (read(ws, "a.txt"), read(ws, "b.txt"), read(ws, "c.txt")) == (b"a0\n", b"b0\n", None)
    assert ed.buffers() == {}  # the server wrote the files; no buffer was loaded for them


def test_revert_keeps_later_edit(workspace: tuple[Path, Path], editor: Any) -> None:
    ws, home = workspace
    (ws / "f.txt").write_bytes(b"1\n2\n3\n4\n5\n")
    agent = make_agent(ws, home)
    agent.turn("one", {"f.txt": "ONE\n2\n3\n4\n5\n"})
    agent.turn("two", {"f.txt": "ONE\n2\n3\n4\nFIVE\n", "g.txt": "g\n"})
    agent.turn("three: a later edit", {"f.txt": "ONE\n2\nTHREE\n4\nFIVE\n"})
    ed = editor()
    ed.open("f.txt")

    last = ed.run("Rewind revert 2")
    assert last["status"] == "applied", last
    assert ed.buffers()["f.txt"] == {"text": "ONE\n2\nTHREE\n4\n5\n", "modified": False}
    assert read(ws, "f.txt") == b"ONE\n2\nTHREE\n4\n5\n"
    assert read(ws, "g.txt") is None


def test_picker_summarize_up_to_and_from(workspace: tuple[Path, Path], editor: Any) -> None:
    """The :Rewind menu's summarize choices: a new session with the summary (the `summarizer`
    option, a shell command, reaches the server as REWIND_LS_SUMMARIZER); files untouched."""
    ws, home = workspace
    two_turns(ws, home)
    seen = ws.parent / "seen.txt"
    ed = editor()
    ed.nv.lua(
        "require('rewind').setup(vim.tbl_extend('force', require('rewind.config').options,"
        " { summarizer = ... }))",
        f"cat > {seen}; echo NVIM-SUMMARY",
    )
    ed.open("a.txt")

    def new_session(last: dict[str, Any]) -> list[dict[str, Any]]:
        assert last["status"] == "applied", last
        path = Path(last["result"]["conversation"]["transcriptPath"])
        return [json.loads(x) for x in path.read_text().splitlines()]

    up = new_session(ed.run("Rewind", answers=["#2 ", "Summarize up to here"]))
    assert up[0]["subtype"] == "compact_boundary" and up[1]["isCompactSummary"]
    assert "NVIM-SUMMARY" in up[1]["message"]["content"]
    given = seen.read_text()
    assert "first prompt: make c" in given and "second prompt" not in given, given
    assert "second prompt: touch b" in json.dumps(up[2:])

    down = new_session(ed.run("Rewind", answers=["#2 ", "Summarize from here"]))
    assert down[-1]["isCompactSummary"] and "NVIM-SUMMARY" in down[-1]["message"]["content"]
    assert "second prompt" in seen.read_text()
    assert "second prompt" not in json.dumps(down[:-1])
    assert read(ws, "a.txt") == b"a2\n" and read(ws, "b.txt") == b"b2\n"  # files stay
    notes = [n["msg"] for n in ed.notes()]
    assert any(n.startswith("Conversation summarized up to #2") for n in notes), notes
    assert any(n.startswith("Conversation summarized from #2") for n in notes), notes


def test_picker_code_and_conversation(workspace: tuple[Path, Path], editor: Any) -> None:
    ws, home = workspace
    two_turns(ws, home)
    ed = editor()
    ed.open("a.txt")

    last = ed.run("Rewind", answers=["#1 ", "Code and conversation"])
    selects = ed.selects()
    assert [s["kind"] for s in selects[:2]] == ["rewind.turn", "rewind.scope"], selects
    labels = selects[0]["labels"]
    assert len(labels) == 2
    # "#2  today 14:03  second prompt: touch b  (M a.txt, M b.txt)": number, date, prompt, A/M/D.
    assert labels[0].startswith("#2  today ") and "second prompt: touch b" in labels[0], labels
    assert "M a.txt" in labels[0] and "M b.txt" in labels[0], labels
    assert labels[1].startswith("#1  today ") and "first prompt: make c" in labels[1], labels
    assert "M a.txt" in labels[1] and "A c.txt" in labels[1], labels
    assert selects[1]["chosen"] == "Code and conversation"

    assert last["status"] == "applied", last
    assert ed.buffers()["a.txt"] == {"text": "a0\n", "modified": False}
    assert read(ws, "a.txt") == b"a0\n"
    assert read(ws, "b.txt") == b"b0\n"
    assert read(ws, "c.txt") is None
    conversation = last["result"]["conversation"]
    resume = conversation["resumeCommand"]
    assert conversation and resume, last
    # Registers are the person's: untouched unless asked for.
    regs = ed.nv.luajson("return { r = vim.fn.getreg('r'), p = vim.fn.getreg('p') }")
    assert regs == {"r": "", "p": ""}, regs
    notes = [n["msg"] for n in ed.notes()]
    assert all("\n" not in n for n in notes), notes  # one line each: no "Press ENTER"
    assert any("restored a.txt" in n and n.endswith("(:Rewind last)") for n in notes), notes
    # The details: a float with the resume command and the prompt.
    ed.nv.command("Rewind last")
    float_text = ed.nv.luajson(
        "local cfg = vim.api.nvim_win_get_config(0)"
        " return { relative = cfg.relative,"
        " text = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), '\\n') }"
    )
    assert float_text["relative"] == "editor", float_text
    assert resume in float_text["text"] and "first prompt: make c" in float_text["text"]
    assert "Restored: a.txt, b.txt, c.txt (deleted)" in float_text["text"], float_text
    assert ed.nv.luajson(LAST_HL) == "RewindTitle"
    ed.nv.command("close")

    # Opted in: the registers get the text, and the message says where it went.
    ed.nv.lua("require('rewind.config').options.registers = { resume = 'r', prompt = 'p' }")
    ed.clear_records()
    last = ed.run("Rewind 2 conversation")
    assert last["status"] == "applied", last
    regs = ed.nv.luajson("return { r = vim.fn.getreg('r'), p = vim.fn.getreg('p') }")
    assert regs["r"] == last["result"]["conversation"]["resumeCommand"], regs
    assert regs["p"] == "second prompt: touch b", regs
    assert any('in register "r' in n["msg"] for n in ed.notes()), ed.notes()


def test_messages_fit_one_line_in_a_real_ui(workspace: tuple[Path, Path], editor: Any) -> None:
    """With a UI attached (as in a terminal) and Neovim's own vim.notify, a restore ends without
    the hit-enter prompt, also with long file names; the message is in :messages."""
    ws, home = workspace
    (ws / "a.txt").write_bytes(b"a0\n")
    long_names = {
        f"{'deeply/nested/' * 3}file-with-a-long-name-{i}.txt": f"x{i}\n" for i in range(4)
    }
    make_agent(ws, home).turn("create many files", {"a.txt": "a1\n", **long_names})
    ed = editor()
    ed.open("a.txt")
    ed.nv.request("nvim_ui_attach", 80, 24, {"ext_linegrid": True})
    ed.nv.lua("_G.rewind_test.passthrough = true")
    last = ed.run("Rewind 1")
    assert last["status"] == "applied", last
    mode = ed.nv.request("nvim_get_mode")
    assert mode == {"mode": "n", "blocking": False}, mode
    messages = ed.nv.lua("return vim.fn.execute('messages')")
    assert "Rewind to #1 (code): restored a.txt" in messages, messages
    assert read(ws, "a.txt") == b"a0\n"


def test_conflict_is_shown_not_overwritten(workspace: tuple[Path, Path], editor: Any) -> None:
    ws, home = workspace
    (ws / "a.txt").write_bytes(b"a0\n")
    (ws / "b.txt").write_bytes(b"b0\n")
    make_agent(ws, home).turn("change both", {"a.txt": "a1\n", "b.txt": "b1\n"})
    ed = editor()
    ed.open("a.txt")
    ed.set_buffer("a.txt", "a1 mine\n")  # the person's unsaved change to a file the rewind wants

    last = ed.run("Rewind 1", answers=["Cancel"])
    assert last["status"] == "cancelled", last
    conflict_selects = [s for s in ed.selects() if s["kind"] == "rewind.conflicts"]
    assert len(conflict_selects) == 1
    warnings = [n["msg"] for n in ed.notes() if n["level"] == 3]
    assert any("a.txt" in w and "conflict" in w for w in warnings), ed.notes()
    details = ed.nv.luajson("return require('rewind.message').last.lines")
    assert details and all(not d.startswith("a.txt: a.txt") for d in details), details
    assert ed.buffers()["a.txt"] == {"text": "a1 mine\n", "modified": True}
    assert read(ws, "a.txt") == b"a1\n"
    assert read(ws, "b.txt") == b"b1\n"  # cancelled: nothing at all was written
    ed.nv.command("Rewind last")  # the details float: its title in the conflict colour
    assert ed.nv.luajson(LAST_HL) == "RewindConflict"
    ed.nv.command("close")

    # Skip the conflict: the other file is restored, the person's buffer is left alone.
    last = ed.run("Rewind 1", answers=["Skip conflicting"])
    assert last["status"] in ("applied", "partial"), last
    assert read(ws, "b.txt") == b"b0\n"
    assert ed.buffers()["a.txt"] == {"text": "a1 mine\n", "modified": True}
    assert read(ws, "a.txt") == b"a1\n"


def test_forced_restore_writes_modified_buffer_and_u_brings_the_edits_back(
    workspace: tuple[Path, Path], editor: Any
) -> None:
    """The one behaviour for unsaved edits: the restore reaches the disk too (no false conflict
    later), and the person's unsaved text is one `u` away."""
    ws, home = workspace
    (ws / "a.txt").write_bytes(b"a0\n")
    make_agent(ws, home).turn("change a", {"a.txt": "a1\n"})
    ed = editor()
    ed.open("a.txt")
    ed.nv.command("normal! ggcca1 mine")  # typed, not saved
    assert ed.buffers()["a.txt"] == {"text": "a1 mine\n", "modified": True}

    last = ed.run("Rewind 1", answers=["Overwrite"])
    assert last["status"] == "applied", last
    assert ed.buffers()["a.txt"] == {"text": "a0\n", "modified": False}  # restored and written
    assert read(ws, "a.txt") == b"a0\n"
    assert any("restored a.txt (u: your edits)" in n["msg"] for n in ed.notes()), ed.notes()
    details = "\n".join(ed.nv.luajson("return require('rewind.message').last.lines"))
    assert "u in the buffer brings the edits back" in details, details
    ed.nv.command("normal! u")
    assert ed.buffers()["a.txt"] == {"text": "a1 mine\n", "modified": True}
    assert read(ws, "a.txt") == b"a0\n"


def test_diff_split(workspace: tuple[Path, Path], editor: Any) -> None:
    ws, home = workspace
    two_turns(ws, home)
    ed = editor()
    ed.open("notes.txt")
    last = ed.run("Rewind diff 1 a.txt")
    assert last["status"] == "shown", last
    wins = ed.nv.luajson(
        """
        local out = {}
        for _, w in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
          local b = vim.api.nvim_win_get_buf(w)
          out[#out + 1] = { name = vim.fn.fnamemodify(vim.api.nvim_buf_get_name(b), ':.'),
            diff = vim.wo[w].diff, lines = vim.api.nvim_buf_get_lines(b, 0, -1, false),
            buftype = vim.bo[b].buftype }
        end
        return out
        """
    )
    by_name = {w["name"]: w for w in wins}
    assert by_name["a.txt"]["diff"] is True and by_name["a.txt"]["lines"] == ["a2"]
    scratch = [w for w in wins if w["name"].startswith("rewind://1/")]
    assert len(scratch) == 1, wins
    assert scratch[0]["diff"] is True and scratch[0]["buftype"] == "nofile"
    assert scratch[0]["lines"] == ["a0"]  # a.txt before turn 1


def test_log_code_lens_runs_a_rewind(workspace: tuple[Path, Path], editor: Any) -> None:
    ws, home = workspace
    two_turns(ws, home)
    ed = editor()
    ed.open("a.txt")
    last = ed.run("Rewind log")
    assert last["status"] == "shown", last
    assert ed.nv.luajson("return vim.b.rewind_log") is True
    lenses = ed.nv.wait_for(
        "#vim.lsp.codelens.get(0) > 0 and vim.tbl_map(function(l) return {"
        " line = l.range.start.line,"
        " title = l.command and l.command.title, args = l.command and l.command.arguments } end,"
        " vim.lsp.codelens.get(0))",
        what="code lenses in the timeline",
    )
    titles = {lens["title"] for lens in lenses}
    assert {"Rewind to here", "Revert turn", "Diff"} <= titles, lenses
    lines = ed.nv.luajson("return vim.api.nvim_buf_get_lines(0, 0, -1, false)")
    # Coloured: each file's change word in its group, the turn headings as titles.
    marks = ed.nv.luajson(
        "return vim.tbl_map(function(m) return { vim.api.nvim_buf_get_text(0, m[2], m[3], m[2],"
        " m[4].end_col, {})[1], m[4].hl_group } end, vim.api.nvim_buf_get_extmarks(0,"
        " require('rewind.log').ns, 0, -1, { details = true }))"
    )
    assert ["created", "RewindAdded"] in marks and ["modified", "RewindChanged"] in marks, marks
    assert any(hl == "RewindTitle" and "first prompt" in text for text, hl in marks), marks
    # The lens line of turn 1: the heading that mentions the first prompt.
    turn1 = next(i for i, line in enumerate(lines) if "first prompt" in line)
    lens_lines = sorted({lens["line"] for lens in lenses})
    target = max(li for li in lens_lines if li <= turn1)
    ed.nv.lua("vim.api.nvim_win_set_cursor(0, { ..., 0 })", target + 1)
    # A lens click previews and asks, even with no conflict (config.confirm is off): Cancel writes
    # nothing; the preview's first entry restores.
    last = ed.run("lua vim.lsp.codelens.run()", answers=["Rewind to here", "Cancel"])
    assert last["op"] == "rewind" and last["status"] == "cancelled", last
    assert read(ws, "a.txt") == b"a2\n"
    last = ed.run("lua vim.lsp.codelens.run()", answers=["Rewind to here", "Rewind 3 files"])
    assert last["op"] == "rewind" and last["status"] == "applied", last
    assert read(ws, "a.txt") == b"a0\n" and read(ws, "c.txt") is None


def test_completion(workspace: tuple[Path, Path], editor: Any) -> None:
    ws, home = workspace
    two_turns(ws, home)
    ed = editor()
    ed.open("a.txt")
    first = ed.nv.luajson("return vim.fn.getcompletion('Rewind ', 'cmdline')")
    assert {"revert", "undo", "diff", "log", "1", "2"} <= set(first), first
    assert ed.nv.luajson("return vim.fn.getcompletion('Rewind 2 ', 'cmdline')") == [
        "code",
        "conversation",
        "both",
    ]
    assert ed.nv.luajson("return vim.fn.getcompletion('Rewind revert ', 'cmdline')") == ["2", "1"]
    paths = ed.nv.luajson("return vim.fn.getcompletion('Rewind diff 1 ', 'cmdline')")
    assert set(paths) == {"a.txt", "c.txt"}


def test_did_change_turns_refreshes_turn_list(workspace: tuple[Path, Path], editor: Any) -> None:
    """A turn recorded by the agent's hook (another process) reaches the cached turn list."""
    ws, home = workspace
    agent = two_turns(ws, home)
    ed = editor()
    ed.open("a.txt")
    ed.nv.lua(
        "_G.rewind_test.changed = 0\n"
        "vim.api.nvim_create_autocmd('User', { pattern = 'RewindTurnsChanged',"
        " callback = function() _G.rewind_test.changed = _G.rewind_test.changed + 1 end })"
    )
    assert "3" not in ed.nv.luajson("return vim.fn.getcompletion('Rewind ', 'cmdline')")
    agent.turn("third prompt", {"a.txt": "a3\n"})
    ed.nv.wait_for("_G.rewind_test.changed > 0", what="User RewindTurnsChanged")
    ed.nv.wait_for(
        "vim.tbl_contains(vim.fn.getcompletion('Rewind ', 'cmdline'), '3')",
        what="turn 3 in the completion",
    )


def test_quickfix_statusline_plug_mappings_highlights_and_signs(
    workspace: tuple[Path, Path], editor: Any
) -> None:
    ws, home = workspace
    two_turns(ws, home)
    ed = editor()
    ed.open("a.txt")
    # <Plug> mappings exist, no key is taken unless asked; our groups link to standard ones.
    plain = ed.nv.luajson(
        "return { plug = vim.fn.maparg('<Plug>(rewind-pick)', 'n'),"
        " key = vim.fn.maparg('<Leader>rr', 'n'),"
        " hl = vim.api.nvim_get_hl(0, { name = 'RewindAdded' }).link }"
    )
    assert plain == {"plug": "<Cmd>Rewind<CR>", "key": "", "hl": "Added"}, plain
    ed.nv.lua(
        "require('rewind').setup(vim.tbl_extend('force', require('rewind.config').options,"
        " { mappings = true, signs = true }))"
    )
    assert ed.nv.luajson("return vim.fn.maparg('<Leader>rr', 'n')") == "<Plug>(rewind-pick)"

    # The statusline component: cheap, filled in the background.
    status = ed.nv.wait_for(
        "(function() local s = require('rewind').statusline() return s ~= '' and s end)()",
        what="the statusline component",
    )
    assert status == "⟲ 2 turns", status

    # Quickfix: the latest turn's files with their change, then turn 1's.
    last = ed.run("Rewind quickfix")
    assert last["status"] == "shown", last
    qf = ed.nv.luajson(
        "return vim.tbl_map(function(i) return { name = vim.fn.bufname(i.bufnr), text = i.text } end,"
        " vim.fn.getqflist())"
    )
    assert [q["name"] for q in qf] == ["a.txt", "b.txt"], qf
    assert qf[0]["text"].startswith("M modified in #2: second prompt"), qf
    assert ed.nv.luajson("return vim.fn.getqflist({ winid = 0 }).winid") != 0  # opened
    ed.nv.command("cclose")
    ed.run("Rewind quickfix 1")
    qf1 = ed.nv.luajson("return vim.tbl_map(function(i) return i.text end, vim.fn.getqflist())")
    assert [t[:2] for t in qf1] == ["M ", "A "], qf1

    # Signs: a.txt went a1 -> a2 in turn 2 (the latest): its line 1 is marked.
    ed.nv.command("buffer a.txt")
    ed.nv.command("doautocmd BufEnter")
    signs = ed.nv.wait_for(
        "(function() local m = vim.api.nvim_buf_get_extmarks(0, require('rewind.ui').ns, 0, -1,"
        " { details = true }) return #m > 0 and vim.tbl_map(function(x) return { x[2],"
        " x[4].sign_text, x[4].sign_hl_group } end, m) end)()",
        what="signs on the lines of the latest turn",
    )
    assert signs == [[0, "2 ", "RewindSignChange"]], signs  # the turn number (issue #28)


def test_deleted_working_directory_is_a_message_not_a_traceback(
    workspace: tuple[Path, Path], editor: Any, tmp_path: Path
) -> None:
    ws, home = workspace
    two_turns(ws, home)
    gone = tmp_path / "gone"
    gone.mkdir()
    ed = editor()
    ed.nv.command(f"cd {gone}")
    gone.rmdir()
    last = ed.run("Rewind undo")
    assert last["status"] == "error", last
    assert "current directory no longer exists" in last["message"], last
    notes = "\n".join(n["msg"] for n in ed.notes())
    assert "traceback" not in notes and "internal error" not in notes, notes


def test_checkhealth_broken_fallback_and_hook_command_not_on_path(
    workspace: tuple[Path, Path], editor: Any
) -> None:
    """A python3 without rewind_ls is an error (not an OK fallback); hooks whose command is not on
    PATH are a warning (not OK)."""
    ws, home = workspace
    subprocess.run(
        [
            sys.executable,
            "-m",
            "rewind_ls",
            "install",
            "claude-code",
            # A bare command (as older versions installed it): found only through PATH.
            "--command",
            "rewind-ls hook claude-code",
        ],
        cwd=ws,
        env={**os.environ, "REWIND_LS_HOME": str(home), "HOME": str(user_home(ws))},
        check=True,
        capture_output=True,
        timeout=60,
    )
    bare = ws.parent / "bin"  # a python3 that has no rewind_ls, and no rewind-ls
    bare.mkdir()
    (bare / "python3").write_text("#!/bin/sh\necho 'No module named rewind_ls' >&2\nexit 1\n")
    (bare / "python3").chmod(0o755)
    ed = editor()
    ed.nv.lua(
        "vim.env.PATH = ...; require('rewind.config').options.cmd = nil",
        f"{bare}:/usr/bin:/bin",
    )
    ed.nv.command("checkhealth rewind")
    text = "\n".join(ed.nv.luajson("return vim.api.nvim_buf_get_lines(0, 0, -1, false)"))
    assert "ERROR server command: python3 -m rewind_ls serve (default) does not run" in text, text
    assert "OK server command" not in text, text
    assert "WARNING hook command not found on PATH: rewind-ls" in text, text
    assert "OK Claude Code hooks installed" not in text, text


def test_checkhealth(workspace: tuple[Path, Path], editor: Any) -> None:
    ws, home = workspace
    subprocess.run(
        [sys.executable, "-m", "rewind_ls", "install", "claude-code"],
        cwd=ws,
        env={**os.environ, "REWIND_LS_HOME": str(home), "HOME": str(user_home(ws))},
        check=True,
        capture_output=True,
        timeout=60,
    )
    assert (ws / ".claude" / "settings.json").exists()
    ed = editor()
    ed.nv.command("checkhealth rewind")
    text = "\n".join(ed.nv.luajson("return vim.api.nvim_buf_get_lines(0, 0, -1, false)"))
    assert "OK Neovim 0.11" in text, text
    assert f"server command: {sys.executable} -m rewind_ls serve" in text, text
    assert "OK version: rewind-ls" in text, text
    assert "store: " + str(home) in text and "writable" in text, text
    assert "OK Claude Code hooks installed" in text, text
    # Doctor's line for each of the five agents.
    agents = text.split("rewind: agent hooks")[1]
    assert "OK claude code hooks: installed, and `" in agents, agents
    for title, name in (
        ("Codex CLI", "codex"),
        ("Gemini CLI", "gemini"),
        ("OpenCode", "opencode"),
        ("GitHub Copilot CLI", "copilot"),
    ):
        assert f"{title} hooks: not installed: `rewind-ls install {name}`" in agents, agents
    assert "ERROR" not in text, text


def test_help_tags(tmp_path: Path) -> None:
    """doc/rewind.txt has no duplicate tags and documents every subcommand and option."""
    doc = REPO / "editors" / "nvim" / "doc" / "rewind.txt"
    (tmp_path / "doc").mkdir()
    (tmp_path / "doc" / "rewind.txt").write_bytes(doc.read_bytes())
    nvim = shutil.which("nvim")
    assert nvim, "nvim is not on PATH"
    proc = subprocess.run(
        [
            nvim,
            "--headless",
            "-u",
            "NONE",
            "-i",
            "NONE",
            "-c",
            f"helptags {tmp_path / 'doc'}",
            "-c",
            "qa!",
        ],
        capture_output=True,
        timeout=60,
    )
    assert proc.returncode == 0 and b"E154" not in proc.stderr, proc.stderr
    tags = {line.split("\t")[0] for line in (tmp_path / "doc" / "tags").read_text().splitlines()}
    for sub in ("revert", "undo", "diff", "log"):
        assert f":Rewind-{sub}" in tags
    from_config = json.loads(
        subprocess.run(
            [
                nvim,
                "--headless",
                "-u",
                "NONE",
                "-i",
                "NONE",
                "--cmd",
                f"set rtp^={REPO / 'editors' / 'nvim'}",
                "-c",
                "lua io.stdout:write(vim.json.encode("
                "vim.tbl_keys(require('rewind.config').defaults)))",
                "-c",
                "qa!",
            ],
            capture_output=True,
            timeout=60,
            check=True,
        ).stdout
    )
    for option in from_config:
        assert f"rewind-{option}" in tags, f"option {option} is not documented"
    assert {"rewind", ":Rewind", "rewind.setup()", "RewindDone", "rewind.nvim"} <= tags
    # The shipped doc/tags is what :helptags makes of the shipped doc (so no `:helptags ALL` needed).
    shipped = (REPO / "editors" / "nvim" / "doc" / "tags").read_text()
    assert shipped == (tmp_path / "doc" / "tags").read_text(), "run :helptags editors/nvim/doc"


@pytest.mark.parametrize(
    ("topic", "tag"),
    [("rewind.nvim", "*rewind.nvim*"), (":Rewind", "*:Rewind*"), ("rewind", "*rewind*")],
)
def test_help_without_helptags(tmp_path: Path, topic: str, tag: str) -> None:
    """With the plugin on 'runtimepath' as a plugin manager puts it (and no :helptags run),
    `:help <topic>` opens rewind.txt at the topic, not Vim's own :rewind."""
    nvim = shutil.which("nvim")
    assert nvim, "nvim is not on PATH"
    out = tmp_path / "where.json"
    subprocess.run(
        [
            nvim,
            "--headless",
            "-u",
            "NONE",
            "-i",
            "NONE",
            "--cmd",
            f"set rtp^={REPO / 'editors' / 'nvim'}",
            "-c",
            f"help {topic}",
            "-c",
            "call writefile([json_encode({'file': expand('%:t'), 'line': getline('.')})],"
            f" '{out}')",
            "-c",
            "qa!",
        ],
        capture_output=True,
        timeout=60,
        check=True,
    )
    where = json.loads(out.read_text())
    assert where["file"] == "rewind.txt" and tag in where["line"], where


def test_turn_list_is_read_a_page_at_a_time(workspace: tuple[Path, Path], editor: Any) -> None:
    """#29: the plugin asks for a page of turns (the newest); the statusline counts every turn, a
    turn number older than the page is still found, and the picker's last item loads older turns."""
    ws, home = workspace
    agent = two_turns(ws, home)
    for k in range(3, 6):
        agent.turn(f"prompt {k}", {"a.txt": f"a{k}\n"})
    ed = editor()
    ed.nv.lua("require('rewind.turns').PAGE = 2; require('rewind.turns').invalidate()")
    ed.open("a.txt")
    status = ed.nv.wait_for(
        "(function() local s = require('rewind').statusline() return s ~= '' and s end)()",
        what="the statusline component",
    )
    assert status == "⟲ 5 turns", status
    page = ed.nv.luajson(
        "local c = vim.lsp.get_clients({ name = 'rewind', bufnr = 0 })[1]"
        " local r = c:request_sync('rewind/listTurns', { limit = 2 }, 5000, 0).result"
        " return vim.tbl_map(function(t) return t.number end, r.sessions[#r.sessions].turns)"
    )
    assert page == [4, 5], page

    ed.run("Rewind quickfix 1")  # not in the newest page: found on an older one
    qf = ed.nv.luajson("return vim.tbl_map(function(i) return i.text end, vim.fn.getqflist())")
    assert [t[:2] for t in qf] == ["M ", "A "], qf

    ed.clear_records()
    last = ed.run("Rewind", answers=["Older turns", "Older turns", "#1 ", "Code only"])
    assert last["status"] == "applied", last
    labels = [s["labels"] for s in ed.selects()][:3]
    assert [len(x) for x in labels] == [3, 5, 5], labels  # 2 turns + older, 4 + older, all 5
    assert labels[0][-1] == "Older turns… (3 more)", labels
    assert read(ws, "a.txt") == b"a0\n" and read(ws, "c.txt") is None


def _statusline_is(ed: Editor, text: str) -> None:
    shown = ed.nv.wait_for(
        "(function() local s = require('rewind').statusline()"
        f" return s == {json.dumps(text, ensure_ascii=False)} and s end)()",
        what=f"the statusline to show {text!r}",
    )
    assert shown == text


def test_statusline_and_picker_show_the_first_checkpoint_while_it_runs(
    workspace: tuple[Path, Path], editor: Any
) -> None:
    """#29: while the first checkpoint of a large workspace runs in the background (`baseline` of
    rewind/listTurns), the statusline shows its progress instead of the turn count, moving as the
    worker goes on, and `:Rewind`'s picker says it; the plugin asks again until it is done (the
    server sends no notification then), and the turn count comes back."""
    ws, home = workspace
    two_turns(ws, home)
    from rewind_ls.core.store import Store

    with Store.open(str(ws), home=str(home)) as store:
        store_path = store.path
    with first_checkpoint_running(store_path, 1500, 4000):
        ed = editor()
        ed.nv.lua("require('rewind.ui').POLL_MS = 200")
        ed.open("a.txt")
        _statusline_is(ed, "⟳ first checkpoint 1500/4000")
        last = ed.run("Rewind", answers=[])
        assert last["status"] == "cancelled", last
        prompt = ed.selects()[0]["prompt"]
        assert prompt.endswith("[first checkpoint 1500/4000 in progress]"), prompt
        write_progress(store_path, 3000, 4000)
        _statusline_is(ed, "⟳ first checkpoint 3000/4000")
    _statusline_is(ed, "⟲ 2 turns")


def test_picker_names_the_fork_it_lists(workspace: tuple[Path, Path], editor: Any) -> None:
    """#27: a forked conversation's turns (copies of the source's) are picked under a prompt that
    says "fork of <session> before #N", not as an unlabelled session repeating the original."""
    ws, home = workspace
    agent = two_turns(ws, home)
    from rewind_ls.core.store import Store

    store = Store.open(str(ws), home=str(home))
    source = next(s.id for s in store.sessions() if s.kind == "agent")
    fork = "f0f0f0f0-fork-of-the-conversation"
    store.inherit_turns(source, fork, 2, str(ws.parent / "fork.jsonl"))
    store.ensure_session(fork, "agent", agent="claude-code")  # its first hook: now the current one
    store.close()
    del agent
    ed = editor()
    ed.open("a.txt")
    last = ed.run("Rewind", answers=[])
    assert last["status"] == "cancelled", last
    prompt = ed.selects()[0]["prompt"]
    assert prompt.endswith(f"(fork of {source[:8]} before #2)"), prompt
    assert [x[:2] for x in ed.selects()[0]["labels"]] == ["#1"], ed.selects()


def test_picker_lists_restore_points_you_are_here_and_undoes_an_older_restore(
    workspace: tuple[Path, Path], editor: Any
) -> None:
    """#27 "where am I": after two rewinds, `:Rewind`'s picker lists both restore points after the
    turns, marks the current state "you are here", and picking the *older* restore undoes it (not
    only the last restore, which is all `:Rewind undo` reaches)."""
    ws, home = workspace
    two_turns(ws, home)
    ed = editor()
    ed.open("a.txt")
    assert ed.run("Rewind 1 code")["status"] == "applied"
    assert read(ws, "a.txt") == b"a0\n" and read(ws, "c.txt") is None
    assert ed.run("Rewind 2 code")["status"] == "applied"
    assert read(ws, "a.txt") == b"a1\n"
    ed.clear_records()
    last = ed.run("Rewind", answers=["before rewind to turn 1"])
    assert last["status"] == "applied", last
    labels = ed.selects()[0]["labels"]
    assert [x.split("  ")[0] for x in labels] == ["#2", "#1", "restore point", "restore point"]
    # The restore point's row is the state before that restore: the files are after it.
    assert "before rewind to turn 2 (code)" in labels[2]
    assert labels[2].endswith("← you are here: after this restore"), labels
    assert "before rewind to turn 1 (code)" in labels[3] and "you are here" not in labels[3]
    assert not any("you are here" in x for x in labels[:2]), labels
    # Called an undo, not "turn #3" (the restore session's own ordinal): issue 36 item 7.
    said = [n["msg"] for n in ed.notes()]
    assert any(m.startswith("Undo: rewind to turn 1 (code): restored") for m in said), said
    assert not any("#3" in m or "#4" in m for m in said), said
    # Undone: the files are what they were before the first rewind.
    assert (
        read(ws, "a.txt") == b"a2\n"
        and read(ws, "b.txt") == b"b2\n"
        and read(ws, "c.txt") == b"c1\n"
    )
    assert ed.buffers()["a.txt"] == {"text": "a2\n", "modified": False}


def test_rewind_changes_opens_a_before_after_diff_tab_per_file(
    workspace: tuple[Path, Path], editor: Any
) -> None:
    """#27 `:Rewind changes N`: what turn N changed, like a commit: a tab per file, before the turn
    (left) against after it (right), whatever later turns did (turn 2 rewrote a.txt since)."""
    ws, home = workspace
    two_turns(ws, home)
    ed = editor()
    ed.open("a.txt")
    last = ed.run("Rewind changes 1")
    assert last["status"] == "shown", last
    tabs = ed.nv.luajson(
        """
        local out = {}
        for _, tab in ipairs(vim.api.nvim_list_tabpages()) do
          local wins = {}
          for _, w in ipairs(vim.api.nvim_tabpage_list_wins(tab)) do
            local b = vim.api.nvim_win_get_buf(w)
            wins[#wins + 1] = { name = vim.api.nvim_buf_get_name(b), diff = vim.wo[w].diff,
              lines = vim.api.nvim_buf_get_lines(b, 0, -1, false) }
          end
          out[#out + 1] = wins
        end
        return out
        """
    )
    assert len(tabs) == 3, tabs  # a.txt's own tab, then one per file turn 1 changed
    by_path = {t[0]["name"].rsplit("/", 1)[-1]: t for t in tabs[1:]}
    a_before, a_after = by_path["a.txt"]
    assert a_before["name"].endswith("rewind://1/before/a.txt") and a_before["lines"] == ["a0"]
    assert a_after["name"].endswith("rewind://1/after/a.txt") and a_after["lines"] == ["a1"]
    assert a_before["diff"] and a_after["diff"]
    c_before, c_after = by_path["c.txt"]
    assert c_before["lines"] == [""] and c_after["lines"] == ["c1"]  # created by the turn
    assert read(ws, "a.txt") == b"a2\n"  # nothing written
    assert any("Turn #1 changed 2 file(s)" in n["msg"] for n in ed.notes()), ed.notes()


def test_you_are_here_is_the_restore_made_in_the_same_second_as_the_latest_turn(
    workspace: tuple[Path, Path], editor: Any
) -> None:
    """Times in the turn list are to the second: a restore point of the same second as the latest
    turn's start was made after it (the picker test above failed whenever both fell in one second)."""
    ed = editor()
    same = "2026-11-26T03:36:00Z"
    here = ed.nv.lua(
        "return require('rewind.turns').here_id(...)",
        {
            "currentSessionId": "s",
            "sessions": [
                {"id": "s", "kind": "agent", "turns": [{"id": "t2", "startedAt": same}]},
                {"id": "rewind", "kind": "rewind", "turns": [{"id": "r1", "startedAt": same}]},
            ],
        },
    )
    assert here == "r1"
