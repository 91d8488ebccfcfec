"""`ragit security purge` (docs/reference/security.md).

Removes the raw secrets ``ragit security audit`` (:mod:`ragit.ops.security_audit`)
reports, with the current masking rules.

purge (under the writer lock; ``--dry-run`` writes nothing and returns the plan):

* ``control-plane`` — re-sanitizes in place the control-plane files audit scans
  (under ``.ragit/log``, ``artifacts``, ``memory`` and ``security``, listed by
  :mod:`ragit.ops.security_scan`; also under the memory lock): JSON files through
  :func:`mask_json`, JSONL files line by line (clean lines keep their bytes), each
  written atomically;
* ``quarantine`` — deletes the quarantine ledger files;
* ``store`` — regenerates the store from git with the current masking rules (as
  ``store rebuild`` does: every manifest's document blobs are re-read, masked and
  chunked), verifies it in ``.ragit/store.next`` and swaps it in; the old store, its
  replacement residue and its reader copies go. A snapshot whose chunk ids change
  under the current rules (its stored text held a secret the rules now mask) cannot
  be served from the new store: its manifest is deleted before the swap and it is
  reported in ``staleSnapshots`` with the ``ragit ingest --all --at <sha>`` that
  re-indexes it. Every other snapshot keeps its manifest and answers as before. The
  list is written to ``.ragit/security/state.json`` before any manifest goes, so a
  purge killed halfway still reports it (next purge, and audit as ``warn`` findings)
  until each snapshot is re-indexed. On the shared store (``store.backend =
  "postgres"``, docs/team.md) nothing is rebuilt: the repository's snapshots on the
  server are judged (their manifests regenerated from git as above; a snapshot is stale
  when a chunk it cites cannot be regenerated clean *and* its stored text holds a secret
  the current rules catch — a chunk this clone merely cannot regenerate, such as another
  clone's session artifact, is not deleted from a store every clone reads), the list is
  recorded, then one server transaction deletes the stale snapshots and the chunks and
  postings no remaining snapshot of any repository cites
  (:class:`ragit.store.postgres.write.PgPurge`), then the clone's copies of their
  manifests. The server is connected, and the role's DELETE privileges checked, before
  anything changes; a dry run reads it through a read-only connection;
* ``cache`` — deletes the embedding cache (the whole directory when it lies inside
  ``.ragit/``, else only the ``v1/`` layout RAGit writes inside it);
* ``all`` — the four, in the order control-plane, quarantine, store, cache (the
  store's artifact chunks are regenerated from the already re-sanitized records).

Repository documents are never rewritten: fix the document, commit, then ingest.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ragit.config import RagitConfig
from ragit.contract.errors import NotInitialized, RagitError, SnapshotStoreUnavailable
from ragit.ops.security_scan import (
    control_plane_files,
    pending_stale,
    record_stale,
    scan_control_plane_file,
    secret_labels,
    security_dir,
    stale_entries,
)
from ragit.workspace import Workspace

Progress = Callable[[str], None]

TARGETS = ("control-plane", "store", "cache", "quarantine", "all")
LOCK_COMMAND = "security-purge"


# ---------------------------------------------------------------- purge: planning


def _targets(target: str) -> list[str]:
    # Store after control-plane: artifact chunks are regenerated from the sanitized records.
    if target == "all":
        return ["control-plane", "quarantine", "store", "cache"]
    return [target]


def _quarantine_files(ws: Workspace) -> list[Path]:
    directory = security_dir(ws) / "quarantine"
    if not directory.is_dir():
        return []
    return sorted(p for p in directory.glob("*.jsonl") if p.is_file() and not p.is_symlink())


def _cache_target(ws: Workspace, cfg: RagitConfig) -> tuple[Path | None, str | None]:
    """The directory a cache purge deletes, or a warning saying why nothing is deleted."""
    from ragit.embed.cache import CACHE_LAYOUT

    raw = Path(cfg.embedding.cache_dir)
    base = (raw if raw.is_absolute() else ws.root / raw).resolve()
    root = ws.root.resolve()
    ragit = ws.ragit_dir.resolve()
    if ragit in base.parents:
        return base, None
    if root in base.parents and ragit != base and not base.is_relative_to(root / ".git"):
        # A cache dir among the user's own files: delete only what RAGit wrote there.
        return base / CACHE_LAYOUT, None
    return None, (
        f"embedding.cache_dir {cfg.embedding.cache_dir} is not a directory inside the "
        "repository that RAGit owns; nothing was deleted there"
    )


def _residue_dirs(ws: Workspace) -> list[Path]:
    from ragit.store.meta import next_dir, prev_dir

    return [d for d in (next_dir(ws), prev_dir(ws)) if d.exists()]


@dataclass
class _StorePlan:
    manifests: dict[str, Any]
    rows: list[Any]
    expected: set[str]
    stale: dict[str, str]  # manifest sha → reason


def _plan_store(
    ws: Workspace,
    cfg: RagitConfig,
    progress: Progress,
    manifests: dict[str, Any] | None = None,
) -> _StorePlan:
    """Regenerate every chunk of ``manifests`` (default: the local manifest files) from git
    with the current rules (reads only).

    A snapshot is stale when any chunk it cites cannot be regenerated exactly: its
    stored text was made under other masking (or chunking) rules, its blob no longer
    reads, or a regenerated artifact chunk still holds a raw secret.
    """
    from ragit.ops.rebuild import _manifests, _regenerate

    if manifests is None:
        manifests, _bad = _manifests(ws)
    rows, problems, expected = _regenerate(ws, cfg, manifests, progress)
    clean = [
        row
        for row in rows
        if not any(
            secret_labels(value)
            for value in (row.text, row.search_en, row.section_title, row.heading_path)
        )
    ]
    good = {row.chunk_id for row in clean}
    reasons = {p["versionId"]: p["reason"] for p in problems}
    stale: dict[str, str] = {}
    for sha, manifest in sorted(manifests.items()):
        lost = manifest.all_chunk_ids() - good
        if not lost:
            continue
        why = sorted({reasons[d.version_id] for d in manifest.docs if d.version_id in reasons})
        stale[sha] = "; ".join(why) or f"{len(lost)} chunk(s) cannot be regenerated clean"
    return _StorePlan(manifests, clean, expected & good, stale)


# ---------------------------------------------------------------- the shared store


@dataclass
class _Shared:
    """The shared store (``store.backend = "postgres"``) a purge reads and, applying, writes."""

    repository: str
    reader: Any  # ragit.store.postgres.read.PgReader: a read-only connection
    purger: Any  # ragit.store.postgres.write.PgPurge (None in a dry run)

    def close(self) -> None:
        self.reader.close()
        if self.purger is not None:
            self.purger.close()


def _open_shared(ws: Workspace, cfg: RagitConfig, *, apply: bool) -> _Shared:
    """Connect to the shared store: applying, first as a role that may delete (checked
    before anything changes); then a read-only connection for the plan.

    Raises:
        SnapshotStoreUnavailable: no server, refused, another schema version, the client
            missing, a role without the privileges a purge needs, or a shallow clone
            without ``store.repository``.
    """
    from ragit.snapshot.repository import store_repository

    repository = store_repository(ws, cfg)
    from ragit.store.postgres import client_required

    with client_required():
        from ragit.store.postgres.read import PgReader
        from ragit.store.postgres.write import PgPurge
    purger = PgPurge.open(repository) if apply else None
    try:
        reader = PgReader.open()
    except BaseException:
        if purger is not None:
            purger.close()
        raise
    return _Shared(repository, reader, purger)


@dataclass
class _SharedPlan:
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


def _plan_shared(
    ws: Workspace, cfg: RagitConfig, shared: _Shared, progress: Progress
) -> _SharedPlan:
    """The repository's snapshots on the server, judged with the current rules (reads only).

    Their manifests are regenerated from git as the local store's are (:func:`_plan_store`);
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
    regenerated = _plan_store(ws, cfg, progress, manifests)
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
    return _SharedPlan(
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


def _plan_shared_items(ws: Workspace, plan: _SharedPlan) -> tuple[list[dict[str, Any]], list[str]]:
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


def plan_purge(
    ws: Workspace,
    cfg: RagitConfig,
    target: str,
    progress: Progress,
    shared: _Shared | None = None,
) -> tuple[list[dict[str, Any]], _StorePlan | _SharedPlan | None, list[str]]:
    """What a purge of ``target`` would do (reads only): planned items, store plan, warnings.
    On the shared store, ``shared`` is the connection to read it through.

    Raises:
        SnapshotStoreUnavailable: on the shared store, without ``shared``.
    """
    from ragit.store.meta import read_meta

    planned: list[dict[str, Any]] = []
    warnings: list[str] = []
    store_plan: _StorePlan | _SharedPlan | None = None
    for part in _targets(target):
        if part == "control-plane":
            for path in control_plane_files(ws):
                scan = scan_control_plane_file(path)
                if scan.sanitized is not None:
                    planned.append(
                        {
                            "target": part,
                            "action": "rewrite",
                            "path": ws.relative(path),
                            "fields": len(scan.hits),
                        }
                    )
        elif part == "quarantine":
            for path in _quarantine_files(ws):
                planned.append({"target": part, "action": "delete", "path": ws.relative(path)})
        elif part == "cache":
            directory, warning = _cache_target(ws, cfg)
            if warning:
                warnings.append(warning)
            elif directory is not None and directory.exists():
                planned.append({"target": part, "action": "delete", "path": _shown(ws, directory)})
        elif part == "store" and cfg.store.backend == "postgres":
            if shared is None:
                raise SnapshotStoreUnavailable(None, "the shared store was not connected")
            store_plan = _plan_shared(ws, cfg, shared, progress)
            items, notes = _plan_shared_items(ws, store_plan)
            planned.extend(items)
            warnings.extend(notes)
        elif part == "store":
            for residue in _residue_dirs(ws):
                planned.append({"target": part, "action": "delete", "path": ws.relative(residue)})
            try:
                meta = read_meta(ws)
            except RagitError:
                meta = None
                present = ws.store_dir.exists()
            else:
                present = meta is not None
            if not present:
                continue
            store_plan = _plan_store(ws, cfg, progress)
            planned.append(
                {
                    "target": part,
                    "action": "rebuild",
                    "path": ws.relative(ws.store_dir),
                    "chunks": len(store_plan.rows),
                }
            )
            for sha, reason in sorted(store_plan.stale.items()):
                planned.append(
                    {
                        "target": part,
                        "action": "delete",
                        "path": ws.relative(ws.manifest_path(sha)),
                        "reason": reason,
                    }
                )
    return planned, store_plan, warnings


def _shown(ws: Workspace, path: Path) -> str:
    try:
        return path.resolve().relative_to(ws.root.resolve()).as_posix()
    except ValueError:
        return str(path)


# ---------------------------------------------------------------- purge: applying


def _rewrite_control_plane(ws: Workspace) -> list[str]:
    from ragit import _faults as faults
    from ragit._fs import atomic_write_text
    from ragit.artifacts.lock import memory_lock

    rewritten: list[str] = []
    with memory_lock(ws):
        for path in control_plane_files(ws):
            scan = scan_control_plane_file(path)
            if scan.sanitized is None:
                continue
            atomic_write_text(path, scan.sanitized)
            rewritten.append(ws.relative(path))
            faults.reach("purge-control-plane-rewritten")
    return rewritten


def _clear_quarantine(ws: Workspace) -> list[str]:
    from ragit import _faults as faults
    from ragit._fs import fsync_dir
    from ragit.artifacts.lock import memory_lock

    deleted: list[str] = []
    with memory_lock(ws):
        for path in _quarantine_files(ws):
            path.unlink(missing_ok=True)
            deleted.append(ws.relative(path))
        if deleted:
            fsync_dir(security_dir(ws) / "quarantine")
    faults.reach("purge-quarantine-cleared")
    return deleted


def _delete_cache(ws: Workspace, cfg: RagitConfig) -> tuple[list[str], list[str]]:
    from ragit import _faults as faults
    from ragit.store._copy import remove_tree

    directory, warning = _cache_target(ws, cfg)
    if warning or directory is None:
        return [], [warning] if warning else []
    if not directory.exists():
        return [], []
    remove_tree(directory)
    faults.reach("purge-cache-deleted")
    return [_shown(ws, directory)], []


def _purge_store(
    ws: Workspace, cfg: RagitConfig, lock: Any, plan: _StorePlan | None, progress: Progress
) -> tuple[list[str], dict[str, Any] | None, list[str]]:
    """Replace the store with one regenerated under the current rules; returns
    (deleted paths, store summary, warnings)."""
    from ragit import _faults as faults
    from ragit._fs import fsync_dir
    from ragit.embed import build_embedder
    from ragit.ops.rebuild import _close_out_journals, _embedded_batches
    from ragit.store.replace import build_replacement, recover_swap, swap_in

    deleted: list[str] = []
    residue = [ws.relative(d) for d in _residue_dirs(ws)]
    warnings = recover_swap(ws, lock)
    for rel in residue:
        if not (ws.root / rel).exists():
            deleted.append(rel)
    if plan is None:
        return deleted, None, warnings
    embedder = build_embedder(ws.root, cfg.embedding, cfg.security, mode="cli")
    try:
        progress(f"embed: 0/{len(plan.rows)} chunks with {embedder.profile.provider}")
        build_replacement(
            ws,
            lock,
            embedding=embedder.profile.as_dict(),
            batches=_embedded_batches(plan.rows, embedder, progress),
            expected_ids=plan.expected,
        )
    finally:
        embedder.close()
    # Recorded first, so a crash cannot lose which snapshots need re-indexing; deleted
    # before the swap, so no reader ever sees a manifest whose chunks the new store lacks.
    record_stale(ws, {**pending_stale(ws), **plan.stale})
    for sha in sorted(plan.stale):
        path = ws.manifest_path(sha)
        if path.exists():
            path.unlink()
            deleted.append(ws.relative(path))
    if plan.stale:
        fsync_dir(ws.manifest_dir)
        faults.reach("purge-manifests-deleted")
    published = swap_in(ws, lock)
    _close_out_journals(ws)
    summary = {
        "manifests": len(plan.manifests) - len(plan.stale),
        "chunks": published.chunk_count,
        "storeId": published.store_id,
        "generation": published.generation,
    }
    return deleted, summary, warnings


def _purge_shared(
    ws: Workspace, shared: _Shared, plan: _SharedPlan
) -> tuple[list[str], dict[str, Any], list[str], set[str]]:
    """Delete the stale snapshots of the repository on the shared store and the chunks only
    they cited (one server transaction), then their local manifest files; returns (deleted
    paths, store summary, warnings, the commits still indexed on the server)."""
    from ragit._fs import fsync_dir

    # Recorded first, so a purge killed at any point still names the commits to re-index.
    earlier = pending_stale(ws, plan.indexed)
    record_stale(ws, {**earlier, **plan.stale})
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


def run_purge(
    ws: Workspace, cfg: RagitConfig, *, target: str, dry_run: bool, progress: Progress
) -> dict[str, Any]:
    """Plan, and unless ``dry_run`` apply, a purge of ``target`` (see the module docstring).

    Raises:
        NotInitialized: apply mode in a repository without ``ragit init``.
        StoreWriteBusy, StoreWriteLockStale: another writer holds the lock (or, on the
            shared store, the server interrupted the purge: nothing was deleted).
        SnapshotStoreUnavailable: the regenerated store failed verification (nothing
            swapped); on the shared store: no server, refused, or a role that may not delete
            (before anything changed).
    """
    if target not in TARGETS:
        raise ValueError(f"unknown purge target {target!r}")
    data: dict[str, Any] = {
        "mode": "dry-run" if dry_run else "apply",
        "target": target,
        "planned": [],
        "rewritten": [],
        "deleted": [],
        "staleSnapshots": [],
        "store": None,
        "warnings": [],
    }
    if not dry_run and not ws.is_initialized():
        # Without init, .ragit/ is not git-ignored: the lock file alone would dirty the worktree.
        raise NotInitialized(str(ws.root))
    shared: _Shared | None = None
    if "store" in _targets(target) and cfg.store.backend == "postgres":
        # Connected first: no server, or a role that may not delete, fails the purge before
        # anything local or on the server changes.
        shared = _open_shared(ws, cfg, apply=not dry_run)
    try:
        if dry_run:
            _dry_run(ws, cfg, target, progress, shared, data)
        else:
            _apply(ws, cfg, target, progress, shared, data)
    finally:
        if shared is not None:
            shared.close()
    return data


def _dry_run(
    ws: Workspace,
    cfg: RagitConfig,
    target: str,
    progress: Progress,
    shared: _Shared | None,
    data: dict[str, Any],
) -> None:
    planned, store_plan, warnings = plan_purge(ws, cfg, target, progress, shared)
    data.update(planned=planned, warnings=warnings)
    if "store" in _targets(target):
        indexed = store_plan.indexed if isinstance(store_plan, _SharedPlan) else None
        stale = {**pending_stale(ws, indexed), **(store_plan.stale if store_plan else {})}
        data["staleSnapshots"] = stale_entries(stale)


def _apply(
    ws: Workspace,
    cfg: RagitConfig,
    target: str,
    progress: Progress,
    shared: _Shared | None,
    data: dict[str, Any],
) -> None:
    from ragit.store.lock import WriterLock

    with WriterLock.acquire(ws, command=LOCK_COMMAND, head_sha=None) as lock:
        data["warnings"].extend(lock.warnings)
        for part in _targets(target):
            if part == "control-plane":
                planned, _plan, _w = plan_purge(ws, cfg, part, progress)
                data["planned"].extend(planned)
                data["rewritten"].extend(_rewrite_control_plane(ws))
            elif part == "quarantine":
                planned, _plan, _w = plan_purge(ws, cfg, part, progress)
                data["planned"].extend(planned)
                data["deleted"].extend(_clear_quarantine(ws))
            elif part == "store" and shared is not None:
                planned, shared_plan, _w = plan_purge(ws, cfg, part, progress, shared)
                assert isinstance(shared_plan, _SharedPlan)
                data["planned"].extend(planned)
                deleted, summary, warnings, indexed = _purge_shared(ws, shared, shared_plan)
                data["deleted"].extend(deleted)
                data["warnings"].extend(warnings)
                data["store"] = summary
                _report_stale(ws, data, pending_stale(ws, indexed))
            elif part == "store":
                planned, store_plan, _w = plan_purge(ws, cfg, part, progress)
                assert not isinstance(store_plan, _SharedPlan)
                data["planned"].extend(planned)
                deleted, zvec_summary, warnings = _purge_store(ws, cfg, lock, store_plan, progress)
                data["deleted"].extend(deleted)
                data["warnings"].extend(warnings)
                data["store"] = zvec_summary
                _report_stale(ws, data, pending_stale(ws))
            elif part == "cache":
                planned, _plan, _w = plan_purge(ws, cfg, part, progress)
                data["planned"].extend(planned)
                deleted, warnings = _delete_cache(ws, cfg)
                data["deleted"].extend(deleted)
                data["warnings"].extend(warnings)


def _report_stale(ws: Workspace, data: dict[str, Any], stale: dict[str, str]) -> None:
    record_stale(ws, stale)  # drops the entries re-indexed since
    data["staleSnapshots"] = stale_entries(stale)
    data["warnings"].extend(
        f"snapshot {s['commitSha']} cannot be served from the purged store; "
        f"re-index it with: {s['recovery']}"
        for s in data["staleSnapshots"]
    )
