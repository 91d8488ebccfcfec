"""`ragit ingest` on the shared store (``store.backend = "postgres"``, docs/team.md): the
snapshots planning reads, the dry run's count, an unchanged commit's check, and applying a
plan (the chunks the server lacks embedded and written, then the snapshot published in one
transaction, then the local manifest file)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from ragit.config import RagitConfig
from ragit.contract.errors import RagitError
from ragit.ingest.assemble import embed_rows, new_rows, same_docs
from ragit.ingest.plan import IngestPlan, Progress
from ragit.snapshot._git import GitRepo
from ragit.snapshot.manifest import Manifest
from ragit.store.backend import SharedSource, store_backend
from ragit.workspace import Workspace


def server_source(ws: Workspace, cfg: RagitConfig) -> SharedSource | None:
    """With a shared backend (``store.backend = "postgres"``): the shared store's snapshots,
    where planning finds a base the clone has no manifest file of (nothing connects before
    the first call); None for the embedded store."""
    backend = store_backend(cfg.store.backend)
    if not backend.shared:
        return None
    head = GitRepo(ws.root).head().sha
    return backend.server(ws, _repository(ws, cfg, head or ""))


def count_missing_shared(
    server: SharedSource,
    plan: IngestPlan,
    manifest: Manifest,
    profile: dict[str, Any],
    replan_fresh: Callable[[], tuple[IngestPlan, Manifest]],
) -> tuple[IngestPlan, int]:
    """A dry run on the shared store: the plan and the count of chunks the ingest would
    embed, decided as :func:`apply_shared` decides them, against the chunks the server
    holds (read-only: nothing is written locally or on the server).

    Raises:
        SnapshotStoreUnavailable: no server, refused (naming the commit).
    """
    namespace = str(profile["namespaceId"])
    rows = new_rows(plan)
    present = server.stored(namespace, manifest.all_chunk_ids(), plan.target)
    if manifest.all_chunk_ids() - present - rows.keys():
        plan, manifest = replan_fresh()  # the real ingest reads those documents again
        rows = new_rows(plan)
        present = server.stored(namespace, rows.keys(), plan.target)
    return plan, sum(1 for chunk_id in rows if chunk_id not in present)


def served_unchanged(server: SharedSource, manifest: Manifest) -> bool:
    """Whether the shared store (``server``) holds a snapshot of the
    manifest's commit for this repository whose manifest is valid and has the same documents.

    Raises:
        SnapshotStoreUnavailable: no server, refused (naming the commit).
    """
    sha = manifest.commit_sha
    raw = server.manifest(sha)
    if raw is None:
        return False
    from ragit.snapshot.manifest import parse_manifest

    try:
        served = parse_manifest(sha, raw, f"postgres:{sha}")
    except RagitError:
        return False
    return same_docs(served, manifest)


def _repository(ws: Workspace, cfg: RagitConfig, sha: str) -> str:
    """The repository's name on the shared store (:mod:`ragit.snapshot.repository`).

    Raises:
        SnapshotStoreUnavailable: unset in a shallow clone (naming ``sha``).
    """
    from ragit.contract.errors import SnapshotStoreUnavailable
    from ragit.snapshot.repository import store_repository

    try:
        return store_repository(ws, cfg)
    except SnapshotStoreUnavailable as exc:
        raise exc.naming(sha) from None


def finish_graph(ws: Workspace, cfg: RagitConfig, profile: dict[str, Any], sha: str) -> None:
    """An unchanged commit on the shared store: build the namespace's HNSW graph when a bulk
    load left it missing or invalid (a loader or a build killed before the end), unless a load
    is still running; `doctor`'s ``store.vector-index`` names this ingest as the recovery.

    Raises:
        SnapshotStoreUnavailable: no server, refused (naming ``sha``).
    """
    from ragit.contract.errors import SnapshotStoreUnavailable
    from ragit.store.backend_write import open_writer

    try:
        with open_writer(
            store_backend(cfg.store.backend),
            repository=_repository(ws, cfg, sha),
            namespace=str(profile["namespaceId"]),
            dimensions=int(profile["dimensions"]),
        ) as writer:
            writer.build_index()
    except SnapshotStoreUnavailable as exc:
        raise exc.naming(sha) from None


def apply_shared(
    ws: Workspace,
    cfg: RagitConfig,
    plan: IngestPlan,
    manifest: Manifest,
    embedder: Any,
    progress: Progress,
    replan_fresh: Callable[[], tuple[IngestPlan, Manifest]],
) -> tuple[IngestPlan, int, int, int, list[str]]:
    """Apply to the shared store (``store.backend = "postgres"``, docs/team.md).

    Documents the plan carries over from local manifests are checked against the server: when
    it lacks some of their chunks (the manifests were made by a zvec ingest, or for another
    server), the commit is planned again without reuse, so those chunks are written too.

    Under the local writer lock (one ingest per worktree; selection reports it as running):
    the chunks the server lacks are embedded and written in batches, then the manifest's
    bytes and every chunk id it names are published in one transaction, and only then the
    local manifest file is written. A writer killed before the publication leaves the
    commit's previous snapshot on the server answering (the chunks it wrote stay, unused,
    and are skipped by the next ingest).
    """
    from ragit import _faults as faults
    from ragit.contract.errors import SnapshotStoreUnavailable
    from ragit.snapshot.manifest import write_manifest
    from ragit.store.backend_write import open_writer
    from ragit.store.lock import WriterLock

    profile = embedder.profile.as_dict()
    try:
        # Connect first: an unreachable server fails the ingest before anything local moves.
        writer = open_writer(
            store_backend(cfg.store.backend),
            repository=_repository(ws, cfg, plan.target),
            namespace=str(profile["namespaceId"]),
            dimensions=int(profile["dimensions"]),
        )
    except SnapshotStoreUnavailable as exc:
        raise exc.naming(plan.target) from None
    with writer, WriterLock.acquire(ws, command="ingest", head_sha=plan.target) as lock:
        warnings = list(lock.warnings)
        rows = list(new_rows(plan).values())
        t0 = time.monotonic()
        try:
            wanted = manifest.all_chunk_ids()
            present = writer.existing(wanted)
            if wanted - present - {r.chunk_id for r in rows}:
                progress("plan: the shared store lacks chunks of reused documents; reading them")
                plan, manifest = replan_fresh()
                rows = list(new_rows(plan).values())
                present = writer.existing(r.chunk_id for r in rows)
            candidates = [r for r in rows if r.chunk_id not in present]
            store_ms = int((time.monotonic() - t0) * 1000)
            t1 = time.monotonic()
            if candidates:
                progress(f"embed: 0/{len(candidates)} new chunks with {profile['provider']}")
            embedded_rows = embed_rows(candidates, embedder, progress)
            embed_ms = int((time.monotonic() - t1) * 1000)
            t2 = time.monotonic()
            progress(f"store: 0/2 steps: writing {len(embedded_rows)} chunks to the shared store")
            # Announced before the batches: a load that is large for the namespace goes in
            # without the HNSW graph, which the publication builds once over every row.
            writer.expect(len(embedded_rows))
            writer.write(embedded_rows)
            faults.reach("shared-chunks-written")
            progress("store: 1/2 steps: publishing the snapshot")
            writer.publish(plan.target, manifest.to_json_bytes(), manifest.all_chunk_ids())
            progress("store: 2/2 steps: published")
        except SnapshotStoreUnavailable as exc:
            raise exc.naming(plan.target) from None
        write_manifest(ws, manifest)
        store_ms += int((time.monotonic() - t2) * 1000)
    return plan, embed_ms, store_ms, len(embedded_rows), warnings
