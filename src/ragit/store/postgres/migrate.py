"""Applying the schema's migration steps (:mod:`ragit.store.postgres.steps`).

``migrate`` takes a session advisory lock (:data:`MIGRATE_LOCK`) for the whole run, so two
machines migrating at once apply each step once: the second waits, then finds the steps
applied. Each step runs in its own transaction together with its ``ragit_schema_version``
row: a step is applied entirely or not at all (PostgreSQL's DDL is transactional), and a
run killed between steps resumes at the next one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import psycopg

from ragit.store.postgres.connection import connect, register_vector, translated, unavailable
from ragit.store.postgres.steps import SCHEMA_VERSION, STEPS, current_version

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
                conn.execute(
                    "INSERT INTO ragit_schema_version(version, description) VALUES (%s, %s)",
                    (version, step.description),
                )
            applied.append(version)
        register_vector(conn)
        return Migration(before=before, after=SCHEMA_VERSION, applied=tuple(applied))
    finally:
        conn.execute("SELECT pg_advisory_unlock(%s)", (MIGRATE_LOCK,))
