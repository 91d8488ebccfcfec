"""A security purge of the shared store (:class:`PgPurge`): the one writer that deletes.

In one transaction, a repository's stale snapshots and the chunks (with their postings) that
no remaining snapshot of any repository cites, under the writer lock of each namespace
involved and a lock on ``ragit_snapshots`` that makes publications wait, so no snapshot
starts citing a chunk being deleted.

Fault phases (:mod:`ragit._faults`, test-only): ``pg-purge-deleted`` (a purge's rows
deleted, not committed) and ``pg-purge-committed``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import psycopg

from ragit import _faults
from ragit.store.postgres.citations import cited_elsewhere, orphan_chunks
from ragit.store.postgres.connection import connect, translated, unavailable
from ragit.store.postgres.privileges import check_can_write
from ragit.store.postgres.steps import SCHEMA_VERSION, current_version, writer_lock_key

# What a security purge does to each table: a repository's snapshots are deleted (their
# chunk ids with them: ON DELETE CASCADE), then the chunks no remaining snapshot cites and
# their postings. Reading the rows a DELETE filters on needs SELECT as well.
PURGE_PRIVILEGES: tuple[tuple[str, str], ...] = (
    ("ragit_namespaces", "SELECT"),
    ("ragit_snapshots", "SELECT"),
    ("ragit_snapshots", "DELETE"),
    ("ragit_snapshot_chunks", "SELECT"),
    ("ragit_snapshot_chunks", "DELETE"),
    ("ragit_chunks", "SELECT"),
    ("ragit_chunks", "DELETE"),
    ("ragit_chunk_terms", "SELECT"),
    ("ragit_chunk_terms", "DELETE"),
)


@dataclass(frozen=True)
class PurgeResult:
    """What one :meth:`PgPurge.purge` deleted."""

    deleted: tuple[str, ...]  # commits whose snapshot was deleted
    changed: tuple[str, ...]  # commits republished (or deleted) since planning: left as they are
    chunks: int  # chunks deleted (no remaining snapshot cited them)
    postings: int  # their keyword postings deleted
    elsewhere: int  # chunks of ``secret`` kept: a snapshot of another repository cites them


class PgPurge:
    """Deletes stale snapshots of one repository and the chunks only they cited (``ragit
    security purge --target store`` on the shared store)."""

    def __init__(self, conn: psycopg.Connection[Any], repository_id: str) -> None:
        self._conn = conn
        self.repository_id = repository_id

    @classmethod
    def open(cls, repository_id: str) -> PgPurge:
        """Connect (from the environment), check the schema is current and the role may
        delete (the CI role of docs/team.md may; the reader may not), before anything
        changes.

        Raises:
            SnapshotStoreUnavailable: no server, refused, another schema version, or a role
                without the privileges a purge needs (naming the role and what it lacks).
        """
        conn = connect(read_only=False)
        try:
            with translated(writer=True):
                version = current_version(conn)
                conn.rollback()
                if version != SCHEMA_VERSION:
                    raise unavailable(
                        f"the schema is version {version}, this RAGit writes version "
                        f"{SCHEMA_VERSION} (run the store migrations)"
                    )
                check_can_write(conn, PURGE_PRIVILEGES, "security purge")
        except BaseException:
            conn.close()
            raise
        return cls(conn, repository_id)

    def close(self) -> None:
        """Close the connection (an open transaction is rolled back); idempotent."""
        self._conn.close()

    def __enter__(self) -> PgPurge:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def purge(
        self, snapshots: Mapping[str, tuple[int, str]], secret: Mapping[int, Iterable[str]]
    ) -> PurgeResult:
        """Delete the snapshots ``snapshots`` (commit → (snapshot id, namespace) as planned)
        of this repository, then the chunks (and postings) they cited that no remaining
        snapshot of any repository cites, in one transaction: readers see every snapshot
        until the commit and none of the deleted ones after it; a purge killed before the
        commit leaves the server as it was.

        The transaction first takes the writer lock of (repository, namespace) of each
        namespace involved (this repository's ingests wait), then locks ``ragit_snapshots``
        against publications (``SHARE ROW EXCLUSIVE``: readers go on; publications of every
        repository wait for the commit), so no snapshot starts citing a chunk being deleted.
        A commit republished since planning (another snapshot id) is left as it is and
        reported in ``changed``. ``secret`` (namespace id → chunk ids that hold a secret)
        is what ``elsewhere`` counts.

        Raises:
            StoreWriteBusy: the connection was lost (nothing was deleted).
            SnapshotStoreUnavailable: any other server failure (rolled back).
        """
        if not snapshots:
            return PurgeResult((), (), 0, 0, 0)  # nothing stale: no lock, no transaction
        keys = sorted({writer_lock_key(self.repository_id, ns) for _, ns in snapshots.values()})
        with translated(writer=True), self._conn.transaction(), self._conn.cursor() as cur:
            for key in keys:  # in one order: two purges never wait on each other in a cycle
                cur.execute("SELECT pg_advisory_xact_lock(%s)", (key,))
            cur.execute("LOCK TABLE ragit_snapshots IN SHARE ROW EXCLUSIVE MODE")
            cur.execute(
                "SELECT commit_sha, snapshot_id FROM ragit_snapshots "
                "WHERE repository_id = %s AND commit_sha = ANY(%s::text[])",
                (self.repository_id, sorted(snapshots)),
            )
            current = {str(sha): int(sid) for sha, sid in cur.fetchall()}
            doomed = {sha: sid for sha, (sid, _ns) in snapshots.items() if current.get(sha) == sid}
            changed = tuple(sorted(set(snapshots) - set(doomed)))
            orphans = orphan_chunks(self._conn, list(doomed.values()))
            elsewhere = cited_elsewhere(self._conn, self.repository_id, secret)
            cur.execute(
                "DELETE FROM ragit_snapshots WHERE snapshot_id = ANY(%s::bigint[])",
                (sorted(doomed.values()),),
            )
            chunks = postings = 0
            for namespace_id, ids in sorted(orphans.items()):
                # One pass over the namespace's postings (their key leads with the namespace,
                # not the chunk): every posting of the chunks goes, whatever term rules wrote it.
                cur.execute(
                    "DELETE FROM ragit_chunk_terms "
                    "WHERE namespace_id = %s AND chunk_id = ANY(%s::text[])",
                    (namespace_id, ids),
                )
                postings += max(cur.rowcount, 0)
                cur.execute(
                    "DELETE FROM ragit_chunks "
                    "WHERE namespace_id = %s AND chunk_id = ANY(%s::text[])",
                    (namespace_id, ids),
                )
                chunks += max(cur.rowcount, 0)
            _faults.reach("pg-purge-deleted")
        _faults.reach("pg-purge-committed")
        return PurgeResult(tuple(sorted(doomed)), changed, chunks, postings, elsewhere)
