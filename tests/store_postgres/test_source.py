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


def _publish_manifest(rows: list[Any], manifest: bytes, ids: list[str]) -> None:
    with PgWriter.open("repo", NAMESPACE, DIM) as writer:
        writer.write(rows)
        writer.publish(SHA, manifest, ids)


def test_a_kept_snapshot_is_parsed_once_and_its_store_check_not_repeated(
    database: str, tmp_path: Any
) -> None:
    """Selection parses the kept snapshot's manifest once: a warm call gets the same parsed
    manifest (so the engine's caches keyed by it — keyword statistics, the store check —
    hold, and the call makes no statement for them); a republished commit is parsed again."""
    from pathlib import Path

    from test_engine_parity import _manifest

    from ragit.retrieve.engine import retrieve_durable
    from ragit.snapshot.selection import _load
    from ragit.store.postgres import read
    from ragit.text.question import analyze
    from ragit.workspace import Workspace

    migrate()
    rows = make_rows(120, seed=5)
    ids = [r.chunk_id for r in rows]
    _publish_manifest(rows, _manifest(ids[:100]).to_json_bytes(), ids[:100])
    ws = Workspace(Path(tmp_path))
    source = PostgresSource("repo")
    statements: list[str] = []
    original = read.PgReader._rows

    def counted(self: Any, query: Any, args: Any = (), *, binary: bool = False) -> list[Any]:
        statements.append(str(query))
        return original(self, query, args, binary=binary)

    try:
        first = _load(ws, SHA, source)
        retrieve_durable(
            first, SHA, source.snapshot(SHA), analyze("snapshot commit"), None, top_k=5, alpha=0
        )
        read.PgReader._rows = counted  # type: ignore[method-assign]
        again = _load(ws, SHA, source)
        assert again is first
        retrieve_durable(
            again, SHA, source.snapshot(SHA), analyze("snapshot commit"), None, top_k=5, alpha=0
        )
        # The id check and the texts of the hits; the postings were kept, the store check
        # (a sample of the manifest's chunks) was made for this manifest already.
        assert len(statements) == 2, statements
        read.PgReader._rows = original  # type: ignore[method-assign]

        _publish_manifest(rows, _manifest(ids[20:]).to_json_bytes(), ids[20:])
        changed = _load(ws, SHA, source)
        assert changed is not first
        assert sorted(changed.all_chunk_ids()) == sorted(ids[20:])
    finally:
        read.PgReader._rows = original  # type: ignore[method-assign]
        source.close()
