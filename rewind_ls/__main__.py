from rewind_ls.cli import main

raise SystemExit(main())
