"""Ollama and OpenAI providers against real HTTP servers on 127.0.0.1."""

from __future__ import annotations

import email.utils
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from ragit.contract.errors import EmbeddingCredentialsMissing, EmbeddingProviderFailed
from ragit.embed import ProviderOptions, create_provider, resolve_profile
from ragit.embed.base import Embedder

SECRET_TEXT = "PRIVATE-QUERY-TEXT-7f3a do not leak"
OLLAMA_DELAYS = (0.150, 0.300, 0.600, 1.200, 2.400)
OPENAI_DELAYS = (0.250, 0.500, 1.000, 2.000)


@pytest.fixture
def make_embedder(sleeps: Any) -> Iterator[Callable[..., Embedder]]:
    """Build a provider for a fake server; every embedder is closed after the test."""
    made: list[Embedder] = []

    def make(
        provider: str,
        url: str,
        *,
        env: dict[str, str] | None = None,
        timeout_ms: int = 5000,
        jitter: Callable[[float, float], float] | None = None,
    ) -> Embedder:
        profile = resolve_profile({"provider": provider, "base_url": url}, {})
        options = ProviderOptions(
            timeout_ms=timeout_ms,
            env=env if env is not None else {"OPENAI_API_KEY": "sk-test-key"},
            sleep=sleeps,
            **({"jitter": jitter} if jitter else {}),
        )
        embedder = create_provider(profile, options)
        made.append(embedder)
        return embedder

    yield make
    for embedder in made:
        embedder.close()


def _assert_no_text(exc: EmbeddingProviderFailed) -> None:
    assert SECRET_TEXT not in exc.message
    assert SECRET_TEXT not in str(exc.details)
    assert "PRIVATE" not in exc.details["reason"]


# ------------------------------------------------------------------ happy paths


def test_ollama_returns_one_vector_per_text_in_order(
    ollama_server: Any, make_embedder: Any, vectors_of: Any
) -> None:
    """Contract-mandated (§10): /api/embed, order preserved, model from the profile."""
    embedder = make_embedder("ollama", ollama_server.url)
    texts = ["alpha", "beta", "gamma"]
    vectors = embedder.embed(texts)
    assert vectors == [vectors_of(t, 768) for t in texts]
    (request,) = ollama_server.requests
    assert request.path == "/api/embed"
    assert request.body == {"model": "nomic-embed-text", "input": texts}


def test_openai_sends_bearer_key_and_reorders_shuffled_indexes(
    openai_server: Any, make_embedder: Any, vectors_of: Any
) -> None:
    """Contract-mandated (docs/embeddings.md): /v1/embeddings, key from env, data[].index
    reordered."""
    openai_server.push("shuffle")
    embedder = make_embedder("openai", openai_server.url)
    texts = ["one", "two", "three"]
    assert embedder.embed(texts) == [vectors_of(t, 1536) for t in texts]
    (request,) = openai_server.requests
    assert request.path == "/v1/embeddings"
    assert request.headers["Authorization"] == "Bearer sk-test-key"
    assert request.body == {"model": "text-embedding-3-small", "input": texts}


def test_openai_root_ending_in_v1_is_not_doubled(openai_server: Any, make_embedder: Any) -> None:
    """Implementation choice: an SDK-style OPENAI_BASE_URL (…/v1) still hits /v1/embeddings."""
    embedder = make_embedder("openai", openai_server.url + "/v1/")
    embedder.embed(["x"])
    assert [r.path for r in openai_server.requests] == ["/v1/embeddings"]


def test_identical_texts_are_sent_once(
    ollama_server: Any, make_embedder: Any, vectors_of: Any
) -> None:
    """Contract-mandated (docs/embeddings.md): identical texts in one call are deduplicated."""
    embedder = make_embedder("ollama", ollama_server.url)
    vectors = embedder.embed(["a", "b", "a", "a", "b"])
    assert ollama_server.inputs_seen == ["a", "b"]
    assert vectors[0] == vectors[2] == vectors[3] == vectors_of("a", 768)
    assert vectors[1] == vectors[4] == vectors_of("b", 768)


def test_batches_respect_the_item_limit(ollama_server: Any, make_embedder: Any) -> None:
    """Contract-mandated (docs/embeddings.md): Ollama batches carry at most 32 texts."""
    embedder = make_embedder("ollama", ollama_server.url)
    texts = [f"text number {i}" for i in range(100)]
    assert len(embedder.embed(texts)) == 100
    sizes = [len(r.inputs) for r in ollama_server.requests]
    assert sizes == [32, 32, 32, 4]
    assert ollama_server.inputs_seen == texts


