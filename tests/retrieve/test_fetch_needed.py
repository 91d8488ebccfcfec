"""The engine fetches stored text only for the hits that can make the answer.

Every candidate is scored from the keyword index and the vectors; the text, section title
and token count come from the store only for the candidates up to the last rank where the
``top_k``-th hit can fall. Ties decided by the stored section title are fetched whole, so the
answer is the one a fetch of every candidate gives.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from tests.text.test_text_question import ANALYZERS

from ragit.retrieve.engine import _per_document, retrieve_durable
from ragit.snapshot.manifest import Manifest, ManifestDoc, ManifestEmbedding
from ragit.store.lock import WriterLock
from ragit.store.publishing import publish
from ragit.store.reader import StoreReader
from ragit.store.rows import ChunkRow
from ragit.store.writer import StoreWriter
from ragit.text.question import analyze
from ragit.workspace import Workspace

SHA = "d" * 40
DIM = 8
PROFILE = {
    "namespaceId": "test-ns",
    "provider": "local-placeholder",
    "model": "test",
    "dimensions": DIM,
    "version": 1,
}
# Texts repeat across documents and sections, so many candidates tie on rank and path and
# only the stored section title orders them.
TEXTS = (
    "retry budget token refresh",
    "retry budget",
    "token refresh rotation",
    "budget planning retry",
    "unrelated words here",
)


def _rows() -> list[ChunkRow]:
    rows = []
    for n in range(60):
        text = TEXTS[n % len(TEXTS)]
        vector = tuple(float(((n * 7 + d) % 5) + 1) for d in range(DIM))
        rows.append(
            ChunkRow(
                chunk_id=f"{n:016x}",
                text=f"{text} #{n % 3}",
                search_en=text,
                search_cjk="",
                section_title=f"section {59 - n:02d}",
                heading_path=f"H > section {59 - n:02d}",
                token_count=4,
                vector=vector,
            )
        )
    return rows


def _manifest(ids: list[str]) -> Manifest:
    docs = [
        ManifestDoc(
            path=f"docs/d{i // 10:02d}.md",
            document_id=f"doc-{i // 10:02d}",
            version_id=f"ver-{i // 10:02d}",
            doc_type="note",
            blob_sha=f"{i:040x}",
            chunk_ids=ids[i : i + 10],
        )
        for i in range(0, len(ids), 10)
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


class _Counting:
    """The real reader, with the ids each ``fetch`` was asked for recorded."""

    def __init__(self, reader: StoreReader) -> None:
        self._reader = reader
        self.fetched: list[list[str]] = []

    def fetch(self, ids: Sequence[str]) -> Any:
        self.fetched.append(list(ids))
        return self._reader.fetch(ids)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._reader, name)


@pytest.fixture
def store(tmp_path: Path) -> tuple[Manifest, StoreReader]:
    rows = _rows()
    ws = Workspace(tmp_path / "repo")
    (ws.root / ".ragit").mkdir(parents=True)
    with WriterLock.acquire(ws, command="test", head_sha=None) as lock:
        with StoreWriter.open(ws, lock, embedding=PROFILE, dimensions=DIM) as writer:
            writer.insert(rows)
        publish(ws, lock)
    return _manifest([r.chunk_id for r in rows]), StoreReader.open_latest(ws)


def _ids(hits: Sequence[Any]) -> list[tuple[str, str, float]]:
    return [(h.chunk_id, h.document_id, h.score_final) for h in hits]


@pytest.mark.parametrize("alpha", [0.0, 0.5])
def test_the_answer_equals_the_one_from_every_candidates_text(
    store: tuple[Manifest, StoreReader], alpha: float
) -> None:
    manifest, reader = store
    question = analyze("retry budget token refresh")
    vector = [1.0, 2.0, 3.0, 1.0, 2.0, 3.0, 1.0, 2.0] if alpha else None
    try:
        # With top_k as large as the snapshot every candidate is fetched: the reference.
        full = retrieve_durable(
            manifest, SHA, reader, question, vector, top_k=1000, alpha=alpha, per_document=0
        )
        assert len(full) > 20
        titles = [h.section_title for h in full]
        assert len(set(titles)) == len(titles)
        ranks = [round(h.score_final, 6) for h in full]
        assert len(set(ranks)) < len(ranks) / 2, "the texts must make ties on rank"
        for per_document in (0, 1, 2):
            for top_k in (1, 2, 3, 5, 8, 13):
                got = retrieve_durable(
                    manifest,
                    SHA,
                    reader,
                    question,
                    vector,
                    top_k=top_k,
                    alpha=alpha,
                    per_document=per_document,
                )
                want = _per_document(full, per_document)[:top_k]
                assert _ids(got) == _ids(want), (per_document, top_k)
                assert [h.text for h in got] == [h.text for h in want]
    finally:
        reader.close()


def test_only_the_answers_candidates_are_fetched(store: tuple[Manifest, StoreReader]) -> None:
    manifest, reader = store
    counting = _Counting(reader)
    try:
        retrieve_durable(  # the first call also samples the snapshot's presence
            manifest,
            SHA,
            counting,
            analyze("unrelated words"),
            None,
            top_k=1,
            alpha=0.0,
            per_document=1,
        )
        counting.fetched.clear()
        hits = retrieve_durable(
            manifest,
            SHA,
            counting,
            analyze("retry budget"),
            None,
            top_k=2,
            alpha=0.0,
            per_document=1,
        )
        assert len(hits) == 2
        fetched = {cid for ids in counting.fetched for cid in ids}
        candidates = retrieve_durable(
            manifest,
            SHA,
            reader,
            analyze("retry budget"),
            None,
            top_k=1000,
            alpha=0.0,
            per_document=0,
        )
        # Two documents' best hits: their candidates tie within a document (same text, same
        # path), so at most those two documents' tied chunks are read, never every candidate.
        assert {h.chunk_id for h in hits} <= fetched
        assert len(fetched) < len({h.chunk_id for h in candidates}) / 2, (
            len(fetched),
            len(candidates),
        )
    finally:
        reader.close()


class _Recording:
    """A second stage that keeps every candidate and records the question it was given."""

    def __init__(self) -> None:
        self.questions: list[Any] = []

    def rescore(self, scored: list[Any], question: Any, reader: Any, top_k: int) -> list[Any]:
        self.questions.append(question)
        return scored

    def explain(self, chunk_id: str) -> dict[str, float] | None:
        return None


def _forbid_analysis(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make every question analyzer of ragit.text fail when called."""
    from ragit.text import korean, morphemes, question, scripts, terms

    def forbidden(*_args: Any, **_kwargs: Any) -> Any:
        raise AssertionError("the question was analysed again below the entry point")

    targets = {
        scripts: ("script_weights", "cjk_runs"),
        terms: ("en_terms", "cjk_terms"),
        korean: ("korean_content_words",),
        morphemes: ("question_words", "question_prefixes", "candidate_terms"),
        question: ("analyze", *ANALYZERS),
    }
    for module, names in targets.items():
        for name in names:
            monkeypatch.setattr(module, name, forbidden)


