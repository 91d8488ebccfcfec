"""Cache + provider + egress policy: what the rest of RAGit calls to embed text.

:func:`build_embedder` wires a :class:`CachedEmbedder` for one of three modes:

``cli``
    Cache ``readwrite`` (``disabled`` when ``embedding.cache_enabled`` is false or
    the cache dir is invalid). Misses go to the provider and are cached.
``dry-run``
    Cache ``readonly``. A dry-run must not send text anywhere new and must not
    write: local providers (placeholder, loopback Ollama) compute misses without
    caching them; a remote-egress provider is never called — a miss raises
    ``EMBEDDING_PROVIDER_FAILED`` with reason ``dry_run_no_egress``. Planners
    should use :meth:`CachedEmbedder.plan`, which counts misses without embedding.
``mcp``
    The seed's read-only policy (docs/mcp.md): cache ``readonly``; placeholder and
    loopback Ollama compute misses without caching; OpenAI and non-loopback
    Ollama raise ``MCP_REMOTE_EMBEDDING_CACHE_MISS`` before any request unless
    every requested vector is cached (a partly cached batch fails as a whole).

``security.remote_embedding_policy``: ``allow-sanitized`` (default) lets a
remote provider embed documents and queries but never artifact or evidence
text (:attr:`CachedEmbedder.artifacts_embeddable`); ``local-only`` refuses a
remote-egress profile in every mode, before any request, with ``INPUT_INVALID``
on field ``security.remote_embedding_policy`` — the configuration combination is
what is wrong, and changing either key fixes it.

The placeholder is never cached in any mode: computing a vector (~0.1 ms) is
cheaper than reading one back, and caching it would only fill the disk.
"""

from __future__ import annotations

import importlib
import os
import random
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any, Literal

from ragit.contract.errors import (
    EmbeddingProviderFailed,
    InputInvalid,
)
from ragit.contract.mcp_errors import McpRemoteEmbeddingCacheMiss
from ragit.embed.base import Embedder, ProviderOptions, Vector
from ragit.embed.cache import CacheCheck, CacheMode, EmbeddingCache, normalize_text, text_key
from ragit.embed.egress import RemotePolicy, check_egress, remote_policy
from ragit.embed.profile import (
    EmbeddingProfile,
    EmbeddingSettings,
    ProviderSpec,
    resolve_settings,
)

Mode = Literal["cli", "dry-run", "mcp"]
Purpose = Literal["document", "query", "artifact"]


@dataclass(frozen=True)
class EmbedPolicy:
    """How a :class:`CachedEmbedder` may use its cache and its provider."""

    mode: Mode = "cli"
    remote_embedding_policy: RemotePolicy = "allow-sanitized"

    @property
    def cache_mode(self) -> CacheMode:
        return "readwrite" if self.mode == "cli" else "readonly"

    @property
    def remote_on_miss(self) -> Literal["call", "deny"]:
        return "call" if self.mode == "cli" else "deny"


@dataclass(frozen=True)
class EmbedStats:
    """Counters since the embedder was built (unique texts, not call arguments)."""

    requests_sent: int
    cache_hits: int
    cache_misses: int
    embedded: int

    def as_dict(self) -> dict[str, int]:
        return {
            "requestsSent": self.requests_sent,
            "cacheHits": self.cache_hits,
            "cacheMisses": self.cache_misses,
            "embedded": self.embedded,
        }


@dataclass(frozen=True)
class EmbedPlan:
    """What embedding some texts would take, found without calling the provider."""

    unique: int
    cached: int
    missing: int


