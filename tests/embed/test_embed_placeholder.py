"""The local-placeholder embedding: deterministic, offline, and a real lexical signal."""

from __future__ import annotations

import hashlib
import math
import struct

import pytest

from ragit.embed import PLACEHOLDER_VERSION, resolve_profile
from ragit.embed.providers.placeholder import PlaceholderEmbedder

DOCS = {
    "writer-lock": (
        "Exclusive Store Writer. Only one ingest or repair process may mutate the canonical "
        "store at a time. 저장소를 바꾸는 ingest 또는 repair 프로세스는 동시에 하나만 실행됩니다."
    ),
    "snapshot-selection": (
        "Exact Snapshot Resolution. Queries resolve one full commit SHA and never substitute "
        "another branch snapshot. 정확한 커밋 SHA 하나만 선택하며 다른 브랜치 결과로 대체하지 "
        "않습니다."
    ),
    "embedding-cache": (
        "Embedding Cache Namespaces. Cache entries are keyed by provider, model and dimension so "
        "vectors never mix. 임베딩 캐시는 제공자와 모델별 네임스페이스로 구분됩니다."
    ),
    "secret-masking": (
        "Secret Masking. API keys and passwords are masked before anything is persisted. "
        "API 키와 비밀번호는 저장하기 전에 마스킹합니다."
    ),
    "context-budget": (
        "Context Pack Budget. A context packet never exceeds its token budget. "
        "컨텍스트 패킷은 토큰 예산을 넘지 않습니다."
    ),
}


def _embedder(dimensions: int | None = None) -> PlaceholderEmbedder:
    cfg = {} if dimensions is None else {"dimensions": dimensions}
    return PlaceholderEmbedder(resolve_profile(cfg, {}))


def _cos(a: list[float], b: list[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True))


def _best(query: str, embedder: PlaceholderEmbedder) -> str:
    q = embedder.vector(query)
    scores = {name: _cos(q, embedder.vector(text)) for name, text in DOCS.items()}
    return max(sorted(scores), key=lambda name: scores[name])


@pytest.mark.parametrize(
    ("text", "digest"),
    [
        (
            "Exclusive Store Writer",
            "5e258713d9f94dc081ddf1d19e40a6f11dd961a360f1d3df72438f18422b61d0",
        ),
        (
            "저장소를 바꾸는 ingest 또는 repair 프로세스는 동시에 하나만 실행됩니다.",
            "79258b21e9e8801e81d8dcf7a22d1f6ae38a1bff439797b88a97c6aba7f36bed",
        ),
        ("", "5fc767594b0c168976fd9878c7c4f9bfa212b4573886d5b9926bbf3aa075f10d"),
        ("the of and", "cd252e4131cebc8f854058c1482505d49cbc68703aa93d6ba756568294eaa45b"),
    ],
)
def test_placeholder_vectors_are_bit_exact_test_vectors(text: str, digest: str) -> None:
    """Implementation choice: ngram-hash-1 is pinned; changing it must bump the version."""
    assert PLACEHOLDER_VERSION == "ngram-hash-1"
    vector = _embedder().vector(text)
    assert hashlib.sha256(struct.pack("<512d", *vector)).hexdigest() == digest


def test_placeholder_is_deterministic_across_instances_and_batches() -> None:
    """Contract-mandated (§2): the placeholder embedder is deterministic."""
    texts = list(DOCS.values())
    first = _embedder().embed(texts)
    second = _embedder().embed(list(reversed(texts)))
    assert first == list(reversed(second))
    assert first[0] == _embedder().vector(texts[0])


def test_placeholder_vectors_are_unit_length_and_finite() -> None:
    """Implementation choice: L2-normalized vectors, so cosine equals the dot product."""
    embedder = _embedder()
    for text in [*DOCS.values(), "", "!!!", "the", "a " * 500]:
        vector = embedder.vector(text)
        assert len(vector) == 512
        assert all(math.isfinite(x) for x in vector)
        assert math.isclose(math.hypot(*vector), 1.0, rel_tol=1e-12)


def test_every_dimension_carries_signal_across_a_corpus() -> None:
    """Implementation choice: feature hashing uses all dimensions (the original used 20)."""
    embedder = _embedder()
    words = [f"term{i} 용어{i} {chr(0x4E00 + i)}" for i in range(600)]
    corpus = [" ".join(words[i : i + 6]) for i in range(0, 600, 3)]
    used = [False] * 512
    for vector in embedder.embed(corpus):
        for i, value in enumerate(vector):
            if value != 0.0:
                used[i] = True
    assert all(used)


def test_configured_dimensions_are_honoured() -> None:
    """Contract-mandated (docs/embeddings.md): embedding.dimensions sizes placeholder vectors."""
    assert len(_embedder(64).vector("hello")) == 64
    assert len(_embedder(4096).vector("hello")) == 4096


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("동시에 두 ingest가 저장소를 쓰지 못하게 하는 장치는 무엇인가요?", "writer-lock"),
        ("다른 브랜치 대신 지정한 커밋만 선택하려면 어떻게 하나요?", "snapshot-selection"),
        ("임베딩 캐시를 모델별로 구분하는 키는 무엇인가요?", "embedding-cache"),
        ("비밀번호를 언제 마스킹해야 하나요?", "secret-masking"),
        ("토큰 예산을 넘지 않게 하려면?", "context-budget"),
    ],
)
def test_korean_query_with_particles_is_closest_to_its_source(query: str, expected: str) -> None:
    """Implementation choice: Hangul n-grams and particle stripping match inflected words."""
    assert _best(query, _embedder()) == expected


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("what prevents two store mutations from racing?", "writer-lock"),
        ("snapshto resolution for a comit sha", "snapshot-selection"),
        ("are passwords masked before persisting", "secret-masking"),
        ("HEAD exact 스냅샷 branch 말고", "snapshot-selection"),
    ],
)
def test_english_typo_and_mixed_queries_find_their_source(query: str, expected: str) -> None:
    """Implementation choice: character n-grams tolerate typos, plurals and mixed scripts."""
    assert _best(query, _embedder()) == expected


def test_related_texts_score_higher_than_unrelated_ones() -> None:
    """Implementation choice: a genuine similarity signal, not just identity."""
    embedder = _embedder()
    lock = embedder.vector("the store writer lock is exclusive")
    assert _cos(lock, embedder.vector("exclusive writer locks for the store")) > 0.5
    assert abs(_cos(lock, embedder.vector("quarterly marketing budget review"))) < 0.2


def test_texts_without_words_get_a_fixed_unit_vector() -> None:
    """Implementation choice: no zero vectors (cosine with a zero vector is undefined)."""
    embedder = _embedder()
    assert embedder.vector("") == embedder.vector("?!. ---")
    assert embedder.vector("the of") != embedder.vector("")


def test_batches_give_the_same_bits_as_one_text_at_a_time() -> None:
    """Implementation choice: batch embedding (numpy sums) equals vector() bit for bit."""
    texts = [
        *DOCS.values(),
        "",
        "!!!",
        "the of and",
        "a a a a b",
        "Ａｂｃ ﬁle Straße İstanbul",
        "ingest가 커밋을 日本語のテキスト",
        "x",
        *(f"term{i} term{i % 7} 용어{i} {chr(0x4E00 + i)} the" for i in range(40)),
    ]
    for dimensions in (8, 256, 512):
        batched = _embedder(dimensions).embed(texts)
        single = _embedder(dimensions)
        for text, vector in zip(texts, batched, strict=True):
            expected = single.vector(text)
            assert struct.pack(f"<{dimensions}d", *vector) == struct.pack(
                f"<{dimensions}d", *expected
            )
