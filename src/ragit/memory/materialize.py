"""`session materialize`: a redacted transcript and candidate session artifacts
(docs/reference/memory.md).

Each turn (surface ``session.turn``) and tool trace (``session.toolTrace``) is
masked and admission-checked, appended to ``.ragit/log/transcripts/<sessionId>.jsonl``
(a line already there — same kind, id and content hash — is not appended again),
and scanned for candidate artifacts, stored as ``captured``/``candidate`` in
``.ragit/artifacts/session/<artifactId>.json``.

Extraction (one artifact per turn at most; system turns are context, not
knowledge, and are skipped). The first matching kind wins, in this order:

* user turns: ``constraint`` (must, must not, should not, do not, don't, never,
  avoid, keep), ``feedback`` (prefer, too long/verbose/short, please, wrong, bad,
  format, concise, brief), ``failure``, ``openLoop``, ``insight``;
* assistant turns: ``failure`` (error, fail…, regression, bug, traceback,
  exception), ``constraint``, ``openLoop`` (a question at the end of a line;
  blocker, blocked, unresolved, next action, next step, todo), ``insight``
  (therefore, this means, implies, so the rule is, key insight, stable rule);
* tool traces with an ``error``, or output that reads as a failure → ``failure``.

User-derived artifacts are ``user_asserted`` with confidence 1.0; assistant- and
trace-derived ones ``assistant_inferred`` with 0.9 (failure, constraint) or 0.8.
Failures are searched as evidence (``searchPolicy: evidence``), the rest as
session knowledge once reviewed. An artifact's id hashes its kind, goal, role
and masked text, so materializing the same transcript twice does not duplicate
it — and never resets the status of one already reviewed.
"""

from __future__ import annotations

import json
import re
from typing import Any

from ragit import __version__, _json
from ragit.artifacts.catalog import (
    ArtifactRecord,
    EvidenceRef,
    Provenance,
    artifact_path,
    load_artifact,
)
from ragit.artifacts.common import canonical_hash, current_head, require_masking, source_head
from ragit.artifacts.events import append_events, events_dir, make_event
from ragit.artifacts.ids import (
    SESSION_ID,
    artifact_id,
    content_hash,
    evidence_id,
    format_instant,
    goal_id,
    normalize_instant,
    now_utc,
    session_id,
)
from ragit.artifacts.lock import memory_lock
from ragit.artifacts.sanitize import Sanitizer, admission_event, remask
from ragit.artifacts.storage import append_line, require_initialized
from ragit.artifacts.writes import save_artifact
from ragit.config import RagitConfig
from ragit.memory.models import SessionMaterializeInput
from ragit.workspace import Workspace

TEXT_MAX = 8_000
TITLE_MAX = 80
EXCERPT_MAX = 240
NO_ARTIFACT_WARNING = "no artifact candidates were extracted from this session"

_I = re.IGNORECASE | re.MULTILINE
_RULES: dict[str, re.Pattern[str]] = {
    "failure": re.compile(
        r"\b(?:errors?|fail(?:s|ed|ing|ure|ures)?|regressions?|bugs?|traceback|exceptions?)\b", _I
    ),
    "constraint": re.compile(
        r"\b(?:must(?: not)?|should not|shouldn't|do not|don't|never|avoid|keep)\b", _I
    ),
    "feedback": re.compile(
        r"\b(?:prefer|too (?:long|verbose|short)|please|wrong|bad|format|concise|brief)\b", _I
    ),
    "openLoop": re.compile(
        r"\?[ \t]*$|\b(?:blockers?|blocked|unresolved|next action|next step|todo)\b", _I
    ),
    "insight": re.compile(
        r"\b(?:therefore|this means|implies|so the rule is|key insight|stable rule)\b", _I
    ),
}
_ORDER = {
    "user": ("constraint", "feedback", "failure", "openLoop", "insight"),
    "assistant": ("failure", "constraint", "openLoop", "insight"),
}
_WS = re.compile(r"\s+")


def classify(role: str, text: str) -> str | None:
    """The artifact kind a turn yields (see the module docstring), or None."""
    for kind in _ORDER.get(role, ()):
        if _RULES[kind].search(text):
            return kind
    return None


