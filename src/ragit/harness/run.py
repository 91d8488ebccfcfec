"""`harness run`: execute a suite's cases with the ``command`` executor (docs/reference/harness.md).

v1 runs cases one at a time (``concurrency`` 1). For each active case of the
suite (or the ``cases`` selected) the executor runs ``argv + input.args`` in
``cwd`` (repo-relative, default the root) with ``input.stdin`` — or the case's
``input`` as JSON — on stdin, the environment plus ``executor.env`` and
``input.env``, and a timeout (``input.timeoutMs``, else ``executor.timeoutMs``,
else 60 s). A timed-out case's whole process group is killed.

Rules (``exitCode``, ``mustInclude``, ``mustNotInclude``, ``stderrMustInclude``,
``stderrMustNotInclude``, ``jsonSubset``) come from the case and the oracles it
references; each rule item is one check. A case is ``passed`` when every check
holds, ``failed`` when one does not, ``errored`` when it could not start or
timed out. ``jsonSubset`` reads stdout as JSON (or its last non-empty line): an
object matches when every expected key matches recursively, an array when it
has the expected length and matching items.

Outputs are masked before they are recorded or shown: excerpts (the last 400
characters) and hashes are of masked text; environment **values** are never
recorded (only ``envKeys``); argv is masked. Failed and errored cases become
``failure`` artifacts (captured, evidence). The run record goes to
``.ragit/log/harness-runs/<runId>.json``. A dry-run resolves the suite, runs the
preflight and plans the cases without executing or writing anything.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from ragit import __version__
from ragit.artifacts.catalog import EXCLUDED, ArtifactRecord, EvidenceRef, Provenance, artifact_path
from ragit.artifacts.common import canonical_hash, current_head, require_masking
from ragit.artifacts.events import append_events, make_event
from ragit.artifacts.ids import (
    RUN_ID,
    artifact_id,
    content_hash,
    evidence_id,
    format_instant,
    now_utc,
    run_id,
)
from ragit.artifacts.lock import memory_lock
from ragit.artifacts.sanitize import Sanitizer, admission_event, remask
from ragit.artifacts.storage import inside, require_initialized, write_record
from ragit.artifacts.writes import save_artifact
from ragit.config import RagitConfig
from ragit.contract.errors import InputInvalid
from ragit.harness.executor import execute
from ragit.harness.models import HarnessRunInput
from ragit.harness.rules import evaluate_rules, parse_stdout_json
from ragit.harness.suites import case_rules, resolve_suite, suite_resources
from ragit.harness.verify import verify_suite
from ragit.workspace import Workspace

DEFAULT_TIMEOUT_MS = 60_000
EXCERPT_CHARS = 400


def runs_dir(ws: Workspace) -> Path:
    return ws.ragit_dir / "log" / "harness-runs"


def run_path(ws: Workspace, rid: str) -> Path:
    if RUN_ID.fullmatch(rid) is None:
        raise ValueError("not a run id")
    return runs_dir(ws) / f"{rid}.json"


def _tail(text: str) -> str:
    return text if len(text) <= EXCERPT_CHARS else "..." + text[-(EXCERPT_CHARS - 3) :]


def _structured(stdout: str) -> dict[str, Any] | None:
    value = parse_stdout_json(stdout)
    if value is ...:
        return None
    if isinstance(value, dict):
        return {"type": "object", "keys": sorted(str(k) for k in value)[:20]}
    if isinstance(value, list):
        return {"type": "array", "length": len(value)}
    return {"type": type(value).__name__}


def run(
    ws: Workspace, cfg: RagitConfig, payload: HarnessRunInput, *, dry_run: bool
) -> dict[str, Any]:
    """Execute (or plan) a suite; the data of `harness run`.

    Raises:
        NotInitialized: no ``ragit init`` yet.
        ConfigInvalid: masking is off (apply only).
        InputInvalid: unknown suite, a suite failing preflight (apply only), a bad cwd.
        StoreWriteBusy: the memory lock stayed busy while recording.
    """
    require_initialized(ws)
    require_masking(cfg, ws, dry_run=dry_run)
    warnings: list[str] = []
    suite = resolve_suite(ws, payload.suite_ref, "suiteRef")
    preflight = verify_suite(ws, suite)
    if preflight["hasFailure"] and not dry_run:
        raise InputInvalid(
            "suiteRef", "the suite fails its structural preflight; run `ragit harness verify`"
        )
    executor = payload.executor
    cwd = ws.root if executor.cwd in (None, ".") else ws.root / str(executor.cwd)
    cwd = inside(ws, cwd, "executor.cwd")
    if not cwd.is_dir():
        raise InputInvalid("executor.cwd", "directory does not exist")
    resources, _missing = suite_resources(ws, suite)
    cases = [r for r in resources if r.kind == "case" and r.status not in EXCLUDED]
    if payload.cases is not None:
        wanted = list(dict.fromkeys(payload.cases))
        known = {c.artifact_id for c in cases}
        for aid in wanted:
            if aid not in known:
                warnings.append(f"{aid} is not an active case of suite {suite.artifact_id}")
        cases = [c for c in cases if c.artifact_id in set(wanted)]
    timeout_ms = executor.timeout_ms or DEFAULT_TIMEOUT_MS
    started_at = format_instant(now_utc())
    case_ids = [c.artifact_id for c in cases]
    rid = run_id(suite.artifact_id, started_at, case_ids)
    head = current_head(ws)
    san = Sanitizer.for_config(cfg, "harness.run", "harness.run")
    masked_argv = [san.text(a, f"executor.argv[{i}]") for i, a in enumerate(executor.argv)]
    results: list[dict[str, Any]] = []
    failures: list[ArtifactRecord] = []
    if dry_run:
        for case in cases:
            results.append(
                {
                    "caseId": case.artifact_id,
                    "title": case.title,
                    "status": "skipped",
                    "exitCode": None,
                    "durationMs": 0,
                    "timedOut": False,
                    "stdoutExcerpt": "",
                    "stderrExcerpt": "",
                    "stdoutHash": None,
                    "stderrHash": None,
                    "structuredOutputSummary": None,
                    "checkResults": [],
                    "failureArtifactIds": [],
                }
            )
    else:
        base_env = {**os.environ, **executor.env}
        for n, case in enumerate(cases):
            inp = (case.payload or {}).get("input")
            inp = inp if isinstance(inp, dict) else {}
            args = [a for a in inp.get("args", []) if isinstance(a, str)]
            stdin = inp["stdin"] if isinstance(inp.get("stdin"), str) else json.dumps(inp)
            env = {**base_env, **{k: v for k, v in (inp.get("env") or {}).items()}}
            case_timeout = inp.get("timeoutMs") if isinstance(inp.get("timeoutMs"), int) else None
            outcome = execute(
                [*executor.argv, *args],
                cwd,
                env,
                stdin.encode("utf-8"),
                (case_timeout or timeout_ms) / 1000.0,
            )
            stdout = san.text(outcome["stdout"], f"caseResults[{n}].stdout")
            stderr = san.text(outcome["stderr"], f"caseResults[{n}].stderr")
            sources = case_rules(ws, case)
            checks = evaluate_rules(
                sources, outcome["exitCode"], outcome["stdout"], outcome["stderr"]
            )
            if outcome["error"]:
                status = "errored"
            elif not checks:
                status = "failed"
                checks.append(
                    {
                        "name": "rules",
                        "ok": False,
                        "detail": "the case has no rules",
                        "sourceArtifactId": case.artifact_id,
                        "sourceKind": case.kind,
                    }
                )
            else:
                status = "passed" if all(c["ok"] for c in checks) else "failed"
            result: dict[str, Any] = {
                "caseId": case.artifact_id,
                "title": case.title,
                "status": status,
                "exitCode": outcome["exitCode"],
                "durationMs": outcome["durationMs"],
                "timedOut": outcome["timedOut"],
                "error": outcome["error"],
                "stdoutExcerpt": _tail(stdout),
                "stderrExcerpt": _tail(stderr),
                "stdoutHash": content_hash(stdout),
                "stderrHash": content_hash(stderr),
                "structuredOutputSummary": _structured(outcome["stdout"]),
                "checkResults": checks,
                "failureArtifactIds": [],
            }
            if status in ("failed", "errored"):
                record = _failure_record(suite, case, result, head, rid)
                failures.append(record)
                result["failureArtifactIds"] = [record.artifact_id]
            results.append(result)
    summary = {
        "total": len(results),
        "passed": sum(r["status"] == "passed" for r in results),
        "failed": sum(r["status"] == "failed" for r in results),
        "errored": sum(r["status"] == "errored" for r in results),
        "skipped": sum(r["status"] == "skipped" for r in results),
    }
    finished_at = format_instant(now_utc())
    record_data: dict[str, Any] = {
        "version": 1,
        "runId": rid,
        "suiteId": suite.artifact_id,
        "goalId": suite.goal_id,
        "episodeId": suite.episode_id,
        "sourceSessionId": suite.source_session_id,
        "sourceHeadSha": head,
        "executor": {
            "kind": executor.kind,
            "argv": masked_argv,
            "cwd": ws.relative(cwd) if cwd != ws.root.resolve() else ".",
            "envKeys": sorted(executor.env),
            "timeoutMs": timeout_ms,
        },
        "selectedCaseIds": case_ids,
        "summary": summary,
        "caseResults": results,
        "startedAt": started_at,
        "finishedAt": finished_at,
        "dryRun": dry_run,
        "warnings": warnings,
        "provenance": {
            "actor": "system",
            "producer": "ragit",
            "producerVersion": __version__,
            "operation": "harness.run",
            "inputRefs": [suite.artifact_id, *case_ids],
            "outputRefs": [f.artifact_id for f in failures],
        },
    }
    masked_record, _summary = remask(record_data)
    if not dry_run:
        with memory_lock(ws):
            write_record(run_path(ws, rid), masked_record)
            for failure in failures:
                path = artifact_path(ws, failure.artifact_id)
                if path is not None and not path.exists():
                    save_artifact(ws, failure)
            digest = canonical_hash([rid, summary])
            events = [
                make_event(
                    "harness.run",
                    summary=(
                        f"ran {summary['total']} case(s): {summary['passed']} passed, "
                        f"{summary['failed']} failed, {summary['errored']} errored"
                    ),
                    content_digest=digest,
                    operation="harness.run",
                    goal_id=suite.goal_id,
                    episode_id=suite.episode_id,
                    session_id=suite.source_session_id,
                    source_head_sha=head,
                    artifact_ids=[f.artifact_id for f in failures],
                    input_refs=[suite.artifact_id],
                    output_refs=[ws.relative(run_path(ws, rid))],
                    metadata={"runId": rid, "summary": summary},
                    actor="system",
                    recorded_at=finished_at,
                )
            ]
            if san.flagged:
                events.append(
                    admission_event(
                        san,
                        goal=suite.goal_id,
                        session=suite.source_session_id,
                        head=head,
                        digest=digest,
                    )
                )
            append_events(ws, events)
            san.flush(ws, finished_at)
    data: dict[str, Any] = {
        "runId": rid,
        "suiteId": suite.artifact_id,
        "runPath": ws.relative(run_path(ws, rid)),
        "preflight": {"hasFailure": preflight["hasFailure"], "checks": preflight["checks"]},
        "summary": summary,
        "hasFailure": bool(summary["failed"] or summary["errored"]),
        "caseResults": results,
        "executor": masked_record["executor"],
        "dryRun": dry_run,
        "admission": san.dump_admission(),
        "warnings": warnings,
    }
    out, _ = remask(data)
    assert isinstance(out, dict)
    return out


def _failure_record(
    suite: ArtifactRecord, case: ArtifactRecord, result: dict[str, Any], head: str | None, rid: str
) -> ArtifactRecord:
    aid = artifact_id(
        "harness",
        "failure",
        suite.artifact_id,
        case.artifact_id,
        result["status"],
        result["stdoutHash"],
        result["stderrHash"],
    )
    failed = [c for c in result["checkResults"] if not c["ok"]]
    lines = [f"{c['name']}: {c['detail']}" for c in failed]
    if result.get("error"):
        lines.insert(0, str(result["error"]))
    excerpt_source = result["stderrExcerpt"] or result["stdoutExcerpt"] or "; ".join(lines)
    excerpt = " ".join(excerpt_source.split())[:240]
    evid = evidence_id(aid, rid)
    text = "\n".join(
        [
            f"{case.title} {result['status']}",
            *lines,
            "",
            "stdout:",
            result["stdoutExcerpt"],
            "",
            "stderr:",
            result["stderrExcerpt"],
        ]
    )
    now = format_instant(now_utc())
    return ArtifactRecord(
        artifact_id=aid,
        artifact_scope="harness",
        kind="failure",
        title=f"{case.title} {result['status']}"[:300],
        summary="; ".join(lines)[:240],
        text=text,
        goal_id=suite.goal_id,
        episode_id=suite.episode_id,
        source_session_id=suite.source_session_id,
        source_head_sha=head,
        capture_head_sha=head,
        bound_head_sha=head,
        binding_status="bound" if head else "pending",
        authority="assistant_inferred",
        confidence=0.9,
        search_policy="evidence",
        evidence_refs=[EvidenceRef(evidence_id=evid, excerpt=excerpt)],
        provenance=Provenance(
            actor="system",
            producer_version=__version__,
            operation="harness.run",
            input_refs=[suite.artifact_id, case.artifact_id, rid],
            evidence_refs=[evid],
            content_hash=content_hash(text),
        ),
        created_at=now,
        updated_at=now,
        payload={
            "runId": rid,
            "caseId": case.artifact_id,
            "exitCode": result["exitCode"],
            "checkResults": failed,
        },
    )