@pytest.mark.parametrize("text", ["retry budget token", "retry budget 토큰을 갱신하려면"])
def test_the_engine_takes_the_analysed_question(
    store: tuple[Manifest, StoreReader], monkeypatch: pytest.MonkeyPatch, text: str
) -> None:
    """The engine reads a Question and splits its text no more: every analyzer fails if called,
    and the answers are those of the same question analysed beforehand."""
    manifest, reader = store
    question = analyze(text)
    vector = [1.0, 2.0, 3.0, 1.0, 2.0, 3.0, 1.0, 2.0]
    runs: list[dict[str, Any]] = [
        {"question_vector": None, "alpha": 0.0},
        {"question_vector": vector, "alpha": 0.5},
        # An English-only model: the n-gram signal weighs the question's Hangul share.
        {"question_vector": vector, "alpha": 0.5, "multilingual": False},
    ]
    try:
        before = [retrieve_durable(manifest, SHA, reader, question, top_k=5, **run) for run in runs]
        _forbid_analysis(monkeypatch)
        rerank = _Recording()
        after = [
            retrieve_durable(manifest, SHA, reader, question, top_k=5, rerank=rerank, **run)
            for run in runs
        ]
        assert [_ids(hits) for hits in after] == [_ids(hits) for hits in before]
        assert all(hits for hits in after)
        assert rerank.questions == [question] * len(runs)
    finally:
        reader.close()
