"""``status.embedding.cache`` without building an embedder where none is needed.

``status`` reports the cache a dry-run embedder would use (:func:`ragit.embed.policy.build_embedder`
with ``mode="dry-run"``, then :meth:`~ragit.embed.policy.CachedEmbedder.cache_summary`). For the
placeholder the provider adds nothing to that summary and its construction cannot fail (its
version is fixed by its registry entry), so the summary is read from the cache alone and
the provider base, the cached embedder and the provider's module stay unimported. Every other
provider is built as before: its construction may refuse the configuration, and that refusal
is part of the summary.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ragit.embed.cache import CacheMode, EmbeddingCache
from ragit.embed.egress import check_egress, remote_policy
from ragit.embed.profile import PLACEHOLDER, resolve_settings


def dry_run_cache_summary(
    ws_root: Path,
    embedding_cfg: Mapping[str, object] | Any,
    security_cfg: Mapping[str, object] | Any,
    *,
    timeout_ms: int | None = None,
) -> dict[str, Any]:
    """What ``build_embedder(..., mode="dry-run").cache_summary(timeout_ms=...)`` returns.

    Raises:
        RagitError: what ``build_embedder`` raises for this configuration.
    """
    settings = resolve_settings(embedding_cfg, os.environ)
    if settings.profile.provider != PLACEHOLDER:
        from ragit.embed.policy import build_embedder

        embedder = build_embedder(ws_root, embedding_cfg, security_cfg, mode="dry-run")
        try:
            return embedder.cache_summary(timeout_ms=timeout_ms)
        finally:
            embedder.close()
    check_egress(settings.profile, remote_policy(security_cfg))
    mode: CacheMode = "readonly" if settings.cache_enabled else "disabled"
    cache = EmbeddingCache(ws_root, settings.profile, mode, cache_dir=settings.cache_dir)
    return cache.summary(timeout_ms=timeout_ms)
