"""`python -m rewind_ls`, the agents' hook command `PYTHON -I -S /abs/rewind_ls/__main__.py hook
AGENT` (a script is compiled on every run, never cached: the rest is in core/agents/hook_client.py,
whose `command` sets `sys.path` and tries the hook server), and the hook server's start."""

import sys

if not __package__:  # run as a file (the hook command), not as `python -m`
    import posix

    here = __file__ if __file__[:1] == "/" else f"{posix.getcwd()}/{__file__}"
    sys.path.insert(0, here.rpartition("/")[0].rpartition("/")[0] or "/")
    from rewind_ls.core.agents.hook_client import command

    todo = command(sys.argv)  # ends here if the server ran the hook; sets `sys.path`
    if todo is not None:  # the hook, in this process
        from rewind_ls.core.agents.hook_process import run

        raise SystemExit(run(*todo))
    if sys.argv[1:] == ["hook-server"]:
        from rewind_ls.core.agents.hook_server import serve

        raise SystemExit(serve())

from rewind_ls.cli import main  # after the path is set

raise SystemExit(main())
