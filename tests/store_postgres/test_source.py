"""``PostgresSource`` (``ragit.store.backend``), the source the MCP server keeps open across
calls: a snapshot it has read is kept, with its keyword index's postings, while the commit's
published snapshot stays the same; a republished commit is read again."""

from __future__ import annotations

from typing import Any

from _rows import DIM, make_rows, manifest_bytes

from ragit.store.backend import PostgresSource
from ragit.store.postgres.migrate import migrate
from ragit.store.postgres.write import PgWriter

NAMESPACE = "test-ns"
SHA = "c" * 40


def _publish(rows: list[Any], ids: list[str]) -> None:
    with PgWriter.open("repo", NAMESPACE, DIM) as writer:
        writer.write(rows)
        writer.publish(SHA, manifest_bytes(SHA, ids), ids)


def test_a_kept_snapshot_is_reused_until_the_commit_is_republished(database: str) -> None:
    migrate()
    rows = make_rows(120, seed=5)
    ids = [r.chunk_id for r in rows]
    _publish(rows, ids[:100])
    source = PostgresSource("repo")
    try:
        first = source.manifest(SHA)
        view = source.snapshot(SHA)
        assert view.chunk_count == 100
        terms = view.terms()
        terms.postings("en", "snapshot")  # read once, then kept by the view

        # The next call (as the MCP server's next query makes it): same snapshot, same view,
        # the postings it read are not read again.
        assert source.manifest(SHA) == first
        again = source.snapshot(SHA)
        assert again is view
        assert again.terms() is terms
        assert ("en", "snapshot") in terms._postings

        # Republished with other chunks: the next call reads the new snapshot.
        _publish(rows, ids[20:])
        changed = source.manifest(SHA)
        assert changed == manifest_bytes(SHA, ids[20:])
        fresh = source.snapshot(SHA)
        assert fresh is not view
        assert fresh.chunk_count == 100
        assert sorted(fresh.fetch(ids[:25])) == sorted(ids[20:25])
    finally:
        source.close()
