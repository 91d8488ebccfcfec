"""Writing the shared store: content-addressed chunks and snapshots.

Every write is one transaction that first takes the transaction-scoped advisory lock of
its (repository, namespace) (:func:`~ragit.store.postgres.steps.writer_lock_key`): writers
of one repository and embedding namespace run one at a time, writers of different
repositories in parallel.
Chunks are upserted by (namespace, chunk id) with ``ON CONFLICT DO NOTHING``: the id is a
hash of the content, so a chunk another writer already stored (or is storing: the insert
waits for that transaction) is left as it is, and its keyword postings are written only by
the transaction that inserted the row. A snapshot (the manifest and its chunk ids) is
published in one transaction that also checks every chunk is stored: it is visible
entirely or not at all, and a writer killed before the commit leaves nothing (the server
rolls the open transaction back when the connection dies).

Bulk loads (the first ingest into a namespace, a rebuild, any write that adds many vectors
relative to the namespace) run without the namespace's HNSW graph: inserting a vector into
the graph costs milliseconds and grows with it, building the graph once over every row
costs a fraction of that per row. A namespace is created without its index; a write that
adds at least :data:`BULK_RATIO` of the namespace's rows (and at least
:data:`BULK_MIN_ROWS`), or a caller that announces such a load (:meth:`PgWriter.expect`),
drops the index first (``DROP INDEX CONCURRENTLY``, outside any transaction: readers and
other writers are not blocked). :meth:`PgWriter.publish` builds it after its transaction
commits (``CREATE INDEX CONCURRENTLY``, :meth:`PgWriter.build_index`) once the namespace
holds :data:`GRAPH_MIN_ROWS` rows (a smaller one is scanned exactly). Meanwhile reads stay
exact and correct (exact vector search never uses the graph; the approximate path then
scans). A writer that writes into a namespace without its index holds the namespace's bulk
lock shared (a session advisory lock); the index is built by the last of them to finish
(the builder needs the lock exclusively, so it never builds under another loader's feet),
and a killed loader's lock dies with its connection: the next writer to publish builds it.
An index left invalid by a killed build is dropped and built again.

A security purge is :mod:`ragit.store.postgres.purge`, the one writer that deletes.

Fault phases (:mod:`ragit._faults`, test-only): ``pg-chunks-inserted`` (a write's rows and
postings inserted, not committed), ``pg-chunks-committed`` (a write committed: between an
ingest's batches), ``pg-snapshot-inserted`` (a snapshot's rows inserted, not committed),
``pg-snapshot-committed`` (a snapshot committed, the index not yet built),
and ``pg-index-building`` (a bulk load's rows committed, the index not yet built).
"""

from __future__ import annotations

import contextlib
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import psycopg
from psycopg import sql

from ragit import _faults
from ragit.contract.errors import IngestStoreWriteUnverified, InputInvalid
from ragit.store.postgres.builder import start_builder
from ragit.store.postgres.connection import connect, translated, unavailable
from ragit.store.postgres.privileges import check_can_write
from ragit.store.postgres.steps import (
    GRAPH_MIN_ROWS,
    SCHEMA_VERSION,
    bulk_lock_key,
    current_version,
    index_name,
    writer_lock_key,
)
from ragit.store.rows import ChunkRow
from ragit.text.terms import field_terms

_SHA = frozenset("0123456789abcdef")
# A write loads without the HNSW graph when it adds at least this many rows and at least
# this share of the rows the namespace already holds (incremental insertion into the graph
# costs ~10x building it per row, measured on 384-dimensional vectors).
BULK_MIN_ROWS = 200
BULK_RATIO = 0.1
# Memory for building a namespace's graph (pgvector builds it in memory while it fits).
BUILD_MEMORY = "1GB"
# Column types of the binary COPYs (staged chunks; postings).
_STAGE_TYPES = ("int4", *["text"] * 6, "int4", "int4", "int4", "vector", "int4")
_TERM_TYPES = ("int4", "int2", "text", "text", "int4")


