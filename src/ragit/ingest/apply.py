"""`ragit ingest`: plan, then (unless dry-run) apply under the writer lock (contract §6).

:func:`run_ingest` validates the request, plans (:mod:`ragit.ingest.plan`, reads
only) and reports; a dry-run stops there. Apply takes the writer lock, recovers
leftover journals, embeds new chunks with zvec closed, then inserts, verifies,
publishes the manifest atomically and publishes a new store generation; artifacts
bound by ``--scope all`` are marked bound afterwards.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from ragit.config import RagitConfig
from ragit.contract.errors import RagitError
from ragit.ingest.assemble import build_manifest, embed_rows, new_rows, same_docs
from ragit.ingest.plan import IngestPlan, Progress, plan_ingest
from ragit.ingest.request import IngestRequest, validate_request
from ragit.ingest.shared import (
    apply_shared,
    count_missing_shared,
    finish_graph,
    served_unchanged,
    server_source,
)
from ragit.snapshot._git import GitRepo
from ragit.snapshot.manifest import (
    Manifest,
    manifest_exists,
)
from ragit.store.backend import SharedSource
from ragit.workspace import Workspace

PRECHECK_MIN_ROWS = 64


def run_ingest(
    ws: Workspace, cfg: RagitConfig, req: IngestRequest, progress: Progress
) -> dict[str, Any]:
    """Plan and (unless dry-run) apply an ingest; returns the `ingest` data (contract §6).

    Raises:
        typed RAGit errors for every precondition of contract §6.
    """
    t_start = time.monotonic()
    validate_request(req)
    planned_on = _store_identity(ws)
    server = server_source(ws, cfg)
    try:
        return _run(ws, cfg, req, progress, t_start, planned_on, server)
    finally:
        if server is not None:
            server.close()


def _run(
    ws: Workspace,
    cfg: RagitConfig,
    req: IngestRequest,
    progress: Progress,
    t_start: float,
    planned_on: str | None,
    server: SharedSource | None,
) -> dict[str, Any]:
    from ragit import _faults as faults
    from ragit.embed import build_embedder

    plan = plan_ingest(ws, cfg, req, progress, server=server)
    git = GitRepo(ws.root)
    embedder = build_embedder(
        ws.root, cfg.embedding, cfg.security, mode="dry-run" if req.dry_run else "cli"
    )
    manifest = build_manifest(plan, git, embedder.profile)
    _check_store_profile(ws, embedder.profile.as_dict(), plan, dry_run=req.dry_run)
    noop = plan.existing_target is not None and same_docs(plan.existing_target, manifest)
    if noop and server is not None and not served_unchanged(server, manifest):
        # The local manifest's snapshot is not (or no longer) on the server, or the server's
        # row is damaged: publishing again is the recovery doctor names.
        noop = False
    data = _report(ws, req, plan, noop)

    def replan_fresh() -> tuple[IngestPlan, Manifest]:
        """Plan again without carrying documents over from indexed manifests."""
        again = plan_ingest(ws, cfg, req, progress, reuse_documents=False, server=server)
        return again, build_manifest(again, git, embedder.profile)

    if req.dry_run:
        if server is not None:
            planned = plan
            plan, embedded = count_missing_shared(
                server, plan, manifest, embedder.profile.as_dict(), replan_fresh
            )
            plan.blockers.extend(b for b in planned.blockers if b not in plan.blockers)
            warnings = data["warnings"]
            data = _report(ws, req, plan, noop)
            data["warnings"] = [*warnings, *(w for w in plan.warnings if w not in warnings)]
        else:
            embedded = _count_missing(ws, list(new_rows(plan)))
        _dry_run_lock_blockers(ws, data)
        data["embedded"] = embedded
        data["wouldFail"] = bool(data["blockers"])
        data["timings"]["totalMs"] = int((time.monotonic() - t_start) * 1000)
        return data
    if noop:
        if server is not None:  # a shared backend
            finish_graph(ws, cfg, embedder.profile.as_dict(), plan.target)
        if _residue_left(ws):
            # The snapshot is unchanged, but a crashed writer may have committed this very
            # manifest without publishing its chunks: only a writer finishes that.
            data["warnings"].extend(_recover_residue(ws, plan.target))
        data["timings"]["totalMs"] = int((time.monotonic() - t_start) * 1000)
        return data
    faults.reach("ingest-planned")

    def replan() -> tuple[IngestPlan, Manifest]:
        again = plan_ingest(ws, cfg, req, progress, server=server)
        return again, build_manifest(again, git, embedder.profile)

    if server is not None:  # a shared backend
        # Planning's connection is not held while the chunks are embedded (a plan made again
        # under the lock reconnects); the writer has its own.
        server.close()
        plan, embed_ms, store_ms, embedded, lock_warnings = apply_shared(
            ws, cfg, plan, manifest, embedder, progress, replan_fresh
        )
    else:
        plan, embed_ms, store_ms, embedded, lock_warnings = _apply(
            ws, plan, manifest, embedder, progress, planned_on, replan
        )
    if plan.artifact_entries:
        from ragit.artifacts.binding import mark_bound

        bound = [str(e["artifactId"]) for e in plan.artifact_entries]
        mark_bound(ws, bound, plan.target)
    warnings = data["warnings"]
    data = _report(ws, req, plan, noop=False)
    data["warnings"] = [*warnings, *(w for w in plan.warnings if w not in warnings)]
    data["warnings"].extend(lock_warnings)
    data["embedded"] = embedded
    data["timings"] = {
        "totalMs": int((time.monotonic() - t_start) * 1000),
        "embedMs": embed_ms,
        "storeMs": store_ms,
    }
    return data


def _store_identity(ws: Workspace) -> str | None:
    """Which store a plan's reuse decisions were made against (``storeId``; None: none)."""
    from ragit.store.meta import read_meta

    try:
        meta = read_meta(ws)
    except RagitError:
        return None
    return meta.store_id if meta is not None else None


