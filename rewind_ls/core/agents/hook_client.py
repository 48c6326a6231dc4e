"""The hook command's fast path: hand the hook to the per-user hook server (`hook_server.py`)
instead of starting the hook's ~85 modules in a fresh interpreter.

This module runs in the hook command before anything else is imported, so it uses only what the
interpreter has already loaded (`posix`, `sys`; not even `os`, six modules) and `_socket` (no
`socket`, `json`, `struct` or `hashlib`: each would cost more than the whole exchange). Its one promise: the server's output is
written only when its exit-code message has arrived whole; any other outcome (no server, a stale
one, no answer, a child that died) returns a reason and the caller runs the hook in this process
with the same stdin bytes, exactly as without a server. Nothing depends on the server being there.

The exchange on a Unix stream socket (fields: 4-byte big-endian length + bytes):
  client -> `H` argv cwd environ umask stdin ppid   server's child -> `A` (read)
  (or the server -> `S`: its code changed and it is exiting; this connection was still queued)
  client -> `G` (committed: waits for the result)  child -> `R` stdout stderr exit-code, close
A client that gave up before `G` (its connect or the `A` was too slow) closes the socket and the
child, reading EOF instead of `G`, exits without running the hook: a hook never runs twice at once.
After `G`, the child watches the socket: the agent killing the hook command (its timeout) closes
it, and the child dies as an in-process hook would.
"""

# No `from __future__ import annotations`: `__future__` is one more module to load.
import posix
import sys

TYPE_CHECKING = False  # mypy reads this name as true; `typing` would be one more module to load
if TYPE_CHECKING:
    import _socket

# Seconds for the connect and the server's `A`; past them the hook runs in-process.
CONNECT_TIMEOUT = 3.0
# A payload larger than this is not sent (the in-process path reads and refuses it by its own cap).
MAX_SENT = 8 << 20
# The environment variable that turns the server off (`0`), and the server's idle time limit.
SWITCH = "REWIND_LS_HOOK_SERVER"


