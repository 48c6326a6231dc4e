"""The first checkpoint's contents: packed in the reading threads (`file_reader.read_many`), one
pack per run of files about `codec.PACK_TARGET` long whatever the size of the transactions that
write them, and stored once each, even when a content was stored meanwhile or repeats."""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterator
from pathlib import Path

import pytest

from rewind_ls.core.capture import scan as scan_mod
from rewind_ls.core.store import Store, codec


@pytest.fixture
def store(ws: Path, home: Path) -> Iterator[Store]:
    s = Store.open(str(ws), str(home))
    try:
        yield s
    finally:
        s.close()


def _no_change(found: object) -> str | None:
    raise AssertionError(f"no change expected, got {found!r}")


def _text(i: int, size: int) -> bytes:
    return (hashlib.sha256(str(i).encode()).hexdigest() + "\n").encode() * (size // 65)


def test_the_workers_packs_are_not_cut_by_its_small_transactions(ws: Path, store: Store) -> None:
    files: dict[str, bytes] = {}
    for i in range(3000):
        rel = f"d{i // 100}/f{i:04d}.txt"
        files[rel] = _text(i, 3000)
        (ws / rel).parent.mkdir(parents=True, exist_ok=True)
        (ws / rel).write_bytes(files[rel])
    # The worker's scan: small transactions (a hook waits for the lock at most one of them).
    result = scan_mod.scan(store, _no_change, None, workers=2, adopt_only=True)
    assert result.baseline_complete and result.adopted == len(files)
    raw = sum(map(len, files.values()))
    # Packs as long as the runs the threads read (bigger packs compress better), not one per
    # transaction of 500 files (six here).
    assert store.pack_count() <= math.ceil(raw / codec.PACK_TARGET) + 1
    versions = store.known_versions(sorted(files))
    blobs = store.get_blobs({v.hash for v, _ in versions.values() if v.hash})
    for rel, data in files.items():
        assert blobs[versions[rel][0].hash] == data, rel  # type: ignore[index]


def test_a_built_pack_stores_only_the_contents_not_stored_yet(store: Store) -> None:
    old, new, twice = b"stored before " * 50, b"new content " * 50, b"in two packs " * 50
    h_old, h_new, h_twice = (hashlib.sha256(x).hexdigest() for x in (old, new, twice))
    store.put_blob(old)
    first = list(codec.build_packs([(h_old, old), (h_twice, twice)]))
    second = list(codec.build_packs([(h_twice, twice), (h_new, new)]))
    neither = list(codec.build_packs([(h_old, old), (h_twice, twice)]))
    before = store.pack_count()
    with store.transaction():
        store.insert_built_packs(first + second + neither)
    # `first` (for `twice`) and `second` (for `new`); `neither` holds nothing new: not written.
    assert store.pack_count() == before + 2
    assert store.get_blobs([h_old, h_new, h_twice]) == {h_old: old, h_new: new, h_twice: twice}
    assert store.stats()["blobs"] == 3
