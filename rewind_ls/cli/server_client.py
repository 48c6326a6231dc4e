"""The command line's fast path: hand a command to the per-user command-line server (a fork server,
`cli/served.py` over `core/agents/hook_server.py`) instead of importing the store, argparse and
the command in this process, the way Mercurial's chg does.

Loaded by `cli.main` before anything else, so it uses only what the interpreter has loaded
(`posix`, `sys`), `_socket` and `_signal` (not `os`, `socket` or `signal`: each costs more than
the exchange) and `core.agents.hook_client`'s helpers (the socket's path and framing).

The exchange on a Unix stream socket (fields: 4-byte big-endian length + bytes):
  client -> `C` argv cwd environ umask ppid stdio-encodings ignored-signals checks, with this
            process's fds 0, 1 and 2 (SCM_RIGHTS)
  child  -> `A` pid (ready) | `D` (it would not run the command as this process would)
            (or the server -> `S`: its code changed and it is exiting)
  client -> `G` (committed: from here the command runs there, and never here)
  child  -> `R` status (`c:N` exit code N, `s:N` killed by signal N), close
The child runs the command on the client's own stdin, stdout and stderr (`dup2` onto 0/1/2), so
its output, colours, `isatty`, terminal width and prompts are this process's. Signals this process
gets are forwarded to the child by pid (SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGWINCH; Ctrl-Z stops
the child with SIGSTOP, as SIGTSTP is discarded in the server's orphaned process group, then this
process; SIGCONT continues it); the child dies when this process goes away (kill -9 included).
Anything before `G` that fails returns a reason and the caller runs the command in this process,
exactly as without a server; after `G` it is never run here (a command is not idempotent).
"""

# No `from __future__ import annotations`: one more module to load.
import posix
import sys

from rewind_ls.core.agents.hook_client import caller_fields, connect, field, fields, socket_path

ROLE = "cli"
# Signals passed on to the child; the default action of all but SIGWINCH ends a process.
FORWARDED = ("SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT", "SIGWINCH")


def _env(name: bytes) -> bytes:
    value: bytes = posix.environ.get(name, b"")
    return value


def command_of(args: list[str]) -> str | None:
    """The command `args` names (after `-C DIR`), `--help`/`--version` as themselves, or None
    (no command: the picker)."""
    i = 0
    while i < len(args):
        arg = args[i]
        if arg in ("-C", "--workspace"):
            i += 2
        elif arg.startswith("--workspace=") or (arg.startswith("-C") and len(arg) > 2):
            i += 1
        elif arg.startswith("-"):
            return arg
        else:
            return arg
    return None


def _tty(fd: int) -> bool:
    try:
        return posix.isatty(fd)
    except OSError:
        return False


# Commands that stay in this process on a terminal: they may page (`less` reads keys from the
# controlling terminal, which the server's child does not have) or open the full-screen picker to
# choose a turn, and prompt (job control while a person reads the plan: Ctrl-Z must stop the
# command the shell knows).
TERMINAL_HERE = ("diff", "blame", "rewind", "revert", "undo", "summarize")


def served(args: list[str]) -> bool:
    """Whether this command line goes to the server. Not when the command's behaviour there could
    differ from this process's: `serve` and `mcp` (an editor's or an agent's long-lived server: it owns its process),
    `hook` (its own fast path), `demo`, no command (the full-screen picker), and
    `TERMINAL_HERE` on a terminal."""
    if _env(b"REWIND_LS_HOOK_SERVER") == b"0":
        return False
    name = command_of(args)
    if name is None or name in ("serve", "mcp", "hook", "demo", "hook-server", "cli-server"):
        return False
    return not (name in TERMINAL_HERE and (_tty(0) or _tty(1)))


def _stdio_encodings() -> bytes:
    """The encodings this interpreter chose for its stdio (locale, PYTHONIOENCODING, UTF-8 mode)
    and whether it is unbuffered (`-u`, PYTHONUNBUFFERED), which the child's must be."""
    out = []
    for stream in (sys.stdin, sys.stdout, sys.stderr):
        encoding = getattr(stream, "encoding", "") or ""
        errors = getattr(stream, "errors", "") or ""
        out.append(f"{encoding}:{errors}:{int(bool(getattr(stream, 'write_through', False)))}")
    return ",".join(out).encode()


def ignored_signals() -> bytes:
    """The forwarded signals this process ignores (e.g. SIGHUP under `nohup`): the child ignores
    them too, as this process would while running the command."""
    import _signal  # type: ignore[import-not-found]

    return b",".join(
        name.encode()
        for name in FORWARDED
        if _signal.getsignal(getattr(_signal, name)) == _signal.SIG_IGN
    )


def import_path() -> list[str]:
    """This process's `sys.path` without its first entry (the script's folder), which the
    server's must equal for a command to import there what it would here."""
    return sys.path if getattr(sys.flags, "safe_path", False) else sys.path[1:]


def checks(path: list[str]) -> bytes:
    """What must be the same in the server's interpreter for the command to behave as here: the
    interpreter's modes and where it imports from (another PYTHONPATH, `-I`, user site...)."""
    f = sys.flags
    modes = (f.utf8_mode, f.isolated, f.no_site, f.no_user_site, f.ignore_environment, f.optimize)
    text = f"{modes}:{sys.getfilesystemencoding()}:" + "\0".join(path)
    return text.encode("utf-8", "surrogateescape")


