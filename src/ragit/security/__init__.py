"""Secret masking and admission control (UR §11, contract §6–7).

Pure functions over text: :mod:`ragit.security.masking` replaces secrets and
builds ``redactionSummary`` (its rules in :mod:`ragit.security.mask_rules`, the
value heuristics in :mod:`ragit.security.secret_values`);
:mod:`ragit.security.admission` decides whether a candidate may be persisted and
builds the ``admission`` summary.
"""

from __future__ import annotations

from ragit.security.admission import (
    BLOCKED_SENTINEL,
    AdmissionDecision,
    AdmissionReport,
    AdmissionSummary,
    Handling,
    evaluate,
    required_handling,
)
from ragit.security.masking import MaskResult, RedactionSummary, mask_json, mask_text

__all__ = [
    "BLOCKED_SENTINEL",
    "AdmissionDecision",
    "AdmissionReport",
    "AdmissionSummary",
    "Handling",
    "MaskResult",
    "RedactionSummary",
    "evaluate",
    "mask_json",
    "mask_text",
    "required_handling",
]
