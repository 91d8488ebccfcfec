"""``ragit migrate embeddings`` on the shared store (``store.backend = "postgres"``,
docs/team.md).

A snapshot on the server is a commit of a repository bound to its manifest's exact bytes
in one embedding namespace; chunks are stored once per namespace, keyed by their
content-addressed id, and never rewritten. Migrating a repository to the configured
profile is therefore, for each of its snapshots in another namespace (oldest publication
first): read the documents whose chunks the target namespace lacks back from git objects,
masked and chunked exactly as ingest did (:func:`ragit.ops.maintenance.rebuild._regenerate`), embed
only those chunks, write them in batches, then republish the commit with the same manifest
bytes in the target namespace — one transaction (:meth:`SnapshotWriter.publish
<ragit.store.backend_write.SnapshotWriter.publish>`): a reader sees the old binding or the new
one, never a mix, and a killed migration leaves every snapshot answering; running it again
continues where it stopped (chunks already written are not embedded again, snapshots
already in the target are skipped).

A snapshot whose documents cannot be regenerated (chunked by another chunker, a blob that
no longer decodes) is left as it is and listed with the ``ragit ingest --all --at <sha>``
that re-indexes it. Other repositories' snapshots are never touched, and the old
namespace's chunks stay (other repositories may read them). Locally, manifests are never
rewritten and no ``.ragit/store`` is created: only the local writer lock (as ingest takes
it, under ``.ragit/runtime``) and the embedding cache change.

Fault phase (:mod:`ragit._faults`, test-only): ``migrate-snapshot-published`` (a snapshot
republished in the target namespace, the next one not started).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ragit.config import RagitConfig
from ragit.contract.errors import RagitError
from ragit.workspace import Workspace

if TYPE_CHECKING:
    from ragit.store.backend import SharedReader

Progress = Callable[[str], None]


@dataclass
class SharedPlan:
    """What a migration of one repository's server snapshots finds (read-only)."""

    repository: str
    target: dict[str, Any]
    current: dict[str, Any] | None = None
    manifests: int = 0
    documents: int = 0
    chunks: int = 0
    to_migrate: list[str] = field(default_factory=list)  # commit SHAs, oldest first
    namespaces: set[str] = field(default_factory=set)  # the namespaces they are in
    chunks_to_embed: int = 0
    invalid: list[dict[str, str]] = field(default_factory=list)

    def data(self, *, dry_run: bool) -> dict[str, Any]:
        """The command's data (the keys ``migrate embeddings`` reports on either backend,
        and the shared store's own)."""
        return {
            "mode": "dry-run" if dry_run else "apply",
            "backend": "postgres",
            "repository": self.repository,
            "currentContract": self.current,
            "targetContract": self.target,
            "manifests": self.manifests,
            "documents": self.documents,
            "chunks": self.chunks,
            "migrationNeeded": bool(self.to_migrate),
            "migrated": False,
            "snapshotsToMigrate": len(self.to_migrate),
            "namespacesToMigrate": len(self.namespaces),
            "chunksToEmbed": self.chunks_to_embed,
            "invalidManifests": self.invalid,
        }


def _open_reader(cfg: RagitConfig) -> SharedReader:
    """A read-only connection to the server the environment names.

    Raises:
        SnapshotStoreUnavailable: no server, refused, another schema, no client (masked).
    """
    from ragit.store.backend import store_backend

    return store_backend(cfg.store.backend).open_reader()


def _parse(sha: str, raw: bytes) -> Any:
    """The server's manifest bytes as selection and status parse them.

    Raises:
        CorruptError: the bytes are not a valid manifest of ``sha``.
    """
    from ragit.snapshot.manifest import parse_manifest

    return parse_manifest(sha, raw, f"postgres:{sha}")


def plan_shared(ws: Workspace, cfg: RagitConfig, reader: SharedReader) -> SharedPlan:
    """Count this repository's server snapshots and find those outside the configured
    profile's namespace, over ``reader`` (read-only: writes nothing anywhere).

    Raises:
        SnapshotStoreUnavailable: the server refused or went away; a shallow clone
            without ``store.repository``.
        StoreReadBusy: the connection was lost (retryable).
        InputInvalid: the configured embedding profile is invalid.
    """
    from ragit.embed import complete_profile, resolve_profile
    from ragit.snapshot.repository import store_repository

    target = resolve_profile(cfg.embedding).as_dict()
    plan = SharedPlan(repository=store_repository(ws, cfg), target=target)
    published = reader.published(plan.repository)
    versions: set[str] = set()
    chunk_ids: set[str] = set()
    missing: set[str] = set()
    latest_other: dict[str, Any] | None = None
    latest: dict[str, Any] | None = None
    for row in published:
        snapshot = reader.snapshot(plan.repository, row.commit_sha)
        if snapshot is None:  # republished or gone since the listing: read it as it is now
            continue
        embedding = complete_profile(snapshot.embedding, cfg.embedding)
        latest = embedding
        try:
            manifest = _parse(row.commit_sha, snapshot.manifest)
        except RagitError as exc:
            plan.invalid.append({"sha": row.commit_sha, "code": exc.code, "reason": exc.message})
            continue
        plan.manifests += 1
        versions.update(doc.version_id for doc in manifest.docs)
        ids = manifest.all_chunk_ids()
        chunk_ids |= ids
        if snapshot.namespace != target["namespaceId"]:
            plan.to_migrate.append(row.commit_sha)
            plan.namespaces.add(snapshot.namespace)
            latest_other = embedding
            missing |= ids
    plan.current = latest_other if latest_other is not None else latest
    plan.documents = len(versions)
    plan.chunks = len(chunk_ids)
    if missing:
        plan.chunks_to_embed = len(missing - reader.stored(target["namespaceId"], missing))
    return plan