def test_batches_respect_the_byte_limit(openai_server: Any, make_embedder: Any) -> None:
    """Contract-mandated (docs/embeddings.md): OpenAI batches carry at most 1 MiB of text."""
    embedder = make_embedder("openai", openai_server.url)
    # 3-byte UTF-8 characters: 40 texts of 30,000 bytes = 1.2 MB.
    texts = [f"{i:04d}" + "한" * 9_998 for i in range(40)]
    assert len(embedder.embed(texts)) == 40
    assert len(openai_server.requests) >= 2
    for request in openai_server.requests:
        assert len(request.inputs) <= 96
        assert sum(len(t.encode("utf-8")) for t in request.inputs) <= 1024 * 1024
    assert openai_server.inputs_seen == texts


# ------------------------------------------------------------------ credentials


def test_missing_openai_key_fails_before_any_request(
    openai_server: Any, make_embedder: Any
) -> None:
    """Contract-mandated (§3): EMBEDDING_CREDENTIALS_MISSING, and nothing is sent."""
    embedder = make_embedder("openai", openai_server.url, env={"OPENAI_API_KEY": "  "})
    with pytest.raises(EmbeddingCredentialsMissing) as info:
        embedder.embed(["x"])
    assert info.value.details == {"provider": "openai", "variable": "OPENAI_API_KEY"}
    assert openai_server.requests == []
    assert embedder.requests_sent == 0


# ------------------------------------------------------------------ retries


def test_server_errors_are_retried_on_the_ollama_schedule(
    ollama_server: Any, make_embedder: Any, sleeps: Any
) -> None:
    """Contract-mandated (docs/embeddings.md): 5xx retried with 150/300 ms ×0.85–1.15 jitter."""
    ollama_server.push(("status", 500, {}), ("status", 503, {}), "ok")
    embedder = make_embedder("ollama", ollama_server.url)
    assert len(embedder.embed(["x"])) == 1
    assert len(ollama_server.requests) == 3
    assert len(sleeps.delays) == 2
    for delay, base in zip(sleeps.delays, OLLAMA_DELAYS, strict=False):
        assert base * 0.85 <= delay <= base * 1.15


def test_exhausted_retries_fail_retryable_with_the_status(
    openai_server: Any, make_embedder: Any, sleeps: Any
) -> None:
    """Contract-mandated (§3): after 4 retries the failure is retryable, reason http_503."""
    openai_server.push(*[("status", 503, {})] * 5)
    embedder = make_embedder("openai", openai_server.url, jitter=lambda lo, hi: 1.0)
    with pytest.raises(EmbeddingProviderFailed) as info:
        embedder.embed([SECRET_TEXT])
    assert info.value.retryable is True
    assert info.value.details["reason"] == "http_503"
    assert len(openai_server.requests) == 5
    assert sleeps.delays == list(OPENAI_DELAYS)
    _assert_no_text(info.value)


def test_retry_after_seconds_is_a_minimum_delay(
    ollama_server: Any, make_embedder: Any, sleeps: Any
) -> None:
    """Contract-mandated (docs/embeddings.md): Retry-After is a minimum; jitter only lengthens
    it."""
    ollama_server.push(("status", 429, {"Retry-After": "2"}), "ok")
    embedder = make_embedder("ollama", ollama_server.url, jitter=lambda lo, hi: lo)
    embedder.embed(["x"])
    assert sleeps.delays == [2.0]
    assert len(ollama_server.requests) == 2


def test_retry_after_http_date_is_honoured(
    ollama_server: Any, make_embedder: Any, sleeps: Any
) -> None:
    """Contract-mandated (docs/embeddings.md): Retry-After may be an HTTP date."""
    when = email.utils.formatdate(time.time() + 10, usegmt=True)
    ollama_server.push(("status", 503, {"Retry-After": when}), "ok")
    embedder = make_embedder("ollama", ollama_server.url)
    embedder.embed(["x"])
    (delay,) = sleeps.delays
    # The date has one-second resolution: at least 9 s remain when it is parsed.
    assert 8.0 <= delay <= 10 * 1.15


def test_retry_after_beyond_the_limit_fails_without_waiting(
    ollama_server: Any, make_embedder: Any, sleeps: Any
) -> None:
    """Implementation choice: a Retry-After over 60 s ends the call (retryable) at once."""
    ollama_server.push(("status", 429, {"Retry-After": "3600"}))
    embedder = make_embedder("ollama", ollama_server.url)
    with pytest.raises(EmbeddingProviderFailed) as info:
        embedder.embed(["x"])
    assert info.value.retryable is True
    assert info.value.details["reason"].startswith("http_429")
    assert sleeps.delays == []
    assert len(ollama_server.requests) == 1


