"""What a scan could not record, by name: unreadable files, a folder or link where a file was
(`META_UNRECORDED`, written by each scan), and the symbolic links made or re-pointed since
recording began (`META_LINKS`: links are not recorded, so a rewind leaves them). `turns`,
`doctor` and previews show `unrecorded`."""

from __future__ import annotations

import json
import os
import stat as stat_mod

TYPE_CHECKING = False
if TYPE_CHECKING:
    from rewind_ls.core.store import Store

META_UNRECORDED = "scan.unrecorded"  # JSON list of "path: reason" the last scan could not record
# JSON {path: target} of the symbolic links made or re-pointed since recording began: not recorded
# (a rewind leaves them), so named by `unrecorded` for as long as they are there.
META_LINKS = "scan.links"


def unrecorded(store: Store) -> list[str]:
    """ "path: reason" for every file the last scan could not record (unreadable, a link or a
    folder where a file was), and every symbolic link made or re-pointed since recording began."""
    raw = store.meta(META_UNRECORDED)
    try:
        found = json.loads(raw) if raw else []
    except ValueError:
        found = []
    out = [str(x) for x in found] if isinstance(found, list) else []
    for rel, target in sorted(_links(store).items()):
        out.append(
            f"{rel}: a symbolic link (-> {target}) made or re-pointed after recording began; "
            "links are not recorded, and a rewind leaves it as it is"
        )
    return out


def _links(store: Store) -> dict[str, str]:
    raw = store.meta(META_LINKS)
    try:
        found = json.loads(raw) if raw else {}
    except ValueError:
        return {}
    return {str(k): str(v) for k, v in found.items()} if isinstance(found, dict) else {}


def note_links(
    store: Store, listed: list[tuple[str, os.stat_result]], watermark: int | None
) -> None:
    """Remember the links `listed` made or re-pointed since the previous scan (`ln -s`, `ln -sf`
    give the link a new ctime), and forget remembered ones that are no longer links."""
    links = _links(store)
    before = dict(links)
    for rel, st in listed:
        if watermark is not None and st.st_ctime_ns >= watermark:
            try:
                links[rel] = os.readlink(os.path.join(store.root, *rel.split("/")))
            except OSError:
                continue
    for rel in list(links):
        try:
            still = stat_mod.S_ISLNK(os.lstat(os.path.join(store.root, *rel.split("/"))).st_mode)
        except OSError:
            still = False
        if not still:
            del links[rel]
    if links != before:
        store.set_meta(META_LINKS, json.dumps(links, sort_keys=True))
