"""Writing artifact records: the write half of :mod:`.catalog`.

Callers hold the memory writer lock (:func:`ragit.artifacts.lock.memory_lock`)
around :func:`save_artifact`. Readers never import this module.
"""

from __future__ import annotations

from pathlib import Path

from ragit.artifacts.catalog import ArtifactRecord, artifact_path
from ragit.artifacts.storage import write_record
from ragit.security.masking import mask_json
from ragit.workspace import Workspace


def save_artifact(ws: Workspace, record: ArtifactRecord) -> Path:
    """Write a record atomically, re-masked (callers hold the memory lock)."""
    path = artifact_path(ws, record.artifact_id)
    assert path is not None
    masked, _count, _sources = mask_json(record.dump())
    write_record(path, masked)
    return path
