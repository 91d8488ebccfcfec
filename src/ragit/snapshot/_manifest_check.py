"""The pydantic form of a manifest: the judge of a manifest that is not exactly what RAGit
writes (:func:`ragit.snapshot.manifest.parse_manifest` reads every other one without it).

Its fields mirror :class:`ragit.snapshot.manifest.Manifest`; tests/snapshot/test_manifest_records.py
checks both read the same documents the same way.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel


class _ManifestModel(BaseModel):
    model_config = ConfigDict(
        alias_generator=to_camel, populate_by_name=True, extra="allow", frozen=True
    )


class CheckedEmbedding(_ManifestModel):
    namespace_id: str
    provider: str
    model: str
    dimensions: int


class CheckedDoc(_ManifestModel):
    path: str
    document_id: str
    version_id: str
    doc_type: str
    blob_sha: str
    chunk_ids: list[str]


class CheckedScopes(_ManifestModel):
    durable: list[str] = Field(default_factory=list)
    session: list[str] = Field(default_factory=list)
    harness: list[str] = Field(default_factory=list)
    evidence: list[str] = Field(default_factory=list)


class CheckedManifest(_ManifestModel):
    index_version: int
    commit_sha: str
    parent_sha: str | None
    created_at: str
    embedding: CheckedEmbedding
    docs: list[CheckedDoc]
    chunk_scopes: CheckedScopes = Field(default_factory=CheckedScopes)
    artifact_entries: list[dict[str, Any]] = Field(default_factory=list)