def test_a_timeout_is_retried(ollama_server: Any, make_embedder: Any, sleeps: Any) -> None:
    """Contract-mandated (docs/embeddings.md): a read timeout (embedding.timeout_ms) is
    retryable."""
    ollama_server.push("hang", "ok")
    embedder = make_embedder("ollama", ollama_server.url, timeout_ms=500)
    assert len(embedder.embed(["x"])) == 1
    assert len(ollama_server.requests) == 2
    assert len(sleeps.delays) == 1


def test_repeated_timeouts_fail_with_reason_timeout(openai_server: Any, make_embedder: Any) -> None:
    """Contract-mandated (§3): a timeout failure is retryable and names no text."""
    openai_server.push(*["hang"] * 5)
    embedder = make_embedder("openai", openai_server.url, timeout_ms=100)
    with pytest.raises(EmbeddingProviderFailed) as info:
        embedder.embed([SECRET_TEXT])
    assert info.value.details["reason"] == "timeout"
    assert info.value.retryable is True
    assert len(openai_server.requests) == 5
    _assert_no_text(info.value)


def test_connection_refused_is_retried_then_fails_retryable(
    closed_port: int, make_embedder: Any, sleeps: Any
) -> None:
    """Contract-mandated (docs/embeddings.md): network errors are retryable."""
    embedder = make_embedder("ollama", f"http://127.0.0.1:{closed_port}")
    with pytest.raises(EmbeddingProviderFailed) as info:
        embedder.embed(["x"])
    assert info.value.details["reason"] == "connection_error"
    assert info.value.retryable is True
    assert embedder.requests_sent == 6
    assert len(sleeps.delays) == 5


# ------------------------------------------------------------------ validation (never retried)


@pytest.mark.parametrize(
    ("provider", "action", "reason"),
    [
        ("ollama", "malformed", "response_invalid: malformed json"),
        ("ollama", "wrong_cardinality", "response_invalid: wrong cardinality"),
        ("ollama", "wrong_dimension", "dimension_mismatch"),
        ("ollama", "nan", "response_invalid: non-finite value"),
        ("openai", "wrong_cardinality", "response_invalid: wrong cardinality"),
        ("openai", "wrong_dimension", "dimension_mismatch"),
        ("openai", "nan", "response_invalid: non-finite value"),
        ("openai", "duplicate_index", "response_invalid: duplicate index"),
        ("openai", "out_of_range_index", "response_invalid: missing or out-of-range index"),
        ("openai", ("status", 400, {}), "http_400"),
        ("openai", ("status", 401, {}), "http_401"),
        ("ollama", ("status", 404, {}), "http_404"),
        ("ollama", ("status", 302, {"Location": "http://127.0.0.1:9/"}), "http_302"),
    ],
)
def test_invalid_answers_fail_at_once_and_are_not_retryable(
    request: pytest.FixtureRequest,
    make_embedder: Any,
    sleeps: Any,
    provider: str,
    action: Any,
    reason: str,
) -> None:
    """Contract-mandated (docs/embeddings.md): validation failures and 4xx are never retried."""
    server = request.getfixturevalue(f"{provider}_server")
    server.push(action)
    embedder = make_embedder(provider, server.url)
    with pytest.raises(EmbeddingProviderFailed) as info:
        embedder.embed([SECRET_TEXT, "second text"])
    assert info.value.details["reason"].startswith(reason)
    assert info.value.retryable is False
    assert info.value.code == "EMBEDDING_PROVIDER_FAILED"
    assert len(server.requests) == 1
    assert sleeps.delays == []
    _assert_no_text(info.value)


def test_a_failed_batch_leaves_no_partial_result(ollama_server: Any, make_embedder: Any) -> None:
    """Contract-mandated (docs/embeddings.md): no zero-vector fallback; the call fails as a
    whole."""
    ollama_server.push("ok", "wrong_dimension")
    embedder = make_embedder("ollama", ollama_server.url)
    with pytest.raises(EmbeddingProviderFailed):
        embedder.embed([f"t{i}" for i in range(40)])
    assert [len(r.inputs) for r in ollama_server.requests] == [32, 8]


@pytest.mark.parametrize(
    ("value", "seconds"),
    [
        ("7", 7.0),
        (" 0 ", 0.0),
        ("Wed, 21 Oct 2015 07:28:00 GMT", 0.0),
        ("Wed, 21 Oct 2015 07:28:10 GMT", 10.0),
        ("²", None),
        ("-3", None),
        ("soon", None),
        ("", None),
        (None, None),
    ],
)
def test_retry_after_values_parse_as_seconds_or_dates(
    value: str | None, seconds: float | None
) -> None:
    """Contract-mandated (docs/embeddings.md): delta-seconds or an HTTP date; garbage is ignored."""
    from ragit.embed.providers._http import parse_retry_after

    now = email.utils.parsedate_to_datetime("Wed, 21 Oct 2015 07:28:00 GMT").timestamp()
    assert parse_retry_after(value, now=now) == seconds
