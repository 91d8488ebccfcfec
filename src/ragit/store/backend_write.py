"""The store backend boundary, writing half (ingest, ``migrate store``, a security purge):
the read-only MCP server never imports this module (the ``mcp-read-only`` import contract).

:func:`open_writer` returns the :class:`SnapshotWriter` of the shared store
(``store.backend = "postgres"``): chunks are written in batches, each batch one transaction
(:meth:`ragit.store.postgres.write.PgWriter.write`, a content-addressed upsert), and a
snapshot is published — the manifest's exact bytes and every chunk id it names — in one
transaction that first checks every chunk is stored. A writer killed before that commit
leaves the commit's previous snapshot (if any) answering.

:func:`open_purger` returns the :class:`SnapshotPurger` of a shared store (its one writer
that deletes: stale snapshots and the chunks only they cited, in one transaction) and
:func:`migrate_schema` applies (or lists) its schema steps (:class:`SchemaMigration`).

The embedded zvec store's write path (writer lock, journal, insert, verify, generation
publication) stays in :mod:`ragit.ingest.apply`, where its crash-recovery machinery lives.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from ragit.store.backend import StoreBackend
from ragit.store.rows import ChunkRow

# Rows per write transaction: each commits on its own, so an interrupted ingest keeps the
# chunks it stored and the next one skips them (they are content-addressed). Larger batches
# sort more postings together (fewer b-tree leaves touched per row): 2,000 took 12% less
# server CPU than 500 at N=1000.
WRITE_BATCH = 2000


class SnapshotWriter(Protocol):
    """Writes one repository's snapshots in one embedding namespace; a context manager."""

    def existing(self, ids: Iterable[str]) -> set[str]: ...
    def expect(self, count: int) -> bool: ...
    def write(self, rows: Sequence[ChunkRow]) -> int: ...
    def publish(self, commit_sha: str, manifest: bytes, chunk_ids: Iterable[str]) -> None: ...
    def build_index(self) -> bool: ...
    def close(self) -> None: ...
    def __enter__(self) -> SnapshotWriter: ...
    def __exit__(self, *exc: object) -> None: ...


class PostgresWriter:
    """:class:`SnapshotWriter` over :class:`~ragit.store.postgres.write.PgWriter`."""

    def __init__(self, pg: Any, batch: int | None = None) -> None:
        self._pg = pg
        self._batch = WRITE_BATCH if batch is None else batch

    def existing(self, ids: Iterable[str]) -> set[str]:
        found: set[str] = self._pg.existing(ids)
        return found

    def expect(self, count: int) -> bool:
        """Announce ``count`` new chunks before their batches: a load large relative to the
        namespace runs without its HNSW graph, built once after the publication
        (:meth:`~ragit.store.postgres.write.PgWriter.expect`). Returns whether it does."""
        return bool(self._pg.expect(count))

    def write(self, rows: Sequence[ChunkRow]) -> int:
        """Store ``rows`` in batches (one transaction each); returns how many were new."""
        written = 0
        for i in range(0, len(rows), self._batch):
            written += int(self._pg.write(rows[i : i + self._batch]).written)
        return written

    def publish(self, commit_sha: str, manifest: bytes, chunk_ids: Iterable[str]) -> None:
        """Publish the snapshot (one transaction); the HNSW graph of a namespace loaded in
        bulk is then built by a detached builder while the ingest returns
        (:meth:`~ragit.store.postgres.write.PgWriter.build_detached`): the build was
        two thirds of the server's CPU of a first ingest at N=1000, and reads are exact
        without it."""
        self._pg.publish(commit_sha, manifest, chunk_ids, detach_build=True)

    def build_index(self) -> bool:
        """Build the namespace's HNSW graph when it is missing or invalid (and large enough,
        and no load is running): what :meth:`publish` does after its commit, for an ingest
        that publishes nothing new. Returns whether this call built it."""
        return bool(self._pg.build_index())

    def close(self) -> None:
        self._pg.close()

    def __enter__(self) -> PostgresWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _open_postgres(repository: str, namespace: str, dimensions: int) -> SnapshotWriter:
    from ragit.store.postgres import client_required

    with client_required():
        from ragit.store.postgres.write import PgWriter
    return PostgresWriter(PgWriter.open(repository, namespace, dimensions))


