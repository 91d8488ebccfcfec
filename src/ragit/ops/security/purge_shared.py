"""`ragit security purge --target store` on the shared store (``store.backend =
"postgres"``, docs/team.md): the repository's snapshots on the server judged with the
current rules (:func:`plan_shared`), then the stale ones and the chunks only they cited
deleted in one server transaction, then the clone's copies of their manifests
(:func:`purge_shared`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ragit.config import RagitConfig
from ragit.contract.errors import RagitError
from ragit.ops.security.regenerate import Progress, plan_store
from ragit.ops.security.scan import pending_stale, record_stale, secret_labels
from ragit.workspace import Workspace

if TYPE_CHECKING:
    from ragit.store.backend import SharedReader
    from ragit.store.backend_write import SnapshotPurger


@dataclass
class Shared:
    """The shared store (``store.backend = "postgres"``) a purge reads and, applying, writes."""

    repository: str
    reader: SharedReader  # a read-only connection
    purger: SnapshotPurger | None  # None in a dry run

    def close(self) -> None:
        self.reader.close()
        if self.purger is not None:
            self.purger.close()


def open_shared(ws: Workspace, cfg: RagitConfig, *, apply: bool) -> Shared:
    """Connect to the shared store: applying, first as a role that may delete (checked
    before anything changes); then a read-only connection for the plan.

    Raises:
        SnapshotStoreUnavailable: no server, refused, another schema version, the client
            missing, a role without the privileges a purge needs, or a shallow clone
            without ``store.repository``.
    """
    from ragit.snapshot.repository import store_repository

    repository = store_repository(ws, cfg)
    from ragit.store.backend import store_backend
    from ragit.store.backend_write import open_purger

    backend = store_backend(cfg.store.backend)
    purger = open_purger(backend, repository) if apply else None
    try:
        reader = backend.open_reader()
    except BaseException:
        if purger is not None:
            purger.close()
        raise
    return Shared(repository, reader, purger)


@dataclass
class SharedPlan:
    repository: str
    indexed: set[str]  # the repository's commits on the server
    chunks: int  # distinct chunks the snapshots kept cite
    stale: dict[str, str]  # sha → reason
    bound: dict[str, tuple[int, str]]  # stale sha → (snapshot id, namespace)
    secret: dict[int, set[str]]  # namespace id → chunks of stale snapshots holding a secret
    orphans: int  # chunks deleting the stale snapshots leaves unused (deleted)
    elsewhere: int  # secret chunks another repository's snapshots cite (kept)
    notes: list[str]  # warnings of the plan (but :func:`_elsewhere`)


def _snapshot_path(repository: str, sha: str | None = None) -> str:
    return f"postgres:{repository}" + (f":{sha}" if sha else "")


def plan_shared(ws: Workspace, cfg: RagitConfig, shared: Shared, progress: Progress) -> SharedPlan:
    """The repository's snapshots on the server, judged with the current rules (reads only).

    Their manifests are regenerated from git as the local store's are (:func:`plan_store`);
    a chunk that cannot be regenerated clean is then read back from the server, and a
    snapshot is stale when such a chunk's stored text holds a secret the current masking
    rules catch. A chunk that cannot be regenerated here for another reason (a chunker
    change, an artifact record this clone lacks, a blob it cannot read) but holds no secret
    is kept: the server serves every clone, and deleting a clean snapshot would only cost
    them a re-ingest.
    """
    from ragit.snapshot.manifest import parse_manifest

    snapshots = shared.reader.snapshots(shared.repository)
    manifests: dict[str, Any] = {}
    for snap in snapshots:
        try:
            manifests[snap.commit_sha] = parse_manifest(
                snap.commit_sha, snap.manifest, "the shared store"
            )
        except RagitError:
            continue  # every chunk it cites is read back below
    regenerated = plan_store(ws, cfg, progress, manifests)
    good = {row.chunk_id for row in regenerated.rows}
    suspects: dict[int, set[str]] = {}
    for snap in snapshots:
        suspects.setdefault(snap.namespace_id, set()).update(set(snap.chunk_ids) - good)
    secret: dict[int, set[str]] = {}
    for namespace_id, ids in sorted(suspects.items()):
        texts = shared.reader.chunk_texts(namespace_id, ids)
        secret[namespace_id] = {
            cid
            for cid, fields in texts.items()
            if any(secret_labels(value) for value in fields.values())
        }
    stale: dict[str, str] = {}
    bound: dict[str, tuple[int, str]] = {}
    cited: dict[int, set[str]] = {}
    kept: list[str] = []
    for snap in snapshots:
        hits = set(snap.chunk_ids) & secret.get(snap.namespace_id, set())
        if not hits:
            if set(snap.chunk_ids) - good:
                kept.append(snap.commit_sha)
            continue
        why = regenerated.stale.get(snap.commit_sha)
        stale[snap.commit_sha] = (
            f"{len(hits)} stored chunk(s) hold a secret the current masking rules catch"
            + (f" ({why})" if why else "")
        )
        bound[snap.commit_sha] = (snap.snapshot_id, snap.namespace)
        cited.setdefault(snap.namespace_id, set()).update(hits)
    notes: list[str] = []
    if kept:
        notes.append(
            f"{len(kept)} snapshot(s) cite chunks this clone cannot regenerate from git "
            "(another chunker, artifact records or blobs it lacks) that hold no secret under "
            "the current rules: kept"
        )
    if ws.store_dir.exists():
        notes.append(
            f"{ws.relative(ws.store_dir)} (the embedded store, unused while store.backend is "
            "postgres) was not purged: delete it, or purge it with store.backend = zvec"
        )
    remaining: set[tuple[int, str]] = set()
    for snap in snapshots:
        if snap.commit_sha not in stale:
            remaining.update((snap.namespace_id, cid) for cid in snap.chunk_ids)
    orphans = shared.reader.orphan_chunks([bound[sha][0] for sha in sorted(bound)])
    return SharedPlan(
        repository=shared.repository,
        indexed={snap.commit_sha for snap in snapshots},
        chunks=len(remaining),
        stale=stale,
        bound=bound,
        secret=cited,
        orphans=sum(len(ids) for ids in orphans.values()),
        elsewhere=shared.reader.cited_elsewhere(shared.repository, cited),
        notes=notes,
    )


def plan_shared_items(ws: Workspace, plan: SharedPlan) -> tuple[list[dict[str, Any]], list[str]]:
    """The planned items and warnings of a shared-store plan."""
    planned: list[dict[str, Any]] = []
    warnings: list[str] = []
    if not plan.indexed:
        return planned, warnings
    planned.append(
        {
            "target": "store",
            "action": "purge",
            "path": _snapshot_path(plan.repository),
            "chunks": plan.orphans,
        }
    )
    for sha, reason in sorted(plan.stale.items()):
        item = {
            "target": "store",
            "action": "delete",
            "path": _snapshot_path(plan.repository, sha),
            "reason": reason,
        }
        if ws.manifest_path(sha).exists():
            item["manifest"] = ws.relative(ws.manifest_path(sha))
        planned.append(item)
    return planned, plan.notes + _elsewhere(plan.elsewhere)


def _elsewhere(count: int) -> list[str]:
    if not count:
        return []
    return [
        f"{count} chunk(s) holding a secret are also cited by snapshots of other repositories "
        "on the shared store and were kept: each of those repositories must run: "
        "ragit security purge --target store"
    ]


def purge_shared(
    ws: Workspace, shared: Shared, plan: SharedPlan
) -> tuple[list[str], dict[str, Any], list[str], set[str]]:
    """Delete the stale snapshots of the repository on the shared store and the chunks only
    they cited (one server transaction), then their local manifest files; returns (deleted
    paths, store summary, warnings, the commits still indexed on the server)."""
    from ragit._fs import fsync_dir

    # Recorded first, so a purge killed at any point still names the commits to re-index.
    earlier = pending_stale(ws, plan.indexed)
    record_stale(ws, {**earlier, **plan.stale})
    assert shared.purger is not None  # applying: open_shared connected it
    result = shared.purger.purge(plan.bound, plan.secret)
    deleted = [_snapshot_path(plan.repository, sha) for sha in result.deleted]
    # The local copies of the deleted snapshots' manifests go after the server's commit
    # (also those of a purge killed after it: recorded, no longer on the server).
    for sha in sorted(set(result.deleted) | set(earlier)):
        path = ws.manifest_path(sha)
        if path.exists():
            path.unlink()
            deleted.append(ws.relative(path))
    if len(deleted) > len(result.deleted):
        fsync_dir(ws.manifest_dir)
    warnings = [
        f"snapshot {sha} was published again while the purge ran and was left as it is: "
        "run the purge again to check it"
        for sha in result.changed
    ]
    warnings.extend(plan.notes + _elsewhere(result.elsewhere))
    indexed = plan.indexed - set(result.deleted)
    summary = {
        "backend": "postgres",
        "repository": plan.repository,
        "manifests": len(indexed),
        "chunks": plan.chunks,
        "deletedChunks": result.chunks,
    }
    return deleted, summary, warnings, indexed
