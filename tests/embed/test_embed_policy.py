"""Egress policies: MCP read-only cache-miss rules, local-only, dry-run, counters, registry."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from ragit.contract.errors import (
    EmbeddingProviderFailed,
    InputInvalid,
)
from ragit.contract.mcp_errors import McpRemoteEmbeddingCacheMiss
from ragit.embed import (
    BatchPolicy,
    CachedEmbedder,
    Embedder,
    EmbeddingProfile,
    ModelInfo,
    ProviderOptions,
    ProviderSpec,
    RetryPolicy,
    build_embedder,
)
from ragit.embed import profile as profile_module

UNREACHABLE = "http://10.255.255.1:9"
SECRET_QUERY = "PRIVATE-QUERY-TEXT-91c2"
KEY_ENV = {"OPENAI_API_KEY": "sk-test-key"}


@pytest.fixture
def make(repo: Path, sleeps: Any) -> Iterator[Callable[..., CachedEmbedder]]:
    """build_embedder in ``repo``; every embedder is closed after the test."""
    made: list[CachedEmbedder] = []

    def build(
        embedding: dict[str, Any],
        *,
        mode: str = "cli",
        security: dict[str, Any] | None = None,
        env: dict[str, str] | None = None,
    ) -> CachedEmbedder:
        embedder = build_embedder(
            repo,
            embedding,
            security or {},
            mode=mode,  # type: ignore[arg-type]
            env=KEY_ENV if env is None else env,
            sleep=sleeps,
        )
        made.append(embedder)
        return embedder

    yield build
    for embedder in made:
        embedder.close()


def _fail_on_retry(seconds: float) -> None:
    raise AssertionError("a provider request was attempted and is being retried")


# ------------------------------------------------------------------ MCP


def test_mcp_openai_miss_fails_before_any_request(
    make: Any, openai_server: Any, snapshot_tree: Any, repo: Path
) -> None:
    """Contract-mandated (§10, seed): uncached OpenAI under MCP → cache-miss error, no egress."""
    before = snapshot_tree(repo)
    embedder = make({"provider": "openai", "base_url": openai_server.url}, mode="mcp")
    with pytest.raises(McpRemoteEmbeddingCacheMiss) as info:
        embedder.embed([SECRET_QUERY, "second", SECRET_QUERY])
    assert info.value.details == {
        "provider": "openai",
        "model": "text-embedding-3-small",
        "missingCount": 2,
    }
    assert SECRET_QUERY not in info.value.message
    assert openai_server.requests == []
    assert embedder.requests_sent == 0
    assert snapshot_tree(repo) == before


def test_mcp_openai_fully_cached_batch_is_served(
    make: Any, openai_server: Any, snapshot_tree: Any, repo: Path
) -> None:
    """Contract-mandated (seed): a fully cached remote batch succeeds without requests."""
    cfg = {"provider": "openai", "base_url": openai_server.url}
    filled = make(cfg).embed(["q1", "q2"])
    before = snapshot_tree(repo)
    sent = len(openai_server.requests)
    embedder = make(cfg, mode="mcp", env={})
    assert embedder.embed(["q2", "q1"]) == [filled[1], filled[0]]
    assert len(openai_server.requests) == sent
    assert snapshot_tree(repo) == before


def test_mcp_partly_cached_remote_batch_fails_as_a_whole(make: Any, openai_server: Any) -> None:
    """Contract-mandated (seed): one missing vector fails the whole batch, before any request."""
    cfg = {"provider": "openai", "base_url": openai_server.url}
    make(cfg).embed(["cached-a", "cached-b"])
    sent = len(openai_server.requests)
    with pytest.raises(McpRemoteEmbeddingCacheMiss) as info:
        make(cfg, mode="mcp").embed(["cached-a", "missing-c", "cached-b"])
    assert info.value.details["missingCount"] == 1
    assert len(openai_server.requests) == sent


def test_mcp_non_loopback_ollama_never_connects(repo: Path, connection_attempts: list[Any]) -> None:
    """Contract-mandated (seed): non-loopback Ollama under MCP fails with zero connections."""
    embedder = build_embedder(
        repo,
        {"provider": "ollama", "base_url": UNREACHABLE, "timeout_ms": 200},
        {},
        mode="mcp",
        env={},
        sleep=_fail_on_retry,
    )
    try:
        with pytest.raises(McpRemoteEmbeddingCacheMiss) as info:
            embedder.embed([SECRET_QUERY])
    finally:
        embedder.close()
    assert info.value.details["provider"] == "ollama"
    assert embedder.requests_sent == 0
    assert connection_attempts == []


def test_connection_watch_sees_real_connections(
    make: Any, ollama_server: Any, connection_attempts: list[Any]
) -> None:
    """Implementation choice: the audit-hook watch used above does detect a connection."""
    make({"provider": "ollama", "base_url": ollama_server.url}, mode="mcp").embed(["x"])
    assert ("127.0.0.1", ollama_server.port) in [tuple(a)[:2] for a in connection_attempts]


def test_mcp_loopback_ollama_computes_misses_without_caching(
    make: Any, ollama_server: Any, snapshot_tree: Any, repo: Path
) -> None:
    """Contract-mandated (seed): loopback Ollama is called under MCP and nothing is cached."""
    before = snapshot_tree(repo)
    cfg = {"provider": "ollama", "base_url": ollama_server.url}
    make(cfg, mode="mcp").embed(["x"])
    make(cfg, mode="mcp").embed(["x"])
    assert [r.inputs for r in ollama_server.requests] == [["x"], ["x"]]
    assert snapshot_tree(repo) == before


def test_mcp_placeholder_computes_without_caching(
    make: Any, snapshot_tree: Any, repo: Path
) -> None:
    """Contract-mandated (seed): the placeholder computes locally under MCP and writes nothing."""
    before = snapshot_tree(repo)
    embedder = make({}, mode="mcp")
    assert len(embedder.embed(["x", "y"])[0]) == 512
    assert snapshot_tree(repo) == before


# ------------------------------------------------------------------ remote_embedding_policy


@pytest.mark.parametrize(
    "embedding",
    [{"provider": "openai"}, {"provider": "ollama", "base_url": UNREACHABLE}],
)
@pytest.mark.parametrize("mode", ["cli", "dry-run", "mcp"])
def test_local_only_refuses_remote_egress_before_any_request(
    make: Any, embedding: dict[str, Any], mode: str, connection_attempts: list[Any]
) -> None:
    """Contract-mandated (docs/embeddings.md): local-only refuses remote providers, typed, up
    front."""
    with pytest.raises(InputInvalid) as info:
        make(embedding, mode=mode, security={"remote_embedding_policy": "local-only"})
    assert info.value.details["field"] == "security.remote_embedding_policy"
    assert connection_attempts == []


def test_local_only_allows_loopback_ollama_and_the_placeholder(
    make: Any, ollama_server: Any
) -> None:
    """Contract-mandated (docs/embeddings.md): local egress is allowed under local-only."""
    local_only = {"remote_embedding_policy": "local-only"}
    make({"provider": "ollama", "base_url": ollama_server.url}, security=local_only).embed(["x"])
    make({}, security=local_only).embed(["x"])
    assert len(ollama_server.requests) == 1


def test_unknown_remote_policy_is_input_invalid(make: Any) -> None:
    """Contract-mandated (§3): an unknown policy value is INPUT_INVALID."""
    with pytest.raises(InputInvalid) as info:
        make({}, security={"remote_embedding_policy": "yolo"})
    assert info.value.details["field"] == "security.remote_embedding_policy"


def test_allow_sanitized_never_sends_artifact_text_remotely(
    make: Any, openai_server: Any, ollama_server: Any
) -> None:
    """Contract-mandated (docs/embeddings.md): artifacts/evidence are not embedded by remote
    providers."""
    remote = make({"provider": "openai", "base_url": openai_server.url})
    assert remote.artifacts_embeddable is False
    with pytest.raises(InputInvalid):
        remote.embed(["artifact text"], purpose="artifact")
    assert openai_server.requests == []
    local = make({"provider": "ollama", "base_url": ollama_server.url})
    assert local.artifacts_embeddable is True
    local.embed(["artifact text"], purpose="artifact")
    assert len(ollama_server.requests) == 1


# ------------------------------------------------------------------ dry-run


def test_dry_run_never_calls_a_remote_provider(make: Any, openai_server: Any) -> None:
    """Implementation choice: a dry-run sends nothing off the machine; plan() counts misses."""
    cfg = {"provider": "openai", "base_url": openai_server.url}
    make(cfg).embed(["known"])
    sent = len(openai_server.requests)
    embedder = make(cfg, mode="dry-run")
    plan = embedder.plan(["known", "new-1", "new-2", "new-1"])
    assert (plan.unique, plan.cached, plan.missing) == (3, 1, 2)
    with pytest.raises(EmbeddingProviderFailed) as info:
        embedder.embed(["known", "new-1"])
    assert info.value.details["reason"] == "dry_run_no_egress"
    assert info.value.retryable is False
    assert len(openai_server.requests) == sent


# ------------------------------------------------------------------ counters, credentials


def test_counters_report_hits_misses_embedded_and_requests(make: Any, ollama_server: Any) -> None:
    """Implementation choice: counters for ingest output count distinct texts."""
    cfg = {"provider": "ollama", "base_url": ollama_server.url}
    first = make(cfg)
    first.embed([f"t{i}" for i in range(40)] + ["t0"])
    assert first.stats().as_dict() == {
        "requestsSent": 2,
        "cacheHits": 0,
        "cacheMisses": 40,
        "embedded": 40,
    }
    second = make(cfg)
    second.embed(["t1", "t2", "new"])
    assert (second.cache_hits, second.cache_misses, second.embedded, second.requests_sent) == (
        2,
        1,
        1,
        1,
    )


def test_openai_without_key_in_cli_mode_sends_nothing(make: Any, openai_server: Any) -> None:
    """Contract-mandated (§3): EMBEDDING_CREDENTIALS_MISSING before any request."""
    from ragit.contract.errors import EmbeddingCredentialsMissing

    embedder = make({"provider": "openai", "base_url": openai_server.url}, env={})
    with pytest.raises(EmbeddingCredentialsMissing):
        embedder.embed(["x"])
    assert openai_server.requests == []


def test_building_an_embedder_imports_no_http_client(repo: Path) -> None:
    """Implementation choice: httpx is imported only when a request is sent."""
    import subprocess

    code = (
        "import sys; from pathlib import Path; from ragit.embed import build_embedder;"
        "build_embedder(Path(sys.argv[1]), {'provider': 'ollama'}, {}, mode='cli', env={});"
        "print('httpx' in sys.modules)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(repo)], capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "False"


# ------------------------------------------------------------------ registry hook


class _ConstantEmbedder(Embedder):
    def __init__(self, profile: EmbeddingProfile, options: ProviderOptions) -> None:
        super().__init__(profile)

    def _embed_batch(self, texts: list[str]) -> list[list[float]]:
        self.requests_sent += 1
        return [[1.0, 0.0, 0.0, 0.0] for _ in texts]


def test_a_registered_provider_is_built_and_cached(
    make: Any, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Implementation choice: new providers (e.g. local-minilm) join through the registry."""
    spec = ProviderSpec(
        name="test-constant",
        models={"c4": ModelInfo(4, "test-constant-4")},
        default_model="c4",
        egress="local",
        batch=BatchPolicy(max_items=2, max_bytes=1024),
        retry=RetryPolicy(),
        factory=_ConstantEmbedder,
    )
    monkeypatch.setitem(profile_module._REGISTRY, spec.name, spec)
    embedder = make({"provider": "test-constant"})
    assert embedder.embed(["a", "b", "c"]) == [[1.0, 0.0, 0.0, 0.0]] * 3
    assert embedder.requests_sent == 2
    assert embedder.profile.egress == "local"
    again = make({"provider": "test-constant"})
    again.embed(["a", "b", "c"])
    assert again.requests_sent == 0
