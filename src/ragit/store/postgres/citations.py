"""Which snapshots cite a chunk: what deleting some snapshots leaves unused, and what another
repository still cites (read-only statements: a security purge's dry-run plan, and, inside
:meth:`ragit.store.postgres.purge.PgPurge.purge`'s transaction, what it deletes)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import psycopg


def orphan_chunks(
    conn: psycopg.Connection[Any], snapshot_ids: Sequence[int]
) -> dict[int, list[str]]:
    """The chunks the snapshots ``snapshot_ids`` cite that no other snapshot, of any
    repository, cites in the same embedding namespace: what deleting those snapshots leaves
    unused (namespace id → chunk ids, sorted). One read-only statement (a dry run's plan;
    inside :meth:`ragit.store.postgres.purge.PgPurge.purge`'s transaction, what it deletes)."""
    ids = sorted(set(snapshot_ids))
    if not ids:
        return {}
    # ragit_snapshot_chunks has no index by chunk id: the citations of the candidates are
    # found by one scan of it (a hash semi-join), not one lookup per candidate.
    rows = conn.execute(
        "WITH doomed AS (SELECT snapshot_id, namespace_id FROM ragit_snapshots "
        "WHERE snapshot_id = ANY(%s::bigint[])), "
        "cand AS (SELECT DISTINCT d.namespace_id, c.chunk_id FROM ragit_snapshot_chunks c "
        "JOIN doomed d USING (snapshot_id)), "
        "kept AS (SELECT DISTINCT s.namespace_id, c.chunk_id FROM ragit_snapshot_chunks c "
        "JOIN ragit_snapshots s USING (snapshot_id) "
        "WHERE s.snapshot_id <> ALL(%s::bigint[]) AND c.chunk_id IN (SELECT chunk_id FROM cand)) "
        "SELECT cand.namespace_id, cand.chunk_id FROM cand "
        "WHERE NOT EXISTS (SELECT 1 FROM kept k "
        "WHERE k.namespace_id = cand.namespace_id AND k.chunk_id = cand.chunk_id) "
        "AND EXISTS (SELECT 1 FROM ragit_chunks x "
        "WHERE x.namespace_id = cand.namespace_id AND x.chunk_id = cand.chunk_id) "
        'ORDER BY cand.namespace_id, cand.chunk_id COLLATE "C"',
        (ids, ids),
    ).fetchall()
    out: dict[int, list[str]] = {}
    for namespace_id, chunk_id in rows:
        out.setdefault(int(namespace_id), []).append(str(chunk_id))
    return out


def cited_elsewhere(
    conn: psycopg.Connection[Any], repository_id: str, chunks: Mapping[int, Iterable[str]]
) -> int:
    """How many of ``chunks`` (namespace id → chunk ids) a snapshot of another repository
    cites: a purge of ``repository_id`` keeps them (that repository must purge its own). One
    read-only statement."""
    pairs = sorted({(ns, str(cid)) for ns, ids in chunks.items() for cid in ids})
    if not pairs:
        return 0
    row = conn.execute(
        "SELECT count(DISTINCT (b.namespace_id, b.chunk_id)) "
        "FROM unnest(%s::int[], %s::text[]) AS b(namespace_id, chunk_id) "
        "JOIN ragit_snapshot_chunks c ON c.chunk_id = b.chunk_id "
        "JOIN ragit_snapshots s ON s.snapshot_id = c.snapshot_id "
        "AND s.namespace_id = b.namespace_id WHERE s.repository_id <> %s",
        ([ns for ns, _ in pairs], [cid for _, cid in pairs], repository_id),
    ).fetchone()
    return int(row[0]) if row else 0