def _flat(text: str) -> str:
    return _WS.sub(" ", text).strip()


def _title(text: str) -> str:
    flat = _flat(text)
    sentence = re.split(r"(?<=[.!?])\s", flat, maxsplit=1)[0]
    if len(sentence) <= TITLE_MAX:
        return sentence or "(empty)"
    return sentence[: TITLE_MAX - 3].rstrip() + "..."


def _excerpt(text: str) -> str:
    flat = _flat(text)
    return flat if len(flat) <= EXCERPT_MAX else flat[: EXCERPT_MAX - 3].rstrip() + "..."


def transcript_path(ws: Workspace, sid: str) -> Any:
    if SESSION_ID.fullmatch(sid) is None:
        raise ValueError("not a session id")
    return ws.ragit_dir / "log" / "transcripts" / f"{sid}.jsonl"


def _existing_keys(path: Any) -> set[tuple[str, str, str]]:
    keys: set[tuple[str, str, str]] = set()
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return keys
    for line in text.splitlines():
        try:
            value = _json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(value, dict):
            ident = value.get("turnId") or value.get("traceId") or ""
            keys.add((str(value.get("type")), str(ident), str(value.get("contentHash"))))
    return keys


def materialize(
    ws: Workspace, cfg: RagitConfig, payload: SessionMaterializeInput, *, dry_run: bool
) -> dict[str, Any]:
    """Write (or plan) the transcript and artifacts; the data of `session materialize`.

    Raises:
        NotInitialized: no ``ragit init`` yet.
        ConfigInvalid: masking is off (apply only).
        SnapshotRefInvalid, SnapshotRefAmbiguous: a ``sourceHeadSha`` naming no single commit.
        StoreWriteBusy: the memory lock stayed busy.
    """
    require_initialized(ws)
    require_masking(cfg, ws, dry_run=dry_run)
    warnings: list[str] = []
    head = source_head(ws, payload.source_head_sha, warnings)
    capture_head = current_head(ws)
    created_at = normalize_instant(payload.created_at, "createdAt")
    san = Sanitizer.for_config(cfg, "session.turn", "session.materialize")
    goal = san.text(payload.goal, "goal")
    sid = session_id(created_at, goal)
    gid = goal_id(goal)
    episode = payload.episode.id if payload.episode else None
    lines: list[dict[str, Any]] = []
    candidates: dict[str, ArtifactRecord] = {}

    def add(kind: str, role: str, source: str, text: str, when: str, *, trace: bool) -> None:
        aid = artifact_id("session", kind, gid, role, text)
        if aid in candidates:
            return
        user = role == "user"
        confidence = 1.0 if user else (0.9 if kind in ("failure", "constraint") else 0.8)
        evid = evidence_id(aid, source)
        candidates[aid] = ArtifactRecord(
            artifact_id=aid,
            artifact_scope="session",
            kind=kind,
            title=_title(text),
            summary=_excerpt(text),
            text=text[:TEXT_MAX],
            goal_id=gid,
            episode_id=episode,
            source_session_id=sid,
            source_head_sha=head,
            capture_head_sha=capture_head,
            bound_head_sha=head,
            binding_status="bound" if head else "pending",
            authority="user_asserted" if user else "assistant_inferred",
            confidence=confidence,
            search_policy="evidence" if kind == "failure" else "session",
            related_paths=list(payload.related_paths),
            evidence_refs=[
                EvidenceRef(
                    evidence_id=evid,
                    turn_ids=[] if trace else [source],
                    tool_trace_ids=[source] if trace else [],
                    excerpt=_excerpt(text),
                )
            ],
            provenance=Provenance(
                actor="user" if user else "assistant",
                producer_version=__version__,
                operation="session.materialize",
                input_refs=[source],
                evidence_refs=[evid],
                content_hash=content_hash(text),
            ),
            created_at=when,
            updated_at=when,
        )

    for i, turn in enumerate(payload.turns):
        content = san.text(turn.content, f"turns[{i}].content")
        when = normalize_instant(turn.created_at, f"turns[{i}].createdAt")
        lines.append(
            {
                "type": "turn",
                "sessionId": sid,
                "turnId": turn.turn_id,
                "role": turn.role,
                "content": content,
                "createdAt": when,
                "contentHash": content_hash(content),
            }
        )
        kind = classify(turn.role, content) if content.strip() else None
        if kind is not None:
            add(kind, turn.role, turn.turn_id, content, when, trace=False)
    for i, trace in enumerate(payload.tool_traces):
        fields: dict[str, str | None] = {}
        for name in ("title", "command", "output", "error"):
            value = getattr(trace, name)
            fields[name] = (
                None
                if value is None
                else san.text(value, f"toolTraces[{i}].{name}", surface="session.toolTrace")
            )
        when = normalize_instant(trace.created_at, f"toolTraces[{i}].createdAt")
        body = "\n".join(v for v in (fields["command"], fields["error"], fields["output"]) if v)
        lines.append(
            {
                "type": "toolTrace",
                "sessionId": sid,
                "traceId": trace.trace_id,
                **fields,
                "createdAt": when,
                "contentHash": content_hash(body),
            }
        )
        failed = bool((fields["error"] or "").strip()) or bool(
            _RULES["failure"].search(fields["output"] or "")
        )
        if failed and body.strip():
            text = f"{fields['title']}\n{body}" if fields["title"] else body
            add("failure", "assistant", trace.trace_id, text, when, trace=True)

    transcript = transcript_path(ws, sid)
    new_ids: list[str] = []
    existing_ids: list[str] = []
    for aid in sorted(candidates):
        (existing_ids if load_artifact(ws, aid) is not None else new_ids).append(aid)
    if not candidates:
        warnings.append(NO_ARTIFACT_WARNING)
    digest = canonical_hash([sid, [line["contentHash"] for line in lines], sorted(candidates)])
    recorded_at = format_instant(now_utc())
    if not dry_run:
        with memory_lock(ws):
            present = _existing_keys(transcript)
            for line in lines:
                ident = line.get("turnId") or line.get("traceId") or ""
                key = (line["type"], str(ident), line["contentHash"])
                if key in present:
                    continue
                present.add(key)
                append_line(transcript, json.dumps(line, ensure_ascii=False, separators=(",", ":")))
            new_ids, existing_ids = [], []
            for aid in sorted(candidates):
                target = artifact_path(ws, aid)
                if target is None or target.exists():
                    existing_ids.append(aid)
                    continue
                save_artifact(ws, candidates[aid])
                new_ids.append(aid)
            events = [
                make_event(
                    "session.materialize",
                    summary=(
                        f"materialized {len(payload.turns)} turn(s) and "
                        f"{len(payload.tool_traces)} tool trace(s); {len(new_ids)} new artifact(s)"
                    ),
                    content_digest=digest,
                    operation="session.materialize",
                    goal_id=gid,
                    episode_id=episode,
                    session_id=sid,
                    source_head_sha=head,
                    artifact_ids=new_ids,
                    related_paths=list(payload.related_paths),
                    output_refs=[ws.relative(transcript)],
                    recorded_at=recorded_at,
                )
            ]
            if san.flagged:
                events.append(
                    admission_event(
                        san, goal=gid, session=sid, head=head, digest=digest, episode=episode
                    )
                )
            append_events(ws, events)
            san.flush(ws, recorded_at)
    if existing_ids:
        warnings.append(
            f"{len(existing_ids)} artifact(s) were captured before and keep their status"
        )
    data: dict[str, Any] = {
        "sessionId": sid,
        "goalId": gid,
        "episodeId": episode,
        "transcriptPath": ws.relative(transcript),
        "eventPath": ws.relative(events_dir(ws) / f"{recorded_at[:10]}.jsonl"),
        "artifactIds": new_ids,
        "existingArtifactIds": existing_ids,
        "artifacts": [
            {
                "artifactId": aid,
                "kind": candidates[aid].kind,
                "title": candidates[aid].title,
                "status": "captured",
                "searchPolicy": candidates[aid].search_policy,
            }
            for aid in new_ids
        ],
        "turns": len(payload.turns),
        "toolTraces": len(payload.tool_traces),
        "sourceHeadSha": head,
        "dryRun": dry_run,
        "admission": san.dump_admission(),
        "redactionSummary": san.redaction.dump(),
        "warnings": warnings,
    }
    out, _summary = remask(data)
    assert isinstance(out, dict)
    return out
