"""The hook command's fast path: hand the hook to the per-user hook server (`hook_server.py`)
instead of starting the hook's ~85 modules in a fresh interpreter.

This module runs in the hook command before anything else is imported, so it uses only what the
interpreter has already loaded (`posix`, `sys`; not even `os`, six modules) and `_socket` (no
`socket`, `json`, `struct` or `hashlib`: each would cost more than the whole exchange). Its one promise: the server's output is
written only when its exit-code message has arrived whole; any other outcome (no server, a stale
one, no answer, a child that died) returns a reason and the caller runs the hook in this process
with the same stdin bytes, exactly as without a server. Nothing depends on the server being there.

The socket is reached through its folder opened and checked by descriptor (`open_private_dir`,
`at`), and the listening process must be this user's, running this interpreter (`peer_ok`);
its name includes this process's `context`, which the server's child checks again (docs/servers.md).

The exchange on a Unix stream socket (fields: 4-byte big-endian length + bytes):
  client -> `H` argv cwd environ umask stdin ppid   server's child -> `A` (read)
  (or the server -> `S`: its code changed and it is exiting; this connection was still queued;
  or the child -> `D`: the client's context differs from the server's, it runs the hook itself)
  client -> `G` (committed: waits for the result)  child -> `R` stdout stderr exit-code, close
A client that gave up before `G` (its connect or the `A` was too slow) closes the socket and the
child, reading EOF instead of `G`, exits without running the hook: a hook never runs twice at once.
After `G`, the child watches the socket: the agent killing the hook command (its timeout) closes
it, and the child dies as an in-process hook would.

`command` is what `__main__.py` run as a file (`python -I -S /abs/rewind_ls/__main__.py hook
AGENT`, without `site` and without `os`) hands over to: the hook server first; else the package and
the interpreter's site-packages on `sys.path` (`launch_path`) and `hook_process.run` in-process.
`__main__.py hook-server` starts the hook server. `tests/test_hook_imports.py` holds each in-process event to a module budget and
this client to a fixed set.
"""

# No `from __future__ import annotations`: `__future__` is one more module to load.
import posix
import sys

TYPE_CHECKING = False  # mypy reads this name as true; `typing` would be one more module to load
if TYPE_CHECKING:
    import _socket

# Seconds for the connect and the server's `A`; past them the hook runs in-process.
CONNECT_TIMEOUT = 3.0
# `config.max_hook_bytes`'s default: no payload the in-process hook would take is cut on the way.
DEFAULT_MAX_PAYLOAD = 64 << 20
# The environment variable that turns the server off (`0`), and the server's idle time limit.
SWITCH = "REWIND_LS_HOOK_SERVER"


