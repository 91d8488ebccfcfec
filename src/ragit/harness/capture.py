"""`harness capture`: store a suite of harness resources as artifacts (docs/reference/harness.md).

A harness is a suite of captured resources (cases, oracles, checkers, fixtures…)
that `harness run` can execute. Resources are stored like every artifact
(``.ragit/artifacts/harness/<kind>/<artifactId>.json``); their ``payload`` keeps
``input``, ``expected``, ``oracleRefs``, ``resourceRefs`` and ``evidenceRefs``.

Deterministic rules live in a resource's ``expected`` object
(:mod:`ragit.harness.rules`). References name artifact ids, or the titles of
resources captured in the same request (resolved to ids at capture time). A
capture without a suite resource gets one that references every other resource.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from ragit import __version__
from ragit.artifacts.catalog import (
    ArtifactRecord,
    EvidenceRef,
    Provenance,
    artifact_path,
    load_artifact,
)
from ragit.artifacts.common import NO_HEAD_WARNING, canonical_hash, current_head, require_masking
from ragit.artifacts.events import append_events, make_event
from ragit.artifacts.ids import (
    ARTIFACT_ID,
    artifact_id,
    content_hash,
    evidence_id,
    format_instant,
    goal_id,
    now_utc,
    parse_artifact_id,
)
from ragit.artifacts.lock import memory_lock
from ragit.artifacts.sanitize import Sanitizer, admission_event, remask
from ragit.artifacts.storage import require_initialized
from ragit.artifacts.writes import save_artifact
from ragit.config import RagitConfig
from ragit.harness.models import HarnessCaptureInput
from ragit.harness.rules import check_case_input, parse_rules
from ragit.workspace import Workspace

EVIDENCE_KINDS = frozenset({"trace", "failure", "fixture", "golden"})


def _body(title: str, summary: str | None, inp: Any, expected: Any) -> str:
    parts = [title]
    if summary:
        parts += ["", summary]
    if inp is not None:
        parts += [
            "",
            "## Input",
            "",
            "```json",
            json.dumps(inp, ensure_ascii=False, indent=2),
            "```",
        ]
    if expected is not None:
        parts += [
            "",
            "## Expected",
            "",
            "```json",
            json.dumps(expected, ensure_ascii=False, indent=2),
            "```",
        ]
    return "\n".join(parts)


def _excerpt(text: str, limit: int = 240) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 3].rstrip() + "..."


def capture(
    ws: Workspace, cfg: RagitConfig, payload: HarnessCaptureInput, *, dry_run: bool
) -> dict[str, Any]:
    """Store (or plan) harness resources and their suite; the data of `harness capture`.

    Raises:
        NotInitialized: no ``ragit init`` yet.
        ConfigInvalid: masking is off (apply only).
        InputInvalid: a rule or case-input field of the wrong type.
        StoreWriteBusy: the memory lock stayed busy.
    """
    require_initialized(ws)
    require_masking(cfg, ws, dry_run=dry_run)
    warnings: list[str] = []
    head = current_head(ws)
    if head is None:
        warnings.append(NO_HEAD_WARNING)
    now = format_instant(now_utc())
    san = Sanitizer.for_config(cfg, "harness.capture", "harness.capture")
    goal = san.text(payload.goal, "goal")
    gid = goal_id(goal)
    masked: list[dict[str, Any]] = []
    for i, resource in enumerate(payload.resources):
        raw = resource.model_dump(mode="json", by_alias=True, exclude_none=True)
        item = san.json(raw, f"resources[{i}]")
        parse_rules(item.get("expected"), f"resources[{i}].expected")
        if item["kind"] == "case":
            check_case_input(item.get("input"), f"resources[{i}].input")
        masked.append(item)
    ids: list[str] = []
    by_title: dict[str, str] = {}
    for item in masked:
        digest = canonical_hash(
            {k: item.get(k) for k in ("summary", "input", "expected", "oracleRefs", "resourceRefs")}
        )
        aid = artifact_id("harness", item["kind"], gid, item["title"], digest)
        ids.append(aid)
        by_title.setdefault(item["title"], aid)

    def resolve(refs: list[str], field: str) -> list[str]:
        out: list[str] = []
        for ref in refs:
            if ARTIFACT_ID.fullmatch(ref):
                if parse_artifact_id(ref) is None or (
                    ref not in ids and load_artifact(ws, ref) is None
                ):
                    warnings.append(f"{field}: unknown artifact {ref}")
                out.append(ref)
            elif ref in by_title:
                out.append(by_title[ref])
            else:
                warnings.append(f"{field}: no resource titled {ref!r} in this capture")
        return list(dict.fromkeys(out))

    records: dict[str, ArtifactRecord] = {}
    non_suite = [aid for aid, item in zip(ids, masked, strict=True) if item["kind"] != "suite"]
    for i, (aid, item) in enumerate(zip(ids, masked, strict=True)):
        if aid in records:
            continue
        resource_refs = resolve(item.get("resourceRefs", []), f"resources[{i}].resourceRefs")
        if item["kind"] == "suite" and not resource_refs:
            resource_refs = list(non_suite)
        extra: dict[str, Any] = {}
        if item["kind"] == "suite":
            extra["artifactRefs"] = list(payload.artifact_refs)
        records[aid] = _resource_record(
            aid,
            item,
            {
                "input": item.get("input"),
                "expected": item.get("expected"),
                "oracleRefs": resolve(item.get("oracleRefs", []), f"resources[{i}].oracleRefs"),
                "resourceRefs": resource_refs,
                "evidenceRefs": list(item.get("evidenceRefs", [])),
                **extra,
            },
            gid=gid,
            payload_in=payload,
            head=head,
            now=now,
        )
    suites = [aid for aid in ids if records[aid].kind == "suite"]
    if not suites:
        title = f"{goal} suite"
        title = title if len(title) <= 300 else title[:296] + "..."
        suite_item = {"kind": "suite", "title": title, "summary": f"Harness suite for: {goal}"}
        aid = artifact_id("harness", "suite", gid, title, canonical_hash(non_suite))
        records[aid] = _resource_record(
            aid,
            suite_item,
            {
                "input": None,
                "expected": None,
                "oracleRefs": [],
                "resourceRefs": list(non_suite),
                "evidenceRefs": [],
                "artifactRefs": list(payload.artifact_refs),
            },
            gid=gid,
            payload_in=payload,
            head=head,
            now=now,
        )
        suites = [aid]
    suite_id = suites[0]
    order = [*dict.fromkeys([*ids, suite_id])]
    new_ids = [aid for aid in order if artifact_path(ws, aid) is not None and not _exists(ws, aid)]
    existing = [aid for aid in order if aid not in new_ids]
    if not dry_run:
        with memory_lock(ws):
            new_ids = []
            existing = []
            for aid in order:
                if _exists(ws, aid):
                    existing.append(aid)
                    continue
                save_artifact(ws, records[aid])
                new_ids.append(aid)
            digest = canonical_hash(order)
            events = [
                make_event(
                    "harness.capture",
                    summary=f"captured {len(new_ids)} harness artifact(s) for suite {suite_id}",
                    content_digest=digest,
                    operation="harness.capture",
                    goal_id=gid,
                    episode_id=payload.episode_id,
                    session_id=payload.source_session_id,
                    source_head_sha=head,
                    artifact_ids=new_ids,
                    input_refs=list(payload.artifact_refs),
                    recorded_at=now,
                )
            ]
            if san.flagged:
                events.append(
                    admission_event(
                        san,
                        goal=gid,
                        session=payload.source_session_id,
                        head=head,
                        digest=digest,
                        episode=payload.episode_id,
                    )
                )
            append_events(ws, events)
            san.flush(ws, now)
    if existing:
        warnings.append(f"{len(existing)} artifact(s) were captured before and keep their status")
    data: dict[str, Any] = {
        "artifactIds": new_ids,
        "existingArtifactIds": existing,
        "suiteId": suite_id,
        "goalId": gid,
        "artifacts": [
            {"artifactId": aid, "kind": records[aid].kind, "title": records[aid].title}
            for aid in order
        ],
        "dryRun": dry_run,
        "admission": san.dump_admission(),
        "redactionSummary": san.redaction.dump(),
        "warnings": warnings,
    }
    out, _summary = remask(data)
    assert isinstance(out, dict)
    return out


def _exists(ws: Workspace, aid: str) -> bool:
    path = artifact_path(ws, aid)
    return path is None or path.exists()


def _resource_record(
    aid: str,
    item: dict[str, Any],
    body: dict[str, Any],
    *,
    gid: str,
    payload_in: HarnessCaptureInput,
    head: str | None,
    now: str,
) -> ArtifactRecord:
    kind = item["kind"]
    text = _body(item["title"], item.get("summary"), item.get("input"), item.get("expected"))
    evidence: list[EvidenceRef] = []
    policy: Literal["evidence", "harness"] = "evidence" if kind in EVIDENCE_KINDS else "harness"
    if policy == "evidence":
        excerpt = _excerpt(item.get("summary") or text)
        evidence.append(EvidenceRef(evidence_id=evidence_id(aid, "body"), excerpt=excerpt))
    return ArtifactRecord(
        artifact_id=aid,
        artifact_scope="harness",
        kind=kind,
        title=item["title"],
        summary=item.get("summary") or "",
        text=text,
        goal_id=gid,
        episode_id=payload_in.episode_id,
        source_session_id=payload_in.source_session_id,
        source_head_sha=head,
        capture_head_sha=head,
        bound_head_sha=head,
        binding_status="bound" if head else "pending",
        authority="assistant_inferred",
        confidence=0.8,
        search_policy=policy,
        evidence_refs=evidence,
        provenance=Provenance(
            actor="assistant",
            producer_version=__version__,
            operation="harness.capture",
            input_refs=list(payload_in.artifact_refs),
            evidence_refs=[e.evidence_id for e in evidence],
            content_hash=content_hash(text),
        ),
        created_at=now,
        updated_at=now,
        payload=body,
    )
