"""`memory recall`: the resume packet for a goal (docs/reference/memory.md, docs/contract.md §5;
contract §9).

Starts from the working state and the latest wrap, then retrieves from the exact
snapshot of HEAD (query text: the goal, plus the working goal when different;
topK ``memory.recall_top_k``) and merges reviewed artifact overlays.

When snapshot retrieval is unavailable — ``SNAPSHOT_NOT_INDEXED``,
``SNAPSHOT_MANIFEST_INVALID``, ``SNAPSHOT_SCHEMA_UNSUPPORTED``,
``SNAPSHOT_STORE_UNAVAILABLE`` or ``REPOSITORY_STATE_CHANGED`` — recall degrades
instead of failing: ``snapshotSha: null``, ``snapshot.status: "unavailable"``
(``snapshot.resolvedSha`` still names the HEAD that was tried), artifact hits
ranked by keyword only, and a warning. Selection fails before any embedding
call, so a degraded recall never calls a provider. Everything is re-masked.

``relatedDecisions`` = working-memory decisions ranked by the share of the goal's
terms they contain (newest first among equals), then one entry per decision
document among the snapshot hits (``<memory.corpus_dir>/decisions/`` and every
other ``adr`` document), titled by its H1.
"""

from __future__ import annotations

from typing import Any

from ragit.config import RagitConfig
from ragit.contract.errors import (
    RepositoryStateChanged,
    SnapshotIngestRunning,
    SnapshotManifestInvalid,
    SnapshotNotIndexed,
    SnapshotSchemaUnsupported,
    SnapshotStoreUnavailable,
)
from ragit.memory.working import load_session, load_working
from ragit.workspace import Workspace

DEGRADING = (
    SnapshotNotIndexed,
    SnapshotIngestRunning,
    SnapshotManifestInvalid,
    SnapshotSchemaUnsupported,
    SnapshotStoreUnavailable,
    RepositoryStateChanged,
)

_LOOP_FIELDS = {
    "minimal": ("id", "title", "status", "nextAction"),
    "default": ("id", "title", "status", "nextAction", "blockingConditions", "sourceSessionId"),
}
_DECISION_FIELDS = {
    "minimal": ("id", "title", "source"),
    "default": ("id", "title", "summary", "source", "sourceSessionId", "path", "citation"),
}


def _project(item: dict[str, Any], view: str, fields: dict[str, tuple[str, ...]]) -> dict[str, Any]:
    if view == "full":
        return dict(item)
    return {key: item.get(key) for key in fields[view]}


def degraded_warning(code: str) -> str:
    return (
        f"snapshot retrieval is unavailable ({code}); this packet holds working memory and "
        "keyword-only artifact hits and is not snapshot-backed"
    )


