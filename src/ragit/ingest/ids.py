"""Content-addressed identifiers (docs/contract.md §5).

A chunk id derives from the chunker version, the chunk's heading path and its
normalized text — never from the commit — so an unchanged section has the same
id in every snapshot and costs nothing to ingest again. It does not depend on
the embedding profile either: the store holds one profile at a time and
``migrate embeddings`` re-embeds the same ids without rewriting manifests.

Ids are the first 16 hex digits (64 bits) of a SHA-256. At a million distinct
chunks the chance of any collision is about 3e-8; the short form keeps a
manifest of 18k chunks near 0.5 MB (contract §5 targets).
"""

from __future__ import annotations

import hashlib

CHUNKER_VERSION = "c3"  # c3: windows start at sentences, never on link definitions
ID_HEX = 16


def _h(*parts: str) -> str:
    digest = hashlib.sha256("\x00".join(parts).encode("utf-8", "surrogatepass"))
    return digest.hexdigest()[:ID_HEX]


def document_id(path: str) -> str:
    """Stable id of a repository path."""
    return _h("doc", path)


def version_id(doc_id: str, blob_sha: str) -> str:
    """Id of one version (blob) of a document."""
    return _h("ver", doc_id, blob_sha, CHUNKER_VERSION)


def chunk_id(heading_path: tuple[str, ...], normalized_text: str) -> str:
    """Content-addressed chunk id, shared across documents and snapshots."""
    return _h("chunk", CHUNKER_VERSION, "\x1f".join(heading_path), normalized_text)
