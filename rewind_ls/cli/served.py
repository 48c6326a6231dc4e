"""The command-line server: the hook server's loop (`core/agents/hook_server.py`) under its own
socket (`cli-…`, `python -I -S .../rewind_ls/__main__.py cli-server`), with the command line's
modules imported once, and one more request kind, `C` (`cli/server_client.py` has the exchange):
the forked child becomes the client's process (environment, folder, umask, stdio fds, signal
dispositions, stdio encodings) and runs the same entry point as in-process, `cli.app.run_cli`.

A separate server from the hooks' on purpose: the command line's modules (argparse, pydantic, the
protocol) double the server's memory, and forking a process costs with its size: measured, a
fork + exit went from 4.6-5.7 ms (the hook server's 25 MB) to 7.8-9.2 ms (48 MB), which every hook
would pay.

The command-line server: `hook_server.serve(role="cli", kinds={b"C": child}, preload,
rehearse=store.rehearse)`, started by `__main__.py cli-server` with `site` (as the console script),
its `sys.path` the client's (`checks`: a client whose interpreter or path differs is answered `D`
and runs here); `preload` imports the protocol, every cli module but the picker's and `demo`, and
builds the whole parser (`app.prebuild`); `child` becomes the client's process (environ, `tzset`,
`LC_CTYPE`, `faults.reread`, `shell_runs.HOOK_PARENT`, cwd, umask, fds dup2'd onto 0/1/2, stdio
rebuilt as the interpreter makes them with the client's encodings, signal dispositions) and runs
`app.run_cli` as `raise SystemExit(main())` would (non-daemon threads joined, atexit, flush), then
replies `R`; a thread reading the socket SIGKILLs the child when its client goes (kill -9 of the
command). A separate server from the hooks': forking costs with the process's size, and the CLI's
modules double it.
"""

from __future__ import annotations

import _thread
import io
import os
import signal
import socket
import sys
import time
from typing import NoReturn

from rewind_ls.cli.server_client import FORWARDED, ROLE, checks
from rewind_ls.core.agents.hook_client import field
from rewind_ls.core.agents.hook_server import die_with_client, read_request, replied, serve

# Imported by the server besides every module of the core: what the commands import lazily.
PRELOAD = ("argparse", "locale", "json", "shutil", "difflib", "orjson")
# Never imported by the server: the language server's (pygls) and the picker's (prompt_toolkit)
# modules: commands run through the server do not use them.
SKIP = ("rewind_ls.cli.picker", "rewind_ls.cli.pick_cmd", "rewind_ls.cli.demo")


def serve_cli(main_file: str) -> int:
    """`__main__.py cli-server` (`main_file`: its path), started with `site`, as the console
    script is (`hook_client.start_server`). `sys.path` loses what running that file added (the
    package's parent first, the file's folder), and must then equal a client's."""
    global _CHECKS
    site_path = [p for p in sys.path[1:] if p != os.path.dirname(main_file)]
    sys.path[:] = site_path
    _CHECKS = checks(site_path)
    from rewind_ls.core.store import rehearse

    return serve(role=ROLE, kinds={b"C": child}, preload=preload, rehearse=rehearse)


_CHECKS = b""  # this server's `checks`, as a client computes its own


def preload() -> None:
    import importlib
    import pkgutil

    import rewind_ls.cli
    import rewind_ls.protocol

    names = [*PRELOAD]
    for package in (rewind_ls.protocol, rewind_ls.cli):
        for module in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
            if not module.name.startswith(SKIP):
                names.append(module.name)
    for name in names:
        try:
            importlib.import_module(name)
        except Exception:  # imported (or reported) by the child that needs it, as in-process
            pass
    from rewind_ls.cli.app import prebuild

    prebuild()


def child(conn: socket.socket, fds: list[int]) -> NoReturn:
    """The `C` request, in the server's forked child: check, answer `A`, wait for `G`, run."""
    try:
        parts = read_request(conn, 8)
        if parts is None or len(fds) != 3:
            os._exit(0)
        if parts[7] != _CHECKS:
            conn.sendall(b"D")
            os._exit(0)
        conn.sendall(b"A" + field(str(os.getpid()).encode()))
        if conn.recv(1) != b"G":
            os._exit(0)  # the client gave up before `G` and runs the command itself
        conn.settimeout(None)
    except BaseException:
        os._exit(0)
    _thread.start_new_thread(die_with_client, (conn,))
    argv = _become(parts, fds)
    status = _run(argv)
    # The caller's stdout and stderr are let go before the reply, as the command's exit would
    # (a reader waiting for their end, e.g. `$(rewind-ls turns)`, need not wait for this
    # process's own exit, a few ms for an interpreter this size).
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    replied()
    try:
        conn.sendall(b"R" + field(status.encode()))
    except OSError:
        pass
    os._exit(0)


