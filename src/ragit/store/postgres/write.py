"""Writing the shared store: content-addressed chunks and snapshots.

Every write is one transaction that first takes the transaction-scoped advisory lock of
its (repository, namespace) (:func:`writer_lock_key`): writers of one repository and
embedding namespace run one at a time, writers of different repositories in parallel.
Chunks are upserted by (namespace, chunk id) with ``ON CONFLICT DO NOTHING``: the id is a
hash of the content, so a chunk another writer already stored (or is storing: the insert
waits for that transaction) is left as it is, and its keyword postings are written only by
the transaction that inserted the row. A snapshot (the manifest and its chunk ids) is
published in one transaction that also checks every chunk is stored: it is visible
entirely or not at all, and a writer killed before the commit leaves nothing (the server
rolls the open transaction back when the connection dies).

Fault phases (:mod:`ragit._faults`, test-only): ``pg-chunks-inserted`` (a write's rows and
postings inserted, not committed) and ``pg-snapshot-inserted`` (a snapshot's rows
inserted, not committed).
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import psycopg
from psycopg import sql

from ragit import _faults
from ragit.contract.errors import IngestStoreWriteUnverified, InputInvalid
from ragit.store.postgres.connection import connect, translated, unavailable, vector_text
from ragit.store.postgres.steps import SCHEMA_VERSION, current_version
from ragit.store.rows import ChunkRow
from ragit.text.terms import cjk_terms, en_terms

_SHA = frozenset("0123456789abcdef")


def writer_lock_key(repository_id: str, namespace: str) -> int:
    """The advisory lock key (a signed 64-bit integer) of writers of one repository and
    embedding namespace."""
    digest = hashlib.blake2b(
        f"ragit-writer\0{repository_id}\0{namespace}".encode(), digest_size=8
    ).digest()
    return int.from_bytes(digest, "big", signed=True)


def index_name(namespace_id: int) -> str:
    """The name of a namespace's HNSW index."""
    return f"ragit_chunks_hnsw_{namespace_id}"


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
        # The first writer of a namespace inserts its row and makes its vector index in
        # the same transaction; a concurrent one waits on the row, then reads it.
        cur.execute(
            "INSERT INTO ragit_namespaces(namespace, dimensions) VALUES (%s, %s) "
            "ON CONFLICT (namespace) DO NOTHING RETURNING namespace_id",
            (self.namespace, self.dimensions),
        )
        created = cur.fetchone()
        if created is not None:
            cur.execute(
                sql.SQL(
                    "CREATE INDEX {} ON ragit_chunks USING hnsw "
                    "((embedding::vector({})) vector_cosine_ops) WHERE namespace_id = {}"
                ).format(
                    sql.Identifier(index_name(int(created[0]))),
                    sql.Literal(self.dimensions),
                    sql.Literal(int(created[0])),
                )
            )
        cur.execute(
            "SELECT namespace_id, dimensions FROM ragit_namespaces WHERE namespace = %s",
            (self.namespace,),
        )
        row = cur.fetchone()
        assert row is not None
        namespace_id, dimensions = int(row[0]), int(row[1])
        if dimensions != self.dimensions:
            raise InputInvalid(
                "dimensions",
                f"namespace {self.namespace!r} stores {dimensions}-dimensional vectors, "
                f"not {self.dimensions}",
            )
        return namespace_id

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
        with translated(writer=True), self._conn.transaction(), self._conn.cursor() as cur:
            namespace_id = self._begin(cur)
            if not unique:
                return WriteResult(0, 0)
            cur.execute("CREATE TEMP TABLE ragit_stage_chunks(LIKE ragit_chunks) ON COMMIT DROP")
            with cur.copy(
                "COPY ragit_stage_chunks(namespace_id, chunk_id, text, search_en, search_cjk, "
                "section_title, heading_path, token_count, len_en, len_cjk, embedding) "
                "FROM STDIN"
            ) as copy:
                terms: dict[str, tuple[Counter[str], Counter[str]]] = {}
                for r in unique:
                    en, cjk = en_terms(r.search_en), cjk_terms(r.search_cjk)
                    terms[r.chunk_id] = (Counter(en), Counter(cjk))
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
                            vector_text(r.vector),
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
                with cur.copy(
                    "COPY ragit_chunk_terms(namespace_id, field, term, chunk_id, tf) FROM STDIN"
                ) as copy:
                    for cid in inserted:
                        for field, counts in enumerate(terms[cid]):
                            for term, tf in counts.items():
                                copy.write_row((namespace_id, field, term, cid, tf))
            _faults.reach("pg-chunks-inserted")
            return WriteResult(written=len(inserted), present=len(unique) - len(inserted))

    def publish(self, commit_sha: str, manifest: bytes, chunk_ids: Iterable[str]) -> None:
        """Bind ``commit_sha`` to ``manifest`` (its exact bytes) and ``chunk_ids`` (every
        chunk the manifest names), in one transaction: readers see the previous binding
        of the commit, if any, until the commit and this one after it.

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
