"""The schema of the shared store, as ordered migration steps, and the version a database is
at (applying the steps is :mod:`ragit.store.postgres.migrate`, a writer readers never import).

Step *n* (1-based) takes the schema from version *n − 1* to *n*. A step is never edited
once released: a change is a new step at the end.

Tables (every name prefixed ``ragit_``, so the store can share a database):

``ragit_schema_version(version, description, applied_at)``
    One row per applied step.
``ragit_namespaces(namespace_id, namespace, dimensions)``
    Embedding namespaces (provider, model, dimensions, normalization: the manifest's
    ``embedding.namespaceId``). Each has its own partial HNSW index over its vectors, made
    when the namespace is first written (its dimension fixes the index's type).
``ragit_chunks(namespace_id, chunk_id, text, search_en, search_cjk, section_title,
heading_path, token_count, len_en, len_cjk, embedding, len_ko)``
    One row per content-addressed chunk per namespace, written once and never changed
    (the id is a hash of the content). ``len_en``/``len_cjk``/``len_ko`` are the chunk's
    length in keyword terms per field (:mod:`ragit.text.terms`).
``ragit_chunk_terms(namespace_id, field, term, chunk_id, tf)``
    Keyword postings: how often each term occurs in each chunk, per field (0 = ``en``,
    1 = ``cjk``, 2 = ``ko``; ``len_ko`` since version 3, whose migration indexes the chunks
    already stored again under the term rules ``terms-3``). BM25's statistics are computed
    from these per snapshot at query time.
    Written only by the transaction that inserts the chunk, deleted only by the security
    purge that deletes it (no foreign key since version 2: checking it per row dominated
    bulk loads).
``ragit_snapshots(snapshot_id, repository_id, commit_sha, namespace_id, manifest,
chunk_count, published_at)``
    A commit of a repository bound to its manifest (the exact bytes of
    ``.ragit/manifest/<sha>.json``).
``ragit_snapshot_chunks(snapshot_id, chunk_id)``
    The chunk ids of each snapshot (every scope of the manifest).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

import psycopg


@dataclass(frozen=True)
class Step:
    description: str
    sql: str


STEPS: tuple[Step, ...] = (
    Step(
        "pgvector, chunks, keyword postings, snapshots",
        """
CREATE EXTENSION IF NOT EXISTS vector;
CREATE TABLE ragit_namespaces(
  namespace_id integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  namespace text NOT NULL UNIQUE,
  dimensions integer NOT NULL CHECK (dimensions > 0)
);
CREATE TABLE ragit_chunks(
  namespace_id integer NOT NULL REFERENCES ragit_namespaces,
  chunk_id text NOT NULL,
  text text NOT NULL,
  search_en text NOT NULL,
  search_cjk text NOT NULL,
  section_title text NOT NULL,
  heading_path text NOT NULL,
  token_count integer NOT NULL,
  len_en integer NOT NULL,
  len_cjk integer NOT NULL,
  embedding vector NOT NULL,
  PRIMARY KEY (namespace_id, chunk_id)
);
CREATE TABLE ragit_chunk_terms(
  namespace_id integer NOT NULL,
  field smallint NOT NULL CHECK (field IN (0, 1)),
  term text NOT NULL,
  chunk_id text NOT NULL,
  tf integer NOT NULL CHECK (tf > 0),
  PRIMARY KEY (namespace_id, field, term, chunk_id),
  FOREIGN KEY (namespace_id, chunk_id) REFERENCES ragit_chunks
);
CREATE TABLE ragit_snapshots(
  snapshot_id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  repository_id text NOT NULL,
  commit_sha text NOT NULL CHECK (commit_sha ~ '^[0-9a-f]{40}$'),
  namespace_id integer NOT NULL REFERENCES ragit_namespaces,
  manifest text NOT NULL,
  chunk_count integer NOT NULL,
  published_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (repository_id, commit_sha)
);
CREATE TABLE ragit_snapshot_chunks(
  snapshot_id bigint NOT NULL REFERENCES ragit_snapshots ON DELETE CASCADE,
  chunk_id text NOT NULL,
  PRIMARY KEY (snapshot_id, chunk_id)
);
""",
    ),
    Step(
        "keyword postings without a foreign key (bulk loads)",
        # Checking the key cost a lookup per posting row, most of a bulk load's time. The
        # rows are still only written by the transaction that inserts their chunk (and
        # chunks are never deleted), so every posting's chunk exists.
        """
ALTER TABLE ragit_chunk_terms
  DROP CONSTRAINT IF EXISTS ragit_chunk_terms_namespace_id_chunk_id_fkey;
""",
    ),
    Step(
        "Korean morphemes: the keyword field ko (terms-3)",
        # The rows already stored are indexed again under terms-3 (their en terms, and their
        # ko morphemes) in the same transaction, by ragit.store.postgres.migrate.
        """
ALTER TABLE ragit_chunks ADD COLUMN len_ko integer NOT NULL DEFAULT 0;
ALTER TABLE ragit_chunk_terms DROP CONSTRAINT IF EXISTS ragit_chunk_terms_field_check;
ALTER TABLE ragit_chunk_terms ADD CONSTRAINT ragit_chunk_terms_field_check
  CHECK (field IN (0, 1, 2));
""",
    ),
)

SCHEMA_VERSION = len(STEPS)
FIELDS = ("en", "cjk", "ko")
# A namespace gets its HNSW graph once it holds this many rows: below, an exact scan is
# as fast as the graph (reads are exact by default anyway) and a load builds nothing.
GRAPH_MIN_ROWS = 10_000


def index_name(namespace_id: int) -> str:
    """The name of a namespace's HNSW index."""
    return f"ragit_chunks_hnsw_{namespace_id}"


def bulk_lock_key(namespace: str) -> int:
    """The advisory lock key of bulk loads into an embedding namespace (held shared by each
    loader, exclusively by the one that builds the index)."""
    digest = hashlib.blake2b(f"ragit-bulk\0{namespace}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


def writer_lock_key(repository_id: str, namespace: str) -> int:
    """The advisory lock key (a signed 64-bit integer) of writers of one repository and
    embedding namespace."""
    digest = hashlib.blake2b(
        f"ragit-writer\0{repository_id}\0{namespace}".encode(), digest_size=8
    ).digest()
    return int.from_bytes(digest, "big", signed=True)


def current_version(conn: psycopg.Connection[Any]) -> int:
    """The schema version of the database ``conn`` reaches (0: never migrated)."""
    with conn.cursor() as cur:
        cur.execute("SELECT to_regclass('ragit_schema_version') IS NOT NULL")
        row = cur.fetchone()
        if row is None or not row[0]:
            return 0
        cur.execute("SELECT coalesce(max(version), 0) FROM ragit_schema_version")
        row = cur.fetchone()
    return int(row[0]) if row else 0
