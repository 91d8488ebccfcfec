"""Masking and admission for every memory, artifact and harness write, before it reaches the disk.

A :class:`Sanitizer` handles one operation on one admission surface
(``memory.wrap``, ``memory.promote``, ``session.turn``, ``harness.capture``, …).
Each string of a payload is evaluated on its own (the field path is its
``sourceRef``), then stored as the mode requires (``required_handling``):

* allowed → unchanged;
* quarantined (a masked secret), or blocked in ``report-only`` mode → masked;
* blocked in ``enforce`` mode → replaced by ``[BLOCKED BY RAGIT ADMISSION CONTROL]``.

It accumulates the ``redactionSummary`` and the ``admission`` summary of the
command output, and the lines of the security ledgers that :meth:`Sanitizer.flush`
appends (after the caller's writes, never in a dry-run):

* ``.ragit/security/admission/<YYYY-MM-DD>.jsonl`` — every non-allowed decision
  ``{recordedAt, operation, surface, sourceRef, action, reasonCodes, maskedCount,
  contentHash}`` (docs/reference/security.md);
* ``.ragit/security/quarantine/<YYYY-MM-DD>.jsonl`` — every masked field when
  ``security.quarantine_on_redaction`` is on ``{recordedAt, surface, sourceRef,
  field, reasonCodes, maskedCount, contentHash, maskedPreview, operation}``
  (docs/reference/security.md; the preview is masked and at most 160 characters).

``contentHash`` hashes the masked text: a ledger never holds anything from
which a secret could be recovered.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from ragit.artifacts.common import canonical_hash
from ragit.artifacts.events import make_event
from ragit.artifacts.ids import content_hash
from ragit.artifacts.storage import append_line
from ragit.config import RagitConfig
from ragit.security.admission import (
    BLOCKED_SENTINEL,
    AdmissionSummary,
    Handling,
    evaluate,
    required_handling,
)
from ragit.security.masking import RedactionSummary, mask_json
from ragit.workspace import Workspace

PREVIEW_LIMIT = 160


@dataclass
class Sanitizer:
    """Masks and admission-checks the strings of one operation."""

    surface: str
    operation: str
    mode: str
    quarantine: bool = True
    admission: AdmissionSummary = field(init=False)
    redaction: RedactionSummary = field(init=False, default_factory=RedactionSummary)
    _ledger: list[dict[str, Any]] = field(init=False, default_factory=list)
    _quarantine: list[dict[str, Any]] = field(init=False, default_factory=list)

    def __post_init__(self) -> None:
        self.admission = AdmissionSummary(self.mode)

    @classmethod
    def for_config(cls, cfg: RagitConfig, surface: str, operation: str) -> Sanitizer:
        return cls(
            surface=surface,
            operation=operation,
            mode=cfg.security.admission_mode,
            quarantine=cfg.security.quarantine_on_redaction,
        )

    @property
    def flagged(self) -> bool:
        report = self.admission.report()
        return bool(report.quarantined or report.blocked)

    def text(
        self, value: str, source_ref: str, *, path: str | None = None, surface: str | None = None
    ) -> str:
        """The storable form of one string (see the module docstring).

        ``surface`` overrides the sanitizer's surface for this string (a session
        turn vs. a tool trace of the same operation).
        """
        surface = surface or self.surface
        decision = evaluate(value, source_ref=source_ref, surface=surface, path=path)
        self.admission.record(decision, operation=self.operation)
        handling = required_handling(decision, mode=self.mode)
        if handling is Handling.STORE:
            return value
        stored = BLOCKED_SENTINEL if handling is Handling.STORE_SENTINEL else decision.masked_text
        self.redaction = self.redaction.add(source_ref, max(decision.masked_count, 1))
        digest = content_hash(decision.masked_text)
        self._ledger.append(
            {
                "operation": self.operation,
                "surface": surface,
                "sourceRef": source_ref,
                "action": decision.action,
                "reasonCodes": list(decision.reason_codes),
                "maskedCount": decision.masked_count,
                "contentHash": digest,
            }
        )
        if decision.masked_count and self.quarantine:
            self._quarantine.append(
                {
                    "surface": surface,
                    "sourceRef": source_ref,
                    "field": source_ref,
                    "reasonCodes": list(decision.reason_codes),
                    "maskedCount": decision.masked_count,
                    "contentHash": digest,
                    "maskedPreview": decision.masked_text[:PREVIEW_LIMIT],
                    "operation": self.operation,
                }
            )
        return stored

    def json(self, value: Any, path: str = "", *, surface: str | None = None) -> Any:
        """Apply :meth:`text` to every string inside a JSON value (keys are schema, kept)."""
        if isinstance(value, str):
            return self.text(value, path or "$", surface=surface)
        if isinstance(value, dict):
            return {
                k: self.json(v, f"{path}.{k}" if path else str(k), surface=surface)
                for k, v in value.items()
            }
        if isinstance(value, list):
            return [self.json(v, f"{path}[{i}]", surface=surface) for i, v in enumerate(value)]
        return value

    def dump_admission(self) -> dict[str, Any]:
        return dict(self.admission.dump())

    def findings(self) -> list[dict[str, Any]]:
        """The non-allowed decisions (what the ledger will receive)."""
        return [dict(item) for item in self._ledger]

    def flush(self, ws: Workspace, recorded_at: str) -> None:
        """Append the ledger lines (callers hold the memory lock; never in a dry-run)."""
        day = recorded_at[:10]
        security = ws.ragit_dir / "security"
        for item in self._ledger:
            line = {"recordedAt": recorded_at, **item}
            append_line(security / "admission" / f"{day}.jsonl", _compact(line))
        for item in self._quarantine:
            line = {"recordedAt": recorded_at, **item}
            append_line(security / "quarantine" / f"{day}.jsonl", _compact(line))
        self._ledger.clear()
        self._quarantine.clear()


def _compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def remask(value: Any, summary: RedactionSummary | None = None) -> tuple[Any, RedactionSummary]:
    """Mask every string of an output value again (outputs are always re-masked)."""
    masked, count, sources = mask_json(value)
    base = summary or RedactionSummary()
    return masked, base.merge_sources(sources, count)


def admission_event(
    sanitizer: Sanitizer,
    *,
    goal: str | None,
    session: str | None,
    head: str | None,
    digest: str,
    episode: str | None = None,
) -> dict[str, Any]:
    """A ``security.admission`` event for the flagged fields of one operation."""
    report = sanitizer.admission.report()
    return make_event(
        "security.admission",
        summary=(
            f"{sanitizer.operation}: {report.quarantined} quarantined, {report.blocked} blocked"
        ),
        content_digest=canonical_hash([digest, sanitizer.operation]),
        operation=sanitizer.operation,
        goal_id=goal,
        episode_id=episode,
        session_id=session,
        source_head_sha=head,
        metadata={"admission": sanitizer.dump_admission()},
        actor="system",
    )
