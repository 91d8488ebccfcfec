"""`ragit security purge` (docs/reference/security.md).

Removes the raw secrets ``ragit security audit`` (:mod:`ragit.ops.security.audit`)
reports, with the current masking rules.

purge (under the writer lock; ``--dry-run`` writes nothing and returns the plan):

* ``control-plane`` — re-sanitizes in place the control-plane files audit scans
  (under ``.ragit/log``, ``artifacts``, ``memory`` and ``security``, listed by
  :mod:`ragit.ops.security.scan`; also under the memory lock): JSON files through
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
  (:func:`ragit.store.backend_write.open_purger`), then the clone's copies of their
  manifests. The server is connected, and the role's DELETE privileges checked, before
  anything changes; a dry run reads it through a read-only connection;
* ``cache`` — deletes the embedding cache (the whole directory when it lies inside
  ``.ragit/``, else only the ``v1/`` layout RAGit writes inside it);
* ``all`` — the four, in the order control-plane, quarantine, store, cache (the
  store's artifact chunks are regenerated from the already re-sanitized records).

Repository documents are never rewritten: fix the document, commit, then ingest.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ragit.config import RagitConfig
from ragit.contract.errors import NotInitialized, RagitError, SnapshotStoreUnavailable
from ragit.ops.security.purge_shared import (
    Shared,
    SharedPlan,
    open_shared,
    plan_shared,
    plan_shared_items,
    purge_shared,
)
from ragit.ops.security.regenerate import Progress, StorePlan, plan_store
from ragit.ops.security.scan import (
    control_plane_files,
    pending_stale,
    record_stale,
    scan_control_plane_file,
    security_dir,
    stale_entries,
)
from ragit.store.backend import store_backend
from ragit.workspace import Workspace

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


def plan_purge(
    ws: Workspace,
    cfg: RagitConfig,
    target: str,
    progress: Progress,
    shared: Shared | None = None,
) -> tuple[list[dict[str, Any]], StorePlan | SharedPlan | None, list[str]]:
    """What a purge of ``target`` would do (reads only): planned items, store plan, warnings.
    On the shared store, ``shared`` is the connection to read it through.

    Raises:
        SnapshotStoreUnavailable: on the shared store, without ``shared``.
    """
    from ragit.store.meta import read_meta

    planned: list[dict[str, Any]] = []
    warnings: list[str] = []
    store_plan: StorePlan | SharedPlan | None = None
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
        elif part == "store" and store_backend(cfg.store.backend).shared:
            if shared is None:
                raise SnapshotStoreUnavailable(None, "the shared store was not connected")
            store_plan = plan_shared(ws, cfg, shared, progress)
            items, notes = plan_shared_items(ws, store_plan)
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
            store_plan = plan_store(ws, cfg, progress)
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
    ws: Workspace, cfg: RagitConfig, lock: Any, plan: StorePlan | None, progress: Progress
) -> tuple[list[str], dict[str, Any] | None, list[str]]:
    """Replace the store with one regenerated under the current rules; returns
    (deleted paths, store summary, warnings)."""
    from ragit import _faults as faults
    from ragit._fs import fsync_dir
    from ragit.embed import build_embedder
    from ragit.ops.maintenance.rebuild import _close_out_journals, _embedded_batches
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
    shared: Shared | None = None
    if "store" in _targets(target) and store_backend(cfg.store.backend).shared:
        # Connected first: no server, or a role that may not delete, fails the purge before
        # anything local or on the server changes.
        shared = open_shared(ws, cfg, apply=not dry_run)
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
    shared: Shared | None,
    data: dict[str, Any],
) -> None:
    planned, store_plan, warnings = plan_purge(ws, cfg, target, progress, shared)
    data.update(planned=planned, warnings=warnings)
    if "store" in _targets(target):
        indexed = store_plan.indexed if isinstance(store_plan, SharedPlan) else None
        stale = {**pending_stale(ws, indexed), **(store_plan.stale if store_plan else {})}
        data["staleSnapshots"] = stale_entries(stale)


def _apply(
    ws: Workspace,
    cfg: RagitConfig,
    target: str,
    progress: Progress,
    shared: Shared | None,
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
                assert isinstance(shared_plan, SharedPlan)
                data["planned"].extend(planned)
                deleted, summary, warnings, indexed = purge_shared(ws, shared, shared_plan)
                data["deleted"].extend(deleted)
                data["warnings"].extend(warnings)
                data["store"] = summary
                _report_stale(ws, data, pending_stale(ws, indexed))
            elif part == "store":
                planned, store_plan, _w = plan_purge(ws, cfg, part, progress)
                assert not isinstance(store_plan, SharedPlan)
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
