"""Stable citations (contract §7, docs/reference/retrieval.md).

``id = "cite-" + first 24 hex of sha256(sourceType NUL sourceId NUL sourceVersion)``:
never derived from the query, rank, score, time or view, so the same chunk of
the same document version is cited identically in every snapshot that holds it.
"""

from __future__ import annotations

import hashlib
from typing import Any


def citation_id(source_type: str, source_id: str, source_version: str) -> str:
    """The bit-exact citation id (test vectors live in the conformance suite)."""
    raw = f"{source_type}\x00{source_id}\x00{source_version}".encode()
    return "cite-" + hashlib.sha256(raw).hexdigest()[:24]


def document_citation(chunk_id: str, version_id: str, snapshot_sha: str | None) -> dict[str, Any]:
    """Citation of a snapshot document chunk."""
    return {
        "id": citation_id("document", chunk_id, version_id),
        "sourceType": "document",
        "sourceId": chunk_id,
        "sourceVersion": version_id,
        "sourceSha": snapshot_sha,
    }
