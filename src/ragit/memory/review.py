"""`artifact review`: move artifacts through their lifecycle (docs/reference/memory.md).

Each update ``{artifactId, nextStatus, reason?, supersedes?[]}`` is applied when
the transition is allowed (:data:`ragit.artifacts.catalog.TRANSITIONS`). An
unknown id, a disallowed transition, or a repeat of the current status is a
warning, never a failure; the other updates still apply. ``supersedes`` names
artifacts this one replaces: each is moved to ``superseded`` when that is
allowed (a warning otherwise) and recorded on the reviewed artifact.

Reviewing a harness artifact gives it the ``reviewed_harness`` authority.
Every change is appended to the artifact's ``reviewHistory`` and the record is
re-masked on write; one ``artifact.review`` event covers the request.
"""

from __future__ import annotations

from typing import Any

from ragit.artifacts.catalog import TRANSITIONS, ArtifactRecord, load_artifact
from ragit.artifacts.common import canonical_hash, require_masking
from ragit.artifacts.events import append_events, make_event
from ragit.artifacts.ids import format_instant, now_utc
from ragit.artifacts.lock import memory_lock
from ragit.artifacts.sanitize import Sanitizer, remask
from ragit.artifacts.storage import require_initialized
from ragit.artifacts.writes import save_artifact
from ragit.config import RagitConfig
from ragit.memory.models import ArtifactReviewInput
from ragit.workspace import Workspace


def _transition(
    record: ArtifactRecord, target: str, reason: str | None, at: str
) -> tuple[str | None, str | None]:
    """Apply one transition in memory; ``(previous status, warning)``."""
    current = record.status
    if current == target:
        return None, f"{record.artifact_id} is already {target}"
    if target not in TRANSITIONS.get(current, frozenset()):
        return None, f"{record.artifact_id}: {current} → {target} is not an allowed transition"
    record.status = target  # type: ignore[assignment]
    if target == "reviewed" and record.artifact_scope == "harness":
        record.authority = "reviewed_harness"
    record.updated_at = at
    record.review_history.append({"from": current, "to": target, "reason": reason, "at": at})
    return current, None


def review(
    ws: Workspace, cfg: RagitConfig, payload: ArtifactReviewInput, *, dry_run: bool
) -> dict[str, Any]:
    """Apply (or plan) review updates; the data of `artifact review`.

    Raises:
        NotInitialized: no ``ragit init`` yet.
        ConfigInvalid: masking is off (apply only).
        StoreWriteBusy: the memory lock stayed busy.
    """
    require_initialized(ws)
    require_masking(cfg, ws, dry_run=dry_run)
    at = format_instant(now_utc())
    san = Sanitizer.for_config(cfg, "event.ledger", "artifact.review")
    warnings: list[str] = []
    updated: list[dict[str, Any]] = []
    skipped: list[dict[str, Any]] = []

    def apply() -> dict[str, ArtifactRecord]:
        changed: dict[str, ArtifactRecord] = {}

        def get(aid: str) -> ArtifactRecord | None:
            return changed.get(aid) or load_artifact(ws, aid)

        for i, update in enumerate(payload.updates):
            reason = san.text(update.reason, f"updates[{i}].reason") if update.reason else None
            record = get(update.artifact_id)
            if record is None:
                warnings.append(f"unknown artifact id {update.artifact_id}")
                skipped.append({"artifactId": update.artifact_id, "reason": "unknown"})
                continue
            previous, warning = _transition(record, update.next_status, reason, at)
            if warning:
                warnings.append(warning)
                skipped.append({"artifactId": update.artifact_id, "reason": "transition"})
                continue
            changed[record.artifact_id] = record
            updated.append(
                {
                    "artifactId": record.artifact_id,
                    "previousStatus": previous,
                    "status": record.status,
                    "reason": reason,
                }
            )
            for other_id in update.supersedes:
                if other_id == record.artifact_id:
                    warnings.append(f"{other_id} cannot supersede itself")
                    continue
                other = get(other_id)
                if other is None:
                    warnings.append(f"unknown artifact id {other_id}")
                    continue
                before, warn = _transition(
                    other, "superseded", f"superseded by {record.artifact_id}", at
                )
                if warn:
                    warnings.append(warn)
                else:
                    changed[other.artifact_id] = other
                    updated.append(
                        {
                            "artifactId": other.artifact_id,
                            "previousStatus": before,
                            "status": "superseded",
                            "reason": f"superseded by {record.artifact_id}",
                        }
                    )
                if other_id not in record.supersedes:
                    record.supersedes.append(other_id)
        return changed

    if dry_run:
        apply()
    else:
        with memory_lock(ws):
            changed = apply()
            for record in changed.values():
                save_artifact(ws, record)
            if updated:
                digest = canonical_hash(
                    [[u["artifactId"], u["status"], u["previousStatus"]] for u in updated]
                )
                events = [
                    make_event(
                        "artifact.review",
                        summary=f"reviewed {len(updated)} artifact(s)",
                        content_digest=canonical_hash([digest, at]),
                        operation="artifact.review",
                        artifact_ids=[u["artifactId"] for u in updated],
                        metadata={
                            "updates": [
                                {k: u[k] for k in ("artifactId", "previousStatus", "status")}
                                for u in updated
                            ]
                        },
                        actor="user",
                        recorded_at=at,
                    )
                ]
                append_events(ws, events)
            san.flush(ws, at)
    data: dict[str, Any] = {
        "updated": updated,
        "skipped": skipped,
        "dryRun": dry_run,
        "warnings": warnings,
    }
    out, _summary = remask(data)
    assert isinstance(out, dict)
    return out
