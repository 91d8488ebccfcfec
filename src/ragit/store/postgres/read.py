"""Reading the shared store by snapshot.

A reader's connection opens every transaction read-only (``default_transaction_read_only``
and psycopg's ``read_only``): a statement that would write is refused by the server. Each
public call runs in one ``REPEATABLE READ`` read-only transaction: it sees one MVCC
snapshot of the database, never waits for a writer and never makes one wait. A snapshot
once published is immutable, so separate calls about it agree as well.

Keyword statistics follow :mod:`ragit.retrieve.keyword`: :meth:`PgReader.terms` returns
the snapshot's chunks as a keyword index of their own
(:class:`~ragit.store.postgres.term_index.SnapshotTermIndex`, the interface of
:class:`ragit.store.terms.TermReader`), so the same BM25 code scores them with ``N``,
``avgdl`` and document frequencies taken from the snapshot's chunks only — the same commit
gives the same scores on either backend.

A connection lost during a call (a server restart, a terminated backend) raises
``STORE_READ_BUSY`` (transient, retryable); the next call connects again.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np
import psycopg
from psycopg import sql

from ragit import _json
from ragit.store.postgres.citations import cited_elsewhere, orphan_chunks
from ragit.store.postgres.connection import connect, translated, unavailable
from ragit.store.postgres.health import read_health
from ragit.store.postgres.steps import SCHEMA_VERSION, current_version
from ragit.store.postgres.term_index import SnapshotTermIndex
from ragit.store.rows import StoredChunk


@dataclass(frozen=True)
class Snapshot:
    """A published snapshot: the commit, its embedding namespace and its manifest."""

    snapshot_id: int
    repository_id: str
    commit_sha: str
    namespace: str
    namespace_id: int
    dimensions: int
    manifest: bytes
    chunk_ids: tuple[str, ...]  # sorted

    @cached_property
    def members(self) -> frozenset[str]:
        """The snapshot's chunk ids as a set (made once): reads by id keep only these, so
        their statements need not join the snapshot's rows on the server."""
        return frozenset(self.chunk_ids)

    @property
    def embedding(self) -> dict[str, Any]:
        """The embedding profile of the snapshot's vectors (:func:`snapshot_embedding`; a
        fresh dict on each call)."""
        return snapshot_embedding(self.manifest, self.namespace, self.dimensions)


@dataclass(frozen=True)
class Published:
    """A published snapshot's row without its manifest (:meth:`PgReader.published`)."""

    snapshot_id: int
    commit_sha: str
    namespace: str
    dimensions: int
    published_at: str  # ISO 8601, the server's clock
    chunk_count: int


def snapshot_embedding(manifest: bytes, namespace: str, dimensions: int) -> dict[str, Any]:
    """The embedding profile a snapshot's vectors are in: the manifest's ``embedding`` block
    when it names the snapshot's namespace, else only the namespace's identity
    (``namespaceId``, ``dimensions``). The second is a snapshot that ``ragit migrate
    embeddings`` republished in another namespace with its manifest's exact bytes (which
    still name the profile of the first ingest); the server does not know that namespace's
    provider and model, :func:`ragit.embed.complete_profile` finds them in the configured
    profile when it is that namespace's."""
    data = _json.loads(manifest)
    block = data.get("embedding") if isinstance(data, dict) else None
    if isinstance(block, dict) and block.get("namespaceId") == namespace:
        return dict(block)
    return {"namespaceId": namespace, "dimensions": dimensions}


