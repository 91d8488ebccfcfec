"""Writing artifact records: the write half of :mod:`.artifacts` (which re-exports it).

Callers hold the memory writer lock (:func:`ragit.memory._store.memory_lock`)
around :func:`save_artifact`; :func:`mark_bound` takes it itself.
"""

from __future__ import annotations

from pathlib import Path

from ragit.memory._store import memory_lock, write_record
from ragit.memory.artifacts import ArtifactRecord, artifact_path, load_artifact
from ragit.security.masking import mask_json
from ragit.workspace import Workspace


def save_artifact(ws: Workspace, record: ArtifactRecord) -> Path:
    """Write a record atomically, re-masked (callers hold the memory lock)."""
    path = artifact_path(ws, record.artifact_id)
    assert path is not None
    masked, _count, _sources = mask_json(record.dump())
    write_record(path, masked)
    return path


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
