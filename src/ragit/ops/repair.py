"""`ragit repair`: plan repairs from what is wrong; apply only safe actions under the lock.

Planning reads only (the same facts `doctor` checks). Actions, in the order they
apply:

* ``release-lock`` — the writer lock's owner cannot be checked (another host, an
  unreadable owner file). Removing it is only safe when no writer runs anywhere,
  which RAGit cannot prove, so it is planned as blocked and applied only when
  requested explicitly with ``--action release-lock``;
* ``ingest-recover`` — unfinished transaction journals: recover them (roll back
  unpublished residue, finish published work); an inconsistent journal is resolved
  by a store rebuild;
* ``store-rebuild`` — the store is missing, unreadable or lacks chunks a manifest
  names: regenerate it from the union of all manifests (git objects), verify, swap;
* ``ingest`` — HEAD has no snapshot: incremental ingest from the nearest indexed
  ancestor (or a full one). Blocked while document candidates are dirty.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ragit.config import RagitConfig
from ragit.contract.errors import RagitError
from ragit.workspace import Workspace

ACTIONS = ("release-lock", "ingest-recover", "store-rebuild", "ingest")
Progress = Callable[[str], None]


def _action(
    kind: str,
    n: int,
    reasons: list[str],
    *,
    safe: bool,
    args: list[str],
    notes: list[str],
    status: str = "planned",
) -> dict[str, Any]:
    return {
        "actionId": f"repair_{kind.replace('-', '_')}_{n:03d}",
        "action": kind,
        "reasonCodes": reasons,
        "status": status,
        "safeToApply": safe,
        "requiresInput": False,
        "command": "ragit " + " ".join(["repair", "--apply", "--action", kind]),
        "args": args,
        "notes": notes,
    }


def _store_problem(ws: Workspace, *, wait_ms: int) -> str | None:
    from ragit.snapshot.manifest import list_manifest_shas, load_manifest
    from ragit.store.meta import read_meta
    from ragit.store.reader import StoreReader

    shas = list_manifest_shas(ws)
    if not shas:
        return None
    try:
        meta = read_meta(ws)
    except RagitError:
        return "store_meta_invalid"
    if meta is None:
        return "store_missing"
    if not (ws.store_dir / meta.collection).is_dir():
        return "store_collection_missing"
    if ws.store_unverified_path.is_file():
        return "store_unverified"
    try:
        reader = StoreReader.open_latest(ws, wait_ms=wait_ms)
    except RagitError:
        return "store_unreadable"
    try:
        wanted: set[str] = set()
        for sha in shas:
            try:
                wanted |= load_manifest(ws, sha).all_chunk_ids()
            except RagitError:
                continue
        ordered = sorted(wanted)
        present: set[str] = set()
        for i in range(0, len(ordered), 1000):
            present |= set(reader.fetch(ordered[i : i + 1000]))
        return "manifest_chunks_missing" if wanted - present else None
    finally:
        reader.close()


def plan_repair(ws: Workspace, requested: list[str]) -> list[dict[str, Any]]:
    """The repair plan (reads only)."""
    from ragit.ops.status import repository_status
    from ragit.store.journal_scan import scan_journals
    from ragit.store.lock import inspect_lock

    plan: list[dict[str, Any]] = []
    lock = inspect_lock(ws)
    if lock.state == "unknown" or "release-lock" in requested:
        explicit = "release-lock" in requested
        plan.append(
            _action(
                "release-lock",
                len(plan) + 1,
                [f"lock_{lock.state}"],
                safe=explicit,
                args=[],
                notes=[
                    "removes .ragit/runtime/store-write.lock; only run it when no ragit writer "
                    "is running on any host"
                ],
                status="planned" if explicit else "blocked",
            )
        )
    journals = [s for s in scan_journals(ws) if s.classification != "completed"]
    if journals or "ingest-recover" in requested:
        plan.append(
            _action(
                "ingest-recover",
                len(plan) + 1,
                sorted({s.classification.replace("-", "_") for s in journals}) or ["requested"],
                safe=True,
                args=[s.transaction_id for s in journals],
                notes=[f"{len(journals)} unfinished transaction journal(s)"],
            )
        )
    # A stale lock's writer is dead: waiting for it to publish would only cost 2 s.
    problem = _store_problem(ws, wait_ms=0 if lock.state == "stale" else 2000)
    if problem or "store-rebuild" in requested:
        plan.append(
            _action(
                "store-rebuild",
                len(plan) + 1,
                [problem or "requested"],
                safe=True,
                args=[],
                notes=[
                    "regenerates the store from every manifest's documents in git; "
                    "manifests are not modified"
                ],
            )
        )
    status = repository_status(ws)
    snapshot = status["snapshot"]
    if (snapshot["status"] == "missing" and snapshot.get("resolvedSha")) or "ingest" in requested:
        dirty = snapshot.get("worktreeDirty", False)
        plan.append(
            _action(
                "ingest",
                len(plan) + 1,
                ["head_not_indexed"] if snapshot["status"] == "missing" else ["requested"],
                safe=True,
                args=[],
                notes=["incremental ingest of HEAD from the nearest indexed ancestor"]
                + (["dirty document candidates will block it; commit them first"] if dirty else []),
            )
        )
    if requested:
        plan = [a for a in plan if a["action"] in requested]
    return plan


def _execute(
    ws: Workspace, cfg: RagitConfig, action: dict[str, Any], progress: Progress
) -> list[str]:
    """Run one action; returns its warnings."""
    kind = action["action"]
    if kind == "release-lock":
        ws.lock_path.unlink(missing_ok=True)
    elif kind == "ingest-recover":
        from ragit.contract.errors import IngestRecoveryRequired, SnapshotStoreUnavailable
        from ragit.ops.rebuild import rebuild_store
        from ragit.snapshot.manifest import manifest_exists
        from ragit.store.journal import recover
        from ragit.store.lock import WriterLock
        from ragit.store.replace import recover_swap

        try:
            with WriterLock.acquire(ws, command="ingest-recover", head_sha=None) as lock:
                recover_swap(ws, lock)
                recover(ws, lock, lambda sha: manifest_exists(ws, sha))
        except IngestRecoveryRequired:
            result = rebuild_store(ws, cfg, command="store-rebuild", progress=progress)
            return list(result.get("warnings", []))
        except SnapshotStoreUnavailable:
            # Recovery republishes, and a store that lost chunks refuses every publish: the
            # store rebuild planned after this action regenerates it and closes the journals.
            if not ws.store_unverified_path.is_file():
                raise
            return ["ingest-recover left to the store rebuild: the store lacks chunks"]
    elif kind == "store-rebuild":
        from ragit.ops.rebuild import rebuild_store

        result = rebuild_store(ws, cfg, command="store-rebuild", progress=progress)
        return list(result.get("warnings", []))
    elif kind == "ingest":
        from ragit.ingest.apply import run_ingest
        from ragit.ingest.request import IngestRequest

        return list(run_ingest(ws, cfg, IngestRequest(), progress).get("warnings", []))
    return []


def run_repair(
    ws: Workspace, cfg: RagitConfig, *, apply: bool, requested: list[str], progress: Progress
) -> tuple[dict[str, Any], RagitError | None]:
    """Plan, and with ``apply`` execute the safe actions in order.

    Returns the data and the first action error (apply mode only).
    """
    plan = plan_repair(ws, requested)
    executed: list[dict[str, Any]] = []
    skipped: list[dict[str, Any]] = []
    warnings: list[str] = []
    failure: RagitError | None = None
    if apply:
        for action in plan:
            if failure is not None or action["status"] == "blocked" or not action["safeToApply"]:
                skipped.append({**action, "status": "skipped" if failure else action["status"]})
                continue
            try:
                warnings.extend(_execute(ws, cfg, action, progress))
            except RagitError as exc:
                failure = exc
                warnings.append(f"{action['action']} failed: {exc.code}: {exc.message}")
                executed.append({**action, "status": "failed", "error": exc.code})
                continue
            executed.append({**action, "status": "executed"})
    statuses = [a["status"] for a in plan]
    data = {
        "mode": "apply" if apply else "plan",
        "summary": {
            "planned": len(plan),
            "executed": sum(1 for a in executed if a["status"] == "executed"),
            "blocked": statuses.count("blocked"),
            "failed": sum(1 for a in executed if a["status"] == "failed"),
            "skipped": len(skipped),
        },
        "filters": {"actions": requested},
        "plannedActions": plan,
        "executedActions": executed,
        "skippedActions": skipped,
        "warnings": warnings,
    }
    return data, failure
