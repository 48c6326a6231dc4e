"""The checkpoint store: one SQLite database (WAL) per workspace, outside the workspace, and the only
place in rewind-ls that knows SQL or the schema. Everything else asks `Store` (facade.py).

Layout: `<home>/workspaces/<sha256(root)[:16]>/store.sqlite3`. Content is addressed by its SHA-256
and stored once: small contents written together (a baseline) go into zstd packs, others into
their own zstd frame (see `codec`), and an older version of a file stored on its own is re-encoded
as a delta against its newer version, so the newest content is always one decompression away. Every
write happens in one `BEGIN IMMEDIATE` transaction, so a process killed at any instant leaves the
last committed checkpoint whole, and several processes (agent hooks, the server, the CLI) can write
at once.

The modules, each with one job, lowest first: `codec` and `delta` (encodings); `db` (opening, the
schema and its migrations, the writer transaction, `meta`); `rows` (columns to records); the
records: `sessions` (sessions, turns), `changes` (changes, the agent's ids), `known` (the last
known version of each path); the contents: `packs`, `blobs`; `moved` (a moved workspace's store
follows it); `facade` (`Store`); and the maintenance verbs over a store: `repair` (salvage a
damaged store), `gc` (retention).

May import: the standard library (sqlite3 only here), zstandard (lazily, in `codec`),
`core.model`, `core.errors`, `core.text`, `core.fs`. Nothing above the store.
"""

from __future__ import annotations

# The version vocabulary, re-exported for the modules that took it from here before `model`
# existed (other branches' blob and scan code); new code imports it from `model`.
from rewind_ls.core.model import ABSENT as ABSENT
from rewind_ls.core.model import ABSENT_VERSION as ABSENT_VERSION
from rewind_ls.core.model import FILE as FILE
from rewind_ls.core.model import OTHER as OTHER
from rewind_ls.core.model import TOO_LARGE as TOO_LARGE
from rewind_ls.core.model import UNKNOWN as UNKNOWN
from rewind_ls.core.model import Version as Version
from rewind_ls.core.model import too_large as too_large
from rewind_ls.core.store import codec as codec
from rewind_ls.core.store.blobs import digest as digest

# The blob codecs, re-exported for the readers that hand the store encoded payloads.
from rewind_ls.core.store.codec import DELTA as DELTA
from rewind_ls.core.store.codec import PACKED as PACKED
from rewind_ls.core.store.codec import RAW as RAW
from rewind_ls.core.store.codec import ZLIB as ZLIB
from rewind_ls.core.store.codec import ZSTD as ZSTD
from rewind_ls.core.store.db import DB_NAME as DB_NAME
from rewind_ls.core.store.db import SCHEMA_VERSION as SCHEMA_VERSION
from rewind_ls.core.store.db import DatabaseError as DatabaseError
from rewind_ls.core.store.db import DbError as DbError
from rewind_ls.core.store.db import OperationalError as OperationalError
from rewind_ls.core.store.db import has_store as has_store
from rewind_ls.core.store.db import is_damage as is_damage
from rewind_ls.core.store.db import is_full as is_full
from rewind_ls.core.store.db import rehearse as rehearse
from rewind_ls.core.store.db import store_dir_for as store_dir_for
from rewind_ls.core.store.db import store_error as store_error
from rewind_ls.core.store.db import workspace_key as workspace_key
from rewind_ls.core.store.facade import Store as Store
from rewind_ls.core.store.moved import find_moved_store as find_moved_store
from rewind_ls.core.store.moved import orphan_roots as orphan_roots
from rewind_ls.core.store.moved import reattach as reattach
from rewind_ls.core.store.moved import store_root as store_root
from rewind_ls.core.store.repair import salvage as salvage
from rewind_ls.core.store.rows import MAX_PROMPT_CHARS as MAX_PROMPT_CHARS
from rewind_ls.core.store.rows import bounded_prompt as bounded_prompt
from rewind_ls.core.store.rows import prompt_matches as prompt_matches
