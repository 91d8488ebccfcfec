"""Harness artifacts: `harness capture`, `verify`, `pack` and `promote` (UR §12.10–12.14).

A harness is a suite of captured resources (cases, oracles, checkers, fixtures…)
that `harness run` can execute. Resources are stored like every artifact
(``.ragit/artifacts/harness/<kind>/<artifactId>.json``); their ``payload`` keeps
``input``, ``expected``, ``oracleRefs``, ``resourceRefs`` and ``evidenceRefs``.

Deterministic rules live in a resource's ``expected`` object (:data:`RULE_KEYS`);
rule-bearing kinds are ``case``, ``oracle``, ``checker``, ``rubric`` and
``golden``. A case's rules are its own plus those of the resources its
``oracleRefs`` name. References name artifact ids, or the titles of resources
captured in the same request (resolved to ids at capture time).

`harness promote` writes reviewed harness artifacts as documents under
``docs/harness/`` (suite and envAssumption → ``plans/`` type plan; checker,
rubric, case, oracle and trace → ``specs/`` type spec; promptTemplate, fixture,
golden and failure → ``pbds/`` type pbd) with ``source_artifact`` in the
frontmatter, and marks the artifact ``promoted``/``durable``/``promoted_durable``.
Like `memory promote` it never overwrites a file and never ingests.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

from ragit import __version__
from ragit.config import RagitConfig
from ragit.contract.errors import InputInvalid
from ragit.memory._store import inside, memory_lock, read_record, require_initialized
from ragit.memory.artifacts import (
    EXCLUDED,
    ArtifactRecord,
    EvidenceRef,
    Provenance,
    artifact_path,
    load_artifact,
    parse_record,
    save_artifact,
)
from ragit.memory.common import NO_HEAD_WARNING, canonical_hash, current_head, require_masking
from ragit.memory.docs import create_document, plan_path, render_document, target_dir
from ragit.memory.events import append_events, make_event
from ragit.memory.ids import (
    ARTIFACT_ID,
    artifact_id,
    content_hash,
    evidence_id,
    format_instant,
    goal_id,
    now_utc,
    parse_artifact_id,
    slugify,
)
from ragit.memory.models import HarnessCaptureInput, HarnessPromoteInput
from ragit.memory.sanitize import Sanitizer, admission_event, remask
from ragit.workspace import Workspace

RULE_KEYS: tuple[str, ...] = (
    "exitCode",
    "mustInclude",
    "mustNotInclude",
    "stderrMustInclude",
    "stderrMustNotInclude",
    "jsonSubset",
)
RULE_KINDS = frozenset({"case", "oracle", "checker", "rubric", "golden"})
EVIDENCE_KINDS = frozenset({"trace", "failure", "fixture", "golden"})
CASE_INPUT_KEYS = ("args", "stdin", "env", "timeoutMs")
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


# ---------------------------------------------------------------- rules


def parse_rules(expected: Any, field: str) -> dict[str, Any]:
    """The deterministic rules inside an ``expected`` object (other keys are kept as data).

    Raises:
        InputInvalid: a rule key with a value of the wrong type.
    """
    if not isinstance(expected, dict):
        return {}
    rules: dict[str, Any] = {}
    for key in RULE_KEYS:
        if key not in expected:
            continue
        value = expected[key]
        where = f"{field}.{key}"
        if key == "exitCode":
            if isinstance(value, bool) or not isinstance(value, int) or not -255 <= value <= 255:
                raise InputInvalid(where, "must be an integer exit status")
        elif key == "jsonSubset":
            if not isinstance(value, (dict, list)):
                raise InputInvalid(where, "must be a JSON object or array")
        elif not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise InputInvalid(where, "must be a list of strings")
        rules[key] = value
    return rules


def check_case_input(value: Any, field: str) -> None:
    """Validate the keys a command executor reads from a case's ``input``.

    Raises:
        InputInvalid: ``args`` not strings, ``stdin`` not a string, ``env`` not a
            string map with variable names, ``timeoutMs`` not in 1..3,600,000.
    """
    if not isinstance(value, dict):
        return
    args = value.get("args")
    if args is not None and (
        not isinstance(args, list) or not all(isinstance(a, str) for a in args)
    ):
        raise InputInvalid(f"{field}.args", "must be a list of strings")
    if "stdin" in value and not isinstance(value["stdin"], str):
        raise InputInvalid(f"{field}.stdin", "must be a string")
    env = value.get("env")
    if env is not None:
        import re

        if not isinstance(env, dict) or not all(
            isinstance(k, str)
            and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]{0,127}", k)
            and isinstance(v, str)
            for k, v in env.items()
        ):
            raise InputInvalid(f"{field}.env", "must map variable names to strings")
    timeout = value.get("timeoutMs")
    if timeout is not None and (
        isinstance(timeout, bool) or not isinstance(timeout, int) or not 1 <= timeout <= 3_600_000
    ):
        raise InputInvalid(f"{field}.timeoutMs", "must be an integer between 1 and 3600000")


def record_rules(record: ArtifactRecord) -> dict[str, Any]:
    if record.kind not in RULE_KINDS or not record.payload:
        return {}
    try:
        return parse_rules(record.payload.get("expected"), "expected")
    except InputInvalid:
        return {}


# ---------------------------------------------------------------- capture


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


# ---------------------------------------------------------------- suites


def resolve_suite(ws: Workspace, ref: str, field: str) -> ArtifactRecord:
    """A suite by artifact id or by its JSON path under ``.ragit/artifacts/harness/``.

    Raises:
        InputInvalid: malformed, outside the harness artifacts, unknown, or not a suite.
    """
    if ARTIFACT_ID.fullmatch(ref):
        parsed = parse_artifact_id(ref)
        if parsed is None or parsed != ("harness", "suite"):
            raise InputInvalid(field, "must name a harness suite (art_harness_suite_…)")
        record = load_artifact(ws, ref)
        if record is None:
            raise InputInvalid(field, "no harness suite with this id")
        return record
    from ragit.ingest.surface import validate_repo_path

    rel = validate_repo_path(ref, field)
    if not rel.startswith(".ragit/artifacts/harness/") or not rel.endswith(".json"):
        raise InputInvalid(
            field, "a suite path must be a .json file under .ragit/artifacts/harness/"
        )
    path = inside(ws, ws.root / rel, field)
    record = parse_record(read_record(path))
    if record is None or record.kind != "suite" or record.artifact_scope != "harness":
        raise InputInvalid(field, "the file is not a harness suite record")
    return record


def suite_resources(ws: Workspace, suite: ArtifactRecord) -> tuple[list[ArtifactRecord], list[str]]:
    """The suite's resources (in reference order) and the references that did not load."""
    refs = list((suite.payload or {}).get("resourceRefs") or [])
    found: list[ArtifactRecord] = []
    missing: list[str] = []
    for ref in refs:
        record = load_artifact(ws, ref) if isinstance(ref, str) else None
        if record is None:
            missing.append(str(ref))
        else:
            found.append(record)
    return found, missing


