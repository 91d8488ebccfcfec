"""Publishing the canonical store as a generation, and the fingerprint of its files.

:func:`publish` makes the reader copy of the next generation first and bumps ``generation`` in
``meta.json`` second: a crash between the two leaves an unreferenced copy (pruned later) and
readers still on the previous generation, never a generation without its copy. It records a
fingerprint of the canonical files (:func:`~ragit.store.fingerprint.canonical_digest`) in
``meta.json``; outside a write, a different fingerprint means the files changed behind RAGit's
back (:func:`~ragit.store.fingerprint.canonical_changed`, :func:`check_canonical_intact`).

The canonical collection must be closed to be copied: :class:`~ragit.store.writer.StoreWriter`
registers the collections it holds open in :data:`open_writers`, and :func:`publish` refuses
those.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from ragit import _faults as faults
from ragit._fs import atomic_write_text
from ragit.contract.errors import SnapshotStoreUnavailable
from ragit.store._zvec import Collection
from ragit.store.copies import canonical_path, copy_name, copy_path, make_copy, prune_copies
from ragit.store.fingerprint import canonical_changed, canonical_digest
from ragit.store.lock import WriterLock
from ragit.store.meta import (
    REFERENCED_NAME,
    StoreMeta,
    now_iso,
    read_meta,
    read_referenced,
    write_meta,
)
from ragit.store.terms import TermReader
from ragit.workspace import Workspace

__all__ = [
    "REFERENCED_NAME",
    "Written",
    "canonical_changed",
    "canonical_digest",
    "check_canonical_intact",
    "mark_unopenable",
    "mark_unverified",
    "open_writers",
    "publish",
    "read_referenced",
    "record_referenced",
    "write_referenced",
]

# Canonical collections open for writing in this process (publish refuses to copy them).
open_writers: set[Path] = set()


def check_canonical_intact(ws: Workspace, lock: WriterLock) -> None:
    """Refuse to write over canonical files that changed outside a RAGit write.

    A writer that opened a damaged collection would publish the damage to every reader (a
    damaged full-text index or id map opens without an error and changes the hits). Call it
    under the writer lock before any recovery; it judges what :func:`canonical_changed` can.

    Raises:
        SnapshotStoreUnavailable: the files differ from the published fingerprint; its
            recovery, ``ragit doctor``, names the store rebuild.
        StoreWriteBusy: ``lock`` is no longer held.
    """
    lock.assert_held()
    if canonical_changed(ws):
        raise SnapshotStoreUnavailable(
            None,
            "the canonical store files changed outside a RAGit write (damaged or replaced); "
            "nothing was written — rebuild the store from git",
        )


def write_referenced(store_dir: Path, ids: set[str]) -> None:
    """Record ``ids`` as the chunk ids retained manifests name (atomic replace)."""
    atomic_write_text(store_dir / REFERENCED_NAME, "\n".join(sorted(ids)) + "\n")


def record_referenced(ws: Workspace, lock: WriterLock, ids: Iterable[str]) -> None:
    """Add the chunk ids of a committed manifest to the record (no write when none is new).

    Called after the manifest is written, so the record never names a chunk that only an
    uncommitted (and later rolled back) transaction inserted."""
    lock.assert_held()
    known = read_referenced(ws.store_dir)
    grown = known | set(ids)
    if len(grown) != len(known):
        write_referenced(ws.store_dir, grown)


def mark_unverified(ws: Workspace, missing: int, reason: str) -> None:
    """Record that a store write could not be verified (read by ``doctor`` and ``repair``,
    removed by the next publish that verifies): the canonical store lacks chunks, and only a
    store rebuild from git brings them back."""
    record = {"missingChunks": missing, "reason": reason, "recordedAt": now_iso()}
    atomic_write_text(ws.store_unverified_path, json.dumps(record) + "\n")


def mark_unopenable(ws: Workspace, problem: str) -> None:
    """Record that the canonical collection cannot be opened and no published copy was left
    to restore it from (read by ``doctor`` and ``repair``, removed by the next publish): only
    a store rebuild from git brings it back."""
    record = {"reason": problem, "recordedAt": now_iso()}
    atomic_write_text(ws.store_unopenable_path, json.dumps(record) + "\n")


def _unindexed(collection_dir: Path, required: set[str]) -> set[str]:
    """The ids of ``required`` the keyword index of ``collection_dir`` lacks."""
    reader = TermReader.open(collection_dir)
    try:
        return set(reader.missing(required))
    finally:
        reader.close()


def _indexed_count(collection_dir: Path) -> int:
    """How many chunks the keyword index of ``collection_dir`` holds live."""
    reader = TermReader.open(collection_dir)
    try:
        return reader.count()
    finally:
        reader.close()


@dataclass(frozen=True)
class Written:
    """What one write did to a store it found published and verified: it inserted the rows
    ``inserted`` (ids), deleted none and merged nothing, leaving ``rows`` live rows (the rows
    it found plus the ones it inserted)."""

    inserted: frozenset[str]
    rows: int


def publish(
    ws: Workspace,
    lock: WriterLock,
    *,
    referenced: Iterable[str] = (),
    written: Written | None = None,
) -> StoreMeta:
    """Publish the canonical store as the next generation and make its reader copy.

    Order: copy the (closed) canonical files into the cache as ``<store>-<gen+1>`` (temp dir,
    one read-only open, rename), then bump ``generation`` in ``meta.json`` atomically, then
    remove the older copies no reader holds (:func:`~ragit.store.copies.prune_copies`).

    Nothing is published unverified: in the copy, before it is put in place, every chunk id
    that retained manifests name (:data:`REFERENCED_NAME`, kept beside the store) and every
    id of ``referenced`` (the manifest about to be committed) must be present, in the rows
    and in the keyword index — one scan of the copy's ids, ~2 us a row. Otherwise the copy
    is dropped and the previous generation stays.

    With ``written`` (a write that only inserted), the ids an earlier publish verified
    (those :data:`REFERENCED_NAME` records) are held by the count instead of the scan: the
    copy must have exactly ``written.rows`` rows and as many live chunks in its keyword
    index, and the ids it inserted and those of ``referenced`` not recorded yet are looked
    up one by one (~1 ms for one changed document against ~0.16 s for the scan at N=1000).
    Counts that differ fall back to the full scan.

    Raises:
        StoreWriteBusy: ``lock`` is no longer held.
        RuntimeError: a :class:`StoreWriter` of this store is still open in this process.
        SnapshotStoreUnavailable: no store, the reader copy could not be written, or it
            lacks chunks that manifests name (nothing published).
    """
    lock.assert_held()
    if canonical_path(ws).resolve() in open_writers:
        raise RuntimeError("close the StoreWriter before publishing")
    meta = read_meta(ws)
    if meta is None or not canonical_path(ws).is_dir():
        raise SnapshotStoreUnavailable(None, "there is no store to publish")
    generation = meta.generation + 1
    digest = canonical_digest(ws)
    recorded = read_referenced(ws.store_dir)
    required = recorded | set(referenced)

    def verify(collection: Collection) -> None:
        if not required:
            return
        missing: set[str] | None = None
        if written is not None:
            rows = collection.count()
            if rows == written.rows and _indexed_count(collection.path) == rows:
                check = set(written.inserted) | (required - recorded)
                missing = check - collection.present(sorted(check))
                if not missing:
                    missing = _unindexed(collection.path, check)
        if missing is None:  # no record of the write, or its counts differ: scan everything
            missing = required - collection.all_ids()
            if not missing:
                missing = _unindexed(collection.path, required)
        if missing:
            mark_unverified(ws, len(missing), "the new generation lacks chunks that manifests name")
            raise SnapshotStoreUnavailable(
                None,
                f"the new store generation lacks {len(missing)} chunk(s) that manifests name; "
                "nothing was published (the previous generation stays) — rebuild the store "
                "from git (ragit repair --apply --action store-rebuild)",
            )

    try:
        base = (
            (copy_path(ws, meta.store_id, meta.generation), written.inserted)
            if written is not None and meta.generation > 0
            else None
        )
        made = make_copy(
            ws, meta.store_id, generation, replace=True, verify=verify, table_base=base
        )
    except OSError as exc:
        from ragit.contract.fs_errors import filesystem_error

        typed = filesystem_error(exc, ws.root)
        if typed is not None:  # the user cache's disk is full, or not writable
            raise typed from exc
        raise SnapshotStoreUnavailable(
            None, f"cannot write the reader copy of the store ({exc.__class__.__name__})"
        ) from exc
    assert made is not None
    _, count = made
    faults.reach("publish-copied")
    stamp = now_iso()
    published = meta.evolve(
        generation=generation,
        chunk_count=count,
        updated_at=stamp,
        published_at=stamp,
        extra={**meta.extra, "canonicalDigest": digest},
    )
    write_meta(ws, published)
    ws.store_unverified_path.unlink(missing_ok=True)
    ws.store_unopenable_path.unlink(missing_ok=True)
    faults.reach("publish-meta-written")
    # Older copies go unless a reader holds one (copies.hold_copy): a reader that read the
    # previous generation and finds its copy gone reads meta.json again.
    prune_copies(
        ws,
        {copy_name(meta.store_id, generation)},
        previous=copy_name(meta.store_id, generation - 1),
    )
    return published
