"""Same commit, same answer: the retrieval engine ranks a snapshot the same way on the
local zvec store and on the shared PostgreSQL store holding the same rows."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from _rows import DIM, make_rows

from ragit.retrieve.engine import retrieve_durable
from ragit.snapshot.manifest import Manifest, ManifestDoc, ManifestEmbedding
from ragit.store.lock import WriterLock
from ragit.store.postgres.migrate import migrate
from ragit.store.postgres.read import PgReader
from ragit.store.postgres.write import PgWriter
from ragit.store.publishing import publish
from ragit.store.reader import StoreReader
from ragit.store.writer import StoreWriter
from ragit.text.question import analyze
from ragit.workspace import Workspace

SHA = "c" * 40
PROFILE = {
    "namespaceId": "test-ns",
    "provider": "local-placeholder",
    "model": "test",
    "dimensions": DIM,
    "version": 1,
}
QUESTIONS = (
    "snapshot commit queries",
    "kubernetes feature gates rollout kube-apiserver",
    "claim's v1.28 kubernetes.io feature_gate",
    "커밋을 스냅샷 검색은",
    "pods scheduler node 커밋 문서를",
)


def _manifest(ids: list[str]) -> Manifest:
    docs = [
        ManifestDoc(
            path=f"docs/d{i:03d}.md",
            document_id=f"doc-{i:03d}",
            version_id=f"ver-{i:03d}",
            doc_type="note",
            blob_sha=f"{i:040x}",
            chunk_ids=ids[i : i + 6],
        )
        for i in range(0, len(ids), 6)
    ]
    return Manifest(
        index_version=1,
        commit_sha=SHA,
        parent_sha=None,
        created_at="2026-01-01T00:00:00Z",
        embedding=ManifestEmbedding(
            namespace_id="test-ns", provider="local-placeholder", model="test", dimensions=DIM
        ),
        docs=docs,
    )


def _key(hit: object) -> tuple[object, ...]:
    return (hit.chunk_id, hit.document_id, hit.path)  # type: ignore[attr-defined]


@pytest.fixture
def both(database: str, tmp_path: Path) -> tuple[Manifest, StoreReader, object]:
    rows = make_rows(360, seed=31)
    ids = [r.chunk_id for r in rows]
    manifest = _manifest(ids[:240])  # the store holds 120 chunks of other commits too
    ws = Workspace(tmp_path / "repo")
    (ws.root / ".ragit").mkdir(parents=True)
    with WriterLock.acquire(ws, command="test", head_sha=None) as lock:
        with StoreWriter.open(ws, lock, embedding=PROFILE, dimensions=DIM) as writer:
            writer.insert(rows)
        publish(ws, lock)
    migrate()
    with PgWriter.open("repo", "test-ns", DIM) as writer:
        writer.write(rows)
        writer.publish(SHA, manifest.to_json_bytes(), sorted(manifest.all_chunk_ids()))
    return manifest, StoreReader.open_latest(ws), PgReader.open()


def test_keyword_ranking_is_identical(both: tuple[Manifest, StoreReader, PgReader]) -> None:
    manifest, local, shared = both
    try:
        snap = shared.snapshot("repo", SHA)
        assert snap is not None
        view = shared.view(snap)
        for question in QUESTIONS:
            a = retrieve_durable(manifest, SHA, local, analyze(question), None, top_k=10, alpha=0.0)
            b = retrieve_durable(manifest, SHA, view, analyze(question), None, top_k=10, alpha=0.0)
            assert a, question
            assert [_key(h) for h in a] == [_key(h) for h in b], question
            assert [h.score_final for h in a] == [h.score_final for h in b], question
    finally:
        local.close()
        shared.close()


def test_hybrid_ranking_agrees(both: tuple[Manifest, StoreReader, PgReader]) -> None:
    manifest, local, shared = both
    rng = np.random.default_rng(5)
    try:
        snap = shared.snapshot("repo", SHA)
        assert snap is not None
        view = shared.view(snap)
        for question in QUESTIONS:
            q = rng.normal(size=DIM).tolist()
            a = retrieve_durable(manifest, SHA, local, analyze(question), q, top_k=10, alpha=0.5)
            b = retrieve_durable(manifest, SHA, view, analyze(question), q, top_k=10, alpha=0.5)
            assert [_key(h) for h in a] == [_key(h) for h in b], question
            for x, y in zip(a, b, strict=True):
                assert x.score_keyword == y.score_keyword
                # Cosines: float32 vectors on both sides, summed in other orders.
                assert x.score_vector == pytest.approx(y.score_vector, abs=1e-6)
                assert x.score_final == pytest.approx(y.score_final, abs=1e-6)
    finally:
        local.close()
        shared.close()


def test_the_engine_reads_a_questions_postings_in_one_statement(
    both: tuple[Manifest, StoreReader, PgReader], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The engine asks the shared store's term index for every question term at once
    (``prefetch``), so BM25's per-term lookups make no round trip of their own."""
    from ragit.store.postgres import read

    manifest, local, shared = both
    statements: list[str] = []
    real_rows = PgReader._rows

    def counting(self: PgReader, sql: str, *args: object, **kw: object) -> object:
        statements.append(sql)
        return real_rows(self, sql, *args, **kw)  # type: ignore[arg-type]

    try:
        snap = shared.snapshot("repo", SHA)
        assert snap is not None
        view = shared.view(snap)
        view.terms().chunks()  # the snapshot's chunk table, read once per snapshot
        monkeypatch.setattr(read.PgReader, "_rows", counting)
        question = QUESTIONS[0]
        hits = retrieve_durable(manifest, SHA, view, analyze(question), None, top_k=10, alpha=0.0)
        assert hits
        postings = [s for s in statements if "ragit_chunk_terms" in s]
        assert len(postings) == 1, statements
    finally:
        local.close()
        shared.close()
