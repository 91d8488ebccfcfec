"""The warning that the configured embedding profile is not the store's (``needsMigration``
of `status`), shared by `status`, `query`, `context pack` and `config set`."""

from __future__ import annotations

from typing import Any

from ragit.contract.errors import RagitError
from ragit.workspace import Workspace

MIGRATE_EMBEDDINGS = "ragit migrate embeddings"


def embedding_migration_warning(ws: Workspace, cfg: Any) -> str | None:
    """A warning when the store's chunks were embedded with another profile than the
    configured one (``needsMigration`` of `status`), else ``None``. Never calls a provider."""
    from ragit.embed import resolve_profile
    from ragit.store.meta import read_meta

    try:
        meta = read_meta(ws)
        profile = resolve_profile(cfg.embedding)
    except RagitError:
        return None
    if meta is None or meta.chunk_count == 0:
        return None
    if meta.embedding.get("namespaceId") == profile.namespace_id:
        return None
    stored = f"{meta.embedding.get('provider')}/{meta.embedding.get('model')}"
    return (
        f"the configured embedding profile ({profile.provider}/{profile.model}) differs from "
        f"the store's ({stored}); searches use the store's profile and ingest refuses until "
        f"`{MIGRATE_EMBEDDINGS}`"
    )