class PurgeOutcome(Protocol):
    """What one :meth:`SnapshotPurger.purge` deleted."""

    @property
    def deleted(self) -> tuple[str, ...]:
        """The commits whose snapshot was deleted."""
        ...

    @property
    def changed(self) -> tuple[str, ...]:
        """The commits republished (or deleted) since planning: left as they are."""
        ...

    @property
    def chunks(self) -> int:
        """The chunks deleted (no remaining snapshot cited them)."""
        ...

    @property
    def elsewhere(self) -> int:
        """The chunks holding a secret kept: a snapshot of another repository cites them."""
        ...


class SnapshotPurger(Protocol):
    """Deletes stale snapshots of one repository and the chunks only they cited."""

    def purge(
        self, snapshots: Mapping[str, tuple[int, str]], secret: Mapping[int, Iterable[str]]
    ) -> PurgeOutcome: ...
    def close(self) -> None: ...


@dataclass(frozen=True)
class SchemaMigration:
    """What :func:`migrate_schema` applied, or in a dry run would apply."""

    before: int
    after: int  # a dry run: the version a run would reach
    target: int  # the version this RAGit reads and writes
    steps: tuple[tuple[int, str], ...]  # (version, description), in order


def _purger_postgres(repository: str) -> SnapshotPurger:
    from ragit.store.postgres import client_required

    with client_required():
        from ragit.store.postgres.purge import PgPurge
    purger: SnapshotPurger = PgPurge.open(repository)
    return purger


def _migrate_postgres(dry_run: bool) -> SchemaMigration:
    from ragit.store.postgres import client_required

    with client_required():
        from ragit.store.postgres import migrate as pg
        from ragit.store.postgres.steps import SCHEMA_VERSION, STEPS
    result = pg.pending() if dry_run else pg.migrate()
    return SchemaMigration(
        before=result.before,
        after=result.after,
        target=SCHEMA_VERSION,
        steps=tuple((v, STEPS[v - 1].description) for v in result.applied),
    )


# The writer, purger and schema migration of each shared backend, by name (zvec's write path
# is the ingest's own; its purge rebuilds the store locally and it has no server schema).
_WRITERS: dict[str, Callable[[str, str, int], SnapshotWriter]] = {"postgres": _open_postgres}
_PURGERS: dict[str, Callable[[str], SnapshotPurger]] = {"postgres": _purger_postgres}
_MIGRATIONS: dict[str, Callable[[bool], SchemaMigration]] = {"postgres": _migrate_postgres}


def open_writer(
    backend: StoreBackend, *, repository: str, namespace: str, dimensions: int
) -> SnapshotWriter:
    """The writer of ``backend`` for one repository and embedding namespace.

    Raises:
        SnapshotStoreUnavailable: no server, refused, an old schema, or the client missing.
        InputInvalid: ``backend`` has no writer here (zvec's is the ingest's own).
    """
    opener = _WRITERS.get(backend.name)
    if opener is None:
        from ragit.contract.errors import InputInvalid

        raise InputInvalid("store.backend", f"no snapshot writer for {backend.name!r} here")
    return opener(repository, namespace, dimensions)


def open_purger(backend: StoreBackend, repository: str) -> SnapshotPurger:
    """The purger of ``backend`` for ``repository``: connected, its schema and the role's
    privileges to delete checked before anything changes.

    Raises:
        SnapshotStoreUnavailable: no server, refused, another schema version, the client
            missing, or a role without the privileges a purge needs.
        InputInvalid: ``backend`` has no server store to purge here.
    """
    opener = _PURGERS.get(backend.name)
    if opener is None:
        from ragit.contract.errors import InputInvalid

        raise InputInvalid("store.backend", f"no shared store purge for {backend.name!r} here")
    return opener(repository)


def migrate_schema(backend: StoreBackend, *, dry_run: bool) -> SchemaMigration:
    """Apply (or, with ``dry_run``, list in a read-only transaction) the schema steps the
    server store of ``backend`` lacks.

    Raises:
        SnapshotStoreUnavailable: the client missing, no server, refused, a schema newer than
            this RAGit's, or a step failed.
        StoreReadBusy, StoreWriteBusy: the server interrupted the run (retryable; steps
            already applied stay).
        InputInvalid: ``backend`` has no server schema.
    """
    migration = _MIGRATIONS.get(backend.name)
    if migration is None:
        from ragit.contract.errors import InputInvalid

        raise InputInvalid("store.backend", f"no schema migrations for {backend.name!r} here")
    return migration(dry_run)
