"""`python -m rewind_ls`, and the agents' hook command: `PYTHON -I -S /abs/rewind_ls/__main__.py hook AGENT`.

Every tool call runs two hooks, and Python's start-up with `site` (the venv's `.pth` files, the
editable-install finder) costs more than the hook's own work. So the command written into the
agents' settings (`core.agents.settings.default_command`) starts the interpreter isolated and without
`site` and runs this file as a script (the file, not the folder, which would load `runpy`). Then
`sys.path` holds neither this folder nor its parent: `_launch_path` puts there only what the hook
path needs, the folder holding the
`rewind_ls` package (found from this file's own path, so an editable install works too) and the
interpreter's own site-packages (zstandard, read by a scan's packs), without reading any `.pth`
file. `tests/test_hook_imports.py` holds each hook event to a budget of imported modules.
"""

import sys


def _site_packages() -> list[str]:
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


def _launch_path() -> None:
    import os

    package_dir = os.path.dirname(os.path.abspath(__file__))
    parent = os.path.dirname(package_dir)
    sys.path[:] = [parent] + [
        p for p in sys.path if os.path.abspath(p) not in (package_dir, parent)
    ]
    sys.path += [p for p in _site_packages() if p not in sys.path]
    if os.environ.get("REWIND_LS_HOOK_CHECK"):
        _check_reachable()


def _hook(agent: str) -> int:
    """The hook command: through the hook server when one answers (its client loads nothing but
    `_socket`, not even `os`), else in this process with the same stdin bytes, starting the server
    when there was none (`core/agents/hook_client.py`)."""
    import posix  # built in and loaded at start-up, unlike `os`

    # Off, or doctor's probe of this process's own `sys.path`: no server, no client.
    if posix.environ.get(b"REWIND_LS_HOOK_SERVER") == b"0" or posix.environ.get(
        b"REWIND_LS_HOOK_CHECK"
    ):
        _launch_path()
        from rewind_ls.core.agents.hook_process import run

        return run(agent)
    here = __file__ if __file__.startswith("/") else f"{posix.getcwd()}/{__file__}"
    sys.path.insert(0, here.rpartition("/")[0].rpartition("/")[0] or "/")
    from rewind_ls.core.agents import hook_client

    try:
        head, whole = hook_client.read_stdin()
    except (OSError, ValueError, AttributeError):  # no stdin at all: the in-process path says so
        _launch_path()
        from rewind_ls.core.agents.hook_process import run

        return run(agent)
    reason = hook_client.through_server(sys.argv, head) if whole else "big"
    _launch_path()
    from rewind_ls.core.agents.hook_process import run

    stdin = hook_client.Replay(head, sys.stdin.buffer)
    return run(agent, stdin, whole_process=True, start_server=reason in ("absent", "stale"))


if not __package__:  # run as a file (the hook command), not as `python -m rewind_ls`
    if len(sys.argv) == 3 and sys.argv[1] == "hook":
        raise SystemExit(_hook(sys.argv[2]))
    _launch_path()
    if sys.argv[1:] == ["hook-server"]:
        from rewind_ls.core.agents.hook_server import serve

        raise SystemExit(serve())

from rewind_ls.cli import main  # noqa: E402 (after the path is set)

raise SystemExit(main())
