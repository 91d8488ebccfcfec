"""`ragit drift`: a read-only, structural trust evaluator at HEAD (docs/history.md).

Items, each ``fresh``, ``suspect`` or ``stale`` with reason codes:

* the **baseline** — HEAD's own snapshot (fresh), the nearest indexed first-parent
  ancestor's (suspect, ``missing_manifest_anchor``) or none (stale, ``no_baseline``);
* every **document** of the baseline snapshot — stale with ``tracked_path_changed``
  when HEAD's blob at its path differs (or the path is gone);
* every reviewed or promoted **session artifact** (scope ``memory``) and harness
  **suite** (scope ``harness``) — ``missing_binding`` / ``binding_local_only`` (suspect)
  from its binding; for each related path: gone at HEAD → ``related_path_missing``
  (stale), changed since the commit it was bound to (or captured at) →
  ``related_path_changed`` plus ``bound_head_behind`` / ``source_head_behind``
  (suspect); a related path that is a stale document → ``dependency_stale`` (stale);
  a live failure artifact of the suite (or, for session artifacts, of the same goal)
  → ``failure_evidence_present`` (stale for suites, suspect for session artifacts).

With ``store.backend = "postgres"`` the baseline is the shared store's: the commits it holds
for this repository and their manifests (:class:`ragit.ops.status.report.SharedStore`), so a clone
that never ingested sees what CI indexed; a server that cannot be read is the typed error
reaching it (``SNAPSHOT_STORE_UNAVAILABLE``, exit 3), never a made-up ``no_baseline``.

Nothing judges content; nothing is written. Recommended actions are commands:
``ragit ingest`` (indexes HEAD: the baseline and changed documents become fresh),
``ragit ingest --scope all`` (also binds pending artifacts) and ``ragit artifact
review`` (supersede or retract an artifact whose ground moved).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ragit.contract.errors import InputInvalid, RagitError
from ragit.ops.status.report import shared_manifest
from ragit.security.masking import RedactionSummary, mask_json
from ragit.snapshot._git import GitRepo
from ragit.snapshot.manifest import Manifest, manifest_exists
from ragit.snapshot.surface import GlobSet, validate_repo_glob
from ragit.workspace import Workspace

if TYPE_CHECKING:
    from ragit.artifacts.catalog import ArtifactRecord
    from ragit.ops.status.report import SharedStore

SCOPES = ("durable", "memory", "harness", "all")
STATUSES = ("fresh", "suspect", "stale")
DEFAULT_MAX_COUNT = 200
MAX_COUNT = 100_000
INGEST = "ragit ingest"
BIND = "ragit ingest --scope all"
REVIEW = "ragit artifact review --input <review.json>"
# What each reason code means, in a few words, for people (drift's text, the narrative).
REASON_WORDS = {
    "no_baseline": "nothing indexed at or before HEAD",
    "missing_manifest_anchor": "HEAD has no snapshot of its own",
    "tracked_path_changed": "changed or removed since the snapshot",
    "missing_binding": "bound to no snapshot",
    "binding_local_only": "bound only in this clone",
    "related_path_changed": "a related file changed",
    "related_path_missing": "a related file is gone",
    "source_head_behind": "made on an older commit",
    "bound_head_behind": "bound to an older commit",
    "failure_evidence_present": "a failure was recorded",
    "dependency_stale": "depends on a stale document",
}
_STALE_REASONS = frozenset(
    {"no_baseline", "tracked_path_changed", "related_path_missing", "dependency_stale"}
)


@dataclass(frozen=True)
class DriftRequest:
    scope: str = "all"
    path: str | None = None
    goal_id: str | None = None
    session_id: str | None = None
    max_count: int = DEFAULT_MAX_COUNT
    view: str = "default"


def _status(reasons: list[str], stale_extra: frozenset[str] = frozenset()) -> str:
    if any(r in _STALE_REASONS or r in stale_extra for r in reasons):
        return "stale"
    return "suspect" if reasons else "fresh"


def _item(
    scope: str,
    item_type: str,
    item_id: str,
    title: str,
    reasons: list[str],
    paths: list[str],
    refs: dict[str, Any],
    actions: list[str],
    status: str | None = None,
) -> dict[str, Any]:
    return {
        "scope": scope,
        "itemType": item_type,
        "id": item_id,
        "title": title,
        "status": status or _status(reasons),
        "reasonCodes": reasons,
        "affectedPaths": paths,
        "sourceRefs": refs,
        "recommendedActions": actions if reasons else [],
    }


def _baseline(
    ws: Workspace,
    git: GitRepo,
    head: str | None,
    warnings: list[str],
    shared: SharedStore | None = None,
) -> tuple[dict[str, Any], Manifest | None]:
    snapshot: str | None = None
    reasons: list[str] = []
    indexed = _shared_indexed(shared, head)

    def has_snapshot(sha: str) -> bool:
        return sha in indexed if indexed is not None else manifest_exists(ws, sha)

    if head is not None and has_snapshot(head):
        snapshot = head
    elif head is not None:
        snapshot = next((c for c in git.first_parents(head) if has_snapshot(c)), None)
        reasons.append("missing_manifest_anchor" if snapshot else "no_baseline")
    else:
        reasons.append("no_baseline")
    manifest: Manifest | None = None
    if snapshot is not None:
        try:
            manifest = shared_manifest(ws, snapshot, shared)
        except RagitError as exc:
            warnings.append(f"snapshot {snapshot[:7]}: manifest unreadable ({exc.code})")
            reasons = ["no_baseline"]
    block = {
        "headSha": head,
        "snapshotSha": snapshot if manifest is not None else None,
        "snapshotCommitSha": snapshot if manifest is not None else None,
        "reasonCodes": reasons,
    }
    return block, manifest


def _shared_indexed(shared: SharedStore | None, head: str | None) -> set[str] | None:
    """The commits the shared store holds for this repository (None: the local manifests
    decide).

    Raises:
        SnapshotStoreUnavailable: the server cannot be reached, refuses, or has a schema this
            RAGit does not read.
    """
    if shared is None:
        return None
    shared.require(head)
    return set(shared.indexed_shas())


def _documents(
    git: GitRepo, head: str | None, manifest: Manifest | None, baseline_sha: str | None
) -> list[dict[str, Any]]:
    if manifest is None:
        return []
    # Also when the baseline is HEAD's own snapshot: a targeted ingest (`--path`) keeps
    # the parent's version of every document it did not select.
    now = git.blobs_at(head, [d.path for d in manifest.docs]) if head is not None else {}
    items = []
    for doc in manifest.docs:
        reasons: list[str] = []
        if head is not None and now[doc.path] != doc.blob_sha:
            reasons.append("tracked_path_changed")
        items.append(
            _item(
                "durable",
                "document",
                doc.document_id,
                doc.path,
                reasons,
                [doc.path],
                {"headSha": head, "snapshotSha": baseline_sha, "anchorSha": baseline_sha},
                [INGEST],
            )
        )
    return items


def _artifact_item(
    git: GitRepo,
    head: str | None,
    record: ArtifactRecord,
    scope: str,
    stale_docs: set[str],
    failures: list[str],
) -> dict[str, Any]:
    reasons: list[str] = []
    if record.binding_status == "pending":
        reasons.append("missing_binding")
    elif record.binding_status == "local_only":
        reasons.append("binding_local_only")
    bound = record.bound_head_sha if record.binding_status == "bound" else None
    base = bound or record.source_head_sha or record.capture_head_sha
    if base is not None and not git.has_commit(base):
        base = None
    missing = changed = dependency = False
    for path in record.related_paths:
        now = git.entry_id(head, path) if head is not None else None
        if now is None:
            missing = True
        elif base is not None and base != head and git.entry_id(base, path) != now:
            changed = True
        if path in stale_docs:
            dependency = True
    if missing:
        reasons.append("related_path_missing")
    if changed:
        reasons.append("related_path_changed")
        reasons.append("bound_head_behind" if bound else "source_head_behind")
    if dependency:
        reasons.append("dependency_stale")
    if failures:
        reasons.append("failure_evidence_present")
    stale_extra = frozenset({"failure_evidence_present"}) if scope == "harness" else frozenset()
    actions = [BIND] if "missing_binding" in reasons else []
    if set(reasons) - {"missing_binding"}:
        actions.append(REVIEW)
    refs: dict[str, Any] = {
        "headSha": head,
        "sourceHeadSha": record.source_head_sha,
        "boundHeadSha": record.bound_head_sha,
        "captureHeadSha": record.capture_head_sha,
        "artifactId": record.artifact_id,
        "goalId": record.goal_id,
        "episodeId": record.episode_id,
        "sourceSessionId": record.source_session_id,
    }
    if failures:
        refs["failureArtifactIds"] = failures
    item = _item(
        scope,
        "harnessSuite" if scope == "harness" else "memoryArtifact",
        record.artifact_id,
        record.title,
        reasons,
        list(record.related_paths),
        refs,
        actions,
        status=_status(reasons, stale_extra),
    )
    return item


def evaluate(ws: Workspace, req: DriftRequest, shared: SharedStore | None = None) -> dict[str, Any]:
    """The data of `ragit drift` (reads only).

    ``shared``: the shared store already reached by the caller (``repair``); otherwise it is
    reached here when the config names it, and closed.

    Raises:
        InputInvalid: a bad ``scope`` or ``path``.
        SnapshotStoreUnavailable: the shared store cannot be read.
    """
    from ragit.ops.status.report import shared_for

    check_request(req)  # bad input is its typed error before any store is reached
    with shared_for(ws, shared) as reached:
        return _evaluate(ws, req, reached)


def check_request(req: DriftRequest) -> str | None:
    """The request's ``path`` glob, validated with its ``scope`` (reads nothing).

    Raises:
        InputInvalid: a bad ``scope`` or ``path``.
    """
    if req.scope not in SCOPES:
        raise InputInvalid("scope", f"must be one of {', '.join(SCOPES)}")
    return validate_repo_glob(req.path, "path") if req.path is not None else None


def _evaluate(ws: Workspace, req: DriftRequest, shared: SharedStore | None) -> dict[str, Any]:
    glob_text = check_request(req)
    glob = GlobSet([glob_text], field="path") if glob_text else None
    git = GitRepo(ws.root)
    head = git.head().sha
    warnings: list[str] = []
    baseline, manifest = _baseline(ws, git, head, warnings, shared)
    baseline_sha = baseline["snapshotSha"]
    items: list[dict[str, Any]] = []
    baseline_actions = [INGEST]
    items.append(
        _item(
            "durable",
            "baseline",
            "baseline",
            "HEAD snapshot",
            list(baseline["reasonCodes"]),
            [],
            {"headSha": head, "snapshotSha": baseline_sha},
            baseline_actions,
        )
    )
    documents = _documents(git, head, manifest, baseline_sha)
    items.extend(documents)
    stale_docs = {d["title"] for d in documents if d["status"] == "stale"}
    records = _records(ws)
    excluded: frozenset[str] = frozenset()
    if records:
        from ragit.artifacts.catalog import EXCLUDED

        excluded = frozenset(EXCLUDED)
    suite_failures: dict[str, list[str]] = {}
    goal_failures: dict[str, list[str]] = {}
    for record in records:
        if record.kind != "failure" or record.status in excluded:
            continue
        if record.artifact_scope == "harness":
            for ref in record.provenance.input_refs[:1]:
                suite_failures.setdefault(ref, []).append(record.artifact_id)
        elif record.goal_id:
            goal_failures.setdefault(record.goal_id, []).append(record.artifact_id)
    for record in records:
        if record.status not in ("reviewed", "promoted"):
            continue
        if record.artifact_scope == "session":
            failures = [
                f for f in goal_failures.get(record.goal_id or "", []) if f != record.artifact_id
            ]
            items.append(_artifact_item(git, head, record, "memory", stale_docs, failures))
        elif record.kind == "suite":
            failures = suite_failures.get(record.artifact_id, [])
            items.append(_artifact_item(git, head, record, "harness", stale_docs, failures))
    chosen = [i for i in items if _selected(i, req, glob)]
    rank = {"stale": 0, "suspect": 1, "fresh": 2}
    order = {"baseline": 0, "document": 1, "memoryArtifact": 2, "harnessSuite": 3}
    chosen.sort(key=lambda i: (rank[i["status"]], order[i["itemType"]], i["title"], i["id"]))
    counts = {status: 0 for status in STATUSES}
    for item in chosen:
        counts[item["status"]] += 1
    overall = "stale" if counts["stale"] else "suspect" if counts["suspect"] else "fresh"
    limited = chosen[: req.max_count]
    if req.view == "minimal":
        limited = [
            {k: i[k] for k in ("scope", "itemType", "id", "title", "status", "reasonCodes")}
            for i in limited
        ]
    masked, count, sources = mask_json(limited, "items")
    redaction = RedactionSummary().merge_sources(sources, count)
    return {
        "overallStatus": overall,
        "counts": counts,
        "filters": {
            "scope": req.scope,
            "path": glob_text,
            "goalId": req.goal_id,
            "sessionId": req.session_id,
            "maxCount": req.max_count,
        },
        "view": req.view,
        "baseline": baseline,
        "items": masked,
        "omitted": len(chosen) - len(limited),
        "redactionSummary": redaction.dump(),
        "warnings": warnings,
    }


def _records(ws: Workspace) -> list[ArtifactRecord]:
    """Every artifact record; without any record file the record model is never imported."""
    root = ws.ragit_dir / "artifacts"
    if not any(root.glob("session/*.json")) and not any(root.glob("harness/*/*.json")):
        return []
    from ragit.artifacts.catalog import iter_artifacts

    return list(iter_artifacts(ws))


def _selected(item: dict[str, Any], req: DriftRequest, glob: GlobSet | None) -> bool:
    if req.scope not in ("all", item["scope"]):
        return False
    refs = item["sourceRefs"]
    if req.goal_id is not None and refs.get("goalId") != req.goal_id:
        return False
    if req.session_id is not None and refs.get("sourceSessionId") != req.session_id:
        return False
    return not (glob is not None and not any(glob.matches(p) for p in item["affectedPaths"]))