def _become(parts: list[bytes], fds: list[int]) -> list[str]:
    """Take the client's process state; its argv."""
    argv, cwd, environ, umask, ppid, encodings, ignored, _checks = parts
    os.environb.clear()
    for entry in environ.split(b"\0") if environ else ():
        key, _, value = entry.partition(b"=")
        if key:
            os.environb[key] = value
    time.tzset()
    import locale

    try:
        locale.setlocale(locale.LC_CTYPE, "")  # as the interpreter does at its start
    except locale.Error:
        pass
    from rewind_ls.core.capture import shell_runs
    from rewind_ls.core.fs import faults

    faults.reread()  # read at import, in the server
    shell_runs.HOOK_PARENT = int(ppid)  # an agent is the client's ancestor, not the server's
    os.chdir(cwd)
    os.umask(int(umask))
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
    for fd in fds:
        if fd > 2:
            os.close(fd)
    _stdio(encodings.decode())
    names = ignored.decode().split(",") if ignored else []
    for name in FORWARDED:
        signum = getattr(signal, name)
        if name in names:
            signal.signal(signum, signal.SIG_IGN)
        elif name == "SIGINT":
            signal.signal(signum, signal.default_int_handler)
        else:
            signal.signal(signum, signal.SIG_DFL)
    sys.argv = [os.fsdecode(a) for a in argv.split(b"\0")]
    return sys.argv


def _stdio(encodings: str) -> None:
    """sys.stdin/stdout/stderr as the interpreter makes them at its start (buffered, line
    buffered on a terminal and always for stderr, no newline translation), with the client's
    encodings."""
    streams = []
    for fd, spec in enumerate(encodings.split(",")):
        encoding, errors, unbuffered = ([*spec.split(":"), "", "", ""])[:3]
        write_through = fd > 0 and unbuffered == "1"
        mode = "rb" if fd == 0 else "wb"
        raw = io.open(fd, mode, buffering=0 if write_through else -1, closefd=False)  # noqa: UP020, SIM115
        tty = os.isatty(fd)
        streams.append(
            io.TextIOWrapper(
                raw,
                encoding=encoding or None,
                errors=errors or None,
                newline="\n",
                line_buffering=tty or fd == 2,
                write_through=write_through,
            )
        )
    sys.stdin, sys.stdout, sys.stderr = streams
    sys.__stdin__, sys.__stdout__, sys.__stderr__ = streams  # type: ignore[misc]


def _run(argv: list[str]) -> str:
    """Run the command line as the interpreter runs `raise SystemExit(main())`, through to its
    shutdown (threads joined, atexit, stdio flushed); its status: `c:N` or `s:N` (killed by N)."""
    status = "c:0"
    try:
        from rewind_ls.cli.app import run_cli

        status = _code(run_cli(argv[1:]))
    except SystemExit as exc:
        status = _code(exc.code)
    except KeyboardInterrupt as exc:
        sys.excepthook(type(exc), exc, exc.__traceback__)
        status = f"s:{signal.SIGINT.value}"
    except BaseException as exc:
        sys.excepthook(type(exc), exc, exc.__traceback__)
        status = "c:1"
    try:
        import threading

        # What the interpreter's exit does: wait for the threads that are not daemons (every
        # pool of ours is shut down by its user, so none waits for an exit hook).
        me = threading.current_thread()
        for thread in threading.enumerate():
            if thread is not me and not thread.daemon:
                thread.join()
        import atexit

        atexit._run_exitfuncs()
    except BaseException:
        pass
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:
            if status == "c:0":
                status = "c:120"  # the interpreter's status when flushing stdout fails at exit
    return status


def _code(code: object) -> str:
    if code is None:
        return "c:0"
    if isinstance(code, int):
        return f"c:{code & 0xFF}"
    sys.stderr.write(f"{code}\n")
    return "c:1"
