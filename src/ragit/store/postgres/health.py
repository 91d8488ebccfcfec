"""The shared store's health as ``doctor`` and ``status`` report it: the server, the schema
version, pgvector, each embedding namespace's HNSW index state and the repository's indexed
commits, read in one read-only session."""

from __future__ import annotations

from typing import Any

import psycopg

from ragit.store.postgres.connection import connect, translated
from ragit.store.postgres.steps import (
    GRAPH_MIN_ROWS,
    SCHEMA_VERSION,
    bulk_lock_key,
    current_version,
    index_name,
)


def _advisory(key: int) -> tuple[int, int]:
    """``pg_locks``' (classid, objid) of a bigint advisory lock key."""
    unsigned = key & 0xFFFF_FFFF_FFFF_FFFF
    return unsigned >> 32, unsigned & 0xFFFF_FFFF


def _index_state(valid: bool | None, modes: set[str], rows: int) -> str:
    """A namespace's HNSW index: ``ready``; ``building`` (a writer holds the bulk lock
    exclusively: ``CREATE INDEX CONCURRENTLY`` runs); ``loading`` (bulk loads hold it shared:
    the last to finish builds the index); ``invalid`` (left by a build that did not finish);
    ``missing`` (a namespace of at least ``GRAPH_MIN_ROWS`` rows without one); ``not-needed``
    (a smaller namespace: exact scans)."""
    if valid is True:
        return "ready"
    if "ExclusiveLock" in modes:
        return "building"
    if "ShareLock" in modes:
        return "loading"
    if valid is False:
        return "invalid"
    return "missing" if rows >= GRAPH_MIN_ROWS else "not-needed"


def health(repository_id: str) -> dict[str, Any]:
    """What ``doctor`` and ``status`` report about the shared store, read in one read-only
    session: ``server`` (version, host and database: no user, no password),
    ``schemaVersion`` and ``targetSchemaVersion``, ``pgvector`` (installed and available
    versions), ``namespaces`` (each one's rows, capped at ``GRAPH_MIN_ROWS``, and index state)
    and ``snapshots`` (the repository's indexed commits, oldest first) — the last two only
    when the schema is one this RAGit reads.

    Raises:
        SnapshotStoreUnavailable: no server configured, or the server refused (masked).
        StoreReadBusy: the connection was lost (retryable).
    """
    conn = connect(read_only=True, autocommit=True)
    try:
        with translated(writer=False):
            return read_health(conn, repository_id)
    finally:
        conn.close()


def read_health(conn: psycopg.Connection[Any], repository_id: str) -> dict[str, Any]:
    """:func:`health` over an open connection (the caller translates its errors)."""
    info = conn.info
    out: dict[str, Any] = {
        "server": {
            "version": info.parameter_status("server_version"),
            "host": info.host,
            "port": info.port,
            "database": info.dbname,
        },
        "targetSchemaVersion": SCHEMA_VERSION,
        "namespaces": None,
        "snapshots": None,
    }
    version = current_version(conn)
    out["schemaVersion"] = version
    row = conn.execute(
        "SELECT (SELECT extversion FROM pg_extension WHERE extname = 'vector'), "
        "(SELECT default_version FROM pg_available_extensions WHERE name = 'vector')"
    ).fetchone()
    out["pgvector"] = {
        "installed": None if row is None else row[0],
        "available": None if row is None else row[1],
    }
    if not 1 <= version <= SCHEMA_VERSION:
        return out
    namespaces: list[dict[str, Any]] = []
    for namespace_id, namespace, dimensions, valid, rows in conn.execute(
        "SELECT n.namespace_id, n.namespace, n.dimensions, i.indisvalid, "
        "(SELECT count(*) FROM (SELECT 1 FROM ragit_chunks c "
        "WHERE c.namespace_id = n.namespace_id LIMIT %s) AS s) "
        "FROM ragit_namespaces n LEFT JOIN pg_index i ON i.indexrelid = "
        "to_regclass('ragit_chunks_hnsw_' || n.namespace_id) ORDER BY n.namespace_id",
        (max(GRAPH_MIN_ROWS, 1),),
    ).fetchall():
        classid, objid = _advisory(bulk_lock_key(str(namespace)))
        modes = {
            str(m[0])
            for m in conn.execute(
                "SELECT mode FROM pg_locks WHERE locktype = 'advisory' AND granted "
                "AND classid::bigint = %s AND objid::bigint = %s AND objsubid = 1",
                (classid, objid),
            ).fetchall()
        }
        namespaces.append(
            {
                "namespace": str(namespace),
                "dimensions": int(dimensions),
                "index": index_name(int(namespace_id)),
                "rows": int(rows),
                "state": _index_state(valid, modes, int(rows)),
            }
        )
    out["namespaces"] = namespaces
    out["snapshots"] = [
        {"commitSha": str(sha), "chunkCount": int(count), "namespace": str(namespace)}
        for sha, count, namespace in conn.execute(
            "SELECT s.commit_sha, s.chunk_count, n.namespace FROM ragit_snapshots s "
            "JOIN ragit_namespaces n USING (namespace_id) WHERE s.repository_id = %s "
            "ORDER BY s.published_at, s.snapshot_id",
            (repository_id,),
        ).fetchall()
    ]
    return out