def case_rules(ws: Workspace, case: ArtifactRecord) -> list[tuple[ArtifactRecord, dict[str, Any]]]:
    """Rule sources of a case: itself, then the rule-bearing resources it references."""
    out: list[tuple[ArtifactRecord, dict[str, Any]]] = []
    own = record_rules(case)
    if own:
        out.append((case, own))
    for ref in (case.payload or {}).get("oracleRefs") or []:
        other = load_artifact(ws, ref) if isinstance(ref, str) else None
        if other is None or other.status in EXCLUDED:
            continue
        rules = record_rules(other)
        if rules:
            out.append((other, rules))
    return out


def verify_suite(ws: Workspace, suite: ArtifactRecord) -> dict[str, Any]:
    """Structural preflight of a suite (no execution): ``{suiteId, checks[], hasFailure}``."""
    checks: list[dict[str, Any]] = []

    def check(name: str, ok: bool, detail: str) -> None:
        checks.append({"name": name, "ok": ok, "detail": detail})

    resources, missing = suite_resources(ws, suite)
    refs = (suite.payload or {}).get("resourceRefs") or []
    check("suite-status", suite.status not in EXCLUDED, f"suite status is {suite.status}")
    check("suite-has-resources", bool(refs), f"{len(refs)} resource reference(s)")
    check(
        "resources-resolve",
        not missing,
        "all references load" if not missing else "missing: " + ", ".join(missing),
    )
    inactive = [r.artifact_id for r in resources if r.status in EXCLUDED]
    check(
        "resources-active",
        not inactive,
        "no resource is superseded, retracted or archived"
        if not inactive
        else "inactive (skipped by run): " + ", ".join(inactive),
    )
    cases = [r for r in resources if r.kind == "case" and r.status not in EXCLUDED]
    check("suite-has-cases", bool(cases), f"{len(cases)} active case(s)")
    for case in cases:
        sources = case_rules(ws, case)
        n = sum(len(rules) for _src, rules in sources)
        check(
            f"case-bindings:{case.artifact_id}",
            bool(sources),
            f"{n} rule(s) from {len(sources)} source(s)"
            if sources
            else "the case declares no rules and no oracle with rules",
        )
    return {
        "suiteId": suite.artifact_id,
        "checks": checks,
        "hasFailure": any(not c["ok"] for c in checks),
    }


def verify(ws: Workspace, suite_ref: str) -> dict[str, Any]:
    """The data of `harness verify` (reads only).

    Raises:
        InputInvalid: the suite reference names no suite.
    """
    suite = resolve_suite(ws, suite_ref, "suite")
    data = verify_suite(ws, suite)
    out, _summary = remask(data)
    assert isinstance(out, dict)
    return out


def pack(ws: Workspace, suite_ref: str) -> dict[str, Any]:
    """The data of `harness pack` (reads only): the suite's resources, re-masked.

    Raises:
        InputInvalid: the suite reference names no suite.
    """
    suite = resolve_suite(ws, suite_ref, "suiteRef")
    resources, missing = suite_resources(ws, suite)
    data = {
        "suiteId": suite.artifact_id,
        "goal": suite.summary.removeprefix("Harness suite for: ") or suite.title,
        "goalId": suite.goal_id,
        "title": suite.title,
        "status": suite.status,
        "resources": [
            {
                "artifactId": r.artifact_id,
                "kind": r.kind,
                "title": r.title,
                "summary": r.summary,
                "status": r.status,
                "rules": record_rules(r),
                "input": (r.payload or {}).get("input"),
            }
            for r in resources
        ],
        "missingRefs": missing,
    }
    masked, summary = remask(data)
    assert isinstance(masked, dict)
    masked["redactionSummary"] = summary.dump()
    return masked


# ---------------------------------------------------------------- promote


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
    from ragit.memory.promote import NOT_INGESTED_WARNING

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