def _plan_still_valid(ws: Workspace, plan: IngestPlan, planned_on: str | None) -> bool:
    """Under the writer lock: whether the chunks the plan reuses are still in the store.

    Only a store replacement (rebuild, migration, purge: a new ``storeId``) removes chunks
    that manifests reference, and only a purge deletes manifests; a plan made before either
    must be made again.
    """
    if _store_identity(ws) != planned_on:
        return False
    return all(manifest_exists(ws, source.commit_sha) for source in plan.reuse_sources)


def _report(ws: Workspace, req: IngestRequest, plan: IngestPlan, noop: bool) -> dict[str, Any]:
    return {
        "mode": "dry-run" if req.dry_run else "apply",
        "commitSha": plan.target,
        "manifestPath": ws.relative(ws.manifest_path(plan.target)),
        "fullSnapshot": req.mode != "partial",
        "baseMode": plan.base_mode,
        "baseSha": plan.base_sha,
        "scope": req.scope,
        "documents": len(plan.docs),
        "processed": sum(1 for d in plan.docs if not d.reused),
        "reused": sum(1 for d in plan.docs if d.reused),
        "skipped": len(plan.skipped),
        "skippedFiles": plan.skipped,
        "embedded": 0,
        "masked": plan.masked,
        "plannedFiles": sorted(d.entry.path for d in plan.docs if not d.reused),
        "deletedDocumentIds": plan.removed_ids,
        "dirtyCandidates": plan.dirty,
        "wouldFail": bool(plan.blockers),
        "blockers": plan.blockers,
        "noop": noop,
        "admission": plan.admission.dump(),
        "boundArtifactIds": [str(e["artifactId"]) for e in plan.artifact_entries],
        "timings": {"totalMs": 0, "embedMs": 0, "storeMs": 0},
        "outsideSurface": plan.outside,
        "configSource": plan.config_source,
        "warnings": list(plan.warnings),
    }


def _referenced_now(ws: Workspace, manifest_ids: set[str]) -> set[str]:
    """The chunk ids to record as referenced: the new manifest's (``manifest_ids``), and once
    for a store that has no record yet (made by an older RAGit), every retained manifest's."""
    from ragit.snapshot.manifest import list_manifest_shas, load_manifest
    from ragit.store.meta import REFERENCED_NAME

    ids = set(manifest_ids)
    if (ws.store_dir / REFERENCED_NAME).exists():
        return ids
    for sha in list_manifest_shas(ws):
        try:
            ids |= load_manifest(ws, sha).all_chunk_ids()
        except RagitError:
            continue  # doctor reports an unreadable manifest
    return ids


def _check_store_profile(
    ws: Workspace, profile: dict[str, Any], plan: IngestPlan, *, dry_run: bool
) -> None:
    """A store holding another embedding profile must be migrated before any ingest."""
    from ragit.contract.errors import EmbeddingMigrationRequired
    from ragit.store.meta import read_meta

    try:
        meta = read_meta(ws)
    except RagitError:
        return  # a corrupt store is the writer's and doctor's business
    if meta is None or meta.chunk_count == 0:
        return
    if meta.embedding.get("namespaceId") == profile["namespaceId"]:
        return
    error = EmbeddingMigrationRequired(dict(meta.embedding), profile)
    if not dry_run:
        raise error
    plan.blockers.append({"code": error.code, "details": error.details})


