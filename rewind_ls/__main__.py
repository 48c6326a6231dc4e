"""`python -m rewind_ls`, the hook command `PYTHON -I -S /abs/rewind_ls/__main__.py hook AGENT`
(compiled on every run: the rest is in core/agents/hook_client.py) and the hook server's start."""

import sys

if not __package__:  # run as a file (the hook command), not as `python -m`
    import posix

    here = __file__ if __file__[:1] == "/" else f"{posix.getcwd()}/{__file__}"
    sys.path.insert(0, here.rpartition("/")[0].rpartition("/")[0] or "/")
    try:
        from rewind_ls.core.agents.hook_client import command

        todo = command(sys.argv)  # ends here when the server ran it
        if todo is not None:  # in this process
            from rewind_ls.core.agents.hook_inprocess import run_here

            raise SystemExit(run_here(todo))
    except (ImportError, SyntaxError) as exc:  # pip replacing it: one line, exit 0
        sys.stderr.write(f"rewind-ls hook: being installed ({exc}); not recorded\n")
        raise SystemExit(0) from None
    if sys.argv[1:] == ["hook-server"]:
        from rewind_ls.core.agents.hook_server import serve

        raise SystemExit(serve())

from rewind_ls.cli import main  # after the path is set

raise SystemExit(main())
