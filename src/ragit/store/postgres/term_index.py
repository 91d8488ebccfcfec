"""One published snapshot's chunks as a keyword index of their own (:class:`SnapshotTermIndex`,
the interface of :class:`ragit.store.terms.TermReader`), so the same BM25 code scores them
with ``N``, ``avgdl`` and document frequencies taken from the snapshot's chunks only."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any, Protocol

import numpy as np

from ragit.store.postgres.steps import FIELDS
from ragit.store.terms import POSTING, Chunks, keys_of

# The postings a snapshot's keyword index keeps in memory (a warm server answers repeated
# terms without a round trip): at most this many terms and postings.
CACHED_TERMS = 4096
CACHED_POSTINGS = 2_000_000


class SnapshotKey(Protocol):
    """What the index needs to know of a published snapshot
    (:class:`ragit.store.postgres.read.Snapshot`)."""

    @property
    def snapshot_id(self) -> int: ...
    @property
    def namespace_id(self) -> int: ...
    @property
    def repository_id(self) -> str: ...
    @property
    def commit_sha(self) -> str: ...


class SnapshotTermIndex:
    """One snapshot's chunks as a keyword index (the :class:`~ragit.store.terms.TermReader`
    interface that :mod:`ragit.retrieve.keyword` reads): ordinals are positions among the
    snapshot's chunks, postings hold only the snapshot's chunks."""

    def __init__(self, rows: Callable[..., list[Any]], snapshot: SnapshotKey) -> None:
        self._rows = rows  # runs one read-only statement: (query, args) -> rows
        self._snapshot = snapshot
        self.path = f"postgres:{snapshot.repository_id}:{snapshot.commit_sha}"
        self._chunks: Chunks | None = None
        self._ord: dict[str, int] = {}
        self._postings: dict[tuple[str, str], Any] = {}  # (field, term) -> postings
        self._held = 0  # postings in the cache

    def chunks(self) -> Chunks:
        """Every chunk of the snapshot with its lengths (read once), sorted by key."""
        if self._chunks is None:
            rows = self._rows(
                "SELECT c.chunk_id, c.len_en, c.len_cjk, c.len_ko FROM ragit_snapshot_chunks s "
                "JOIN ragit_chunks c ON c.namespace_id = %s AND c.chunk_id = s.chunk_id "
                "WHERE s.snapshot_id = %s",
                (self._snapshot.namespace_id, self._snapshot.snapshot_id),
            )
            ids = [str(r[0]) for r in rows]
            keys = keys_of(ids) if ids else np.empty(0, dtype=np.int64)
            order = np.argsort(keys, kind="stable")
            self._ord = {cid: i for i, cid in enumerate(ids)}
            lens = np.array([r[1:4] for r in rows], dtype=np.int64).reshape(-1, 3)
            self._chunks = Chunks(
                keys=keys[order],
                ords=np.arange(len(ids), dtype=np.int64)[order],
                len_en=lens[order, 0],
                len_cjk=lens[order, 1],
                len_ko=lens[order, 2],
                live=np.ones(len(ids), dtype=bool),
                size=len(ids),
            )
        return self._chunks

    def missing(self, ids: Iterable[str]) -> list[str]:
        """The ids of ``ids`` that are not chunks of the snapshot (sorted, distinct)."""
        self.chunks()
        return sorted(set(ids) - set(self._ord))

    def postings(self, field: str, term: str) -> Any:
        """The postings of ``term`` in ``field`` among the snapshot's chunks (``ord``: the
        chunk's ordinal in :meth:`chunks`; ``tf`` capped as the local index caps it). Read
        once per term: a published snapshot never changes."""
        key = (field, term)
        found = self._postings.get(key)
        if found is None:
            self.prefetch({field: [term]})
            found = self._postings[key]
        return found

    def prefetch(self, terms: Mapping[str, Iterable[str]]) -> None:
        """Read the postings of the terms of ``terms`` (by field) not read yet, in one round
        trip: a question's terms, so that :meth:`postings` answers from memory."""
        self.chunks()
        wanted = sorted(
            {(f, t) for f, ts in terms.items() for t in ts if (f, t) not in self._postings}
        )
        if not wanted:
            return
        # One index range per field (term = ANY): the server reads the namespace's postings
        # in heap order (a bitmap scan); the snapshot's are kept here (its chunk ordinals are
        # at hand), which spares the server a lookup of each posting's chunk in the snapshot
        # (measured at N=1000: about half of the statement's server time).
        rows = self._rows(
            "SELECT t.field, t.term, t.chunk_id, t.tf FROM ragit_chunk_terms t "
            "WHERE t.namespace_id = %s AND ((t.field = 0 AND t.term = ANY(%s::text[])) "
            "OR (t.field = 1 AND t.term = ANY(%s::text[])) "
            "OR (t.field = 2 AND t.term = ANY(%s::text[])))",
            (
                self._snapshot.namespace_id,
                [t for f, t in wanted if f == FIELDS[0]],
                [t for f, t in wanted if f == FIELDS[1]],
                [t for f, t in wanted if f == FIELDS[2]],
            ),
        )
        found: dict[tuple[str, str], list[tuple[int, int]]] = {key: [] for key in wanted}
        ordinal = self._ord.get
        for field, term, cid, tf in rows:
            at = ordinal(cid)
            if at is not None:  # a chunk of the snapshot (not only of its namespace)
                found[(FIELDS[field], term)].append((at, tf))
        for key, pairs in found.items():
            out = np.empty(len(pairs), dtype=POSTING)
            if pairs:
                out["ord"] = [p[0] for p in pairs]
                out["tf"] = np.minimum([p[1] for p in pairs], 65535)
            self._remember(key, out)

    def _remember(self, key: tuple[str, str], postings: Any) -> None:
        self._postings[key] = postings
        self._held += len(postings)
        while len(self._postings) > 1 and (
            len(self._postings) > CACHED_TERMS or self._held > CACHED_POSTINGS
        ):
            oldest = next(iter(self._postings))
            self._held -= len(self._postings.pop(oldest))

    def close(self) -> None:
        """Nothing to release (the reader owns the connection)."""
