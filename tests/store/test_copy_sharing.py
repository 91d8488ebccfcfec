"""Reader copies share the collection files nothing changes in place, by hard link.

A hard link shares the inode: a file changed in place would change every copy that links it,
under its readers. These tests hold zvec and RocksDB to the rule the copy relies on
(:data:`ragit.store.copies.shared_file`): a published copy's files keep their bytes through
later inserts, deletions, merges and read-only opens of the canonical collection.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest
from _store_helpers import DIMS, PROFILE, rows, write_and_publish

from ragit.store._zvec import Collection
from ragit.store.compact import merge_held
from ragit.store.copies import canonical_path, copy_path, shared_file
from ragit.store.lock import WriterLock
from ragit.store.meta import read_meta
from ragit.store.publishing import publish
from ragit.store.writer import StoreWriter
from ragit.workspace import Workspace


def _files(root: Path) -> dict[str, Path]:
    return {p.relative_to(root).as_posix(): p for p in root.rglob("*") if p.is_file()}


def _digests(root: Path) -> dict[str, str]:
    return {rel: hashlib.sha256(p.read_bytes()).hexdigest() for rel, p in _files(root).items()}


def _current_copy(ws: Workspace) -> Path:
    meta = read_meta(ws)
    assert meta is not None
    return copy_path(ws, meta.store_id, meta.generation)


def test_a_copy_links_the_immutable_files_and_copies_the_rest(ws: Workspace) -> None:
    """Column files, id-map tables and the keyword index (which a writer gives an inode of
    its own before changing it) are one inode in the store and its copy; the vector index
    (rewritten on every open) and RocksDB's manifest are not."""
    write_and_publish(ws, rows("a", 300))
    write_and_publish(ws, rows("b", 40))
    copy, canonical = _current_copy(ws), canonical_path(ws)
    linked = []
    for rel, path in _files(copy).items():
        source = canonical / rel
        same = source.exists() and os.stat(source).st_ino == os.stat(path).st_ino
        assert same == shared_file(rel), rel
        if same:
            linked.append(rel)
    assert any(rel.endswith(".ipc") for rel in linked), linked
    assert any(rel.endswith(".sst") for rel in linked), linked
    assert "ragit-terms.sqlite" in linked, linked
    assert not any(rel.endswith(".proxima") for rel in linked), linked


@pytest.mark.parametrize("first", [300, 100])
def test_a_published_copy_keeps_its_bytes_through_later_writes(
    ws: Workspace, tmp_path: Path, first: int
) -> None:
    """Inserts, deletions, a merge, read-only opens and pruning leave every shared file of
    an earlier generation's copy as it was published (each is held by a witness link, so
    the check outlives the copy's pruning). After 300 rows zvec adds later writes' files to
    the same segment; after 100 it starts a segment per write, and they are merged."""
    write_and_publish(ws, rows("a", first))
    write_and_publish(ws, rows("b", 40))
    copy = _current_copy(ws)
    witness = tmp_path / "witness"
    witness.mkdir()
    before: dict[str, str] = {}
    for rel, path in _files(copy).items():
        if shared_file(rel):
            name = rel.replace("/", "__")
            os.link(path, witness / name)
            before[name] = hashlib.sha256(path.read_bytes()).hexdigest()
    assert before
    write_and_publish(ws, rows("c", 25))
    with WriterLock.acquire(ws, command="test", head_sha=None) as lock:
        merged = merge_held(ws, lock)
        assert merged == ("merged" if first == 100 else "already one segment")
        publish(ws, lock)
        with StoreWriter.open(ws, lock, embedding=PROFILE, dimensions=DIMS) as writer:
            writer.delete([f"a-{i:05d}" for i in range(0, first, 7)])
        publish(ws, lock)
    for _ in range(2):
        collection = Collection.open(canonical_path(ws), read_only=True)
        collection.close()
    write_and_publish(ws, rows("d", 10))
    assert not copy.exists()  # pruned: two newer generations were published
    assert _digests(witness) == before