def _dry_run_lock_blockers(ws: Workspace, data: dict[str, Any]) -> None:
    from ragit.store.journal_scan import scan_journals
    from ragit.store.lock import inspect_lock

    info = inspect_lock(ws)
    if info.state == "active":
        data["blockers"].append(
            {"code": "STORE_WRITE_BUSY", "details": {"lockState": info.state, "owner": info.owner}}
        )
    elif info.state == "unknown":
        data["blockers"].append(
            {
                "code": "STORE_WRITE_LOCK_STALE",
                "details": {
                    "lockState": info.state,
                    "owner": info.owner,
                    "path": ws.relative(ws.lock_path),
                },
            }
        )
    bad = [s.transaction_id for s in scan_journals(ws) if s.classification == "inconsistent"]
    if bad:
        data["blockers"].append(
            {"code": "INGEST_RECOVERY_REQUIRED", "details": {"transactions": bad}}
        )


def _residue_left(ws: Workspace) -> bool:
    """Whether a crashed writer left a lock or an unfinished journal (read-only check)."""
    from ragit.store.journal_scan import scan_journals
    from ragit.store.lock import inspect_lock

    if inspect_lock(ws).state == "stale":
        return True
    return any(s.classification not in ("completed", "invalid") for s in scan_journals(ws))


def _recover_residue(ws: Workspace, target: str) -> list[str]:
    """Take the writer lock only to recover a crashed writer's residue; returns warnings."""
    from ragit.store.journal import recover
    from ragit.store.lock import WriterLock
    from ragit.store.replace import recover_swap

    with WriterLock.acquire(ws, command="ingest", head_sha=target) as lock:
        warnings = list(lock.warnings) + recover_swap(ws, lock)
        warnings.extend(recover(ws, lock, lambda sha: manifest_exists(ws, sha)).warnings)
    return warnings


def _compactor_note(progress: Progress) -> Callable[[dict[str, Any]], None]:
    """What the writer lock reports when it waits for the background segment merge."""

    def note(owner: dict[str, Any]) -> None:
        progress(f"store: waiting for the background segment merge (pid {owner.get('pid')})")

    return note


def _count_missing(ws: Workspace, chunk_ids: list[str]) -> int:
    """How many of ``chunk_ids`` the published store lacks (read-only, via the reader copy)."""
    from ragit.store.meta import read_meta
    from ragit.store.reader import StoreReader

    if not chunk_ids:
        return 0
    if read_meta(ws) is None:
        return len(chunk_ids)
    try:
        reader = StoreReader.open_latest(ws, wait_ms=0)
    except RagitError:
        return len(chunk_ids)
    try:
        return len(chunk_ids) - len(reader.fetch(chunk_ids))
    finally:
        reader.close()


