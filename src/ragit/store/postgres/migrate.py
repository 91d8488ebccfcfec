"""Applying the schema's migration steps (:mod:`ragit.store.postgres.steps`).

``migrate`` takes a session advisory lock (:data:`MIGRATE_LOCK`) for the whole run, so two
machines migrating at once apply each step once: the second waits, then finds the steps
applied. Each step runs in its own transaction together with its ``ragit_schema_version``
row: a step is applied entirely or not at all (PostgreSQL's DDL is transactional), and a
run killed between steps resumes at the next one.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import psycopg

from ragit.store.postgres.connection import connect, register_vector, translated, unavailable
from ragit.store.postgres.steps import SCHEMA_VERSION, STEPS, current_version
from ragit.text.terms import field_terms

# pg_advisory_lock key of migrations ("ragit-mg" as a big-endian int64).
MIGRATE_LOCK = int.from_bytes(b"ragit-mg", "big")

_VERSION_TABLE = """
CREATE TABLE IF NOT EXISTS ragit_schema_version(
  version integer PRIMARY KEY,
  description text NOT NULL,
  applied_at timestamptz NOT NULL DEFAULT now()
)
"""


@dataclass(frozen=True)
class Migration:
    """What a run of :func:`migrate` did."""

    before: int
    after: int
    applied: tuple[int, ...]

    def payload(self) -> dict[str, Any]:
        return {"before": self.before, "after": self.after, "applied": list(self.applied)}


def _refuse_newer(version: int) -> None:
    if version > SCHEMA_VERSION:
        raise unavailable(
            f"the schema is version {version}, newer than this RAGit's {SCHEMA_VERSION} "
            "(upgrade RAGit; nothing was applied)"
        )


def pending() -> Migration:
    """What :func:`migrate` would apply, read in a read-only transaction (the server
    refuses any write): ``applied`` holds the versions of the missing steps.

    Raises:
        SnapshotStoreUnavailable: no server, a refused connection, or a schema newer
            than this RAGit's.
        StoreReadBusy: the connection was lost (retryable).
    """
    conn = connect(read_only=True)
    try:
        with translated(writer=False):
            before = current_version(conn)
            conn.rollback()
    finally:
        conn.close()
    _refuse_newer(before)
    missing = tuple(range(before + 1, SCHEMA_VERSION + 1))
    return Migration(before=before, after=SCHEMA_VERSION, applied=missing)


def migrate() -> Migration:
    """Apply every step the database lacks (the connection from the environment).

    Raises:
        SnapshotStoreUnavailable: no server, a refused connection, a schema newer than
            this RAGit's (nothing is applied), or a step failed.
        StoreWriteBusy: the connection was lost while migrating (retryable; every step
            already committed stays, the rest is applied by the next run).
    """
    conn = connect(read_only=False, autocommit=True)
    try:
        with translated(writer=True):
            return _migrate(conn)
    finally:
        conn.close()


_BACKFILL_BATCH = 2_000


def _index_terms_3(conn: psycopg.Connection[Any]) -> None:
    """Version 3: every stored chunk's keyword terms under the rules of ``terms-3``, as a
    writer of this version would have written them (:func:`ragit.text.terms.field_terms`):
    its ``en`` postings and ``len_en`` again (joined words are now also indexed by their
    parts), and its ``ko`` postings and ``len_ko`` (the Korean morphemes of ``search_cjk``).
    ``cjk`` is unchanged."""
    with conn.cursor() as cur:
        cur.execute(
            "SELECT namespace_id, chunk_id, search_en, search_cjk FROM ragit_chunks "
            "ORDER BY namespace_id, chunk_id"
        )
        rows = cur.fetchall()
        cur.execute("DELETE FROM ragit_chunk_terms WHERE field = 0")
    for start in range(0, len(rows), _BACKFILL_BATCH):
        part = rows[start : start + _BACKFILL_BATCH]
        en_terms, _cjk, ko_terms = field_terms([str(r[2]) for r in part], [str(r[3]) for r in part])
        with conn.cursor() as cur:
            cur.executemany(
                "UPDATE ragit_chunks SET len_en = %s, len_ko = %s "
                "WHERE namespace_id = %s AND chunk_id = %s",
                [
                    (len(en), len(ko), r[0], r[1])
                    for r, en, ko in zip(part, en_terms, ko_terms, strict=True)
                ],
            )
            postings = sorted(
                (int(r[0]), field, term, str(r[1]), tf)
                for field, split_texts in ((0, en_terms), (2, ko_terms))
                for r, terms in zip(part, split_texts, strict=True)
                for term, tf in Counter(terms).items()
            )
            with cur.copy(
                "COPY ragit_chunk_terms(namespace_id, field, term, chunk_id, tf) FROM STDIN"
            ) as copy:
                for namespace_id, field, term, cid, tf in postings:
                    copy.write_row((namespace_id, field, term, cid, tf))


_BACKFILLS: dict[int, Callable[[psycopg.Connection[Any]], None]] = {3: _index_terms_3}


def _migrate(conn: psycopg.Connection[Any]) -> Migration:
    conn.execute("SELECT pg_advisory_lock(%s)", (MIGRATE_LOCK,))
    try:
        conn.execute(_VERSION_TABLE)
        before = current_version(conn)
        _refuse_newer(before)
        applied: list[int] = []
        for version in range(before + 1, SCHEMA_VERSION + 1):
            step = STEPS[version - 1]
            with conn.transaction():
                conn.execute(step.sql.encode())
                backfill = _BACKFILLS.get(version)
                if backfill is not None:
                    backfill(conn)
                conn.execute(
                    "INSERT INTO ragit_schema_version(version, description) VALUES (%s, %s)",
                    (version, step.description),
                )
            applied.append(version)
        register_vector(conn)
        return Migration(before=before, after=SCHEMA_VERSION, applied=tuple(applied))
    finally:
        conn.execute("SELECT pg_advisory_unlock(%s)", (MIGRATE_LOCK,))
