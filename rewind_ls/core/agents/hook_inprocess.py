"""The hook in the hook command's own process, when no server ran it (`__main__.py`, after
`hook_client.command`): `run_here`, which waits a little for a package being replaced under it
(a `pip install` of a new version) rather than fail with a traceback. Its own module: the hook
client must not import the hook process (`hook_process` imports the client to start a server)."""

from __future__ import annotations

import sys

# How long a hook waits for the package to be whole again when an import fails (a `pip install`
# of a new version replaces its files one by one under running hooks).
INSTALL_WAIT = 2.0


def run_here(todo: tuple[str, object, bool | None, bool]) -> int:
    """The hook in this process (`hook_process.run` with `command`'s arguments). When its
    modules cannot be imported (a `pip install` replacing them), they are tried again for up to
    `INSTALL_WAIT` seconds, so the event is still recorded once the new files are in; after that
    the hook says so in one line and exits 0 (never a traceback: the agent shows it)."""
    import time

    deadline = time.monotonic() + INSTALL_WAIT
    while True:
        try:
            from rewind_ls.core.agents.hook_process import run
            from rewind_ls.core.agents.registry import AGENTS

            if todo[0] in AGENTS:
                AGENTS[todo[0]].handler()  # the agent's modules, imported here rather than in run
            break
        except (ImportError, SyntaxError) as exc:
            if time.monotonic() > deadline:
                sys.stderr.write(f"rewind-ls hook: being installed ({exc}); not recorded\n")
                return 0
            import importlib

            importlib.invalidate_caches()  # the new files, in folders whose listing was cached
            time.sleep(0.1)
    return run(*todo)