def recall(
    ws: Workspace, cfg: RagitConfig, goal: str, *, view: str, wait_s: float | None = None
) -> dict[str, Any]:
    """The data of `memory recall`; never fails because a snapshot is missing.

    ``wait_s``: how long to wait for a running ingest of HEAD before degrading (None:
    ``retrieval.wait_for_ingest``).

    Raises:
        NotAGitRepository: not inside a git worktree.
        StoreReadBusy, EmbeddingProviderFailed, EmbeddingCredentialsMissing: retrieval
            failures that are not about the snapshot (contract §3).
    """
    from ragit.retrieve.artifacts import KEYWORD_ONLY_WARNING, artifact_hits, merge_hits
    from ragit.retrieve.query import Engine, retrieve_hits
    from ragit.retrieve.views import Redactor, project_hit
    from ragit.snapshot._git import GitRepo
    from ragit.text.question import analyze

    warnings: list[str] = []
    state, unreadable = load_working(ws)
    if unreadable:
        warnings.append("the working state is unreadable; recall shows no working memory")
    latest = load_session(ws, state["latestSessionId"])
    working_goal = state["goal"]
    query_text = goal if not working_goal or working_goal == goal else f"{goal}\n{working_goal}"
    question = analyze(query_text)
    top_k = cfg.memory.recall_top_k
    git = GitRepo(ws.root)
    engine = Engine(ws)
    snapshot_sha: str | None
    try:
        selection, hits, selection_warnings = retrieve_hits(
            ws, engine, question, None, "durable", top_k, wait_s=wait_s
        )
        warnings.extend(selection_warnings)
        snapshot_sha = selection.resolved_sha
        snapshot = selection.block()
        commit_time: float | None = float(git.commit_time(snapshot_sha))
    except DEGRADING as exc:
        warnings.append(degraded_warning(exc.code))
        hits = []
        snapshot_sha = None
        head = git.head()
        dirty = git.is_dirty()
        snapshot = {
            "requestedRef": "HEAD",
            "resolvedSha": head.sha,
            "selection": "head-exact",
            "status": "unavailable",
            "branch": head.branch,
            "detached": head.detached,
            "worktreeDirty": dirty,
        }
        commit_time = float(git.commit_time(head.sha)) if head.sha else None
    finally:
        engine.close()
    overlay = artifact_hits(ws, question, "all", snapshot_sha, commit_time, top_k=top_k)
    merged = merge_hits(hits, overlay, top_k)
    if any(h.origin_type == "artifact" and h.mode == "keyword" for h in merged):
        warnings.append(KEYWORD_ONLY_WARNING)

    redact = Redactor()
    projected = [
        project_hit(h, view, explain=False, redact=redact, index=i) for i, h in enumerate(merged)
    ]
    decisions = _related_decisions(state, latest, goal, top_k, cfg.memory.corpus_dir, merged)
    next_actions = list(state["nextActions"])
    for loop in state["openLoops"]:
        action = loop.get("nextAction")
        if isinstance(action, str) and action not in next_actions:
            next_actions.append(action)
    packet: dict[str, Any] = {
        "goal": goal,
        "view": view,
        "workingGoal": working_goal,
        "summary": state["summary"],
        "constraints": list(state["constraints"]),
        "openLoops": [_project(loop, view, _LOOP_FIELDS) for loop in state["openLoops"]],
        "relatedDecisions": [_project(d, view, _DECISION_FIELDS) for d in decisions],
        "nextActions": next_actions,
        "latestSessionId": state["latestSessionId"],
        "sourceHeadSha": state["sourceHeadSha"],
        "createdAt": (latest or {}).get("createdAt") or state["updatedAt"],
        "sessionCount": state["sessionCount"],
    }
    from ragit.security.masking import mask_json

    masked, count, sources = mask_json(packet)
    assert isinstance(masked, dict)
    summary = redact.summary()
    all_sources = list(dict.fromkeys([*sources, *summary["sources"]]))
    return {
        **masked,
        "retrievedHits": projected,
        "snapshotSha": snapshot_sha,
        "snapshot": snapshot,
        "warnings": warnings,
        "redactionSummary": {
            "applied": bool(count or summary["maskedCount"]),
            "maskedCount": count + summary["maskedCount"],
            "sources": all_sources,
        },
    }


def _related_decisions(
    state: dict[str, Any],
    latest: dict[str, Any] | None,
    goal: str,
    limit: int,
    corpus_dir: str,
    hits: list[Any],
) -> list[dict[str, Any]]:
    from ragit.retrieve.artifacts import keyword_score, query_terms

    terms = query_terms(goal)
    pool: dict[str, dict[str, Any]] = {}
    for decision in state["decisions"]:
        pool[decision["id"]] = {**decision, "source": "working"}
    for decision in (latest or {}).get("decisions") or []:
        if isinstance(decision, dict) and isinstance(decision.get("id"), str):
            pool.setdefault(decision["id"], {**decision, "source": "session"})
    ranked = sorted(
        enumerate(pool.values()),
        key=lambda pair: (
            -keyword_score(terms, f"{pair[1].get('title', '')}\n{pair[1].get('summary', '')}"),
            -pair[0],
        ),
    )
    out = [item for _i, item in ranked[:limit]]
    prefix = corpus_dir.strip("/") + "/decisions/"
    seen: set[str] = set()
    for hit in hits:
        if hit.origin_type != "document" or hit.path in seen:
            continue
        if not (hit.path.startswith(prefix) or hit.doc_type == "adr"):
            continue
        # One entry per decision document, from its best hit, titled by its H1.
        seen.add(hit.path)
        out.append(
            {
                "id": hit.citation["id"],
                "title": hit.heading_path.split(" > ", 1)[0] or hit.section_title,
                "summary": hit.text[:240],
                "source": "snapshot",
                "sourceSessionId": None,
                "path": hit.path,
                "citation": hit.citation,
            }
        )
    return out
