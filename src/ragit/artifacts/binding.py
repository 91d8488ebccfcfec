"""Binding artifacts into snapshots: what ``ingest --scope all`` projects, and marking it bound.

Ingest asks :func:`pending_bindings` for the reviewed artifacts visible from the
commit it indexes, chunks and stores their searchable units
(:func:`ragit.artifacts.catalog.searchable_units`) with the snapshot, then calls
:func:`mark_bound` (a writer: it takes the memory lock) with the ids it bound.
"""

from __future__ import annotations

from typing import Any

from ragit.artifacts.catalog import iter_artifacts, load_artifact, relative_path, searchable_units
from ragit.artifacts.lock import memory_lock
from ragit.artifacts.writes import save_artifact
from ragit.workspace import Workspace


def pending_bindings(ws: Workspace, head_sha: str) -> list[dict[str, Any]]:
    """The artifacts ``ingest --scope all`` should project into the manifest of ``head_sha``.

    Every artifact with searchable units (see
    :func:`ragit.artifacts.catalog.searchable_units`) whose capture commit is
    unknown or an ancestor of (or equal to) ``head_sha``.
    Each item is the manifest ``artifactEntries[]`` entry minus ``chunkIds``, plus
    the ``units`` the ingest must chunk, embed and store::

        {artifactId, artifactScope, kind, tier, status, path, searchPolicy,
         sourceSessionId, sourceHeadSha, goalId, episodeId, bindingStatus,
         contentHash, units: [{scope, sourceType, sourceId, sectionTitle, text}]}

    The ingest adds ``chunkIds`` (and files them under ``chunkScopes.<unit scope>``),
    drops ``units`` before writing the manifest, and afterwards calls
    :func:`mark_bound` with the ids it bound. Texts are masked already.
    """
    from ragit.snapshot._git import GitRepo

    git = GitRepo(ws.root)
    ancestry: dict[str, bool] = {}

    def reachable(sha: str | None) -> bool:
        if not sha:
            return True
        if sha not in ancestry:
            ancestry[sha] = git.has_commit(sha) and git.is_ancestor(sha, head_sha)
        return ancestry[sha]

    out: list[dict[str, Any]] = []
    for record in iter_artifacts(ws):
        units = searchable_units(record)
        if not units or not reachable(record.capture_head_sha or record.source_head_sha):
            continue
        out.append(
            {
                "artifactId": record.artifact_id,
                "artifactScope": record.artifact_scope,
                "kind": record.kind,
                "tier": record.tier,
                "status": record.status,
                "path": relative_path(ws, record.artifact_id),
                "searchPolicy": record.search_policy,
                "sourceSessionId": record.source_session_id,
                "sourceHeadSha": record.source_head_sha,
                "goalId": record.goal_id,
                "episodeId": record.episode_id,
                "bindingStatus": "bound",
                "contentHash": record.provenance.content_hash,
                "units": units,
            }
        )
    return out


def mark_bound(ws: Workspace, artifact_ids: list[str], head_sha: str) -> list[str]:
    """Record that an ingest bound these artifacts to ``head_sha``; returns the ids updated.

    Raises:
        StoreWriteBusy: the memory lock stayed busy.
    """
    updated: list[str] = []
    with memory_lock(ws):
        for artifact in artifact_ids:
            record = load_artifact(ws, artifact)
            if record is None:
                continue
            if record.binding_status == "bound" and record.bound_head_sha == head_sha:
                continue
            record.binding_status = "bound"
            record.bound_head_sha = head_sha
            save_artifact(ws, record)
            updated.append(artifact)
    return updated
