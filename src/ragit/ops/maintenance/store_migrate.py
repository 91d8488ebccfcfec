"""`ragit migrate store`: the shared store's schema migrations (docs/team.md).

The database is the one the environment names (``RAGIT_DATABASE_URL`` or libpq's ``PG*``
variables), never a configuration file; every message about it is masked. A dry run reads
the schema version in a read-only transaction and reports the steps a run would apply.
psycopg is the optional extra ``ragit-cli[postgres]``: it is imported only when the command
runs.
"""

from __future__ import annotations

from typing import Literal

from ragit.contract.models import WireModel


class MigrationStep(WireModel):
    """One schema step: its version and what it makes."""

    version: int
    description: str


class MigrateStoreData(WireModel):
    """Result of `migrate store`."""

    mode: Literal["apply", "dry-run"]
    backend: Literal["postgres"]
    schema_version_before: int
    schema_version_after: int  # dry-run: the version a run would reach
    target_schema_version: int  # the version this RAGit reads and writes
    steps: list[MigrationStep]  # applied (apply) or to apply (dry-run), in order
    migrated: bool  # a step was applied


def migrate_store(*, dry_run: bool) -> MigrateStoreData:
    """Apply (or, with ``dry_run``, list) the schema steps the database lacks.

    Raises:
        SnapshotStoreUnavailable: the extra is not installed, no server is configured, the
            server refused, its schema is newer than this RAGit's, or a step failed.
        StoreReadBusy, StoreWriteBusy: the server interrupted the run (retryable; steps
            already applied stay).
    """
    from ragit.store.backend import store_backend
    from ragit.store.backend_write import migrate_schema

    # The database the environment names, outside any repository's configuration: the
    # command migrates the shared store's schema, whatever a clone's store.backend says.
    result = migrate_schema(store_backend("postgres"), dry_run=dry_run)
    return MigrateStoreData(
        mode="dry-run" if dry_run else "apply",
        backend="postgres",
        schema_version_before=result.before,
        schema_version_after=result.after,
        target_schema_version=result.target,
        steps=[MigrationStep(version=v, description=text) for v, text in result.steps],
        migrated=bool(result.steps) and not dry_run,
    )
