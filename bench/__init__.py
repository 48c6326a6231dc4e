"""The rewind-ls benchmark suite (not part of the unit tests): `python -m bench --help`."""
