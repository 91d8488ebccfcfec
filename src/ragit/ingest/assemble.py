"""What an ingest publishes, assembled from its plan: the commit's manifest, the new chunks'
rows (each chunk id once) and their vectors. The local and the shared-store paths
(:mod:`ragit.ingest.apply`, :mod:`ragit.ingest.shared`) both use these."""

from __future__ import annotations

import time
from datetime import datetime, timezone
from typing import Any

from ragit.ingest.plan import IngestPlan, Progress
from ragit.snapshot._git import GitRepo
from ragit.snapshot.manifest import INDEX_VERSION, ChunkScopes, Manifest, ManifestEmbedding


def _now() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")[:-4] + "Z"


def build_manifest(plan: IngestPlan, git: GitRepo, profile: Any) -> Manifest:
    info = profile.as_dict()
    return Manifest(
        index_version=INDEX_VERSION,
        commit_sha=plan.target,
        parent_sha=git.parent(plan.target),
        created_at=_now(),
        embedding=ManifestEmbedding(
            namespace_id=info["namespaceId"],
            provider=info["provider"],
            model=info["model"],
            dimensions=info["dimensions"],
        ),
        docs=[p.entry for p in plan.docs],
        chunk_scopes=ChunkScopes(
            session=plan.artifact_scopes.get("session", []),
            harness=plan.artifact_scopes.get("harness", []),
            evidence=plan.artifact_scopes.get("evidence", []),
        ),
        artifact_entries=plan.artifact_entries,
    )


def same_docs(a: Manifest, b: Manifest) -> bool:
    return (
        [d.model_dump() for d in a.docs] == [d.model_dump() for d in b.docs]
        and a.chunk_scopes == b.chunk_scopes
        and a.artifact_entries == b.artifact_entries
    )


def embed_rows(rows: list[Any], embedder: Any, progress: Progress) -> list[Any]:
    """Attach vectors to ``rows`` (each unique chunk embedded once).

    Each vector is kept as an ``array('f')`` (1 KiB at 256 dimensions instead of about
    8 KiB as a list of Python floats); the store holds float32 anyway, and a double
    narrows to the same float32 here as in zvec.
    """
    from array import array
    from dataclasses import replace

    out: list[Any] = []
    batch = 256
    started = time.monotonic()
    for i in range(0, len(rows), batch):
        part = rows[i : i + batch]
        vectors = embedder.embed([r.search_en for r in part])
        out.extend(replace(r, vector=array("f", v)) for r, v in zip(part, vectors, strict=True))
        # Every batch: the CLI redraws a terminal display in place and throttles lines.
        now = time.monotonic()
        done = min(i + batch, len(rows))
        rate = done / max(now - started, 1e-6)
        eta = (len(rows) - done) / max(rate, 1e-6)
        progress(f"embed: {done}/{len(rows)} chunks ({rate:.0f}/s, ETA {eta:.0f}s)")
    return out


def new_rows(plan: IngestPlan) -> dict[str, Any]:
    """The rows of the chunks this plan produced (each chunk id once)."""
    new_rows: dict[str, Any] = {}
    for doc in plan.docs:
        for row in doc.rows:
            new_rows.setdefault(row.chunk_id, row)
    for row in plan.artifact_rows:
        new_rows.setdefault(row.chunk_id, row)
    return new_rows