def _apply(
    ws: Workspace,
    plan: IngestPlan,
    manifest: Manifest,
    embedder: Any,
    progress: Progress,
    planned_on: str | None,
    replan: Callable[[], tuple[IngestPlan, Manifest]],
) -> tuple[IngestPlan, int, int, int, list[str]]:
    from ragit import _faults as faults
    from ragit.contract.errors import EmbeddingMigrationRequired, IngestStoreWriteUnverified
    from ragit.embed.parallel import eligible
    from ragit.snapshot.manifest import write_manifest
    from ragit.store.journal import Journal, recover
    from ragit.store.lock import WriterLock
    from ragit.store.meta import read_meta
    from ragit.store.publishing import (
        Written,
        check_canonical_intact,
        publish,
        record_referenced,
    )
    from ragit.store.replace import recover_swap
    from ragit.store.space import require_space
    from ragit.store.writer import StoreWriter

    profile = embedder.profile.as_dict()
    with WriterLock.acquire(
        ws, command="ingest", head_sha=plan.target, on_wait=_compactor_note(progress)
    ) as lock:
        # Room for a store write before anything changes (a full disk inside zvec can leave
        # files it crashes on): no journal, no open. A write of the manifest alone needs none.
        adding = len(new_rows(plan))
        if adding or read_meta(ws) is None:
            require_space(ws, adding, int(profile["dimensions"]))
        check_canonical_intact(ws, lock)  # never publish damaged canonical files
        # Finish a store swap a crashed rebuild, migration or purge left half done first.
        swapped = recover_swap(ws, lock)
        recovered = recover(ws, lock, lambda sha: manifest_exists(ws, sha)).warnings
        # The lock's warnings last: the recovery may add one (a store restored, docs/faults.md).
        warnings = list(lock.warnings) + swapped + recovered
        meta = read_meta(ws)
        if (
            meta is not None
            and meta.chunk_count > 0
            and (meta.embedding.get("namespaceId") != profile["namespaceId"])
        ):
            raise EmbeddingMigrationRequired(meta.embedding, profile)
        if not _plan_still_valid(ws, plan, planned_on):
            # The store was replaced (or manifests purged) since the plan: the chunks it
            # reuses may be gone. Plan again, now that no other writer can change them.
            progress("plan: the store changed since planning; planning again under the lock")
            plan, manifest = replan()
        rows = list(new_rows(plan).values())
        known_ids: set[str] = set()
        for source in plan.reuse_sources:
            known_ids |= source.all_chunk_ids()
        # The journal comes before the first change to a canonical file (zvec rewrites some
        # on every read-write open, the pre-check's too): an interruption from here on is
        # recovered, and republished, by the next writer.
        tx = Journal.begin(
            ws,
            lock,
            kind="ingest",
            target_sha=plan.target,
            base_sha=plan.base_sha,
            manifest_path=ws.relative(ws.manifest_path(plan.target)),
            document_version_ids=[d.version_id for d in manifest.docs],
        )
        t0 = time.monotonic()
        candidates = [r for r in rows if r.chunk_id not in known_ids]
        if meta is not None and len(candidates) > PRECHECK_MIN_ROWS:
            # Worth one extra short open: skip embedding chunks another snapshot already stored.
            writer = StoreWriter.open(ws, lock, embedding=profile, dimensions=profile["dimensions"])
            try:
                present = writer.existing([r.chunk_id for r in candidates])
            finally:
                writer.close()
            candidates = [r for r in candidates if r.chunk_id not in present]
        store_ms = int((time.monotonic() - t0) * 1000)
        t1 = time.monotonic()
        if candidates:
            progress(f"embed: 0/{len(candidates)} new chunks with {profile['provider']}")
        early: StoreWriter | None = None  # opened to index terms while a helper embeds
        if eligible(profile["provider"], len(candidates)):
            from ragit.ingest.vectors import embed_beside_terms

            embedded_rows, early = embed_beside_terms(
                ws, lock, profile, candidates, embedder, progress
            )
        else:
            embedded_rows = embed_rows(candidates, embedder, progress)
        embed_ms = int((time.monotonic() - t1) * 1000)
        t2 = time.monotonic()
        compaction = "single"
        # Chunks carried over from indexed manifests are in the store (doctor checks that
        # invariant); the ones this ingest adds are written and read back.
        manifest_ids = manifest.all_chunk_ids()  # ~18k ids at N=1000: built once
        unknown = sorted(manifest_ids - known_ids)
        opened = bool(unknown) or meta is None or early is not None
        inserted: frozenset[str] = frozenset()
        rows_before: int | None = None  # rows of the published store, when there is one
        if opened:
            writer = early or StoreWriter.open(
                ws,
                lock,
                embedding=profile,
                dimensions=profile["dimensions"],
                rows=len(embedded_rows),
            )
            try:
                present = writer.existing([r.chunk_id for r in embedded_rows])
                embedded_rows = [r for r in embedded_rows if r.chunk_id not in present]
                progress(f"store: 0/4 steps: writing {len(embedded_rows)} chunks")
                inserted = frozenset(r.chunk_id for r in embedded_rows)
                if meta is not None:
                    rows_before = writer.count()
                writer.insert(embedded_rows)
                # Unrecorded: a journal at store-written is recovered exactly like one at
                # prepared (rolled back by its inserted ids, on disk before the insert).
                tx.advance("store-written", record=False)
                progress("store: 1/4 steps: merging segments")
                compaction = writer.compact()
                progress(f"store: 2/4 steps: reading {len(unknown)} new chunks back")
                gone = writer.verify(unknown)
                if gone:
                    from ragit.store.publishing import mark_unverified

                    mark_unverified(ws, len(gone), "rows just written were not readable back")
                    raise IngestStoreWriteUnverified(len(gone))
                tx.advance("store-verified")
            finally:
                writer.close()
        else:
            tx.advance("store-written", record=False)
            tx.advance("store-verified")
        if opened:  # zvec changes the canonical files on every read-write open
            # Publish the store generation before the manifest: a reader that sees the new
            # manifest always finds its chunks in the published reader copy.
            progress("store: 3/4 steps: publishing the new generation")
            # A write that only inserted is verified by its own ids and the row counts.
            written = (
                Written(inserted, rows_before + len(inserted))
                if rows_before is not None and compaction != "merged"
                else None
            )
            publish(ws, lock, referenced=manifest_ids, written=written)
            progress("store: 4/4 steps: published")
            faults.reach("store-published")
        write_manifest(ws, manifest)
        record_referenced(ws, lock, _referenced_now(ws, manifest_ids))
        tx.advance("manifest-committed")
        # Unrecorded: past manifest-committed every phase finishes the same way, and the
        # completed record follows at once.
        tx.advance("published", record=False)
        tx.complete()
        store_ms += int((time.monotonic() - t2) * 1000)
    if compaction == "deferred":
        from ragit.store.compact import start_background

        start_background(ws.root)
    return plan, embed_ms, store_ms, len(embedded_rows), warnings