def _fnv64(data: bytes) -> int:
    h = 0xCBF29CE484222325
    for b in data:
        h = ((h ^ b) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h


def _quick_digest(data: bytes) -> int:
    """A 61-bit digest of `data` at C speed (`_fnv64` is a Python loop: ~0.5 ms for a process's
    context): the bytes as one number modulo the prime 2**61 - 1, and its length. Not a
    defence against a chosen collision (nor need it be: only this user's processes choose it)."""
    return (int.from_bytes(data, "little") % ((1 << 61) - 1)) ^ (len(data) << 3)


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
    """One server per interpreter, package folder, `REWIND_LS_HOME` (the state it records into;
    `home`: another than this process's) and process `context`: another install, Python, state
    folder, namespace, limit or credential never reaches this one's server."""
    key = "\0".join(
        (sys.executable, package_dir(), _env("REWIND_LS_HOME") if home is None else home)
    ).encode("utf-8", "surrogateescape")
    digest = _fnv64(key) ^ _quick_digest(context())
    return f"{socket_dir()}/hook-{digest:016x}"


def open_private_dir(path: str) -> int | None:
    """A descriptor of the folder `path`, opened without following a link in its last part and
    checked by that descriptor (a real folder, this user's, mode 0700 or closer): the client
    sends its environment (tokens, keys) through the socket inside, so a folder another user
    planted, or renamed into place after a check by path, must never be used. Everything
    after this goes through the descriptor (`at`), so the folder checked is the folder used."""
    try:
        fd = posix.open(
            path, posix.O_RDONLY | posix.O_DIRECTORY | posix.O_NOFOLLOW | posix.O_CLOEXEC
        )
    except OSError:
        return None
    try:
        st = posix.fstat(fd)
    except OSError:
        st = None
    if (
        st is None
        or (st.st_mode & 0o170000) != 0o040000
        or st.st_uid != posix.geteuid()
        or st.st_mode & 0o077
    ):
        posix.close(fd)
        return None
    return fd


def at(folder_fd: int, folder: str, name: str) -> str:
    """A path naming `name` inside the folder open as `folder_fd`, however the folder's path
    changes meanwhile: through `/proc/self/fd` (Linux); where there is none, `folder` (macOS:
    its `$TMPDIR` is the user's own 0700 folder, no other user's to race)."""
    proc = f"/proc/self/fd/{folder_fd}"
    try:
        posix.stat(proc)
    except OSError:
        return f"{folder}/{name}"
    return f"{proc}/{name}"


def peer_ok(sock: "_socket.socket", same_program: bool = True) -> bool:
    """Whether the process listening at the other end is this user's and runs this interpreter
    (`SO_PEERCRED`: its uid, and its pid's executable; macOS: `LOCAL_PEERCRED`, the uid): a
    folder check alone can be raced, and another user's server would read this hook's whole
    environment and could answer with forged hook output. `same_program` False: the uid only
    (doctor asking this user's other servers what they are)."""
    import _socket

    try:
        if hasattr(_socket, "SO_PEERCRED"):  # Linux: struct ucred {pid, uid, gid}
            cred = sock.getsockopt(_socket.SOL_SOCKET, _socket.SO_PEERCRED, 12)
            pid = int.from_bytes(cred[0:4], sys.byteorder)
            if int.from_bytes(cred[4:8], sys.byteorder) != posix.geteuid() or pid <= 0:
                return False
            exe = posix.readlink(f"/proc/{pid}/exe")
            return not same_program or exe == posix.readlink("/proc/self/exe")
        if sys.platform == "darwin":  # LOCAL_PEERCRED: struct xucred {version, uid, ...}
            cred = sock.getsockopt(0, 0x001, 76)
            return int.from_bytes(cred[4:8], sys.byteorder) == posix.geteuid()
    except OSError:
        return False
    return False


# What makes a process's context (`context`): a child forked by a server started in another one
# would run the hook with the server's view of the files, limits and rights, not the caller's.
NAMESPACES = ("cgroup", "ipc", "mnt", "net", "pid", "time", "user", "uts")
STATUS_LINES = (b"Uid:", b"Gid:", b"Groups:", b"NoNewPrivs:", b"Seccomp:", b"Cap")


def _read(path: str) -> bytes:
    try:
        fd = posix.open(path, posix.O_RDONLY | posix.O_CLOEXEC)
    except OSError:
        return b"-"
    try:
        data = b""
        while chunk := posix.read(fd, 1 << 16):
            data += chunk
        return data
    except OSError:
        return b"-"
    finally:
        posix.close(fd)


def context(pid: str = "self") -> bytes:
    """Process `pid`'s context as one value (Linux, from `/proc`): its root folder, namespaces,
    credentials (uids, gids, groups, capabilities, no_new_privs, seccomp), resource limits,
    cgroup, nice value and security label. Two processes with equal contexts see the same files
    with the same rights and limits; the hook server serves only callers whose context equals
    its own (`hook_server._child`), and the socket's name includes it (`socket_path`), so a
    caller in another context finds a server of its own. Empty where there is no `/proc`."""
    base = f"/proc/{pid}/"
    try:
        root = posix.stat(base + "root")
    except OSError:
        return b""
    parts = [f"{root.st_dev}:{root.st_ino}".encode()]
    for ns in NAMESPACES:
        try:
            parts.append(posix.readlink(base + "ns/" + ns).encode())
        except OSError:
            parts.append(b"-")
    parts += [line for line in _read(base + "status").split(b"\n") if line.startswith(STATUS_LINES)]
    parts += [_read(base + "limits"), _read(base + "cgroup"), _read(base + "attr/current")]
    stat = _read(base + "stat").rpartition(b")")[2].split()
    parts.append(stat[16] if len(stat) > 16 else b"-")  # nice (field 19)
    return b"\n".join(parts)


def field(data: bytes) -> bytes:
    return len(data).to_bytes(4, "big") + data


def fields(buf: bytes | bytearray, start: int, count: int) -> tuple[list[bytes], int] | None:
    """`count` length-prefixed fields from `buf[start:]`, and the offset after them; None when
    `buf` ends inside one (the peer died mid-message)."""
    out = []
    pos = start
    for _ in range(count):
        if pos + 4 > len(buf):
            return None
        n = int.from_bytes(buf[pos : pos + 4], "big")
        pos += 4
        if pos + n > len(buf):
            return None
        out.append(bytes(buf[pos : pos + n]))
        pos += n
    return out, pos


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


def connect(path: str, same_program: bool = True) -> "_socket.socket | None":
    """A socket connected to this user's server listening at `path` (`CONNECT_TIMEOUT` set),
    or None when none answers there, its folder is not this user's own (checked by descriptor,
    `open_private_dir`) or the peer is not this user's server of this interpreter (`peer_ok`)."""
    folder, _, name = path.rpartition("/")
    fd = open_private_dir(folder)
    if fd is None:
        return None
    import _socket  # here, not at the top: the `off` path (in-process) never loads it

    sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    sock.settimeout(CONNECT_TIMEOUT)
    try:
        sock.connect(at(fd, folder, name))
        if not peer_ok(sock, same_program):
            raise ConnectionRefusedError(f"{path}: not this user's hook server")
    except OSError:
        sock.close()
        return None
    finally:
        posix.close(fd)
    return sock


def through_server(argv: list[str], stdin: bytes) -> str:
    """Run the hook in the server and, when its result arrives whole, write its output and end
    this process with its exit code. Otherwise the reason the caller must run it itself:
    `off`, `absent` (no server answering: the caller starts one), `stale` (its code changed: it
    is exiting; the caller starts a new one), `busy` (no answer in time: the caller starts one,
    which replaces a stopped server), `differs` (the server's context is no longer this
    process's, `context`: the caller starts one, which replaces it), `lost` (the child died or
    the reply was cut)."""
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
        if answer == b"D":
            return "differs"
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


def max_payload() -> int:
    """The largest payload sent to the server: the in-process cap (`config.max_hook_bytes`,
    read here without importing it); a larger one runs in-process, which refuses it and says so."""
    raw = _env("REWIND_LS_MAX_HOOK_BYTES")
    try:
        cap = int(raw) if raw else 0
    except ValueError:
        cap = 0
    return cap if cap > 0 else DEFAULT_MAX_PAYLOAD


def read_stdin() -> tuple[bytes, bool]:
    """The hook's whole stdin, and whether it was all read (a payload over `max_payload` is left
    for the in-process path, which refuses it by the same cap)."""
    cap = max_payload()
    data: bytes = sys.stdin.buffer.read(cap + 1)
    return data, len(data) <= cap


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


def make_folder(folder: str) -> int | None:
    """The socket folder, created 0700 when missing, open and checked (`open_private_dir`); None
    when it is not this user's private folder."""
    try:
        posix.mkdir(folder, 0o700)
    except FileExistsError:
        pass
    except OSError:
        return None
    return open_private_dir(folder)


def start_server() -> int | None:
    """Start a server for this interpreter and package (detached); its pid, None when one is
    already starting or the socket's folder is not this user's private one."""
    path = socket_path()
    folder, _, name = path.rpartition("/")
    fd = make_folder(folder)
    if fd is None:
        return None
    from rewind_ls.core.fs import detached

    try:
        marker = at(fd, folder, name + ".starting")
        if not detached.claim_start(marker, at(fd, folder, ""), 10.0):
            return None
        main = package_dir() + "/__main__.py"
        try:
            return detached.spawn_argv([sys.executable, "-I", "-S", main, "hook-server"])
        except OSError:
            detached.unclaim(marker)
            raise
    finally:
        posix.close(fd)


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
    start = reason in ("absent", "stale", "busy", "differs")
    return agent, Replay(head, sys.stdin.buffer), True, start


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