class PgReader:
    """Read access to the shared store (a read-only connection from the environment)."""

    def __init__(self) -> None:
        self._conn: psycopg.Connection[Any] | None = None
        # Snapshot id -> how many rows its namespace held beyond the snapshot's chunks when
        # first asked (for the exact vector scan; see :meth:`vector_search`).
        self._beyond: dict[int, int] = {}

    @classmethod
    def open(cls) -> PgReader:
        """Connect and check the schema version.

        Raises:
            SnapshotStoreUnavailable: no server, refused, or a schema this RAGit does not
                read (migrate the store).
        """
        reader = cls()
        with reader._transaction() as cur:
            version = current_version(cur.connection)
        if version != SCHEMA_VERSION:
            reader.close()
            raise unavailable(
                f"the schema is version {version}, this RAGit reads version {SCHEMA_VERSION} "
                "(run the store migrations)"
            )
        return reader

    def close(self) -> None:
        """Close the connection; idempotent."""
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def __enter__(self) -> PgReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def connection(self) -> psycopg.Connection[Any]:
        """The read-only connection (opened when missing or lost)."""
        if self._conn is None or self._conn.closed or self._conn.broken:
            if self._conn is not None:
                self._conn.close()
            # Autocommit: a call that is one statement is one round trip, and one implicit
            # read-only transaction (default_transaction_read_only); calls of several
            # statements open a REPEATABLE READ one (_transaction).
            self._conn = connect(read_only=True, autocommit=True)
            self._conn.isolation_level = psycopg.IsolationLevel.REPEATABLE_READ
            # No server-side prepared statements: after five runs a prepared statement may
            # switch to a generic plan, which cannot see how many ids an `= ANY(array)`
            # holds; measured, warm keyword-only queries took 3x the CPU with them.
            self._conn.prepare_threshold = None
        return self._conn

    @contextmanager
    def _transaction(self) -> Iterator[psycopg.Cursor[Any]]:
        conn = self.connection
        with translated(writer=False), conn.transaction(), conn.cursor() as cur:
            yield cur

    def _rows(
        self, query: str | sql.Composed, args: Sequence[Any] = (), *, binary: bool = False
    ) -> list[Any]:
        """The rows of one statement (its own read-only transaction: one MVCC snapshot)."""
        conn = self.connection
        with translated(writer=False), conn.cursor() as cur:
            cur.execute(query, args, binary=binary)
            return cur.fetchall()

    def health(self, repository_id: str) -> dict[str, Any]:
        """:func:`~ragit.store.postgres.health.health` over this reader's connection (opened
        here when it is not: a reader made without :meth:`open`, which refuses a schema of
        another version, can report one).

        Raises:
            SnapshotStoreUnavailable: no server configured, or the server refused (masked).
            StoreReadBusy: the connection was lost (retryable).
        """
        conn = self.connection
        with translated(writer=False):
            return read_health(conn, repository_id)

    # ------------------------------------------------------------------ snapshots

    def schema_version(self) -> int:
        """The schema version of the database (0: never migrated)."""
        with self._transaction() as cur:
            return current_version(cur.connection)

    def snapshot_shas(self, repository_id: str) -> list[str]:
        """The commits of ``repository_id`` that have a published snapshot (sorted)."""
        rows = self._rows(
            "SELECT commit_sha FROM ragit_snapshots WHERE repository_id = %s ORDER BY commit_sha",
            (repository_id,),
        )
        return [str(r[0]) for r in rows]

    def snapshot_id(self, repository_id: str, commit_sha: str) -> int | None:
        """The id of the commit's published snapshot (None: not indexed): a new id each
        time the commit is published, so a reader keeps a snapshot it read while the id
        stays the same."""
        rows = self._rows(
            "SELECT snapshot_id FROM ragit_snapshots WHERE repository_id = %s AND commit_sha = %s",
            (repository_id, commit_sha),
        )
        return int(rows[0][0]) if rows else None

    def snapshot(self, repository_id: str, commit_sha: str) -> Snapshot | None:
        """The published snapshot of a commit (None: not indexed on the server)."""
        # One statement: the row and its chunk ids from one MVCC snapshot, even while the
        # commit is republished.
        rows = self._rows(
            "SELECT s.snapshot_id, n.namespace, n.namespace_id, n.dimensions, s.manifest, "
            "ARRAY(SELECT c.chunk_id FROM ragit_snapshot_chunks c "
            'WHERE c.snapshot_id = s.snapshot_id ORDER BY c.chunk_id COLLATE "C") '
            "FROM ragit_snapshots s JOIN ragit_namespaces n USING (namespace_id) "
            "WHERE s.repository_id = %s AND s.commit_sha = %s",
            (repository_id, commit_sha),
        )
        if not rows:
            return None
        row = rows[0]
        ids = tuple(str(cid) for cid in row[5])
        return Snapshot(
            snapshot_id=int(row[0]),
            repository_id=repository_id,
            commit_sha=commit_sha,
            namespace=str(row[1]),
            namespace_id=int(row[2]),
            dimensions=int(row[3]),
            manifest=str(row[4]).encode("utf-8"),
            chunk_ids=ids,
        )

    def snapshots(self, repository_id: str) -> list[Snapshot]:
        """Every published snapshot of ``repository_id`` with its manifest and chunk ids, by
        commit (one statement: one MVCC snapshot; what a security purge judges)."""
        rows = self._rows(
            "SELECT s.snapshot_id, s.commit_sha, n.namespace, n.namespace_id, n.dimensions, "
            "s.manifest, ARRAY(SELECT c.chunk_id FROM ragit_snapshot_chunks c "
            'WHERE c.snapshot_id = s.snapshot_id ORDER BY c.chunk_id COLLATE "C") '
            "FROM ragit_snapshots s JOIN ragit_namespaces n USING (namespace_id) "
            "WHERE s.repository_id = %s ORDER BY s.commit_sha",
            (repository_id,),
        )
        return [
            Snapshot(
                snapshot_id=int(row[0]),
                repository_id=repository_id,
                commit_sha=str(row[1]),
                namespace=str(row[2]),
                namespace_id=int(row[3]),
                dimensions=int(row[4]),
                manifest=str(row[5]).encode("utf-8"),
                chunk_ids=tuple(str(cid) for cid in row[6]),
            )
            for row in rows
        ]

    def chunk_texts(self, namespace_id: int, chunk_ids: Iterable[str]) -> dict[str, dict[str, str]]:
        """Every stored string of the chunks ``chunk_ids`` of a namespace (``text``,
        ``searchEn``, ``searchCjk``, ``sectionTitle``, ``headingPath``), by id: what a
        security audit or purge scans for secrets. One statement per 1,000 ids."""
        wanted = sorted(set(chunk_ids))
        out: dict[str, dict[str, str]] = {}
        for start in range(0, len(wanted), 1000):
            for row in self._rows(
                "SELECT chunk_id, text, search_en, search_cjk, section_title, heading_path "
                "FROM ragit_chunks WHERE namespace_id = %s AND chunk_id = ANY(%s::text[])",
                (namespace_id, wanted[start : start + 1000]),
            ):
                out[str(row[0])] = {
                    "text": str(row[1]),
                    "searchEn": str(row[2]),
                    "searchCjk": str(row[3]),
                    "sectionTitle": str(row[4]),
                    "headingPath": str(row[5]),
                }
        return out

    def published(self, repository_id: str) -> list[Published]:
        """Every snapshot of ``repository_id`` with its embedding namespace, oldest
        publication first (no manifest, no chunk ids: one row per commit). One statement."""
        rows = self._rows(
            "SELECT s.snapshot_id, s.commit_sha, n.namespace, n.dimensions, s.published_at, "
            "s.chunk_count FROM ragit_snapshots s JOIN ragit_namespaces n USING (namespace_id) "
            "WHERE s.repository_id = %s ORDER BY s.published_at, s.snapshot_id",
            (repository_id,),
        )
        return [
            Published(
                snapshot_id=int(r[0]),
                commit_sha=str(r[1]),
                namespace=str(r[2]),
                dimensions=int(r[3]),
                published_at=r[4].isoformat(),
                chunk_count=int(r[5]),
            )
            for r in rows
        ]

    def stored(self, namespace: str, chunk_ids: Iterable[str]) -> set[str]:
        """The ids of ``chunk_ids`` stored in ``namespace`` by any writer (what an ingest
        would not embed again; its dry run counts against this). One statement."""
        wanted = sorted(set(chunk_ids))
        if not wanted:
            return set()
        rows = self._rows(
            "SELECT c.chunk_id FROM ragit_chunks c JOIN ragit_namespaces n "
            "USING (namespace_id) WHERE n.namespace = %s AND c.chunk_id = ANY(%s::text[])",
            (namespace, wanted),
        )
        return {str(r[0]) for r in rows}

    def orphan_chunks(self, snapshot_ids: Sequence[int]) -> dict[int, list[str]]:
        """:func:`orphan_chunks` over this reader's connection (a purge's plan)."""
        with translated(writer=False):
            return orphan_chunks(self.connection, snapshot_ids)

    def cited_elsewhere(self, repository_id: str, chunks: Mapping[int, Iterable[str]]) -> int:
        """:func:`cited_elsewhere` over this reader's connection (a purge's plan)."""
        with translated(writer=False):
            return cited_elsewhere(self.connection, repository_id, chunks)

    def unstored(self, repository_id: str) -> dict[str, list[str]]:
        """The chunk ids each snapshot of ``repository_id`` names that its namespace does not
        store (by commit; only snapshots that lack some). A publication checks every chunk is
        stored, so this is empty unless rows were deleted behind RAGit's back (what ``repair``
        looks for). One statement."""
        rows = self._rows(
            "SELECT s.commit_sha, sc.chunk_id FROM ragit_snapshots s "
            "JOIN ragit_snapshot_chunks sc USING (snapshot_id) "
            "WHERE s.repository_id = %s AND NOT EXISTS (SELECT 1 FROM ragit_chunks c "
            "WHERE c.namespace_id = s.namespace_id AND c.chunk_id = sc.chunk_id) "
            'ORDER BY s.commit_sha, sc.chunk_id COLLATE "C"',
            (repository_id,),
        )
        out: dict[str, list[str]] = {}
        for sha, cid in rows:
            out.setdefault(str(sha), []).append(str(cid))
        return out

    def terms(self, snapshot: Snapshot) -> SnapshotTermIndex:
        """The snapshot's keyword index (see :class:`SnapshotTermIndex`)."""
        # Looked up at each call, as the reader's own statements are.
        return SnapshotTermIndex(lambda query, args=(): self._rows(query, args), snapshot)

    def view(self, snapshot: Snapshot) -> SnapshotReader:
        """The snapshot as the retrieval engine reads a store (see :class:`SnapshotReader`)."""
        return SnapshotReader(self, snapshot)

    # ------------------------------------------------------------------ chunks

    def fetch(self, snapshot: Snapshot, chunk_ids: Iterable[str]) -> dict[str, StoredChunk]:
        """The stored chunks of ``chunk_ids`` that belong to the snapshot, by id."""
        # The snapshot's ids only (its set is at hand): the statement reads the namespace's
        # rows by primary key, without joining the snapshot's.
        wanted = sorted(set(chunk_ids) & snapshot.members)
        if not wanted:
            return {}
        rows = self._rows(
            "SELECT c.chunk_id, c.text, c.section_title, c.heading_path, c.token_count "
            "FROM ragit_chunks c WHERE c.namespace_id = %s AND c.chunk_id = ANY(%s::text[])",
            (snapshot.namespace_id, wanted),
        )
        return {
            str(r[0]): StoredChunk(str(r[0]), str(r[1]), str(r[2]), str(r[3]), int(r[4]))
            for r in rows
        }

    def fetch_vectors(self, snapshot: Snapshot, chunk_ids: Iterable[str]) -> dict[str, list[float]]:
        """The vectors of ``chunk_ids`` that belong to the snapshot, by id, unit length."""
        wanted = sorted(set(chunk_ids) & snapshot.members)
        if not wanted:
            return {}
        # Binary transfer: pgvector's binary form is the float32 values themselves. By
        # primary key in the namespace, as :meth:`fetch`.
        rows = self._rows(
            "SELECT c.chunk_id, c.embedding FROM ragit_chunks c "
            "WHERE c.namespace_id = %s AND c.chunk_id = ANY(%s::text[])",
            (snapshot.namespace_id, wanted),
            binary=True,
        )
        out: dict[str, list[float]] = {}
        for cid, value in rows:
            # Unit length, as the local store returns them (zvec normalizes for cosine).
            v = np.asarray(value.to_numpy() if hasattr(value, "to_numpy") else value, np.float32)
            norm = np.float32(np.linalg.norm(v)) or np.float32(1.0)
            out[str(cid)] = (v / norm).tolist()
        return out

    def vector_search(
        self, snapshot: Snapshot, vector: Sequence[float], k: int, *, approximate: bool = False
    ) -> list[tuple[str, float]]:
        """The ``k`` chunks of the snapshot nearest to ``vector`` by cosine, as
        ``(chunk id, similarity)`` best first, ties by chunk id (similarity: 1 − cosine
        distance, clamped to [0, 1]).

        Exact by default, as the local store's FLAT index is: the ordering expression is not
        the HNSW index's, so the server scans the snapshot's vectors. ``approximate`` orders
        by the index's expression so the planner may walk the namespace's HNSW graph
        (``hnsw.ef_search`` raised to ``k``); pgvector filters the graph's candidates by
        snapshot afterwards, so a small snapshot in a large namespace can come back short —
        then this falls back to the exact scan.
        """
        if k <= 0:
            return []
        if len(vector) != snapshot.dimensions:
            raise unavailable(
                f"the question vector has {len(vector)} dimensions, the snapshot's namespace "
                f"{snapshot.dimensions}"
            )
        if not approximate:
            scanned = self._scan_namespace(snapshot, vector, k)
            if scanned is not None:
                return scanned
        dim = sql.Literal(snapshot.dimensions)
        ordering = (
            sql.SQL("c.embedding::vector({dim}) <=> %b::vector({dim})")
            if approximate
            else sql.SQL("c.embedding <=> %b::vector({dim})")
        ).format(dim=dim)
        query = sql.SQL(
            "SELECT c.chunk_id, {ordering} AS d "
            "FROM ragit_chunks c JOIN ragit_snapshot_chunks s "
            "ON s.snapshot_id = %s AND s.chunk_id = c.chunk_id "
            "WHERE c.namespace_id = {ns} ORDER BY d LIMIT %s"
        ).format(ordering=ordering, ns=sql.Literal(snapshot.namespace_id))
        # One more than asked, so a tie at the cut is resolved by chunk id below. The
        # question vector travels in binary (its float32 values).
        args = (np.asarray(vector, dtype=np.float32), snapshot.snapshot_id, k + 1)
        if approximate:
            with self._transaction() as cur:
                cur.execute(
                    sql.SQL("SET LOCAL hnsw.ef_search = {}").format(
                        sql.Literal(min(max(k + 1, 40), 1000))
                    )
                )
                cur.execute(query, args)
                rows = cur.fetchall()
        else:
            rows = self._rows(query, args)
        if approximate and len(rows) < min(k + 1, len(snapshot.chunk_ids)):
            return self.vector_search(snapshot, vector, k)
        ranked = sorted((float(r[1]), str(r[0])) for r in rows)
        # Similarity 1 − cosine distance clamped to [0, 1], as the local store reports it.
        return [(cid, min(1.0, max(0.0, 1.0 - d))) for d, cid in ranked[:k]]

    def _scan_namespace(
        self, snapshot: Snapshot, vector: Sequence[float], k: int
    ) -> list[tuple[str, float]] | None:
        """The exact scan without joining the snapshot's rows (None: not this way).

        When the namespace holds few chunks beyond the snapshot's (one repository's commits
        share most of their chunks), the server scans the namespace's vectors and returns
        the ``k + 1`` nearest plus as many as the namespace holds beyond the snapshot; the
        snapshot's are kept here. The same distances as the joined scan (the same
        expression over the same rows), without the server building and probing a hash of
        the snapshot's chunk ids (measured at N=1000: a sixth of the statement's CPU). Still
        exact when the namespace has grown since it was counted: then fewer than ``k + 1``
        of the rows are the snapshot's and this returns None (the joined scan answers).
        """
        beyond = self._beyond.get(snapshot.snapshot_id)
        if beyond is None:
            rows = self._rows(
                "SELECT count(*) FROM ragit_chunks WHERE namespace_id = %s",
                (snapshot.namespace_id,),
            )
            beyond = max(0, int(rows[0][0]) - len(snapshot.chunk_ids))
            if len(self._beyond) >= 16:
                self._beyond.pop(next(iter(self._beyond)))
            self._beyond[snapshot.snapshot_id] = beyond
        if beyond > max(k + 1, len(snapshot.chunk_ids) // 8):
            return None
        limit = k + 1 + beyond
        query = sql.SQL(
            "SELECT c.chunk_id, c.embedding <=> %b::vector({dim}) AS d FROM ragit_chunks c "
            "WHERE c.namespace_id = {ns} ORDER BY d LIMIT %s"
        ).format(dim=sql.Literal(snapshot.dimensions), ns=sql.Literal(snapshot.namespace_id))
        rows = self._rows(query, (np.asarray(vector, dtype=np.float32), limit))
        members = snapshot.members
        inside = [(float(d), str(cid)) for cid, d in rows if cid in members]
        if len(inside) < k + 1 and len(rows) == limit:
            return None  # the namespace grew beyond what was counted: not provably exact
        ranked = sorted(inside[: k + 1])
        return [(cid, min(1.0, max(0.0, 1.0 - d))) for d, cid in ranked[:k]]


class SnapshotReader:
    """One published snapshot with the interface the retrieval engine reads a store through
    (:class:`ragit.store.reader.StoreReader`'s: ``vector_search``, ``terms``, ``fetch``,
    ``fetch_vectors``, ``chunk_count``, ``embedding``, ``store_id``, ``generation``), every
    call restricted to the snapshot's chunks."""

    def __init__(self, reader: PgReader, snapshot: Snapshot) -> None:
        self._reader = reader
        self.snapshot = snapshot
        self.store_id = f"postgres:{snapshot.repository_id}"
        self.generation = snapshot.snapshot_id
        self._terms: SnapshotTermIndex | None = None
        self._embedding: dict[str, Any] | None = None

    @property
    def chunk_count(self) -> int:
        return len(self.snapshot.chunk_ids)

    @property
    def dimensions(self) -> int:
        return self.snapshot.dimensions

    @property
    def embedding(self) -> dict[str, Any]:
        """The profile of the snapshot's vectors (:func:`snapshot_embedding`; parsed once: a
        published snapshot never changes)."""
        if self._embedding is None:
            self._embedding = snapshot_embedding(
                self.snapshot.manifest, self.snapshot.namespace, self.snapshot.dimensions
            )
        return dict(self._embedding)

    def vector_search(self, vector: Sequence[float], topk: int) -> list[tuple[str, float]]:
        return self._reader.vector_search(self.snapshot, vector, topk)

    def terms(self) -> SnapshotTermIndex:
        if self._terms is None:
            self._terms = self._reader.terms(self.snapshot)
        return self._terms

    def fetch(self, ids: Sequence[str]) -> dict[str, StoredChunk]:
        return self._reader.fetch(self.snapshot, ids)

    def fetch_vectors(self, ids: Sequence[str]) -> dict[str, list[float]]:
        return self._reader.fetch_vectors(self.snapshot, ids)

    def embedded_texts(self, ids: Sequence[str]) -> dict[str, str]:
        """The text ingest embedded for each chunk of the snapshot (its ``search_en``)."""
        wanted = set(ids) & self.snapshot.members
        rows = self._reader.chunk_texts(self.snapshot.namespace_id, wanted)
        return {cid: row["searchEn"] for cid, row in rows.items()}

    def close(self) -> None:
        """Nothing to release (the :class:`PgReader` owns the connection)."""