def migrate_shared(
    ws: Workspace, cfg: RagitConfig, *, dry_run: bool, progress: Progress
) -> tuple[dict[str, Any], list[str]]:
    """Plan, and unless ``dry_run`` apply, the migration of this repository's server
    snapshots to the configured embedding profile. Returns the data and the warnings.

    Raises:
        SnapshotStoreUnavailable: no server, refused (masked), a role that cannot write
            (``cannot write to the shared store``), an old schema, the client missing.
        StoreReadBusy, StoreWriteBusy: the server interrupted a read or a write (retryable;
            what was republished stays, a rerun continues).
        StoreWriteBusy, StoreWriteLockStale: another local writer holds the lock.
    """
    reader = _open_reader(cfg)
    try:
        plan = plan_shared(ws, cfg, reader)
        data = plan.data(dry_run=dry_run)
        warnings = [
            f"the manifest of {bad['sha']} on the shared store is invalid ({bad['reason']}); "
            f"re-index it with: ragit ingest --all --at {bad['sha']}"
            for bad in plan.invalid
        ]
        if dry_run or not plan.to_migrate:
            return data, warnings
        result = _apply(ws, cfg, plan, reader, progress)
    finally:
        reader.close()
    data.update(
        migrated=True,
        snapshotsMigrated=result["migrated"],
        embedded=result["embedded"],
        staleSnapshots=result["stale"],
    )
    return data, warnings + result["warnings"]


def _apply(
    ws: Workspace, cfg: RagitConfig, plan: SharedPlan, reader: SharedReader, progress: Progress
) -> dict[str, Any]:
    from ragit import _faults as faults
    from ragit.embed import build_embedder
    from ragit.ops.maintenance.rebuild import _embedded_batches, _regenerate
    from ragit.store.backend import store_backend
    from ragit.store.backend_write import open_writer
    from ragit.store.lock import WriterLock

    target = plan.target
    # Connect as a writer first: a role that cannot write fails before anything is
    # embedded or any local file moves.
    writer = open_writer(
        store_backend(cfg.store.backend),
        repository=plan.repository,
        namespace=str(target["namespaceId"]),
        dimensions=int(target["dimensions"]),
    )
    embedder = build_embedder(ws.root, cfg.embedding, cfg.security, mode="cli")
    migrated = embedded = 0
    stale: list[dict[str, str]] = []
    with writer, WriterLock.acquire(ws, command="migrate-embeddings", head_sha=None) as lock:
        warnings = list(lock.warnings)
        total = len(plan.to_migrate)
        for n, sha in enumerate(plan.to_migrate, 1):
            snapshot = reader.snapshot(plan.repository, sha)
            if snapshot is None or snapshot.namespace == target["namespaceId"]:
                continue  # republished meanwhile (an ingest, another migration)
            raw = bytes(snapshot.manifest)
            manifest = _parse(sha, raw)
            ids = manifest.all_chunk_ids()
            lacking = ids - writer.existing(ids)
            rows: list[Any] = []
            if lacking:
                # Only the documents (and bound artifacts) with a chunk the target lacks.
                needed = manifest.model_copy(
                    update={
                        "docs": [d for d in manifest.docs if lacking & set(d.chunk_ids)],
                        "artifact_entries": [
                            e
                            for e in manifest.artifact_entries
                            if lacking & {str(c) for c in e.get("chunkIds", [])}
                        ],
                    }
                )
                produced, problems, _expected = _regenerate(ws, cfg, {sha: needed}, progress)
                got = {row.chunk_id for row in produced}
                if problems or lacking - got:
                    reason = "; ".join(sorted({p["reason"] for p in problems})) or (
                        "chunks of the manifest are not produced by its documents"
                    )
                    recovery = f"ragit ingest --all --at {sha}"
                    stale.append({"commitSha": sha, "reason": reason, "recovery": recovery})
                    warnings.append(
                        f"snapshot {sha} cannot be regenerated from git objects ({reason}); "
                        f"it stays in its namespace; re-index it with: {recovery}"
                    )
                    continue
                rows = [row for row in produced if row.chunk_id in lacking]
            progress(f"migrate: {n}/{total} snapshots: {sha[:12]}, {len(rows)} chunks to embed")
            writer.expect(len(rows))
            for batch in _embedded_batches(rows, embedder, progress):
                writer.write(batch)
                embedded += len(batch)
            writer.publish(sha, raw, ids)
            migrated += 1
            faults.reach("migrate-snapshot-published")
    embedder.close()
    progress(f"migrate: {migrated} snapshots republished, {len(stale)} left as they are")
    return {"migrated": migrated, "embedded": embedded, "stale": stale, "warnings": warnings}
