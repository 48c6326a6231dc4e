"""`python -m bench`: see bench/run.py and bench/README.md; `python -m bench growth`: bench/growth.py;
`python -m bench history`: bench/history_bench.py (local history's cost)."""

import sys

if sys.argv[1:2] == ["history"]:
    from bench.history_bench import main as history_main

    raise SystemExit(history_main(sys.argv[2:]))

if sys.argv[1:2] == ["growth"]:
    from bench.growth import main

    raise SystemExit(main(sys.argv[2:]))

from bench.run import main

raise SystemExit(main())
