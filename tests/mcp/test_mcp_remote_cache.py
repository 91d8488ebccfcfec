"""Embeddings under MCP: remote providers never see a request on a cache miss (contract §10).

Real HTTP servers on 127.0.0.1 count every request: an OpenAI-format server at a loopback
base URL (OpenAI is remote by provider, whatever its URL), an Ollama-format server reached
as a forward proxy for a non-loopback Ollama base URL, and an Ollama-format server at a
loopback base URL (local: computed, never cached). The store is built by the real CLI
against them; every MCP call must then leave the repository — the embedding cache
included — byte- and mtime-identical.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from _mcp_helpers import RAGIT as RAGIT_CLI
from _mcp_helpers import EmbeddingServer, McpServer, make_repo, run, serve_embeddings

StartServer = Callable[..., McpServer]
UNCACHED = "which rounding mode do settlement reports use"


@pytest.fixture
def openai_server() -> Iterator[EmbeddingServer]:
    yield from serve_embeddings(1536)


@pytest.fixture
def ollama_server() -> Iterator[EmbeddingServer]:
    yield from serve_embeddings(768)


def _cache_miss(server: McpServer, tool: str, provider: str, model: str) -> None:
    arguments = {"question": UNCACHED} if tool == "ragit_query" else {"goal": UNCACHED}
    call = server.call(tool, arguments)
    assert call.is_error
    error = call.envelope["error"]
    assert error["code"] == "MCP_REMOTE_EMBEDDING_CACHE_MISS"
    assert error["category"] == "not_ready"
    assert error["retryable"] is False
    assert error["details"] == {"provider": provider, "model": model, "missingCount": 1}
    assert error["recovery"]["command"] is None
    assert error["recovery"]["hint"].startswith("Run the same query with the ragit CLI")
    assert "rounding" not in json.dumps(call.envelope)


def test_openai_cache_miss_fails_before_any_request_and_a_cli_query_fills_it(
    tmp_path: Path, env: dict[str, str], start_server: StartServer, openai_server: EmbeddingServer
) -> None:
    """Contract §10 / docs/mcp.md: OpenAI misses fail before egress; cached questions work."""
    env = {**env, "OPENAI_API_KEY": "sk-test-not-a-real-key"}
    root = make_repo(
        tmp_path,
        env,
        config={
            "embedding.provider": "openai",
            "embedding.model": "text-embedding-3-small",
            "embedding.base_url": openai_server.url,
        },
    )
    run([RAGIT_CLI, "query", "double entry", "--format", "json"], cwd=root, env=env)
    assert openai_server.count() > 0
    baseline = openai_server.count()
    server = start_server(root, env)
    assert server.call("ragit_status", {}).envelope["ok"] is True
    cached = server.call("ragit_query", {"question": "double entry"})
    assert cached.envelope["ok"] is True and cached.data["hits"]
    for tool in ("ragit_query", "ragit_context_pack"):
        _cache_miss(server, tool, "openai", "text-embedding-3-small")
    assert openai_server.count() == baseline
    # The documented recovery: the same query through the CLI fills the cache, then MCP works.
    run([RAGIT_CLI, "query", UNCACHED, "--format", "json"], cwd=root, env=env)
    baseline = openai_server.count()
    assert server.call("ragit_query", {"question": UNCACHED}).envelope["ok"] is True
    assert openai_server.count() == baseline


def test_non_loopback_ollama_cache_miss_sends_nothing_even_through_a_proxy(
    tmp_path: Path, env: dict[str, str], start_server: StartServer, ollama_server: EmbeddingServer
) -> None:
    """Contract §10: a non-loopback Ollama is remote; a miss fails before any request."""
    env = {**env, "HTTP_PROXY": ollama_server.url, "http_proxy": ollama_server.url}
    root = make_repo(
        tmp_path,
        env,
        config={
            "embedding.provider": "ollama",
            "embedding.model": "nomic-embed-text",
            "embedding.base_url": "http://ollama.invalid:11434",
        },
    )
    assert ollama_server.count() > 0
    assert all(path.startswith("http://ollama.invalid:11434/") for path in ollama_server.requests)
    baseline = ollama_server.count()
    server = start_server(root, env)
    assert server.call("ragit_status", {}).envelope["ok"] is True
    for tool in ("ragit_query", "ragit_context_pack"):
        _cache_miss(server, tool, "ollama", "nomic-embed-text")
    assert ollama_server.count() == baseline


def test_loopback_ollama_is_called_on_every_miss_and_nothing_is_cached(
    tmp_path: Path, env: dict[str, str], start_server: StartServer, ollama_server: EmbeddingServer
) -> None:
    """Contract §10: loopback Ollama computes misses without caching (write-free, recomputed)."""
    root = make_repo(
        tmp_path,
        env,
        config={
            "embedding.provider": "ollama",
            "embedding.model": "nomic-embed-text",
            "embedding.base_url": ollama_server.url,
        },
    )
    server = start_server(root, env)
    baseline = ollama_server.count()
    assert server.call("ragit_status", {}).envelope["ok"] is True
    assert ollama_server.count() == baseline, "ragit_status must never call a provider"
    for n in (1, 2):
        call = server.call("ragit_query", {"question": UNCACHED})
        assert call.envelope["ok"] is True
        assert ollama_server.count() == baseline + n
