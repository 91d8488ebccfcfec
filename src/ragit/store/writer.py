"""Writing the canonical store, always under the writer lock (publishing: :mod:`.publishing`).

Write protocol (chosen from measurements of zvec 0.8.0, docs/store.md): rows are inserted *in
place* into ``.ragit/store/chunks`` and zvec's write-ahead log makes them crash-safe. Killed
with SIGKILL at 30+ random points (mid-batch, between batches, mid-flush, after flush), the
collection always reopened read-write with every earlier row intact; rows of an unflushed or
half-done batch came back from the WAL on the next read-write open (a half-done batch comes
back as a prefix). Copy-on-write into ``.ragit/store.next/`` would cost a second full copy of
the collection per ingest (0.17 s at 17.8k chunks, 10x that at N=10,000) for no extra safety,
because readers never see the canonical files anyway:

- a crash at any point leaves every published reader copy untouched, so readers keep
  answering from the previous generation;
- the canonical collection is recovered by the next writer: zvec replays its WAL on the
  read-write open, and :func:`ragit.store.journal.recover` deletes the rows the interrupted
  transaction inserted (recorded in its journal *before* they were inserted) unless that
  transaction had committed its manifest, in which case it is finished instead;
- ``meta.json``'s ``revision`` is bumped before the canonical collection is opened, so a reader
  re-creating a copy from the canonical files notices any writer that touched them meanwhile.

Merging segments is the exception: zvec's ``optimize()`` rewrites every segment, and a kill
inside it left the canonical collection inconsistent (every later insert failed with "field is
sealed", every later merge with "inconsistent total row counts"; docs/faults.md). So no merge ever
runs on the canonical collection: :meth:`StoreWriter.compact` closes it, merges a copy and swaps
the copy in through ``.ragit/store.next`` under the lock it holds
(:func:`ragit.store.compact.merge_held`, the background compactor's own copy-merge-swap), then
opens the merged collection again for verification.

:func:`ragit.store.publishing.publish` turns the written rows into the next generation once the
writer is closed; the canonical-file fingerprint (``check_canonical_intact``,
``canonical_changed``) lives there too.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Iterable, Mapping, Sequence
from types import TracebackType
from typing import Any

from ragit import _faults as faults
from ragit.contract.errors import SnapshotStoreUnavailable
from ragit.store._copy import remove_tree
from ragit.store._zvec import MAX_BATCH, Collection
from ragit.store.copies import canonical_path
from ragit.store.journal_scan import scan_journals
from ragit.store.lock import WriterLock
from ragit.store.meta import (
    SCHEMA_VERSION,
    StoreMeta,
    background_min_rows,
    inline_limit,
    now_iso,
    overdue_segments,
    read_meta,
    write_meta,
)
from ragit.store.publishing import open_writers
from ragit.store.rows import ChunkRow
from ragit.store.space import require_space
from ragit.store.terms import TermWriter
from ragit.workspace import Workspace

__all__ = ["StoreWriter"]

# A full id scan costs ~2.2 us per stored row, a batched fetch ~12 us per asked id (zvec
# 0.8.0, 18k rows): scan when the question covers a fifth of the store or more.
_SCAN_RATIO = 5


# Building the full-text index of flushed rows and inserting the next ones run in parallel
# on two cores (zvec 0.8.0 releases the GIL in both): on a quiet 2-core box a background
# flush cut 17.8k rows from 3.8-3.9 s (insert, then flush) to 2.9-3.3 s. Each flush adds a
# block to the writing segment (one BM25 statistic per segment, so ranking is unchanged) with
# a vector file of at least ~5 MB; 3 batches (3,072 rows x 256 dims) fill one. Small blocks
# are cheaper to index, but each flush also costs more the larger the segment already is.
# Measured (zvec alone, CPU): 17.8k rows 4.0-4.1 s flushing every 3 batches vs 4.3-4.4 s
# every 8; 176k rows 70-73 s every 3 vs 53-59 s every 8. Hence every 3 batches for the first
# 24, then every 8 (176k rows: 57-60 s, same as every 8).
_FLUSH_EVERY = 3
_FLUSH_EVERY_LARGE = 8
_SMALL_UNTIL = 24


def _flush_due(number: int, last: int) -> bool:
    """Whether to flush after insert batch ``number`` (1-based), the last flush being after
    batch ``last``."""
    return number - last >= (_FLUSH_EVERY if number <= _SMALL_UNTIL else _FLUSH_EVERY_LARGE)


class _Flusher:
    """One background thread that flushes the collection on request (requests coalesce)."""

    def __init__(self, collection: Collection) -> None:
        self._collection = collection
        self._wanted = threading.Event()
        self._done = False
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="ragit-store-flush", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while True:
            self._wanted.wait()
            self._wanted.clear()
            if self._done:
                return
            try:
                self._collection.flush()
            except BaseException as exc:  # re-raised by finish() in the writing thread
                self._error = exc
                return

    def request(self) -> None:
        self._wanted.set()

    def finish(self) -> None:
        """Stop after the flush in progress; re-raise its failure."""
        self._done = True
        self._wanted.set()
        self._thread.join()
        if self._error is not None:
            raise self._error


def _profile(embedding: Mapping[str, Any], dimensions: int) -> dict[str, Any]:
    profile = dict(embedding)
    if int(profile.get("dimensions", dimensions)) != dimensions:
        raise ValueError("embedding['dimensions'] disagrees with dimensions")
    profile["dimensions"] = dimensions
    return profile


# Journals of writes that changed canonical files and never finished (an "invalid" journal,
# unreadable or malformed, is reported and ignored: it proves nothing about the files).
UNFINISHED = frozenset({"precommit-incomplete", "finalization-pending", "inconsistent"})


def _left_by_interrupted_write(ws: Workspace, lock: WriterLock) -> bool:
    """Whether an earlier write may have left the canonical files half-written: a transaction
    journal (not this writer's own) that never completed, or a store already found
    unopenable. zvec recovers a killed insert from its write-ahead log, but a write that ran
    out of disk inside zvec can leave files zvec crashes on."""
    if ws.store_unopenable_path.exists():
        return True
    own = getattr(lock.transaction, "transaction_id", None)
    return any(
        s.classification in UNFINISHED and s.transaction_id != own for s in scan_journals(ws)
    )


def _vouch(ws: Workspace, lock: WriterLock, meta: StoreMeta) -> StoreMeta:
    """Probe the canonical collection in a child process; restore the published generation
    when zvec cannot open it. Returns the store's metadata (a restore publishes anew).

    Raises:
        SnapshotStoreUnavailable: it cannot be opened and there is no published copy to
            restore (the store is marked unopenable: a rebuild from git is the fix).
    """
    from ragit.store.publishing import mark_unopenable
    from ragit.store.replace import restore_published

    path = canonical_path(ws)
    problem = Collection.probe(path)
    if problem is None:
        return meta
    restored = restore_published(ws, lock)
    if restored is not None and Collection.probe(path) is None:
        lock.note(
            f"the canonical store could not be opened after an interrupted write ({problem}); "
            f"restored generation {meta.generation} from its reader copy (the unpublished "
            "rows of that write are gone)"
        )
        again = read_meta(ws)
        assert again is not None
        bumped = again.evolve(revision=again.revision + 1, updated_at=now_iso())
        write_meta(ws, bumped)
        return bumped
    mark_unopenable(ws, problem)
    raise SnapshotStoreUnavailable(
        None,
        f"the canonical store cannot be opened after an interrupted write ({problem}) and no "
        "published copy is left to restore it from; rebuild it from git: "
        "ragit repair --apply --action store-rebuild",
    )


class StoreWriter:
    """The canonical collection, open read-write for the short insert-and-verify phase."""

    def __init__(
        self, ws: Workspace, lock: WriterLock, collection: Collection, meta: StoreMeta
    ) -> None:
        self.ws = ws
        self.lock = lock
        self.meta = meta
        self._collection: Collection | None = collection
        try:
            self._terms: TermWriter | None = TermWriter.open(collection.path)
        except BaseException:
            collection.close()
            raise
        self._dirty = False  # writes not yet flushed into the collection files
        self._recorded: set[str] = set()  # ids this writer recorded in the journal ...
        self._recorded_in: object = None  # ... of this transaction
        self._path = canonical_path(ws).resolve()
        open_writers.add(self._path)

    @classmethod
    def open(
        cls,
        ws: Workspace,
        lock: WriterLock,
        *,
        embedding: Mapping[str, Any],
        dimensions: int,
        rows: int = 0,
    ) -> StoreWriter:
        """Open the canonical store for writing (about to add ``rows`` rows), creating it on
        first use.

        A store that holds no published rows (``chunkCount`` 0) is recreated when the embedding
        profile changed; one with rows is not touched. The file system must have room for the
        write (:func:`ragit.store.space.require_space`). A collection an interrupted write left
        behind is opened in a child process first (:meth:`Collection.probe`): when zvec cannot
        open it there, the published generation is restored from its reader copy, or, without
        one, the store is marked unopenable (``doctor`` and ``repair`` name the rebuild) —
        zvec never gets to crash this process on it.

        Raises:
            StoreWriteBusy: ``lock`` is no longer held.
            EmbeddingMigrationRequired: the store holds rows of another embedding profile.
            SnapshotManifestInvalid, SnapshotSchemaUnsupported: ``meta.json`` is corrupt/newer.
            SnapshotStoreUnavailable: the collection is missing or zvec cannot open it.
            FilesystemUnusable: too little free space for the write (``no-space``).
        """
        lock.assert_held()
        if dimensions < 1:
            raise ValueError("dimensions must be positive")
        require_space(ws, rows, dimensions)
        profile = _profile(embedding, dimensions)
        meta = read_meta(ws)
        path = canonical_path(ws)
        if path.resolve() in open_writers:
            raise RuntimeError("the canonical store is already open for writing in this process")
        if meta is not None and (
            meta.embedding.get("namespaceId") != profile.get("namespaceId")
            or meta.dimensions != dimensions
        ):
            if meta.chunk_count > 0:
                from ragit.contract.errors import EmbeddingMigrationRequired

                raise EmbeddingMigrationRequired(dict(meta.embedding), profile)
            meta = None  # nothing published: start a store for the new profile
        if meta is None:
            return cls._create(ws, lock, profile, dimensions)
        if not path.is_dir():
            raise SnapshotStoreUnavailable(
                None, "the store's chunk collection (.ragit/store/chunks) is missing"
            )
        meta = meta.evolve(revision=meta.revision + 1, updated_at=now_iso())
        write_meta(ws, meta)  # before zvec touches a canonical file (readers compare it)
        if not lock.vouched and _left_by_interrupted_write(ws, lock):
            meta = _vouch(ws, lock, meta)
        collection = Collection.open(path, read_only=False)
        lock.vouched = True
        if collection.dimensions() != dimensions:
            collection.close()
            raise SnapshotStoreUnavailable(
                None, "the store's vector dimensions disagree with meta.json"
            )
        writer = cls(ws, lock, collection, meta)
        try:
            if writer._t.count() < collection.count():
                writer._backfill_terms()
        except BaseException:
            writer.close()
            raise
        return writer

    @classmethod
    def _create(
        cls, ws: Workspace, lock: WriterLock, profile: dict[str, Any], dimensions: int
    ) -> StoreWriter:
        path = canonical_path(ws)
        # Files without meta.json are the residue of a creation that never finished (or of a
        # store whose metadata was removed): nothing was ever published from them.
        remove_tree(path)
        ws.store_dir.mkdir(parents=True, exist_ok=True)
        collection = Collection.create(path, dimensions)
        stamp = now_iso()
        meta = StoreMeta(
            schema_version=SCHEMA_VERSION,
            store_id=uuid.uuid4().hex,
            generation=0,
            revision=1,
            embedding=profile,
            chunk_count=0,
            created_at=stamp,
            updated_at=stamp,
            published_at=None,
        )
        write_meta(ws, meta)
        return cls(ws, lock, collection, meta)

    # ------------------------------------------------------------ operations

    @property
    def _c(self) -> Collection:
        if self._collection is None:
            raise RuntimeError("the store writer is closed")
        return self._collection

    @property
    def _t(self) -> TermWriter:
        if self._terms is None:
            raise RuntimeError("the store writer is closed")
        return self._terms

    def _backfill_terms(self) -> None:
        """Index every stored row the keyword index lacks (a store written before RAGit kept
        one, or one whose index was lost): read back from the collection, in batches."""
        self._settle()
        missing = self._t.missing(sorted(self._c.all_ids()))
        for start in range(0, len(missing), MAX_BATCH):
            self._t.add(self._c.fetch_rows(missing[start : start + MAX_BATCH]))

    def _settle(self) -> None:
        # zvec seals (= builds the full-text index of) the writing segment before a scan
        # anyway, and a fetch of unflushed rows is 3x slower than of flushed ones: flush first.
        if self._dirty:
            self._c.flush()
            self._dirty = False

    def existing(self, ids: Iterable[str]) -> set[str]:
        """Which of ``ids`` the canonical store already holds."""
        wanted = list(dict.fromkeys(ids))
        if not wanted:
            return set()
        self._settle()
        if len(wanted) * _SCAN_RATIO >= self._c.count():
            return self._c.all_ids().intersection(wanted)
        return self._c.present(wanted)

    def insert(self, rows: Sequence[ChunkRow]) -> None:
        """Insert rows in batches of ≤1,024; rows whose id is already stored are skipped.

        The ids about to be inserted are first recorded in the lock's active transaction
        journal (if any), so recovery can remove them if the transaction never commits.

        Raises:
            ValueError: a row has an empty id or a vector of the wrong length.
            StoreWriteBusy: the lock is no longer held.
            SnapshotStoreUnavailable: zvec rejected the write.
        """
        todo = self._prepare(rows, vectors=True)
        if not todo:
            return
        batches = [todo[i : i + MAX_BATCH] for i in range(0, len(todo), MAX_BATCH)]
        flusher = _Flusher(self._c) if len(batches) > _FLUSH_EVERY else None
        last = 0
        try:
            for number, batch in enumerate(batches, 1):
                self._dirty = True
                self._c.insert(batch)
                faults.reach("store-insert-batch")
                if flusher is not None and number < len(batches) and _flush_due(number, last):
                    flusher.request()
                    last = number
        finally:
            if flusher is not None:
                flusher.finish()

    def index_terms(self, rows: Sequence[ChunkRow]) -> None:
        """Record and index, ahead of :meth:`insert`, the rows it will insert: their ids go
        to the lock's active transaction journal, then their postings to the keyword index.
        Rows need no vectors yet (they may still be computed elsewhere); :meth:`insert` of
        the same rows then finds both done. Recovery removes them from both, as for an
        insert, if the transaction never commits.

        Raises:
            ValueError: a row has an empty id.
            StoreWriteBusy: the lock is no longer held.
        """
        self._prepare(rows, vectors=False)

    def _prepare(self, rows: Sequence[ChunkRow], *, vectors: bool) -> list[ChunkRow]:
        """Check ``rows``, record the ids not stored yet in the journal, index their terms;
        returns the rows the collection lacks (each id once)."""
        self.lock.assert_held()
        dims = self.meta.dimensions
        unique: dict[str, ChunkRow] = {}
        for row in rows:
            if not row.chunk_id:
                raise ValueError("a chunk row has an empty chunk_id")
            if vectors and len(row.vector) != dims:
                raise ValueError(
                    f"chunk {row.chunk_id}: vector has {len(row.vector)} "
                    f"dimensions, the store has {dims}"
                )
            unique.setdefault(row.chunk_id, row)
        present = self.existing(unique)
        todo = [row for cid, row in unique.items() if cid not in present]
        transaction = self.lock.transaction
        if todo and transaction is not None:
            if self._recorded_in is not transaction:
                self._recorded, self._recorded_in = set(), transaction
            ids = [row.chunk_id for row in todo]
            if not self._recorded.issuperset(ids):  # index_terms recorded them already
                transaction.record_inserted(ids)
                self._recorded.update(ids)
        # The keyword index first (rows it already holds are skipped): a chunk in the
        # collection always has its postings, whatever instant a kill lands on.
        self._t.add(list(unique.values()))
        return todo

    def verify(self, ids: Iterable[str]) -> list[str]:
        """Flush, then list the ids of ``ids`` that cannot be read back (sorted; empty = all
        present). After it returns, every present row is in the collection files."""
        wanted = list(dict.fromkeys(ids))
        if not wanted:
            return []
        present = self.existing(wanted)
        return sorted(cid for cid in wanted if cid not in present)

    def delete(self, ids: Iterable[str]) -> None:
        """Delete rows by id (unknown ids are ignored). Deletions are not rolled back by
        recovery: delete only rows that no manifest, old or new, references."""
        self.lock.assert_held()
        self._dirty = True
        wanted = list(dict.fromkeys(ids))
        self._c.delete(wanted)
        self._t.remove(wanted)

    def all_ids(self) -> set[str]:
        """Every chunk id in the canonical store."""
        self._settle()
        return self._c.all_ids()

    def count(self) -> int:
        """Rows in the canonical store."""
        return self._c.count()

    def compact(self) -> str:
        """Merge segments when there is more than one (see :mod:`ragit.store.compact`).

        Returns ``"single"`` (nothing to merge, or a store of at most
        :data:`~ragit.store.meta.BACKGROUND_MIN_ROWS` rows whose few segments can wait),
        ``"merged"`` (merged inline: merges are overdue — the compactor fell behind a steady
        stream of writes, or a small store wrote :data:`~ragit.store.meta.OVERDUE_SEGMENTS`
        segments), or ``"deferred"`` (a larger store: the caller starts the background
        compactor once it has released the lock). No score depends on segments.

        The merge never runs on the canonical collection: the writer closes it, a copy is
        merged and swapped in through ``.ragit/store.next`` under the lock this writer holds
        (:func:`ragit.store.compact.merge_held`), and the merged collection is opened again
        for the rest of the write (verification, then the caller's publish). A kill at any
        instant leaves either the collection as the insert left it (and the next writer rolls
        the transaction back) or the merged one.
        """
        from ragit.store.compact import merge_held

        self.lock.assert_held()
        self._settle()
        segments = self._c.segment_count()
        if segments <= 1:
            return "single"
        rows = self._c.count()
        if rows > inline_limit() and segments < overdue_segments():
            return "deferred" if rows > background_min_rows() else "single"
        self.close()
        outcome = merge_held(self.ws, self.lock)
        meta = read_meta(self.ws)
        if meta is None or not canonical_path(self.ws).is_dir():
            raise SnapshotStoreUnavailable(None, "the store vanished during its segment merge")
        # Bumped before zvec opens the merged files, as for every read-write open.
        self.meta = meta.evolve(revision=meta.revision + 1, updated_at=now_iso())
        write_meta(self.ws, self.meta)
        self._collection = Collection.open(canonical_path(self.ws), read_only=False)
        open_writers.add(self._path)
        self._terms = TermWriter.open(self._collection.path)
        faults.reach("store-compacted")
        return "merged" if outcome == "merged" else "single"

    def close(self) -> None:
        """Flush and close the canonical collection; idempotent."""
        if self._terms is not None:
            terms, self._terms = self._terms, None
            terms.close()
        if self._collection is None:
            return
        collection, self._collection = self._collection, None
        open_writers.discard(self._path)
        collection.close()

    def __enter__(self) -> StoreWriter:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
