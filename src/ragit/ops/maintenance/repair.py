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
  names: regenerate it from the union of all manifests (git objects), verify, swap. On
  the shared store (``store.backend = "postgres"``) it regenerates the chunks the
  repository's snapshots name and the server lacks, and builds a namespace's missing or
  invalid HNSW graph (:mod:`ragit.ops.maintenance.repair_shared`); the baseline of the item actions
  below is the server's;
* ``ingest``, ``harness-verify``, ``artifact-review``, ``harness-run`` — from the
  items `ragit drift` finds not fresh (the same evaluation, with the same ``--scope``,
  ``--path``, ``--goal``, ``--session`` and ``--max-count`` filters, docs/history.md):

  - the baseline (HEAD has no snapshot) → ``ingest`` of HEAD from the nearest indexed
    ancestor (or a full one); the stale documents join it;
  - stale documents without the baseline (a filter left it out) → a targeted
    ``ingest --path <p>…`` of just those documents on top of the parent's snapshot
    (blocked when the parent has none: indexing more than was selected is not a repair
    of the selection);
  - harness suites with ``dependency_stale`` or ``failure_evidence_present`` →
    ``harness-verify --suite <id>`` (reads only), and with failure evidence also
    ``harness-run`` (blocked: it needs an executor input);
  - any other non-fresh session artifact or suite → ``artifact-review`` (blocked: it
    needs a review input).

  Ingest is blocked while document candidates are dirty.

The storage actions are about the store, not items: they are planned whatever the item
filters (no item can be repaired on a broken store); ``--action`` selects among all.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ragit.config import RagitConfig
from ragit.contract.errors import RagitError
from ragit.store.backend import store_backend
from ragit.workspace import Workspace

if TYPE_CHECKING:
    from ragit.ops.status.report import SharedStore

STORAGE_ACTIONS = ("release-lock", "ingest-recover", "store-rebuild")
ITEM_ACTIONS = ("ingest", "harness-verify", "artifact-review", "harness-run")
ACTIONS = STORAGE_ACTIONS + ITEM_ACTIONS
Progress = Callable[[str], None]
_BASELINE_REASONS = frozenset({"no_baseline", "missing_manifest_anchor"})
_VERIFY_REASONS = frozenset({"dependency_stale", "failure_evidence_present"})


@dataclass(frozen=True)
class RepairFilters:
    """Which drift items the plan repairs (the `drift` filters)."""

    scope: str = "all"
    path: str | None = None
    goal_id: str | None = None
    session_id: str | None = None
    max_count: int | None = None

    def argv(self) -> list[str]:
        """The filters as flags, so a printed command repeats the same selection."""
        out: list[str] = []
        if self.scope != "all":
            out += ["--scope", self.scope]
        if self.path is not None:
            out += ["--path", self.path]
        if self.goal_id is not None:
            out += ["--goal", self.goal_id]
        if self.session_id is not None:
            out += ["--session", self.session_id]
        if self.max_count is not None:
            out += ["--max-count", str(self.max_count)]
        return out


def _action(
    kind: str,
    n: int,
    reasons: list[str],
    *,
    safe: bool,
    args: list[str],
    notes: list[str],
    status: str = "planned",
    command: str | None = None,
    items: list[str] | None = None,
    scope: str | None = None,
    requires_input: bool = False,
) -> dict[str, Any]:
    return {
        "actionId": f"repair_{kind.replace('-', '_')}_{n:03d}",
        "action": kind,
        "reasonCodes": reasons,
        "status": status,
        "safeToApply": safe,
        "requiresInput": requires_input,
        "command": command or "ragit " + " ".join(["repair", "--apply", "--action", kind]),
        "args": args,
        "notes": notes,
        "sourceScope": scope,
        "sourceItemIds": items or [],
    }