def request(argv: list[str]) -> bytes:
    parts = (
        *caller_fields(argv),
        str(posix.getppid()).encode(),
        _stdio_encodings(),
        ignored_signals(),
        checks(import_path()),
    )
    return b"C" + b"".join(field(p) for p in parts)


def _read(sock: object, head: bytes, count: int) -> list[bytes] | None:
    """`count` fields after the one-byte `head` the peer sends; None if it ended before."""
    buf = b""
    while True:
        if buf[:1] == head:
            parsed = fields(buf, 1, count)
            if parsed is not None:
                return parsed[0]
        elif buf:
            return None
        chunk = sock.recv(4096)  # type: ignore[attr-defined]
        if not chunk:
            return None
        buf += chunk


class _Forwarder:
    """This process's signal handlers while the child runs the command."""

    def __init__(self, pid: int) -> None:
        import _signal  # `signal` loads `enum`

        self.signal = _signal
        self.pid = pid
        self.last = 0  # the last signal passed on whose default action ends a process
        self.before: dict[int, object] = {}
        handlers = {name: self.forward for name in FORWARDED}
        handlers.update(SIGTSTP=self.stop, SIGCONT=self.cont)
        for name, handler in handlers.items():
            signum = getattr(_signal, name)
            self.before[signum] = _signal.getsignal(signum)
            if self.before[signum] != _signal.SIG_IGN:  # ignored here (nohup): ignored there
                _signal.signal(signum, handler)

    def _kill(self, signum: int) -> None:
        try:
            posix.kill(self.pid, signum)
        except OSError:
            pass

    def forward(self, signum: int, frame: object) -> None:
        if signum != self.signal.SIGWINCH:
            self.last = signum
        self._kill(signum)

    def stop(self, signum: int, frame: object) -> None:
        s = self.signal
        self._kill(s.SIGSTOP)
        s.signal(s.SIGTSTP, s.SIG_DFL)
        posix.kill(posix.getpid(), s.SIGTSTP)  # stops here until the shell continues this process
        s.signal(s.SIGTSTP, self.stop)
        self._kill(s.SIGCONT)

    def cont(self, signum: int, frame: object) -> None:
        self._kill(self.signal.SIGCONT)

    def restore(self) -> None:
        for signum, handler in self.before.items():
            self.signal.signal(signum, handler)

    def die_as_the_child(self, signum: int) -> None:
        """End this process by `signum` (the child's fate), as the command in-process would."""
        s = self.signal
        for name in FORWARDED:
            s.signal(getattr(s, name), s.SIG_DFL)
        sys.stdout.flush()
        posix.kill(posix.getpid(), signum)


def through_server(argv: list[str]) -> str:
    """Run the command line in the server and end this process with its exit status; else the
    reason the caller must run it itself: `absent` (no server: the caller starts one), `stale`
    (its code changed: the caller starts a new one), `busy`, `lost` (no usable answer before
    `G`), `differs` (the server's interpreter would not run it as this one would)."""
    sock = connect(socket_path(role=ROLE))
    if sock is None:
        return "absent"
    import _socket

    try:
        stdio = b"".join(fd.to_bytes(4, sys.byteorder) for fd in (0, 1, 2))
        try:
            sock.sendmsg([request(argv)], [(_socket.SOL_SOCKET, _socket.SCM_RIGHTS, stdio)])
            answer = sock.recv(1, _socket.MSG_PEEK)
        except OSError:  # no answer in time, or a closed fd 0/1/2 (EBADF)
            return "busy"
        if answer == b"S":
            return "stale"
        if answer == b"D":
            return "differs"
        try:
            ready = _read(sock, b"A", 1)
        except OSError:
            return "lost"
        if ready is None:
            return "lost"
        forwarder = _Forwarder(int(ready[0]))
        try:
            sock.sendall(b"G")
        except OSError:  # not sent: the child is gone and never saw it (it runs only on `G`)
            forwarder.restore()
            return "lost"
        sock.settimeout(None)  # committed: the command runs there, however long it takes
        while True:
            try:
                reply = _read(sock, b"R", 1)
                break
            except InterruptedError:
                continue
            except OSError:
                reply = None
                break
    finally:
        sock.close()
    if reply is None:
        return _gone(forwarder)
    kind, _, number = reply[0].decode("ascii", "replace").partition(":")
    status = int(number) if number.isdigit() else 1
    if kind == "s":
        forwarder.die_as_the_child(status)
    posix._exit(status)


def _gone(forwarder: _Forwarder) -> str:
    """The child ended without its reply after `G`: killed by a signal passed on (this process
    ends the same way) or by something else (said, exit 1). Never run again here."""
    if forwarder.last:
        forwarder.die_as_the_child(forwarder.last)
    sys.stderr.write("rewind-ls: the command's process in the command-line server ended early\n")
    sys.stderr.flush()
    posix._exit(1)


def start_server() -> None:
    """Start the command-line server (detached) after a command ran in this process."""
    from rewind_ls.core.agents.hook_client import start_server as start

    try:
        start(ROLE)
    except OSError:
        pass
