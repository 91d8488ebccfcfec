"""Reading the store: always from a reader copy of the latest published generation.

Readers never open the canonical collection (docs/store.md, "Reading"): zvec rewrites a collection's
index file even on a read-only open, and a read-only open fails while a writer has the
collection open. :meth:`StoreReader.open_latest` reads ``meta.json``, then opens the copy of
``(storeId, generation)`` in the user cache. If that copy is missing (cache cleared) it makes
one from the canonical files *without opening zvec on them*, and only when

- no writer holds the lock (a lock left by a crashed writer counts: its residue may still sit
  in the canonical files until the next writer recovers them), no interrupted write left
  them unsettled and they are as published (:mod:`.fingerprint`: a copy of damaged files
  could crash zvec in this process), and
- ``meta.json``'s (storeId, generation, revision) and the lock state are the same after the
  copy as before it (every writer bumps ``revision`` before it opens the canonical files).

While a live writer is active it polls every 25 ms, up to ``wait_ms`` — the one place RAGit polls
for a writer, because the alternative (waiting on the writer's lock) would let a slow ingest
block queries — and then fails with :class:`StoreReadBusy`; a lock whose writer is gone
(``stale``) fails at once, since only the next writer clears it. Nothing on the read path writes
under the repository: the copy goes to the user cache.
"""

from __future__ import annotations

import errno
import math
import os
import time
from collections.abc import Sequence
from pathlib import Path
from types import TracebackType
from typing import Any

from ragit.contract.errors import SnapshotStoreUnavailable, StoreReadBusy
from ragit.store._zvec import MAX_TOPK, Collection
from ragit.store.copies import canonical_path, copy_path, hold_copy, make_copy
from ragit.store.fingerprint import canonical_changed, canonical_settled
from ragit.store.lock import inspect_lock
from ragit.store.meta import StoreMeta, read_meta
from ragit.store.rows import StoredChunk
from ragit.store.terms import TermReader
from ragit.workspace import Workspace, user_cache_dir

POLL_SECONDS = 0.025


def _check_topk(topk: int) -> int:
    if not isinstance(topk, int) or isinstance(topk, bool) or topk < 1:
        raise ValueError("topk must be a positive integer")
    return min(topk, MAX_TOPK)


def _check_copyable(ws: Workspace, waited_ms: int) -> None:
    """A reader copies the canonical files only when they are settled and as published: the
    residue of an interrupted write, or damaged files, may crash zvec when opened.

    Raises:
        StoreReadBusy: an interrupted write left the files unsettled (the next writer
            recovers them; at once, since waiting cannot help).
        SnapshotStoreUnavailable: the files differ from the published fingerprint.
    """
    if not canonical_settled(ws):
        raise StoreReadBusy(
            waited_ms,
            writer_gone=True,
            reason="no published store copy is readable and an interrupted write left the "
            "canonical files unsettled; the next ingest recovers them (ragit doctor names it)",
        )
    if canonical_changed(ws):
        raise SnapshotStoreUnavailable(
            None,
            "no published store copy is readable and the canonical store files changed "
            "outside a RAGit write (damaged or replaced); rebuild the store from git",
        )