def _store_problem(ws: Workspace, *, wait_ms: int) -> str | None:
    """What a store rebuild would repair (the store problems ``doctor`` names the rebuild
    for), or None."""
    from ragit.snapshot.manifest import list_manifest_shas, load_manifest
    from ragit.store.fingerprint import canonical_changed
    from ragit.store.lock import inspect_lock
    from ragit.store.meta import read_meta, read_referenced
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
    if ws.store_unopenable_path.is_file():
        return "store_unopenable"
    if inspect_lock(ws).state == "missing" and canonical_changed(ws):
        return "store_files_changed"  # every ingest refuses them (doctor: store.canonical-files)
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
        lost = wanted - present
        if lost:
            recorded = read_referenced(ws.store_dir)
            # Chunks no write of this store ever stored (an edited manifest) are not the
            # store's to regenerate: `doctor` names `ingest --all --at <sha>` for them.
            if not recorded or lost & recorded:
                return "manifest_chunks_missing"
        try:
            unindexed = reader.terms().missing(wanted & present)
        except RagitError:
            return "keyword_index_unreadable"
        return "keyword_index_incomplete" if unindexed else None
    finally:
        reader.close()


def plan_repair(
    ws: Workspace, requested: list[str], filters: RepairFilters | None = None
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The repair plan and the drift evaluation it came from (reads only).

    With ``store.backend = "postgres"`` the baseline and the store's problems are the shared
    store's (:mod:`ragit.ops.maintenance.repair_shared`), read over one connection.

    Raises:
        InputInvalid: a bad ``--scope`` or a ``--path`` glob outside the repository.
        SnapshotStoreUnavailable: the shared store cannot be read.
    """
    from ragit.ops.history.drift import DriftRequest, check_request
    from ragit.ops.status.report import shared_for

    filters = filters or RepairFilters()
    # Bad input is its typed error before any store is reached.
    check_request(DriftRequest(scope=filters.scope, path=filters.path))
    with shared_for(ws) as shared:
        return _plan(ws, requested, filters, shared)


def _plan(
    ws: Workspace, requested: list[str], filters: RepairFilters, shared: SharedStore | None
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    from ragit.ops.history.drift import MAX_COUNT, DriftRequest, evaluate
    from ragit.store.journal_scan import scan_journals
    from ragit.store.lock import inspect_lock

    drift = evaluate(
        ws,
        DriftRequest(
            scope=filters.scope,
            path=filters.path,
            goal_id=filters.goal_id,
            session_id=filters.session_id,
            max_count=filters.max_count or MAX_COUNT,
        ),
        shared,
    )
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
    if shared is not None:
        plan.extend(_shared_store_action(shared, requested, len(plan)))
        plan.extend(_item_actions(ws, drift, filters, requested, len(plan)))
        if requested:
            plan = [a for a in plan if a["action"] in requested]
        return plan, drift
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
    plan.extend(_item_actions(ws, drift, filters, requested, len(plan)))
    if requested:
        plan = [a for a in plan if a["action"] in requested]
    return plan, drift


def _shared_store_action(
    shared: SharedStore, requested: list[str], offset: int
) -> list[dict[str, Any]]:
    """``store-rebuild`` on the shared store: what
    :mod:`ragit.ops.maintenance.repair_shared` repairs."""
    from ragit.ops.maintenance.repair_shared import find_problems

    problems = find_problems(shared)
    reasons = problems.reasons()
    if not reasons and "store-rebuild" not in requested:
        return []
    notes = problems.notes() or [
        "nothing to repair on the shared store: every snapshot's chunks are stored and every "
        "namespace's graph is usable"
    ]
    return [
        _action(
            "store-rebuild",
            offset + 1,
            reasons or ["requested"],
            safe=True,
            args=[],
            notes=[*notes, "the server's snapshots and local manifests are not modified"],
        )
    ]


def _item_actions(
    ws: Workspace,
    drift: dict[str, Any],
    filters: RepairFilters,
    requested: list[str],
    offset: int,
) -> list[dict[str, Any]]:
    """Actions for the drift items that are not fresh, in docs/history.md's priority order."""
    from ragit.snapshot._git import GitRepo

    items = [i for i in drift["items"] if i["status"] != "fresh"]
    head = drift["baseline"]["headSha"]
    again = shlex.join(filters.argv())
    again = f" {again}" if again else ""
    out: list[dict[str, Any]] = []

    def add(kind: str, reasons: list[str], **kw: Any) -> None:
        out.append(_action(kind, offset + len(out) + 1, sorted(set(reasons)), **kw))

    baseline = [i for i in items if i["itemType"] == "baseline"]
    documents = [i for i in items if i["itemType"] == "document"]
    dirty_note = _dirty_note(ws)
    if head is not None and baseline:
        add(
            "ingest",
            baseline[0]["reasonCodes"] + [r for d in documents for r in d["reasonCodes"]],
            safe=True,
            args=[],
            notes=["incremental ingest of HEAD from the nearest indexed ancestor", *dirty_note],
            command=f"ragit repair --apply --action ingest{again}",
            items=["baseline"] + [d["id"] for d in documents],
            scope="durable",
        )
    elif head is not None and documents:
        paths = sorted({p for d in documents for p in d["affectedPaths"]})
        # A targeted ingest starts from HEAD's own snapshot, else its parent's.
        start = drift["baseline"]["snapshotSha"]
        parent_indexed = start is not None and start in (head, GitRepo(ws.root).parent(head))
        where = "HEAD's" if start == head else "HEAD's parent"
        notes = [f"re-indexes {len(paths)} selected document(s) on top of {where} snapshot"]
        if not parent_indexed:
            notes = [
                "HEAD's parent has no snapshot, so the selected documents cannot be re-indexed "
                "alone; `ragit ingest` indexes all of HEAD"
            ]
        add(
            "ingest",
            [r for d in documents for r in d["reasonCodes"]],
            safe=parent_indexed,
            args=[a for p in paths for a in ("--path", p)],
            notes=notes + dirty_note,
            status="planned" if parent_indexed else "blocked",
            command=f"ragit repair --apply --action ingest{again}",
            items=[d["id"] for d in documents],
            scope="durable",
        )
    artifacts = [i for i in items if i["itemType"] in ("memoryArtifact", "harnessSuite")]
    verify = [
        i
        for i in artifacts
        if i["itemType"] == "harnessSuite" and _VERIFY_REASONS & set(i["reasonCodes"])
    ]
    for item in verify:
        add(
            "harness-verify",
            item["reasonCodes"],
            safe=True,
            args=["--suite", item["id"]],
            notes=["structural preflight of the suite (reads only)"],
            command=f"ragit harness verify --suite {item['id']}",
            items=[item["id"]],
            scope=item["scope"],
        )
    for item in artifacts:
        if item in verify and not set(item["reasonCodes"]) - _VERIFY_REASONS:
            continue
        add(
            "artifact-review",
            item["reasonCodes"],
            safe=False,
            args=["--input", "<artifact-review.json>"],
            notes=[f"review {item['title']!r}: supersede, retract or re-confirm it"],
            status="blocked",
            command="ragit artifact review --input <artifact-review.json>",
            items=[item["id"]],
            scope=item["scope"],
            requires_input=True,
        )
    for item in verify:
        if "failure_evidence_present" not in item["reasonCodes"]:
            continue
        add(
            "harness-run",
            ["failure_evidence_present"],
            safe=False,
            args=["--input", "<harness-run.json>"],
            notes=["re-run the suite to replace the failure evidence"],
            status="blocked",
            command="ragit harness run --input <harness-run.json>",
            items=[item["id"]],
            scope=item["scope"],
            requires_input=True,
        )
    if "ingest" in requested and not any(a["action"] == "ingest" for a in out):
        add(
            "ingest",
            ["requested"],
            safe=True,
            args=[],
            notes=["incremental ingest of HEAD from the nearest indexed ancestor", *dirty_note],
            items=[],
            scope="durable",
        )
    return out


def _dirty_note(ws: Workspace) -> list[str]:
    from ragit.ops.status.report import repository_status

    dirty = repository_status(ws)["snapshot"].get("worktreeDirty", False)
    return ["dirty document candidates will block it; commit them first"] if dirty else []


def _execute(
    ws: Workspace,
    cfg: RagitConfig,
    action: dict[str, Any],
    progress: Progress,
    done: set[str],
) -> list[str]:
    """Run one action; returns its warnings. ``done`` collects the storage actions already
    carried out (an ingest-recover that had to rebuild the store did the store-rebuild)."""
    kind = action["action"]
    if kind in done:
        return [f"{kind} already done by an earlier action"]
    if kind == "release-lock":
        ws.lock_path.unlink(missing_ok=True)
    elif kind == "ingest-recover":
        from ragit.contract.errors import IngestRecoveryRequired, SnapshotStoreUnavailable
        from ragit.ops.maintenance.rebuild import rebuild_store
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
            done.add("store-rebuild")
            return list(result.get("warnings", []))
        except SnapshotStoreUnavailable:
            # Recovery republishes, and a store that lost chunks refuses every publish; a
            # collection zvec cannot open cannot be recovered at all. Either way only a
            # rebuild from git repairs it, and it closes the journals too: run it now, so the
            # actions after this one find a usable store.
            if ws.store_unverified_path.is_file() or ws.store_unopenable_path.is_file():
                result = rebuild_store(ws, cfg, command="store-rebuild", progress=progress)
                done.add("store-rebuild")
                return [
                    "ingest-recover needed a store rebuild (the store lacked chunks or could "
                    "not be opened)",
                    *result.get("warnings", []),
                ]
            raise
    elif kind == "store-rebuild" and store_backend(cfg.store.backend).shared:
        from ragit.ops.maintenance.repair_shared import repair_store

        return repair_store(ws, cfg, progress)
    elif kind == "store-rebuild":
        from ragit.ops.maintenance.rebuild import rebuild_store

        result = rebuild_store(ws, cfg, command="store-rebuild", progress=progress)
        return list(result.get("warnings", []))
    elif kind == "ingest":
        from ragit.ingest.apply import run_ingest
        from ragit.ingest.request import IngestRequest

        paths = [a for i, a in enumerate(action["args"]) if i % 2 == 1]
        result = run_ingest(ws, cfg, IngestRequest(paths=paths), progress)
        return list(result.get("warnings", []))
    elif kind == "harness-verify":
        from ragit.harness.verify import verify

        checked = verify(ws, action["args"][1])
        failed = [c["name"] for c in checked["checks"] if not c["ok"]]
        if failed:
            return [f"harness verify {checked['suiteId']}: failed checks {', '.join(failed)}"]
    return []


def run_repair(
    ws: Workspace,
    cfg: RagitConfig,
    *,
    apply: bool,
    requested: list[str],
    progress: Progress,
    filters: RepairFilters | None = None,
) -> tuple[dict[str, Any], RagitError | None]:
    """Plan, and with ``apply`` execute the safe actions in order.

    Returns the data and the first action error (apply mode only).
    """
    filters = filters or RepairFilters()
    plan, drift = plan_repair(ws, requested, filters)
    executed: list[dict[str, Any]] = []
    skipped: list[dict[str, Any]] = []
    warnings: list[str] = list(drift["warnings"])
    failure: RagitError | None = None
    done: set[str] = set()
    if apply:
        for action in plan:
            if failure is not None or action["status"] == "blocked" or not action["safeToApply"]:
                skipped.append({**action, "status": "skipped" if failure else action["status"]})
                continue
            try:
                warnings.extend(_execute(ws, cfg, action, progress, done))
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
        "filters": {
            "scope": filters.scope,
            "path": drift["filters"]["path"],
            "goalId": filters.goal_id,
            "sessionId": filters.session_id,
            "maxCount": filters.max_count,
            "actions": requested,
        },
        "drift": {
            "overallStatus": drift["overallStatus"],
            "counts": drift["counts"],
            "baseline": drift["baseline"],
            "items": [i for i in drift["items"] if i["status"] != "fresh"],
        },
        "plannedActions": plan,
        "executedActions": executed,
        "skippedActions": skipped,
        "warnings": warnings,
    }
    return data, failure
