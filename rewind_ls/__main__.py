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

import os
import sys


def _site_packages() -> list[str]:
    """The interpreter's site-packages folders as `site` would list them, without `site` itself or
    its `.pth` processing: a virtualenv's (found, as `site` finds it, by the `pyvenv.cfg` beside
    or above the executable; without `site`, `sys.prefix` is still the base interpreter's), then,
    outside a venv or when it includes them, the base interpreter's."""
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
    package_dir = os.path.dirname(os.path.abspath(__file__))
    sys.path[:] = [os.path.dirname(package_dir)] + [
        p for p in sys.path if os.path.abspath(p) != package_dir
    ]
    sys.path += [p for p in _site_packages() if p not in sys.path]
    if os.environ.get("REWIND_LS_HOOK_CHECK"):
        _check_reachable()


if not __package__:  # run as a file (the hook command), not as `python -m rewind_ls`
    _launch_path()
    if len(sys.argv) == 3 and sys.argv[1] == "hook":
        from rewind_ls.core.agents.hook_process import run

        raise SystemExit(run(sys.argv[2]))

from rewind_ls.cli import main  # noqa: E402 (after the path is set)

raise SystemExit(main())