class StoreReader:
    """An open, read-only copy of one published store generation."""

    def __init__(
        self, collection: Collection, meta: StoreMeta, path: Path, hold: int | None = None
    ) -> None:
        self._collection: Collection | None = collection
        self.meta = meta
        self.path = path
        self._terms: TermReader | None = None
        self._hold = hold  # the copy's hold (copies.hold_copy), let go on close

    @classmethod
    def _open_held(cls, path: Path, meta: StoreMeta) -> StoreReader | None:
        """Open the copy at ``path`` holding it (a publish then leaves it in place); ``None``
        when it is gone or being removed.

        Raises:
            SnapshotStoreUnavailable: zvec could not open it.
        """
        hold = hold_copy(path)
        if hold is None:
            return None
        try:
            return cls(Collection.open(path, read_only=True), meta, path, hold)
        except BaseException:
            os.close(hold)
            raise

    @property
    def generation(self) -> int:
        return self.meta.generation

    @property
    def store_id(self) -> str:
        return self.meta.store_id

    @property
    def chunk_count(self) -> int:
        """Rows in this generation (as counted when it was published)."""
        return self.meta.chunk_count

    @property
    def embedding(self) -> dict[str, Any]:
        """The embedding profile the store's vectors were made with."""
        return dict(self.meta.embedding)

    @property
    def dimensions(self) -> int:
        return self.meta.dimensions

    @classmethod
    def open_latest(cls, ws: Workspace, *, wait_ms: int = 2000) -> StoreReader:
        """Open the reader copy of the latest published generation (making it if needed).

        Raises:
            SnapshotStoreUnavailable: no store, nothing published, or its files are gone.
            SnapshotManifestInvalid, SnapshotSchemaUnsupported: ``meta.json`` is corrupt/newer.
            StoreReadBusy: no copy exists and a writer stayed active for ``wait_ms``, or at
                once when the lock's owner is provably gone (waiting cannot help).
        """
        start = time.monotonic()

        def waited() -> int:
            return int((time.monotonic() - start) * 1000)

        def pause_or_busy(lock_state: str) -> None:
            spent = waited()
            if lock_state == "stale":
                # The owner is provably gone: nothing will change by waiting (the next
                # writer reclaims the lock and recovers the store), so fail at once.
                raise StoreReadBusy(spent, writer_gone=True)
            if spent >= wait_ms:
                raise StoreReadBusy(spent)
            time.sleep(min(POLL_SECONDS, (wait_ms - spent) / 1000))

        while True:
            meta = read_meta(ws)
            if meta is None:
                raise SnapshotStoreUnavailable(None, "no store has been created yet")
            lock_state = inspect_lock(ws).state
            writer_active = lock_state != "missing"
            if meta.generation == 0:
                if writer_active:
                    pause_or_busy(lock_state)
                    continue
                raise SnapshotStoreUnavailable(None, "the store has no published generation")
            path = copy_path(ws, meta.store_id, meta.generation)
            broken = False
            if path.is_dir():
                try:
                    opened = cls._open_held(path, meta)
                    if opened is not None:
                        return opened
                    failed = False
                except SnapshotStoreUnavailable:
                    failed = True
                again = read_meta(ws)
                if again is None or again.stamp[:2] != meta.stamp[:2]:
                    continue  # a newer generation was published (and this copy pruned)
                if not failed and path.is_dir():
                    # Not holdable, yet current: publishes remove only older copies, so
                    # read it unheld, as before holds existed.
                    return cls(Collection.open(path, read_only=True), meta, path)
                broken = failed  # a damaged copy: replace it
            if writer_active:
                pause_or_busy(lock_state)
                continue
            if not canonical_path(ws).is_dir():
                raise SnapshotStoreUnavailable(
                    None, "the store's files (.ragit/store/chunks) are missing"
                )
            _check_copyable(ws, waited())

            def unchanged(expected: StoreMeta = meta) -> bool:
                now = read_meta(ws)
                return (
                    now is not None
                    and now.stamp == expected.stamp
                    and inspect_lock(ws).state == "missing"
                )

            try:
                made = make_copy(
                    ws, meta.store_id, meta.generation, replace=broken, still_valid=unchanged
                )
            except FileNotFoundError:
                made = None  # a canonical file vanished under the copy: a writer started
            except OSError as exc:
                raise SnapshotStoreUnavailable(None, _copy_failure(exc)) from exc
            if made is None:
                pause_or_busy(lock_state)
                continue
            opened = cls._open_held(made[0], meta)
            if opened is None:
                continue  # pruned at once: a newer generation was published meanwhile
            return opened

    # ------------------------------------------------------------ queries

    @property
    def _c(self) -> Collection:
        if self._collection is None:
            raise RuntimeError("the store reader is closed")
        return self._collection

    def vector_search(self, vector: Sequence[float], topk: int) -> list[tuple[str, float]]:
        """Nearest chunks as ``(chunk_id, similarity)``, similarity = 1 − cosine distance
        clamped to [0, 1]; best first, ties by chunk id.

        Raises:
            ValueError: wrong vector length, non-finite values, or a bad ``topk``.
            SnapshotStoreUnavailable: zvec failed.
        """
        k = _check_topk(topk)
        if len(vector) != self.dimensions:
            raise ValueError(
                f"query vector has {len(vector)} dimensions, the store has {self.dimensions}"
            )
        if not all(math.isfinite(x) for x in vector):
            raise ValueError("query vector has non-finite values")
        hits = [
            (cid, min(1.0, max(0.0, 1.0 - dist))) for cid, dist in self._c.vector_search(vector, k)
        ]
        return sorted(hits, key=lambda h: (-h[1], h[0]))

    def terms(self) -> TermReader:
        """The copy's keyword index (opened on first use).

        Raises:
            SnapshotStoreUnavailable: the copy has no usable keyword index.
        """
        if self._terms is None:
            self._terms = TermReader.open(self.path)
        return self._terms

    def fetch(self, ids: Sequence[str]) -> dict[str, StoredChunk]:
        """Stored chunks by id; unknown ids are left out."""
        return self._c.fetch([i for i in dict.fromkeys(ids) if i])

    def fetch_vectors(self, ids: Sequence[str]) -> dict[str, list[float]]:
        """Stored vectors by id (unit length: zvec normalizes for the cosine metric)."""
        return self._c.fetch_vectors([i for i in dict.fromkeys(ids) if i])

    def embedded_texts(self, ids: Sequence[str]) -> dict[str, str]:
        """The text ingest embedded for each chunk (its ``search_en``); unknown ids are left out."""
        rows = self._c.fetch_rows([i for i in dict.fromkeys(ids) if i])
        return {row.chunk_id: row.search_en for row in rows}

    def is_latest(self, ws: Workspace) -> bool:
        """Whether this is still the latest published generation (reads ``meta.json``)."""
        try:
            meta = read_meta(ws)
        except Exception:  # a corrupt meta means "reopen and report it there"
            return False
        return meta is not None and meta.stamp[:2] == self.meta.stamp[:2]

    def close(self) -> None:
        """Close the copy; idempotent."""
        if self._terms is not None:
            terms, self._terms = self._terms, None
            terms.close()
        if self._collection is not None:
            collection, self._collection = self._collection, None
            collection.close()
        if self._hold is not None:
            hold, self._hold = self._hold, None
            os.close(hold)

    def __enter__(self) -> StoreReader:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


def _copy_failure(exc: OSError) -> str:
    """Why a reader copy could not be written (``os.strerror`` and the errno's name), where,
    and what frees the way: a full or unwritable user cache is the user's to fix."""
    name = errno.errorcode.get(exc.errno or 0)
    cause = f"{exc.strerror}, {name}" if exc.strerror and name else exc.__class__.__name__
    return (
        f"cannot write a reader copy to the user cache {user_cache_dir()} ({cause}): free "
        "space there or set XDG_CACHE_HOME to a writable directory with room, then run the "
        "command again"
    )