@dataclass(frozen=True)
class WriteResult:
    """What one :meth:`PgWriter.write` stored."""

    written: int  # rows this transaction inserted
    present: int  # rows already stored (by an earlier or a concurrent writer)


class PgWriter:
    """A writer for one repository and embedding namespace."""

    def __init__(
        self,
        conn: psycopg.Connection[Any],
        repository_id: str,
        namespace: str,
        dimensions: int,
    ) -> None:
        self._conn = conn
        self.repository_id = repository_id
        self.namespace = namespace
        self.dimensions = dimensions
        self._loading = False  # this session holds the namespace's bulk lock shared

    @classmethod
    def open(cls, repository_id: str, namespace: str, dimensions: int) -> PgWriter:
        """Connect (from the environment) and check the schema is current.

        Raises:
            SnapshotStoreUnavailable: no server, refused, or the schema is not at
                :data:`SCHEMA_VERSION` (run the migrations first).
            InputInvalid: ``dimensions`` is not positive.
        """
        if dimensions <= 0:
            raise InputInvalid("dimensions", "must be a positive integer")
        conn = connect(read_only=False)
        try:
            with translated(writer=True):
                version = current_version(conn)
                conn.rollback()
        except BaseException:
            conn.close()
            raise
        if version != SCHEMA_VERSION:
            conn.close()
            raise unavailable(
                f"the schema is version {version}, this RAGit writes version {SCHEMA_VERSION} "
                "(run the store migrations)"
            )
        try:
            with translated(writer=True):
                check_can_write(conn)
        except BaseException:
            conn.close()
            raise
        return cls(conn, repository_id, namespace, dimensions)

    def close(self) -> None:
        """Close the connection (an open transaction is rolled back); idempotent."""
        self._conn.close()

    def __enter__(self) -> PgWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ transactions

    def _begin(self, cur: psycopg.Cursor[Any]) -> int:
        """Take the writer lock and make sure the namespace (and its vector index) exist;
        returns the namespace's id. Inside the caller's transaction."""
        cur.execute(
            "SELECT pg_advisory_xact_lock(%s)",
            (writer_lock_key(self.repository_id, self.namespace),),
        )
        # The first writer of a namespace inserts its row (a concurrent one waits on it, then
        # reads it). The namespace starts without its vector index: its first load is a
        # bulk load, the index is built after it (see build_index).
        cur.execute(
            "INSERT INTO ragit_namespaces(namespace, dimensions) VALUES (%s, %s) "
            "ON CONFLICT (namespace) DO NOTHING",
            (self.namespace, self.dimensions),
        )
        cur.execute(
            "SELECT n.namespace_id, n.dimensions, i.indisvalid FROM ragit_namespaces n "
            "LEFT JOIN pg_index i ON i.indexrelid = to_regclass('ragit_chunks_hnsw_' || "
            "n.namespace_id) WHERE n.namespace = %s",
            (self.namespace,),
        )
        row = cur.fetchone()
        assert row is not None
        namespace_id, dimensions = int(row[0]), int(row[1])
        if row[2] is not True and not self._loading:
            # Writing into a namespace without its (valid) index: a bulk load; the last
            # loader to finish builds the index (build_index).
            cur.execute("SELECT pg_advisory_lock_shared(%s)", (bulk_lock_key(self.namespace),))
            self._loading = True
        if dimensions != self.dimensions:
            raise InputInvalid(
                "dimensions",
                f"namespace {self.namespace!r} stores {dimensions}-dimensional vectors, "
                f"not {self.dimensions}",
            )
        return namespace_id

    # ------------------------------------------------------------------ bulk loads

    def expect(self, count: int) -> bool:
        """Announce that ``count`` chunks the namespace lacks are about to be written (in
        any number of :meth:`write` calls): when they are many relative to the namespace,
        the load runs without its HNSW index, which :meth:`publish` builds afterwards.
        Returns whether this writer now loads without the index.

        Raises:
            StoreWriteBusy: the connection was lost.
        """
        if count >= BULK_MIN_ROWS and not self._loading:
            self._plan([], new=count)
        return self._loading

    def _plan(self, ids: Sequence[str], *, new: int | None = None) -> None:
        """Drop the namespace's index before a write that adds many rows relative to it
        (``new`` rows, or those of ``ids`` the namespace lacks)."""
        with translated(writer=True), self._conn.transaction(), self._conn.cursor() as cur:
            # The namespace's size: its index's row count as of its build or last vacuum
            # (enough for a 10% rule, and free), counted only when the server has none.
            cur.execute(
                "SELECT n.namespace_id, i.indexrelid IS NOT NULL, "
                "CASE WHEN r.reltuples >= 0 THEN r.reltuples::bigint ELSE "
                "(SELECT count(*) FROM ragit_chunks c WHERE c.namespace_id = n.namespace_id) "
                "END, "
                "(SELECT count(*) FROM ragit_chunks c WHERE c.namespace_id = n.namespace_id "
                "AND c.chunk_id = ANY(%s::text[])) "
                "FROM ragit_namespaces n LEFT JOIN pg_index i ON i.indexrelid = "
                "to_regclass('ragit_chunks_hnsw_' || n.namespace_id) "
                "LEFT JOIN pg_class r ON r.oid = i.indexrelid WHERE n.namespace = %s",
                (list(ids), self.namespace),
            )
            row = cur.fetchone()
        if row is None or not row[1]:
            return  # a new namespace, or one already without its index: loads go in bulk
        adding = new if new is not None else len(ids) - int(row[3])
        if adding >= BULK_MIN_ROWS and adding >= BULK_RATIO * int(row[2]):
            self._without_index(int(row[0]))

    def _without_index(self, namespace_id: int) -> None:
        """Join the namespace's bulk loaders and drop its index (concurrently: neither
        readers nor other writers wait on it, it waits for the transactions using it)."""
        conn = self._conn
        with translated(writer=True):
            conn.autocommit = True
            try:
                conn.execute("SELECT pg_advisory_lock_shared(%s)", (bulk_lock_key(self.namespace),))
                self._loading = True
                # Only the tables' owner may drop an index: a CI role that is not a member
                # of its role loads into the graph (slower, same result).
                with contextlib.suppress(psycopg.errors.InsufficientPrivilege):
                    conn.execute(
                        sql.SQL("DROP INDEX CONCURRENTLY IF EXISTS {}").format(
                            sql.Identifier(index_name(namespace_id))
                        )
                    )
            finally:
                if not conn.closed:
                    conn.autocommit = False

    def build_index(self, min_rows: int | None = None) -> bool:
        """Build the namespace's HNSW index when it is missing or invalid and the namespace
        holds at least ``min_rows`` (:data:`GRAPH_MIN_ROWS`) rows, unless another bulk load
        into the namespace is still running (its loader builds it when it finishes).
        ``CREATE INDEX CONCURRENTLY``: readers and writers go on meanwhile. Returns whether
        this call built it.

        Raises:
            StoreWriteBusy: the connection was lost (the index is built by the next
                writer that publishes; reads are exact without it).
        """
        conn = self._conn
        key = bulk_lock_key(self.namespace)
        with translated(writer=True):
            conn.autocommit = True
            try:
                if self._loading:
                    conn.execute("SELECT pg_advisory_unlock_shared(%s)", (key,))
                    self._loading = False
                got = conn.execute("SELECT pg_try_advisory_lock(%s)", (key,)).fetchone()
                if got is None or not got[0]:
                    return False  # another loader is running: it builds the index
                try:
                    return self._build(conn, GRAPH_MIN_ROWS if min_rows is None else min_rows)
                finally:
                    conn.execute("SELECT pg_advisory_unlock(%s)", (key,))
            finally:
                if not conn.closed:
                    conn.autocommit = False

    def _build(self, conn: psycopg.Connection[Any], min_rows: int) -> bool:
        row = conn.execute(
            "SELECT n.namespace_id, n.dimensions, i.indisvalid FROM ragit_namespaces n "
            "LEFT JOIN pg_index i ON i.indexrelid = to_regclass('ragit_chunks_hnsw_' || "
            "n.namespace_id) WHERE n.namespace = %s",
            (self.namespace,),
        ).fetchone()
        if row is None or row[2] is True:
            return False
        namespace_id, dimensions = int(row[0]), int(row[1])
        name = sql.Identifier(index_name(namespace_id))
        if row[2] is False:  # left invalid by a build that did not finish
            try:
                conn.execute(sql.SQL("DROP INDEX CONCURRENTLY IF EXISTS {}").format(name))
            except psycopg.errors.InsufficientPrivilege:
                return False  # only the tables' owner may drop it (below)
        if min_rows > 0:
            big = conn.execute(
                "SELECT count(*) >= %s FROM (SELECT 1 FROM ragit_chunks "
                "WHERE namespace_id = %s LIMIT %s) AS s",
                (min_rows, namespace_id, min_rows),
            ).fetchone()
            if big is None or not big[0]:
                return False  # a small namespace: exact scans need no graph
        _faults.reach("pg-index-building")
        conn.execute(sql.SQL("SET maintenance_work_mem = {}").format(sql.Literal(BUILD_MEMORY)))
        try:
            conn.execute(
                sql.SQL(
                    "CREATE INDEX CONCURRENTLY {} ON ragit_chunks USING hnsw "
                    "((embedding::vector({})) vector_cosine_ops) WHERE namespace_id = {}"
                ).format(name, sql.Literal(dimensions), sql.Literal(namespace_id))
            )
        except psycopg.errors.InsufficientPrivilege:
            # Only the tables' owner (or a member of its role) may build an index: the
            # snapshot is published and reads stay exact; doctor reports the graph missing
            # until an ingest by such a role builds it.
            return False
        finally:
            if not conn.closed:
                conn.execute("RESET maintenance_work_mem")
        return True

    def join_load(self) -> None:
        """Hold the namespace's bulk lock shared, as a loader does (the detached builder
        takes over the publishing loader's turn with it: the namespace never reads as
        ``missing`` in between)."""
        if self._loading:
            return
        with translated(writer=True):
            self._conn.autocommit = True
            try:
                self._conn.execute(
                    "SELECT pg_advisory_lock_shared(%s)", (bulk_lock_key(self.namespace),)
                )
                self._loading = True
            finally:
                if not self._conn.closed:
                    self._conn.autocommit = False

    def _needs_graph(self, min_rows: int) -> bool:
        """Whether the namespace lacks a valid index and holds at least ``min_rows`` rows."""
        with translated(writer=True), self._conn.transaction(), self._conn.cursor() as cur:
            cur.execute(
                "SELECT n.namespace_id, i.indisvalid FROM ragit_namespaces n "
                "LEFT JOIN pg_index i ON i.indexrelid = to_regclass('ragit_chunks_hnsw_' || "
                "n.namespace_id) WHERE n.namespace = %s",
                (self.namespace,),
            )
            row = cur.fetchone()
            if row is None or row[1] is True:
                return False
            if min_rows <= 0:
                return True
            cur.execute(
                "SELECT count(*) >= %s FROM (SELECT 1 FROM ragit_chunks "
                "WHERE namespace_id = %s LIMIT %s) AS s",
                (min_rows, int(row[0]), min_rows),
            )
            big = cur.fetchone()
        return bool(big and big[0])

    def build_detached(self) -> bool:
        """What :meth:`publish` does after its commit, without waiting for the graph: when
        the namespace needs its HNSW index, a builder process of its own (``python -m
        ragit.store.postgres.graph``, in a session of its own) joins the namespace's bulk
        loaders before this writer leaves them, then builds the index as
        :meth:`build_index` would (unless another loader is still running), while the
        caller returns. Reads are exact meanwhile; ``doctor`` reports the index
        ``loading`` or ``building``, and ``missing`` if the builder dies (an ingest builds
        it then). A builder that cannot start is replaced by building here. Returns whether
        a builder was started.

        Raises:
            StoreWriteBusy: the connection was lost.
        """
        if not self._needs_graph(GRAPH_MIN_ROWS):
            self._leave_load()
            return False
        builder = start_builder(self.repository_id, self.namespace, self.dimensions, GRAPH_MIN_ROWS)
        if builder is None:
            self.build_index()
            return False
        try:
            self._leave_load()
        finally:
            # The builder waits for this end of its input to close: it builds only once
            # this writer has left the loaders (or died).
            if builder.stdin is not None:
                with contextlib.suppress(OSError):
                    builder.stdin.close()
        return True

    def _leave_load(self) -> None:
        if not self._loading:
            return
        with translated(writer=True):
            self._conn.autocommit = True
            try:
                self._conn.execute(
                    "SELECT pg_advisory_unlock_shared(%s)", (bulk_lock_key(self.namespace),)
                )
                self._loading = False
            finally:
                if not self._conn.closed:
                    self._conn.autocommit = False

    def existing(self, ids: Iterable[str]) -> set[str]:
        """The ids of ``ids`` stored in this namespace (by any writer, any repository): an
        ingest embeds only the others.

        Raises:
            StoreWriteBusy: the connection was lost.
        """
        wanted = sorted(set(ids))
        if not wanted:
            return set()
        with translated(writer=True), self._conn.transaction(), self._conn.cursor() as cur:
            cur.execute(
                "SELECT c.chunk_id FROM ragit_chunks c JOIN ragit_namespaces n "
                "USING (namespace_id) WHERE n.namespace = %s AND c.chunk_id = ANY(%s::text[])",
                (self.namespace, wanted),
            )
            return {str(r[0]) for r in cur.fetchall()}

    def write(self, rows: Sequence[ChunkRow]) -> WriteResult:
        """Store ``rows`` (one transaction): the chunks this store lacks are inserted with
        their keyword postings, the others are left untouched.

        Raises:
            InputInvalid: a vector of the wrong dimension.
            StoreWriteBusy: the connection was lost (nothing of this call was committed).
            SnapshotStoreUnavailable: any other server failure (rolled back).
        """
        unique = list({r.chunk_id: r for r in rows}.values())
        for r in unique:
            if len(r.vector) != self.dimensions:
                raise InputInvalid(
                    "vector",
                    f"chunk {r.chunk_id} has {len(r.vector)} dimensions, not {self.dimensions}",
                )
        if len(unique) >= BULK_MIN_ROWS and not self._loading:
            self._plan([r.chunk_id for r in unique])
        # Split before the transaction: the morphological analysis is the slow part.
        split = field_terms([r.search_en for r in unique], [r.search_cjk for r in unique])
        terms = {
            r.chunk_id: (Counter(en), Counter(cjk), Counter(ko))
            for r, en, cjk, ko in zip(unique, *split, strict=True)
        }
        with translated(writer=True), self._conn.transaction(), self._conn.cursor() as cur:
            namespace_id = self._begin(cur)
            if not unique:
                return WriteResult(0, 0)
            cur.execute("CREATE TEMP TABLE ragit_stage_chunks(LIKE ragit_chunks) ON COMMIT DROP")
            # Binary COPY: the vectors travel as their float32 values (no decimal text to
            # print here and parse on the server).
            with cur.copy(
                "COPY ragit_stage_chunks(namespace_id, chunk_id, text, search_en, search_cjk, "
                "section_title, heading_path, token_count, len_en, len_cjk, embedding, len_ko) "
                "FROM STDIN (FORMAT BINARY)"
            ) as copy:
                copy.set_types(_STAGE_TYPES)
                for r, en, cjk, ko in zip(unique, *split, strict=True):
                    copy.write_row(
                        (
                            namespace_id,
                            r.chunk_id,
                            r.text,
                            r.search_en,
                            r.search_cjk,
                            r.section_title,
                            r.heading_path,
                            r.token_count,
                            len(en),
                            len(cjk),
                            np.asarray(r.vector, dtype=np.float32),
                            len(ko),
                        )
                    )
            # In chunk id order: concurrent writers of overlapping rows then wait on each
            # other's rows in one order and never deadlock.
            cur.execute(
                "INSERT INTO ragit_chunks SELECT * FROM ragit_stage_chunks "
                'ORDER BY chunk_id COLLATE "C" '
                "ON CONFLICT (namespace_id, chunk_id) DO NOTHING RETURNING chunk_id"
            )
            inserted = [str(row[0]) for row in cur.fetchall()]
            if inserted:
                # In key order (field, term, chunk id): each posting lands next to the
                # previous one in the primary key's b-tree instead of at a random leaf
                # (a quarter less server CPU for the postings, measured).
                postings = sorted(
                    (field, term, cid, tf)
                    for cid in inserted
                    for field, counts in enumerate(terms[cid])
                    for term, tf in counts.items()
                )
                with cur.copy(
                    "COPY ragit_chunk_terms(namespace_id, field, term, chunk_id, tf) "
                    "FROM STDIN (FORMAT BINARY)"
                ) as copy:
                    copy.set_types(_TERM_TYPES)
                    for field, term, cid, tf in postings:
                        copy.write_row((namespace_id, field, term, cid, tf))
            _faults.reach("pg-chunks-inserted")
        _faults.reach("pg-chunks-committed")
        return WriteResult(written=len(inserted), present=len(unique) - len(inserted))

    def publish(
        self,
        commit_sha: str,
        manifest: bytes,
        chunk_ids: Iterable[str],
        *,
        detach_build: bool = False,
    ) -> None:
        """Bind ``commit_sha`` to ``manifest`` (its exact bytes) and ``chunk_ids`` (every
        chunk the manifest names), in one transaction: readers see the previous binding
        of the commit, if any, until the commit and this one after it. Then the graph of a
        namespace loaded in bulk: built here (:meth:`build_index`), or with
        ``detach_build`` by a builder process while the caller returns
        (:meth:`build_detached`).

        Raises:
            InputInvalid: ``commit_sha`` is not a full lower-case SHA-1.
            IngestStoreWriteUnverified: chunks of the snapshot are not stored in this
                namespace (nothing is published).
            StoreWriteBusy: the connection was lost (nothing was published).
        """
        if len(commit_sha) != 40 or not _SHA.issuperset(commit_sha):
            raise InputInvalid("commitSha", "must be a full 40-hex-digit commit SHA")
        ids = sorted(set(chunk_ids))
        text = manifest.decode("utf-8")
        with translated(writer=True), self._conn.transaction(), self._conn.cursor() as cur:
            namespace_id = self._begin(cur)
            cur.execute(
                "SELECT count(*) FROM unnest(%s::text[]) AS s(chunk_id) "
                "WHERE NOT EXISTS (SELECT 1 FROM ragit_chunks c "
                "WHERE c.namespace_id = %s AND c.chunk_id = s.chunk_id)",
                (ids, namespace_id),
            )
            row = cur.fetchone()
            missing = int(row[0]) if row else 0
            if missing:
                raise IngestStoreWriteUnverified(missing)
            cur.execute(
                "DELETE FROM ragit_snapshots WHERE repository_id = %s AND commit_sha = %s",
                (self.repository_id, commit_sha),
            )
            cur.execute(
                "INSERT INTO ragit_snapshots(repository_id, commit_sha, namespace_id, manifest, "
                "chunk_count) VALUES (%s, %s, %s, %s, %s) RETURNING snapshot_id",
                (self.repository_id, commit_sha, namespace_id, text, len(ids)),
            )
            row = cur.fetchone()
            assert row is not None
            snapshot_id = int(row[0])
            with cur.copy("COPY ragit_snapshot_chunks(snapshot_id, chunk_id) FROM STDIN") as copy:
                for cid in ids:
                    copy.write_row((snapshot_id, cid))
            _faults.reach("pg-snapshot-inserted")
        _faults.reach("pg-snapshot-committed")
        # After the commit: the snapshot is visible (exact reads need no index); then the
        # graph of a namespace loaded in bulk.
        if detach_build:
            self.build_detached()
        else:
            self.build_index()
