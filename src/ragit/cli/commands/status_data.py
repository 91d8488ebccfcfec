"""The shape of `ragit status` data for ``describe`` (a pydantic model: loaded when the
contract is generated, never by `status` itself)."""

from __future__ import annotations

from typing import Any

from ragit.contract.models import WireModel


class StatusData(WireModel):
    """Shape summary for `describe` (the data itself is built by ragit.ops.status.report)."""

    root: str
    initialized: bool
    branch: str | None
    head: str | None
    detached: bool
    worktree_dirty: bool
    worktree_changes: dict[str, Any] | None = None
    snapshot: dict[str, Any]
    search_ready: bool
    manifests: int
    config: dict[str, Any]
    store: dict[str, Any]
    embedding: dict[str, Any]
    writer_lock: dict[str, Any]
    memory_lock: dict[str, Any]
    transactions: dict[str, Any]
    security: dict[str, Any] | None = None
    hooks: dict[str, Any] | None = None
    docs_authority: dict[str, Any] | None = None
