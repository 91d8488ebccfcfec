"""Embeddings: profiles, providers, the cache and the egress policies (contract §10).

Most callers need only :func:`build_embedder`::

    embedder = build_embedder(ws.root, cfg.embedding, cfg.security, mode="cli")
    vectors = embedder.embed(texts)          # cached, deduplicated, batched
    embedder.profile.as_dict()               # for manifests and status

Importing this package imports no HTTP client; providers load their libraries
on first use. ``ragit.embed.minilm`` is a separate, optional package. The names below
are loaded from their modules on first use, so that importing one submodule (``status``
reads :mod:`ragit.embed.profile` and :mod:`ragit.embed.cache`) does not import the others.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ragit.embed.base import Embedder, ProviderOptions, Vector
    from ragit.embed.cache import (
        DEFAULT_CACHE_DIR,
        CacheCheck,
        CacheMode,
        EmbeddingCache,
        normalize_text,
        text_key,
    )
    from ragit.embed.egress import check_egress, remote_policy
    from ragit.embed.policy import (
        CachedEmbedder,
        EmbedPlan,
        EmbedPolicy,
        EmbedStats,
        Mode,
        build_embedder,
        create_provider,
        open_cache,
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

_LAZY: dict[str, str] = {
    "BatchPolicy": "ragit.embed.profile",
    "CacheCheck": "ragit.embed.cache",
    "CacheMode": "ragit.embed.cache",
    "CachedEmbedder": "ragit.embed.policy",
    "DEFAULT_CACHE_DIR": "ragit.embed.cache",
    "EmbedPlan": "ragit.embed.policy",
    "EmbedPolicy": "ragit.embed.policy",
    "EmbedStats": "ragit.embed.policy",
    "Embedder": "ragit.embed.base",
    "EmbeddingCache": "ragit.embed.cache",
    "EmbeddingProfile": "ragit.embed.profile",
    "EmbeddingSettings": "ragit.embed.profile",
    "Mode": "ragit.embed.policy",
    "ModelInfo": "ragit.embed.profile",
    "PLACEHOLDER_DEFAULT_DIMENSIONS": "ragit.embed.profile",
    "PLACEHOLDER_VERSION": "ragit.embed.profile",
    "ProviderOptions": "ragit.embed.base",
    "ProviderSpec": "ragit.embed.profile",
    "RetryPolicy": "ragit.embed.profile",
    "Vector": "ragit.embed.base",
    "build_embedder": "ragit.embed.policy",
    "check_egress": "ragit.embed.egress",
    "complete_profile": "ragit.embed.profile",
    "create_provider": "ragit.embed.policy",
    "is_loopback_url": "ragit.embed.urls",
    "missing_credential": "ragit.embed.profile",
    "normalize_base_url": "ragit.embed.urls",
    "normalize_text": "ragit.embed.cache",
    "open_cache": "ragit.embed.policy",
    "profile_from_store": "ragit.embed.profile",
    "provider_spec": "ragit.embed.profile",
    "register_provider": "ragit.embed.profile",
    "registered_providers": "ragit.embed.profile",
    "remote_policy": "ragit.embed.egress",
    "resolve_profile": "ragit.embed.profile",
    "resolve_settings": "ragit.embed.profile",
    "text_key": "ragit.embed.cache",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


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
