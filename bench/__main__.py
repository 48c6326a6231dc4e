"""`python -m bench`: see bench/run.py and bench/README.md; `python -m bench growth`: bench/growth.py."""

import sys

if sys.argv[1:2] == ["growth"]:
    from bench.growth import main

    raise SystemExit(main(sys.argv[2:]))

from bench.run import main

raise SystemExit(main())
