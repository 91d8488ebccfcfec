"""`ragit repair`'s storage action on the shared store (``store.backend = "postgres"``).

The embedded store's repairs (a missing or unreadable store directory, transaction
journals) have no counterpart on the server: its writes are transactions, and a killed
writer leaves nothing visible. What can still be wrong there, for this repository's
snapshots:

* ``vector_index_missing`` / ``vector_index_invalid`` — an embedding namespace of its
  snapshots lacks a usable HNSW graph (a bulk load or a graph build was killed; `doctor`'s
  ``store.vector-index``). Searches stay exact meanwhile; the repair builds the graph;
* ``snapshot_chunks_missing`` — a snapshot names chunks its namespace no longer stores
  (rows deleted behind RAGit's back: every publication checks its chunks are stored). The
  repair regenerates them from git objects, exactly as a store rebuild does (the manifest
  names each document's blob), embeds them with the configured profile and writes them;
  nothing is deleted and no snapshot is republished.

Both are planned as ``store-rebuild`` (reads only) and applied by :func:`repair_store`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ragit.config import RagitConfig
from ragit.ops.status.report import SharedStore
from ragit.workspace import Workspace

Progress = Callable[[str], None]
_BROKEN_GRAPH = ("missing", "invalid")


@dataclass
class SharedProblems:
    """What is wrong with the repository's snapshots on the server."""

    graphs: dict[str, dict[str, Any]] = field(default_factory=dict)  # namespace → facts
    unstored: dict[str, list[str]] = field(default_factory=dict)  # commit → chunk ids

    def reasons(self) -> list[str]:
        out = {f"vector_index_{n['state']}" for n in self.graphs.values()}
        if self.unstored:
            out.add("snapshot_chunks_missing")
        return sorted(out)

    def notes(self) -> list[str]:
        out = [
            f"builds the HNSW graph of embedding namespace {name} on the server "
            f"({facts['state']}; searches are exact meanwhile)"
            for name, facts in sorted(self.graphs.items())
        ]
        if self.unstored:
            count = len({cid for ids in self.unstored.values() for cid in ids})
            out.append(
                f"regenerates from git the {count} chunk(s) that {len(self.unstored)} "
                "snapshot(s) name and the server lacks; nothing is deleted or republished"
            )
        return out


def find_problems(shared: SharedStore) -> SharedProblems:
    """What :func:`repair_store` would repair (reads only).

    Raises:
        SnapshotStoreUnavailable: the server cannot be reached, refuses, or has a schema this
            RAGit does not read.
    """
    facts = shared.require()
    used = {s["namespace"] for s in facts["snapshots"]}
    graphs = {
        n["namespace"]: n
        for n in facts["namespaces"]
        if n["namespace"] in used and n["state"] in _BROKEN_GRAPH
    }
    return SharedProblems(graphs=graphs, unstored=shared.unstored())


def repair_store(ws: Workspace, cfg: RagitConfig, progress: Progress) -> list[str]:
    """Regenerate the chunks the repository's snapshots name and the server lacks, then build
    every missing or invalid graph of their namespaces. Returns warnings (snapshots whose
    chunks cannot be regenerated, with the ingest that re-indexes each).

    Raises:
        SnapshotStoreUnavailable: no server, refused, a role that cannot write.
        StoreWriteBusy: the connection was lost.
    """
    from ragit.embed.profile import resolve_profile
    from ragit.snapshot.manifest import parse_manifest
    from ragit.snapshot.repository import store_repository
    from ragit.store.lock import WriterLock

    profile = resolve_profile(cfg.embedding).as_dict()
    shared = SharedStore(ws, cfg)
    try:
        problems = find_problems(shared)
        facts = shared.require()
        manifests = {}
        for sha in problems.unstored:
            raw = shared.manifest(sha)
            if raw is not None:
                manifests[sha] = parse_manifest(sha, raw, f"postgres:{sha}")
    finally:
        shared.close()
    repository = store_repository(ws, cfg)
    namespace_of = {s["commitSha"]: s["namespace"] for s in facts["snapshots"]}
    warnings: list[str] = []
    with WriterLock.acquire(ws, command="store-rebuild", head_sha=None) as lock:
        warnings.extend(lock.warnings)
        ours = {}
        for sha, manifest in manifests.items():
            if namespace_of.get(sha) == profile["namespaceId"]:
                ours[sha] = manifest
                continue
            warnings.append(
                f"snapshot {sha} is in embedding namespace {namespace_of.get(sha)}, not the "
                f"configured profile's ({profile['namespaceId']}): its missing chunks cannot be "
                "embedded with that profile here; `ragit migrate embeddings` moves it into the "
                "configured namespace, embedding every chunk that namespace lacks"
            )
        if ours:
            wanted = {cid for sha in ours for cid in problems.unstored[sha]}
            warnings.extend(_restore_chunks(ws, cfg, repository, profile, ours, wanted, progress))
        for name, graph in sorted(problems.graphs.items()):
            progress(f"store: building the HNSW graph of {name}")
            _build_graph(cfg, repository, name, int(graph["dimensions"]))
    return warnings


def _restore_chunks(
    ws: Workspace,
    cfg: RagitConfig,
    repository: str,
    profile: dict[str, Any],
    manifests: dict[str, Any],
    wanted: set[str],
    progress: Progress,
) -> list[str]:
    """Regenerate ``wanted`` from the manifests' blobs, embed and write them."""
    from ragit.embed import build_embedder
    from ragit.ops.maintenance.rebuild import _embedded_batches, _regenerate
    from ragit.store.backend import store_backend
    from ragit.store.backend_write import open_writer

    rows, problems, _expected = _regenerate(ws, cfg, manifests, progress)
    rows = [row for row in rows if row.chunk_id in wanted]
    warnings: list[str] = []
    lost = wanted - {row.chunk_id for row in rows}
    if lost:
        stale = sorted(sha for sha, m in manifests.items() if m.all_chunk_ids() & lost)
        reasons = sorted({p["reason"] for p in problems}) or ["not regenerable from git"]
        warnings.extend(
            f"snapshot {sha}: {len(manifests[sha].all_chunk_ids() & lost)} missing chunk(s) "
            f"cannot be regenerated ({'; '.join(reasons)}); re-index it with: "
            f"ragit ingest --all --at {sha}"
            for sha in stale
        )
    embedder = build_embedder(ws.root, cfg.embedding, cfg.security, mode="cli")
    try:
        with open_writer(
            store_backend(cfg.store.backend),
            repository=repository,
            namespace=str(profile["namespaceId"]),
            dimensions=int(profile["dimensions"]),
        ) as writer:
            present = writer.existing(row.chunk_id for row in rows)
            rows = [row for row in rows if row.chunk_id not in present]
            progress(f"embed: 0/{len(rows)} chunks with {profile['provider']}")
            writer.expect(len(rows))
            for batch in _embedded_batches(rows, embedder, progress):
                writer.write(batch)
            writer.build_index()
    finally:
        embedder.close()
    return warnings


def _build_graph(cfg: RagitConfig, repository: str, namespace: str, dimensions: int) -> None:
    from ragit.store.backend import store_backend
    from ragit.store.backend_write import open_writer

    with open_writer(
        store_backend(cfg.store.backend),
        repository=repository,
        namespace=namespace,
        dimensions=dimensions,
    ) as writer:
        writer.build_index()
