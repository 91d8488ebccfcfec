"""The table privileges a writer of the shared store needs, checked before anything changes
(a reader's role holds SELECT only: it can query, pack context, run ``ragit-mcp``, status
and doctor, and is refused with one typed error where it would write)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import psycopg

from ragit.store.postgres.connection import unavailable

# What a writer does to each table: chunks, postings and namespaces are inserted; a
# commit's snapshot is replaced (deleted, then inserted with its chunk ids).
WRITE_PRIVILEGES: tuple[tuple[str, str], ...] = (
    ("ragit_namespaces", "SELECT"),
    ("ragit_namespaces", "INSERT"),
    ("ragit_chunks", "SELECT"),
    ("ragit_chunks", "INSERT"),
    ("ragit_chunk_terms", "INSERT"),
    ("ragit_snapshots", "SELECT"),
    ("ragit_snapshots", "INSERT"),
    ("ragit_snapshots", "DELETE"),
    ("ragit_snapshot_chunks", "INSERT"),
)


def check_can_write(
    conn: psycopg.Connection[Any],
    needed: Sequence[tuple[str, str]] = WRITE_PRIVILEGES,
    command: str = "ingest",
) -> None:
    """Refuse a role that lacks a privilege a write needs (``needed``: table, privilege),
    before anything is embedded or written (a reader's role: SELECT only).

    Raises:
        SnapshotStoreUnavailable: naming the role and the missing privileges.
    """
    tables = [t for t, _ in needed]
    privileges = [p for _, p in needed]
    with conn.cursor() as cur:
        cur.execute(
            "SELECT current_user, coalesce(array_agg(p.priv || ' on ' || p.tab "
            "ORDER BY p.ord) FILTER (WHERE NOT has_table_privilege(p.tab, p.priv)), '{}') "
            "FROM unnest(%s::text[], %s::text[]) WITH ORDINALITY AS p(tab, priv, ord)",
            (tables, privileges),
        )
        row = cur.fetchone()
    conn.rollback()
    assert row is not None
    user, missing = str(row[0]), list(row[1])
    if missing:
        raise unavailable(
            f"the role {user!r} cannot write to the shared store (it lacks "
            f"{', '.join(missing)}): {command} needs the CI role's grants; a reader role "
            "(SELECT only) can query, pack context, run ragit-mcp, status and doctor"
        )
