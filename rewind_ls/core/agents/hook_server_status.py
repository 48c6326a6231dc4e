"""This user's hook servers seen from outside (doctor, the tests, the benchmark): what the one
of this process says of itself (`status`), the others that run this code for this home (another
interpreter's: `python3` vs `python`), and why none can run (`folder_problem`)."""

from __future__ import annotations

import os

from rewind_ls.core.agents.hook_client import connect, package_dir, socket_path
from rewind_ls.core.fs import config


def status(home: str | None = None, path: str | None = None) -> dict[str, str] | None:
    """What the running server says of itself (pid, python, code, home, since, served: spares
    forked, spare: the one answering; stale: the file that changed), or None; `home`: the server
    of that `REWIND_LS_HOME` rather than this process's; `path`: the server at that socket, of
    any interpreter of this user's. Asked through the hooks' own checked connection
    (`hook_client.connect`)."""
    sock = connect(path or socket_path(home), same_program=path is None)
    if sock is None:
        return None
    try:
        sock.sendall(b"?")
        data = b""
        while chunk := sock.recv(4096):
            data += chunk
    except OSError:
        return None
    finally:
        sock.close()
    info = {}
    for line in data.decode("utf-8", "replace").splitlines():
        key, _, value = line.partition("=")
        info[key] = value
    return info or None


def others(home: str | None = None) -> list[dict[str, str]]:
    """This user's other hook servers in the socket folder (another interpreter's, another
    context's) that run this code for this home (`home`: another than this process's): the
    status of each."""
    folder, _, mine = socket_path(home).rpartition("/")
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return []
    found = []
    want = os.path.abspath(home or config.home_dir())
    for name in names:
        if name == mine or not name.startswith("hook-") or "." in name:
            continue
        info = status(path=f"{folder}/{name}")
        if info and info.get("code") == package_dir() and info.get("home") == want:
            found.append(info)
    return found


def folder_problem(home: str | None = None) -> str | None:
    """Why no hook server can run for this process (its socket folder is not this user's own
    private folder), or None."""
    folder = socket_path(home).rpartition("/")[0]
    try:
        st = os.lstat(folder)
    except FileNotFoundError:
        return None  # the first hook makes it
    except OSError as exc:
        return f"{folder}: {exc.strerror}"
    if not os.path.isdir(folder) or os.path.islink(folder):
        return f"{folder} is not a folder"
    if st.st_uid != os.geteuid():
        return f"{folder} is owned by user {st.st_uid}, not by you (user {os.geteuid()})"
    if st.st_mode & 0o077:
        return f"{folder} is open to other users (mode {st.st_mode & 0o777:o}, not 700)"
    return None
