"""Replacing the whole store: build `.ragit/store.next`, verify, swap (rebuild and migration).

``store rebuild`` and ``migrate embeddings`` never modify the live store. They
build a complete new store in ``.ragit/store.next/`` (its own ``meta.json``
with a new ``storeId``), verify every expected chunk id and the row count, then
swap directories under the writer lock:

1. ``store`` → ``store.prev`` (skipped when there is no live store),
2. ``store.next`` → ``store``,
3. publish a reader copy of the new store, delete ``store.prev``.

An exception between the first rename and the end of the publish (SIGINT, a failed
write) swaps back: the previous store is live again and ``store.next`` is residue.
A crash (kill -9) between the renames leaves ``store.next`` complete and no ``store``;
:func:`recover_swap` (run by every writer right after it takes the lock) finishes
the swap. A crash before the first rename leaves the old store untouched and a
``store.next`` residue that the next build discards. Manifests are never touched.

Segment merges (:mod:`ragit.store.compact`) use the same swap; a writer's inline merge swaps
without step 3 and publishes with the rest of its write.
"""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ragit import _faults as faults
from ragit import _json
from ragit._fs import atomic_write_text, fsync_dir
from ragit.contract.errors import RagitError, SnapshotStoreUnavailable
from ragit.store._copy import remove_tree
from ragit.store._zvec import MAX_BATCH, Collection
from ragit.store.lock import WriterLock
from ragit.store.meta import (
    COLLECTION_DIR,
    META_NAME,
    SCHEMA_VERSION,
    StoreMeta,
    next_dir,
    now_iso,
    prev_dir,
    read_meta,
)
from ragit.store.publishing import publish, write_referenced
from ragit.store.rows import ChunkRow
from ragit.store.terms import TermWriter
from ragit.workspace import Workspace

__all__ = [
    "COMPLETE_MARK",
    "build_replacement",
    "recover_swap",
    "swap_in",
]

COMPLETE_MARK = "complete"


def _next_is_complete(ws: Workspace) -> bool:
    try:
        raw = _json.loads((next_dir(ws) / META_NAME).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(raw, dict) and raw.get("buildState") == COMPLETE_MARK


def recover_swap(ws: Workspace, lock: WriterLock) -> list[str]:
    """Finish or discard a store replacement a crash interrupted; returns warnings."""
    lock.assert_held()
    warnings: list[str] = []
    live = ws.store_dir
    nxt = next_dir(ws)
    prev = prev_dir(ws)
    if nxt.exists() and not live.exists() and _next_is_complete(ws):
        os.replace(nxt, live)
        fsync_dir(ws.ragit_dir)
        warnings.append("finished a store replacement that was interrupted before its swap")
    elif nxt.exists():
        remove_tree(nxt)
        warnings.append("discarded an unfinished store replacement (.ragit/store.next)")
    if prev.exists() and live.exists():
        remove_tree(prev)
    elif prev.exists() and not live.exists():
        os.replace(prev, live)
        fsync_dir(ws.ragit_dir)
        warnings.append("restored the previous store after an interrupted replacement")
    return warnings


def build_replacement(
    ws: Workspace,
    lock: WriterLock,
    *,
    embedding: Mapping[str, Any],
    batches: Iterable[Sequence[ChunkRow]],
    expected_ids: set[str],
) -> StoreMeta:
    """Build a complete store in ``.ragit/store.next`` from ``batches`` and verify it.

    Raises:
        SnapshotStoreUnavailable: zvec refused, or the built store lacks expected ids.
    """
    lock.assert_held()
    nxt = next_dir(ws)
    remove_tree(nxt)
    nxt.mkdir(parents=True)
    dimensions = int(embedding["dimensions"])
    collection = Collection.create(nxt / COLLECTION_DIR, dimensions)
    inserted: set[str] = set()
    try:
        terms = TermWriter.open(collection.path)
        try:
            for batch in batches:
                fresh = [row for row in batch if row.chunk_id not in inserted]
                terms.add(fresh)
                for start in range(0, len(fresh), MAX_BATCH):
                    collection.insert(fresh[start : start + MAX_BATCH])
                inserted.update(row.chunk_id for row in fresh)
                faults.reach("rebuild-batch")
            unindexed = terms.missing(sorted(expected_ids))
        finally:
            terms.close()
        collection.flush()
        if collection.segment_count() > 1:
            collection.optimize()
        present = collection.present(sorted(expected_ids)) if expected_ids else set()
        count = collection.count()
    finally:
        collection.close()
    missing = (expected_ids - present) | set(unindexed)
    if missing:
        raise SnapshotStoreUnavailable(
            None, f"the rebuilt store lacks {len(missing)} expected chunk(s); nothing was swapped"
        )
    if count != len(inserted):
        raise SnapshotStoreUnavailable(
            None, f"the rebuilt store holds {count} rows, expected {len(inserted)}"
        )
    stamp = now_iso()
    meta = StoreMeta(
        schema_version=SCHEMA_VERSION,
        store_id=uuid.uuid4().hex,
        generation=0,
        revision=1,
        embedding={**dict(embedding), "dimensions": dimensions},
        chunk_count=count,
        created_at=stamp,
        updated_at=stamp,
        published_at=None,
    )
    write_referenced(nxt, set(expected_ids))
    wire = {**meta.to_wire(), "buildState": COMPLETE_MARK}
    atomic_write_text(nxt / META_NAME, json.dumps(wire, indent=2, sort_keys=True) + "\n")
    faults.reach("rebuild-built")
    return meta


def swap_in(ws: Workspace, lock: WriterLock, *, publish_after: bool = True) -> StoreMeta:
    """Swap the verified ``store.next`` in and publish it as the first generation of a new store.

    With ``publish_after`` False (a writer's segment merge, :func:`ragit.store.compact.merge_held`)
    only the directories are swapped: the writer publishes later, with its own rows, and
    until then readers keep the generation published before.

    Raises:
        SnapshotStoreUnavailable: there is no complete ``store.next``.
    """
    lock.assert_held()
    if not _next_is_complete(ws):
        raise SnapshotStoreUnavailable(None, "no verified replacement store to swap in")
    live = ws.store_dir
    prev = prev_dir(ws)
    remove_tree(prev)
    try:
        if live.exists():
            os.replace(live, prev)
        faults.reach("rebuild-swapped-out")
        os.replace(next_dir(ws), live)
        fsync_dir(ws.ragit_dir)
        faults.reach("rebuild-swapped-in")
        published = publish(ws, lock) if publish_after else None
    except BaseException:
        # An interruption (SIGINT) or a failed write must not leave readers without a
        # published store: put the previous one back unless the new one got published.
        _swap_back(ws)
        raise
    remove_tree(prev)
    if published is None:
        published = read_meta(ws)
        if published is None:
            raise SnapshotStoreUnavailable(None, "the swapped-in store has no meta.json")
    return published


def _swap_back(ws: Workspace) -> None:
    """Undo an unpublished swap: the new store back to ``store.next``, ``store.prev`` live."""
    live, nxt, prev = ws.store_dir, next_dir(ws), prev_dir(ws)
    if not prev.exists():
        return  # nothing to restore (first store) or the swap never started
    if live.exists():
        try:
            meta = read_meta(ws)
        except RagitError:  # an unreadable new meta.json is not a published store either
            meta = None
        if meta is not None and meta.generation > 0:
            return  # the new store is published: keep it
        remove_tree(nxt)
        os.replace(live, nxt)
    os.replace(prev, live)
    fsync_dir(ws.ragit_dir)
