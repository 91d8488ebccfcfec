"""`harness promote`: reviewed harness artifacts become ``docs/harness/`` documents
(docs/reference/harness.md).

Suite and envAssumption → ``plans/`` type plan; checker, rubric, case, oracle
and trace → ``specs/`` type spec; promptTemplate, fixture, golden and failure →
``pbds/`` type pbd; each with ``source_artifact`` in the frontmatter. The
artifact is marked ``promoted``/``durable``/``promoted_durable``. Like `memory
promote` it never overwrites a file and never ingests.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ragit.artifacts.catalog import ArtifactRecord, load_artifact
from ragit.artifacts.common import canonical_hash, require_masking
from ragit.artifacts.events import append_events, make_event
from ragit.artifacts.ids import format_instant, now_utc, slugify
from ragit.artifacts.lock import memory_lock
from ragit.artifacts.sanitize import remask
from ragit.artifacts.storage import inside, require_initialized
from ragit.artifacts.writes import save_artifact
from ragit.config import RagitConfig
from ragit.harness.models import HarnessPromoteInput
from ragit.harness.rules import record_rules
from ragit.memory.docs import create_document, plan_path, render_document, target_dir
from ragit.memory.promote import NOT_INGESTED_WARNING
from ragit.workspace import Workspace

PROMOTE_MAP: dict[str, tuple[str, str]] = {
    "suite": ("plans", "plan"),
    "envAssumption": ("plans", "plan"),
    "checker": ("specs", "spec"),
    "rubric": ("specs", "spec"),
    "case": ("specs", "spec"),
    "oracle": ("specs", "spec"),
    "trace": ("specs", "spec"),
    "promptTemplate": ("pbds", "pbd"),
    "fixture": ("pbds", "pbd"),
    "golden": ("pbds", "pbd"),
    "failure": ("pbds", "pbd"),
}
HARNESS_DOCS_DIR = "docs/harness"


def _promote_sections(record: ArtifactRecord, doc_type: str) -> dict[str, Any]:
    payload = record.payload or {}
    rules = record_rules(record)
    rule_lines = [f"`{k}`: {json.dumps(v, ensure_ascii=False)}" for k, v in rules.items()]
    refs = list(payload.get("resourceRefs") or [])
    summary = record.summary or record.title
    if doc_type == "plan":
        return {
            "Milestones": [f"Resource `{r}`" for r in refs] or None,
            "Work Breakdown": [f"Run the suite with `ragit harness run` ({len(refs)} resource(s))"]
            if refs
            else None,
        }
    if doc_type == "spec":
        return {
            "Scope": summary,
            "Functional Requirements": rule_lines or None,
            "Interfaces and Contracts": (
                "```json\n"
                + json.dumps(payload.get("input"), ensure_ascii=False, indent=2)
                + "\n```"
            )
            if payload.get("input") is not None
            else None,
            "Acceptance Criteria": rule_lines or None,
        }
    if doc_type == "pbd":
        return {"Implementation Scope": summary, "Failure and Drift Points": rule_lines or None}
    return {"Terms": f"- **{record.title}**: {summary}"}


def promote(
    ws: Workspace, cfg: RagitConfig, payload: HarnessPromoteInput, *, dry_run: bool
) -> dict[str, Any]:
    """Write (or plan) documents for reviewed harness artifacts; the data of `harness promote`.

    Raises:
        NotInitialized: no ``ragit init`` yet.
        ConfigInvalid: masking is off (apply only), or ``docs/harness`` escapes the repository.
        StoreWriteBusy: the memory lock stayed busy.
    """
    require_initialized(ws)
    require_masking(cfg, ws, dry_run=dry_run)
    warnings: list[str] = []
    now = format_instant(now_utc())
    root = target_dir(ws, HARNESS_DOCS_DIR, "docs/harness")
    plans: list[tuple[ArtifactRecord, Path, str, str, Path]] = []
    taken: set[Path] = set()
    for aid in dict.fromkeys(payload.artifact_refs):
        record = load_artifact(ws, aid)
        if record is None:
            warnings.append(f"unknown artifact id {aid}")
            continue
        if record.artifact_scope != "harness":
            warnings.append(
                f"{aid} is not a harness artifact; use memory promote for session knowledge"
            )
            continue
        if record.status != "reviewed":
            warnings.append(
                f"{aid} is {record.status}; only reviewed harness artifacts are promoted"
            )
            continue
        subdir, doc_type = PROMOTE_MAP.get(record.kind, ("glossary", "glossary"))
        directory = root / subdir
        inside(ws, directory, "docs/harness")
        meta: dict[str, object] = {
            "source_artifact": record.artifact_id,
            "source_session": record.source_session_id,
            "source_head_sha": record.source_head_sha,
            "promoted_at": now,
        }
        text = render_document(
            doc_type,
            record.title,
            record.summary or record.title,
            meta,
            _promote_sections(record, doc_type),
        )
        slug = slugify(record.title, fallback_prefix=record.kind.lower())
        path = plan_path(directory, slug, taken)
        taken.add(path)
        plans.append((record, directory, slug, text, path))
    planned = [ws.relative(p[4]) for p in plans]
    created: list[str] = []
    promoted: list[dict[str, Any]] = []
    if not dry_run and plans:
        with memory_lock(ws):
            written: set[Path] = set()
            for record, directory, slug, text, _path in plans:
                current = load_artifact(ws, record.artifact_id)
                if current is None or current.status != "reviewed":
                    warnings.append(f"{record.artifact_id} changed while promoting; skipped")
                    continue
                path = create_document(directory, slug, text, written)
                rel = ws.relative(path)
                created.append(rel)
                current.status = "promoted"
                current.tier = "durable"
                current.authority = "promoted_durable"
                current.updated_at = now
                current.payload = {**(current.payload or {}), "promotedPath": rel}
                current.review_history.append(
                    {
                        "from": "reviewed",
                        "to": "promoted",
                        "reason": f"promoted to {rel}",
                        "at": now,
                    }
                )
                save_artifact(ws, current)
                promoted.append({"artifactId": record.artifact_id, "path": rel})
            if created:
                append_events(
                    ws,
                    [
                        make_event(
                            "harness.promote",
                            summary=f"promoted {len(created)} harness document(s)",
                            content_digest=canonical_hash(promoted),
                            operation="harness.promote",
                            artifact_ids=[p["artifactId"] for p in promoted],
                            related_paths=created,
                            output_refs=created,
                            metadata={"ingested": False},
                            recorded_at=now,
                        )
                    ],
                )
    elif dry_run:
        promoted = [{"artifactId": p[0].artifact_id, "path": ws.relative(p[4])} for p in plans]
    if plans:
        warnings.append(NOT_INGESTED_WARNING)
    data: dict[str, Any] = {
        "createdFiles": created,
        "plannedFiles": created if not dry_run else planned,
        "promoted": promoted,
        "ingested": False,
        "dryRun": dry_run,
        "warnings": warnings,
    }
    out, _summary = remask(data)
    assert isinstance(out, dict)
    return out
