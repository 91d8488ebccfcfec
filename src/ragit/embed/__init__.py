"""Embeddings: profiles, providers, the cache and the egress policies (contract §10).

Most callers need only :func:`build_embedder`::

    embedder = build_embedder(ws.root, cfg.embedding, cfg.security, mode="cli")
    vectors = embedder.embed(texts)          # cached, deduplicated, batched
    embedder.profile.as_dict()               # for manifests and status

Importing this package imports no HTTP client; providers load their libraries
on first use. ``ragit.embed.minilm`` is a separate, optional package.
"""

from __future__ import annotations

from ragit.embed.base import Embedder, ProviderOptions, Vector
from ragit.embed.cache import (
    DEFAULT_CACHE_DIR,
    CacheCheck,
    CacheMode,
    EmbeddingCache,
    normalize_text,
    text_key,
)
from ragit.embed.policy import (
    CachedEmbedder,
    EmbedPlan,
    EmbedPolicy,
    EmbedStats,
    Mode,
    build_embedder,
    check_egress,
    create_provider,
    open_cache,
    remote_policy,
)
from ragit.embed.profile import (
    PLACEHOLDER_DEFAULT_DIMENSIONS,
    PLACEHOLDER_VERSION,
    BatchPolicy,
    EmbeddingProfile,
    EmbeddingSettings,
    ModelInfo,
    ProviderSpec,
    RetryPolicy,
    complete_profile,
    missing_credential,
    profile_from_store,
    provider_spec,
    register_provider,
    registered_providers,
    resolve_profile,
    resolve_settings,
)
from ragit.embed.urls import is_loopback_url, normalize_base_url

__all__ = [
    "DEFAULT_CACHE_DIR",
    "PLACEHOLDER_DEFAULT_DIMENSIONS",
    "PLACEHOLDER_VERSION",
    "BatchPolicy",
    "CacheCheck",
    "CacheMode",
    "CachedEmbedder",
    "EmbedPlan",
    "EmbedPolicy",
    "EmbedStats",
    "Embedder",
    "EmbeddingCache",
    "EmbeddingProfile",
    "EmbeddingSettings",
    "Mode",
    "ModelInfo",
    "ProviderOptions",
    "ProviderSpec",
    "RetryPolicy",
    "Vector",
    "build_embedder",
    "check_egress",
    "complete_profile",
    "create_provider",
    "is_loopback_url",
    "missing_credential",
    "normalize_base_url",
    "normalize_text",
    "open_cache",
    "profile_from_store",
    "provider_spec",
    "register_provider",
    "registered_providers",
    "remote_policy",
    "resolve_profile",
    "resolve_settings",
    "text_key",
]