def _fnv64(data: bytes) -> int:
    h = 0xCBF29CE484222325
    for b in data:
        h = ((h ^ b) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h


def _env(name: str) -> str:
    """The process's environment at its start (`posix.environ`, bytes), which `os.environ`
    copies; nothing on the hook path changes it before the client runs."""
    value: bytes = posix.environ.get(name.encode(), b"")
    return value.decode("utf-8", "surrogateescape")


def _parent(path: str) -> str:
    return path.rstrip("/").rpartition("/")[0] or "/"


def package_dir() -> str:
    """The folder of the `rewind_ls` package this code runs from."""
    here = __file__ if __file__.startswith("/") else posix.getcwd() + "/" + __file__
    return _parent(_parent(_parent(here)))


def socket_dir() -> str:
    """The user's folder for hook-server sockets: short (a Unix socket's path is limited to 104
    bytes on macOS, 108 on Linux), so never under the state folder: `$XDG_RUNTIME_DIR/rewind-ls`,
    else `$TMPDIR` or `/tmp`, as `rewind-ls-UID`, when that is short enough."""
    runtime = _env("XDG_RUNTIME_DIR").rstrip("/")
    if runtime.startswith("/") and len(runtime) < 60:
        return runtime + "/rewind-ls"
    tmp = _env("TMPDIR").rstrip("/")
    if not tmp.startswith("/") or len(tmp) >= 60:
        tmp = "/tmp"
    return f"{tmp}/rewind-ls-{posix.getuid()}"


def socket_path(home: str | None = None) -> str:
    """One server per interpreter, package folder and `REWIND_LS_HOME` (the state it records
    into; `home`: another than this process's): another install, Python or state folder never
    reaches this one's server."""
    key = "\0".join(
        (sys.executable, package_dir(), _env("REWIND_LS_HOME") if home is None else home)
    )
    return f"{socket_dir()}/hook-{_fnv64(key.encode('utf-8', 'surrogateescape')):016x}"


def private_dir_ok(path: str) -> bool:
    """Whether `path` is a real folder of this user's that no one else can enter: the client
    sends its environment (tokens, keys) through the socket inside, so another user's folder
    planted there first must never be used."""
    try:
        st = posix.lstat(path)
    except OSError:
        return False
    is_dir = (st.st_mode & 0o170000) == 0o040000
    return is_dir and st.st_uid == posix.getuid() and st.st_mode & 0o077 == 0


def field(data: bytes) -> bytes:
    return len(data).to_bytes(4, "big") + data


def fields(buf: bytes, start: int, count: int) -> tuple[list[bytes], int] | None:
    """`count` length-prefixed fields from `buf[start:]`, and the offset after them; None when
    `buf` ends inside one (the peer died mid-message)."""
    out = []
    at = start
    for _ in range(count):
        if at + 4 > len(buf):
            return None
        n = int.from_bytes(buf[at : at + 4], "big")
        at += 4
        if at + n > len(buf):
            return None
        out.append(buf[at : at + n])
        at += n
    return out, at


def caller_fields(argv: list[str]) -> tuple[bytes, bytes, bytes, bytes]:
    """The caller's argv, cwd, environment and umask: the first fields of a request."""
    env = b"\0".join(k + b"=" + v for k, v in posix.environ.items())
    umask = posix.umask(0o022)
    posix.umask(umask)
    return (
        b"\0".join(a.encode("utf-8", "surrogateescape") for a in argv),
        posix.getcwdb(),
        env,
        str(umask).encode(),
    )


def request(argv: list[str], stdin: bytes) -> bytes:
    parts = (
        *caller_fields(argv),
        stdin,
        str(posix.getppid()).encode(),  # the agent's side of the hook (the child's is the server)
    )
    return b"H" + b"".join(field(p) for p in parts)


def _recv_reply(sock: object) -> bytes:
    """The reply (`R` and three fields), as soon as it is whole (the child goes on to close its
    store); shorter when the child died first."""
    buf = b""
    while True:
        parsed = fields(buf, 1, 3) if buf[:1] == b"R" else None
        if parsed is not None:
            return buf[: parsed[1]]
        chunk = sock.recv(1 << 16)  # type: ignore[attr-defined]
        if not chunk:
            return buf
        buf += chunk


def connect(path: str) -> "_socket.socket | None":
    """A socket connected to the server listening at `path` (`CONNECT_TIMEOUT` set), or None
    when none answers there or its folder is not this user's own."""
    if not private_dir_ok(_parent(path)):
        return None
    import _socket  # here, not at the top: the `off` path (in-process) never loads it

    sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    sock.settimeout(CONNECT_TIMEOUT)
    try:
        sock.connect(path)
    except OSError:
        sock.close()
        return None
    return sock


def through_server(argv: list[str], stdin: bytes) -> str:
    """Run the hook in the server and, when its result arrives whole, write its output and end
    this process with its exit code. Otherwise the reason the caller must run it itself:
    `off`, `absent` (no server answering: the caller starts one), `stale` (its code changed: it
    is exiting; the caller starts a new one), `busy` (no answer in time), `lost` (the child died
    or the reply was cut)."""
    if _env(SWITCH) == "0":
        return "off"
    sock = connect(socket_path())
    if sock is None:
        return "absent"
    try:
        try:
            sock.sendall(request(argv, stdin))
            answer = sock.recv(1)
        except OSError:
            return "busy"
        if answer == b"S":
            return "stale"
        if answer != b"A":
            return "lost"
        try:
            sock.sendall(b"G")
            sock.settimeout(None)  # committed: the hook runs there; wait for it however long
            reply = _recv_reply(sock)
        except OSError:
            return "lost"
    finally:
        sock.close()
    parsed = fields(reply, 1, 3) if reply[:1] == b"R" else None
    if parsed is None or parsed[1] != len(reply):
        return "lost"
    out, err, code = parsed[0]
    try:
        status = int(code)
    except ValueError:
        return "lost"
    if out:
        sys.stdout.buffer.write(out)
        sys.stdout.buffer.flush()
    if err:
        sys.stderr.buffer.write(err)
        sys.stderr.buffer.flush()
    posix._exit(status)


def read_stdin() -> tuple[bytes, bool]:
    """The hook's whole stdin, and whether it was all read (a payload over `MAX_SENT` is left
    for the in-process path, which refuses it by its own cap)."""
    data: bytes = sys.stdin.buffer.read(MAX_SENT + 1)
    return data, len(data) <= MAX_SENT


class Replay:
    """What the in-process path reads as its stdin: the bytes the client read, then the rest."""

    def __init__(self, head: bytes, rest: object) -> None:
        self.head = head
        self.rest = rest

    def read(self, n: int = -1) -> bytes:
        if self.head:
            if n < 0:
                data: bytes = self.head + self.rest.read()  # type: ignore[attr-defined]
                self.head = b""
                return data
            data, self.head = self.head[:n], self.head[n:]
            return data
        rest: bytes = self.rest.read(n)  # type: ignore[attr-defined]
        return rest


def make_folder(folder: str) -> bool:
    try:
        posix.mkdir(folder, 0o700)
    except FileExistsError:
        pass
    except OSError:
        return False
    return private_dir_ok(folder)


def start_server() -> int | None:
    """Start a server for this interpreter and package (detached); its pid, None when one is
    already starting or the socket's folder is not this user's private one."""
    path = socket_path()
    folder = _parent(path)
    if not make_folder(folder):
        return None
    from rewind_ls.core.fs import detached

    marker = path + ".starting"
    if not detached.claim_start(marker, folder, 10.0):
        return None
    main = package_dir() + "/__main__.py"
    try:
        return detached.spawn_argv([sys.executable, "-I", "-S", main, "hook-server"])
    except OSError:
        detached.unclaim(marker)
        raise


# What `__main__.py`, run as a file, does (here rather than there: a module's code is cached as
# `.pyc`, a script's is compiled on every run).


def command(argv: list[str]) -> tuple[str, object, bool | None, bool] | None:
    """`__main__.py` run as a file. `hook AGENT` ends the process here when the server ran the hook;
    else it returns the arguments of the in-process `hook_process.run` (agent, stdin, whole_process,
    start_server) with `sys.path` set. Anything else (`hook-server`, the CLI): None, `sys.path` set.
    (`__main__.py` imports `hook_process` or `hook_server` itself: both import this module.)"""
    if len(argv) == 3 and argv[1] == "hook":
        return _hook(argv[2])
    launch_path()
    return None


def _hook(agent: str) -> tuple[str, object, bool | None, bool]:
    """The hook command: through the hook server when one answers (this module loads nothing but
    `_socket`, not even `os`), else in this process with the same stdin bytes, starting the server
    when there was none."""
    # Off, or doctor's probe of this process's own `sys.path`: no server.
    if posix.environ.get(b"REWIND_LS_HOOK_SERVER") == b"0" or posix.environ.get(
        b"REWIND_LS_HOOK_CHECK"
    ):
        launch_path()
        return agent, None, None, False
    try:
        head, whole = read_stdin()
    except (OSError, ValueError, AttributeError):  # no stdin at all: the in-process path says so
        launch_path()
        return agent, None, None, False
    reason = through_server(sys.argv, head) if whole else "big"
    launch_path()
    return agent, Replay(head, sys.stdin.buffer), True, reason in ("absent", "stale")


def site_packages() -> list[str]:
    """The interpreter's site-packages folders as `site` would list them, without `site` itself or
    its `.pth` processing: a virtualenv's (found, as `site` finds it, by the `pyvenv.cfg` beside
    or above the executable; without `site`, `sys.prefix` is still the base interpreter's), then,
    outside a venv or when it includes them, the base interpreter's."""
    import os

    version = f"python{sys.version_info[0]}.{sys.version_info[1]}"
    prefixes = []
    exe_dir = os.path.dirname(os.path.abspath(sys.executable))
    for folder in (exe_dir, os.path.dirname(exe_dir)):
        cfg = os.path.join(folder, "pyvenv.cfg")
        if os.path.isfile(cfg):
            prefixes.append(os.path.dirname(exe_dir))
            with open(cfg, encoding="utf-8", errors="replace") as f:
                system = "include-system-site-packages = true" in f.read().replace("\t", " ")
            if not system:
                break
            prefixes += [sys.prefix, sys.exec_prefix]
            break
    else:
        prefixes += [sys.prefix, sys.exec_prefix]
    found = []
    for prefix in prefixes:
        for lib in ("lib", "lib64"):
            folder = os.path.join(prefix, lib, version, "site-packages")
            if folder not in found and os.path.isdir(folder):
                found.append(folder)
    return found


def _check_reachable() -> None:
    """`doctor` runs the command with REWIND_LS_HOOK_CHECK set: say (the way a hook reports a
    problem, which doctor reads) if a module a later event imports is not on this `sys.path`."""
    from importlib.util import find_spec

    for name in ("zstandard", "rewind_ls.core.capture.scan"):
        if find_spec(name) is None:
            sys.stderr.write(f"rewind-ls hook: cannot import {name} from {sys.path}\n")


def launch_path() -> None:
    """`sys.path` for the in-process hook, the server or the CLI run without `site`: the folder
    holding the `rewind_ls` package (found from this file's path, so an editable install works
    too) and the interpreter's own site-packages (zstandard, read by a scan's packs), without
    reading any `.pth` file. `tests/test_hook_imports.py` holds each hook event to a budget of
    imported modules."""
    import os

    parent = _parent(package_dir())
    here = package_dir()
    sys.path[:] = [parent] + [p for p in sys.path if os.path.abspath(p) not in (here, parent)]
    sys.path += [p for p in site_packages() if p not in sys.path]
    if os.environ.get("REWIND_LS_HOOK_CHECK"):
        _check_reachable()