class CachedEmbedder:
    """An :class:`Embedder` behind the cache and the egress policy."""

    def __init__(
        self, embedder: Embedder, cache: EmbeddingCache | None, policy: EmbedPolicy
    ) -> None:
        self._embedder = embedder
        self._cache = cache
        self._policy = policy
        self.cache_hits = 0
        self.cache_misses = 0
        self.embedded = 0

    @property
    def profile(self) -> EmbeddingProfile:
        return self._embedder.profile

    @property
    def policy(self) -> EmbedPolicy:
        return self._policy

    @property
    def provider(self) -> Embedder:
        return self._embedder

    @property
    def cache(self) -> EmbeddingCache | None:
        return self._cache

    @property
    def requests_sent(self) -> int:
        return self._embedder.requests_sent

    @property
    def remote_egress(self) -> bool:
        return self.profile.egress == "remote"

    @property
    def artifacts_embeddable(self) -> bool:
        """Whether artifact/evidence text may be embedded (never by a remote provider)."""
        return not self.remote_egress

    def stats(self) -> EmbedStats:
        return EmbedStats(self.requests_sent, self.cache_hits, self.cache_misses, self.embedded)

    def _cache_in_use(self) -> EmbeddingCache | None:
        cache = self._cache
        if cache is None or not cache.active or not self.profile.spec.cacheable:
            return None
        return cache

    def plan(self, texts: Sequence[str]) -> EmbedPlan:
        """Count distinct texts and cache hits without embedding anything or writing."""
        keys = {text_key(t) for t in texts}
        cache = self._cache_in_use()
        cached = len(cache.get_many(sorted(keys))) if cache is not None else 0
        return EmbedPlan(unique=len(keys), cached=cached, missing=len(keys) - cached)

    def embed(self, texts: Sequence[str], *, purpose: Purpose = "document") -> list[Vector]:
        """One vector per text, in order, from the cache or the provider.

        Raises:
            InputInvalid: ``purpose="artifact"`` with a remote-egress provider.
            McpRemoteEmbeddingCacheMiss: MCP mode, remote provider, not every vector cached.
            EmbeddingProviderFailed: the provider failed, or a dry-run would need a remote call.
            EmbeddingCredentialsMissing: the provider's credential is not set.
        """
        if not texts:
            return []
        if purpose == "artifact" and self.remote_egress:
            raise InputInvalid(
                "security.remote_embedding_policy",
                "artifact and evidence text is never sent to a remote embedding provider",
            )
        normalized = [normalize_text(t) for t in texts]
        slot: dict[str, int] = {}
        order = [slot.setdefault(t, len(slot)) for t in normalized]
        unique = list(slot)
        vectors: list[Vector] = [[] for _ in unique]

        cache = self._cache_in_use()
        missing: list[int] = list(range(len(unique)))
        keys: list[str] = []
        if cache is not None:
            keys = [text_key(t) for t in unique]
            found = cache.get_many(keys)
            missing = []
            for i, key in enumerate(keys):
                hit = found.get(key)
                if hit is None:
                    missing.append(i)
                else:
                    vectors[i] = hit
            self.cache_hits += len(unique) - len(missing)
            self.cache_misses += len(missing)
        else:
            self.cache_misses += len(unique)

        if missing:
            self._check_may_call(len(missing))
            writing = cache is not None and cache.mode == "readwrite"
            # Batch by batch, so vectors already paid for are cached even when a
            # later batch fails (a slow provider can take minutes for an ingest).
            step = self._embedder.batch_policy.max_items if writing else len(missing)
            for start in range(0, len(missing), step):
                part = missing[start : start + step]
                fresh = self._embedder.embed([unique[i] for i in part])
                self.embedded += len(fresh)
                for i, vector in zip(part, fresh, strict=True):
                    vectors[i] = vector
                if writing and cache is not None:
                    cache.put_many((keys[i], vector) for i, vector in zip(part, fresh, strict=True))

        if len(unique) == len(texts):
            return vectors
        return [vectors[i] for i in order]

    def _check_may_call(self, missing: int) -> None:
        if not self.remote_egress or self._policy.remote_on_miss == "call":
            return
        profile = self.profile
        if self._policy.mode == "mcp":
            raise McpRemoteEmbeddingCacheMiss(profile.provider, profile.model, missing)
        raise EmbeddingProviderFailed(
            profile.provider, profile.model, "dry_run_no_egress", retryable=False
        )

    def cache_summary(self, *, timeout_ms: int | None = None) -> dict[str, Any]:
        """``status.embedding.cache`` for this embedder's profile."""
        if self._cache is None:
            spec = self.profile.spec
            return {
                "enabled": False,
                "mode": "disabled",
                "dir": None,
                "namespaceId": self.profile.namespace_id,
                "entryCount": 0,
                "batchPolicy": spec.batch.as_dict(),
                "retryPolicy": spec.retry.as_dict(timeout_ms),
                "writable": False,
                "namespaceReadable": True,
            }
        return self._cache.summary(timeout_ms=timeout_ms)

    def health(self) -> list[CacheCheck]:
        """The cache's ``doctor`` checks (empty without a cache)."""
        return self._cache.health() if self._cache is not None else []

    def close(self) -> None:
        self._embedder.close()

    def __enter__(self) -> CachedEmbedder:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


def create_provider(profile: EmbeddingProfile, options: ProviderOptions) -> Embedder:
    """Instantiate the provider of ``profile`` through its registered factory."""
    spec: ProviderSpec = profile.spec
    factory = spec.factory
    if isinstance(factory, str):
        module_name, _, attr = factory.partition(":")
        factory = getattr(importlib.import_module(module_name), attr)
    embedder = factory(profile, options)
    if not isinstance(embedder, Embedder):
        raise TypeError(f"provider factory of {spec.name} returned {type(embedder).__name__}")
    return embedder


def open_cache(ws_root: Path, settings: EmbeddingSettings, mode: CacheMode) -> EmbeddingCache:
    """The cache of ``settings.profile`` (``disabled`` when the config disables it)."""
    return EmbeddingCache(
        ws_root,
        settings.profile,
        mode if settings.cache_enabled else "disabled",
        cache_dir=settings.cache_dir,
    )


def build_embedder(
    ws_root: Path,
    embedding_cfg: Mapping[str, object] | Any,
    security_cfg: Mapping[str, object] | Any,
    *,
    mode: Mode,
    env: Mapping[str, str] | None = None,
    sleep: Callable[[float], None] | None = None,
    jitter: Callable[[float, float], float] | None = None,
) -> CachedEmbedder:
    """The embedder for a command running in ``mode`` (see the module docstring).

    ``embedding_cfg`` and ``security_cfg`` are the config sections (mappings or
    the pydantic sections of ``ragit.config``). Nothing is sent and nothing is
    written here; the HTTP client is created on the first request.

    Raises:
        InputInvalid: an invalid ``embedding.*`` value, an unknown
            ``security.remote_embedding_policy``, or a remote profile under ``local-only``.
    """
    environ: Mapping[str, str] = os.environ if env is None else env
    settings = resolve_settings(embedding_cfg, environ)
    policy = EmbedPolicy(mode=mode, remote_embedding_policy=remote_policy(security_cfg))
    check_egress(settings.profile, policy.remote_embedding_policy)
    cache = open_cache(ws_root, settings, policy.cache_mode)
    options = ProviderOptions(
        timeout_ms=settings.timeout_ms,
        env=environ,
        sleep=sleep or time.sleep,
        jitter=jitter or random.uniform,
        config=settings.config,
    )
    return CachedEmbedder(create_provider(settings.profile, options), cache, policy)
