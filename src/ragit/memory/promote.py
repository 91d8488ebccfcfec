"""`memory promote`: crystallize stable knowledge into corpus documents (docs/reference/memory.md,
contract §9).

Each candidate becomes one markdown document under ``memory.corpus_dir``
(default ``docs/memory``): ``decisions/`` (type ``adr``), ``glossary/``,
``plans/``, and ``<docType>/`` for the other document types. The file name is an
ASCII slug of the (masked) title; an existing file is never overwritten — the
next free ``-2``, ``-3``… name is used, so two promotions of the same title
both survive. Nothing is ingested (``ingested: false``): the agent reviews the
files, commits them, then runs ``ragit ingest``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ragit.artifacts.common import canonical_hash, require_masking, source_head
from ragit.artifacts.events import append_events, make_event
from ragit.artifacts.ids import normalize_instant, slugify
from ragit.artifacts.lock import memory_lock
from ragit.artifacts.sanitize import Sanitizer, admission_event, remask
from ragit.artifacts.storage import inside, require_initialized
from ragit.config import RagitConfig
from ragit.contract.errors import ConfigInvalid, InputInvalid
from ragit.memory.docs import create_document, plan_path, render_document, target_dir
from ragit.memory.models import PromoteInput
from ragit.memory.working import load_working
from ragit.workspace import Workspace

SUBDIRS = {"adr": "decisions", "glossary": "glossary", "plan": "plans"}
NOT_INGESTED_WARNING = (
    "promoted documents are not ingested: review them, commit them, then run `ragit ingest`"
)


def _sections(doc_type: str, c: dict[str, Any]) -> tuple[dict[str, Any], list[tuple[str, str]]]:
    summary = c["summary"]
    extra: list[tuple[str, str]] = []
    sections: dict[str, Any] = {}
    if doc_type == "adr":
        sections = {
            "Context": c.get("context") or summary,
            "Decision": c.get("decision") or summary,
            "Consequences": c.get("consequences") or None,
        }
        if c.get("rationale"):
            extra.append(("Rationale", c["rationale"]))
        if c.get("alternatives"):
            extra.append(("Alternatives", "\n".join(f"- {a}" for a in c["alternatives"])))
    elif doc_type == "glossary":
        term = c.get("term") or c["title"]
        entry = f"- **{term}**: {c.get('definition') or summary}"
        if c.get("aliases"):
            entry += f"\n  - aliases: {', '.join(c['aliases'])}"
        sections = {"Terms": entry}
    elif doc_type == "plan":
        sections = {
            "Milestones": c.get("milestones") or None,
            "Work Breakdown": c.get("workBreakdown") or None,
        }
    else:
        for key, name in (
            ("context", "Context"),
            ("decision", "Decision"),
            ("rationale", "Rationale"),
        ):
            if c.get(key):
                extra.append((name, c[key]))
    if c.get("relatedFiles"):
        extra.append(("Related Files", "\n".join(f"- `{p}`" for p in c["relatedFiles"])))
    return sections, extra


def promote(
    ws: Workspace, cfg: RagitConfig, payload: PromoteInput, *, dry_run: bool
) -> dict[str, Any]:
    """Write (or plan) the promoted documents; the data of `memory promote`.

    Raises:
        NotInitialized: no ``ragit init`` yet.
        ConfigInvalid: ``memory.corpus_dir`` is unsafe, or masking is off (apply only).
        SnapshotRefInvalid, SnapshotRefAmbiguous: a ``sourceHeadSha`` naming no single commit.
        StoreWriteBusy: the memory lock stayed busy.
    """
    require_initialized(ws)
    require_masking(cfg, ws, dry_run=dry_run)
    warnings: list[str] = []
    head = source_head(ws, payload.source_head_sha, warnings)
    promoted_at = normalize_instant(payload.promoted_at, "promotedAt")
    session = payload.source_session_id
    if session is None:
        state, _unreadable = load_working(ws)
        session = state["latestSessionId"]
    corpus = target_dir(ws, cfg.memory.corpus_dir, "memory.corpus_dir")
    sanitizer = Sanitizer.for_config(cfg, "memory.promote", "memory.promote")
    candidates = [
        sanitizer.json(
            c.model_dump(mode="json", by_alias=True, exclude_none=True), f"promotionCandidates[{i}]"
        )
        for i, c in enumerate(payload.promotion_candidates)
    ]
    planned: list[tuple[Path, str, str, dict[str, Any], str, Path]] = []
    taken: set[Path] = set()
    for model, cand in zip(payload.promotion_candidates, candidates, strict=True):
        doc_type = model.doc_type()
        directory = corpus / SUBDIRS.get(doc_type, doc_type)
        try:
            inside(ws, directory, "memory.corpus_dir")
        except InputInvalid:
            raise ConfigInvalid(
                ws.relative(ws.config_path), "memory.corpus_dir", "resolves outside the repository"
            ) from None
        slug = slugify(cand["title"], fallback_prefix=SUBDIRS.get(doc_type, doc_type))
        meta: dict[str, object] = {
            "source_session": session,
            "source_head_sha": head,
            "promoted_at": promoted_at,
        }
        if cand.get("id"):
            meta["candidate_id"] = cand["id"]
        if cand.get("tags"):
            meta["tags"] = cand["tags"]
        if cand.get("nextReviewAt"):
            meta["next_review_at"] = cand["nextReviewAt"]
        sections, extra = _sections(doc_type, cand)
        text = render_document(doc_type, cand["title"], cand["summary"], meta, sections, extra)
        path = plan_path(directory, slug, taken)
        taken.add(path)
        planned.append((directory, slug, text, cand, doc_type, path))
    planned_files = [ws.relative(item[5]) for item in planned]
    created: list[str] = []
    documents: list[dict[str, Any]] = []
    if not dry_run:
        with memory_lock(ws):
            written: set[Path] = set()
            for directory, slug, text, cand, doc_type, _path in planned:
                path = create_document(directory, slug, text, written)
                created.append(ws.relative(path))
                documents.append(_doc_entry(cand, doc_type, ws.relative(path)))
            digest = canonical_hash([created, [item[3] for item in planned]])
            events = [
                make_event(
                    "memory.promote",
                    summary=f"promoted {len(created)} document(s)",
                    content_digest=digest,
                    operation="memory.promote",
                    session_id=session,
                    source_head_sha=head,
                    related_paths=created,
                    output_refs=created,
                    metadata={"ingested": False},
                )
            ]
            if sanitizer.flagged:
                events.append(
                    admission_event(sanitizer, goal=None, session=session, head=head, digest=digest)
                )
            append_events(ws, events)
            sanitizer.flush(ws, events[0]["recordedAt"])
    else:
        for item, rel in zip(planned, planned_files, strict=True):
            documents.append(_doc_entry(item[3], item[4], rel))
    warnings.append(NOT_INGESTED_WARNING)
    data: dict[str, Any] = {
        "createdFiles": created,
        "plannedFiles": created if not dry_run else planned_files,
        "documents": documents,
        "sourceSessionId": session,
        "sourceHeadSha": head,
        "promotedAt": promoted_at,
        "ingested": False,
        "dryRun": dry_run,
        "nextSteps": [
            "review the files",
            "git add " + " ".join(created if not dry_run else planned_files) + " && git commit",
            "ragit ingest",
        ],
        "admission": sanitizer.dump_admission(),
        "redactionSummary": sanitizer.redaction.dump(),
        "warnings": warnings,
    }
    out, _summary = remask(data)
    assert isinstance(out, dict)
    return out


def _doc_entry(cand: dict[str, Any], doc_type: str, path: str) -> dict[str, Any]:
    return {
        "title": cand["title"],
        "docType": doc_type,
        "candidateId": cand.get("id"),
        "path": path,
    }
