"""Secret masking and admission control (docs/reference/security.md, contract §6–7).

Pure functions over text: :mod:`ragit.security.masking` replaces secrets and
builds ``redactionSummary`` (its rules in :mod:`ragit.security.mask_rules`, the
value heuristics in :mod:`ragit.security.secret_values`);
:mod:`ragit.security.admission` decides whether a candidate may be persisted and
builds the ``admission`` summary.
"""

from __future__ import annotations

import importlib
from typing import Any

# Resolved on first use (PEP 562): the faces import ``ragit.security.output`` for every
# command, and none of them needs admission control to be loaded for that.
_EXPORTS = {
    "BLOCKED_SENTINEL": "ragit.security.admission",
    "AdmissionDecision": "ragit.security.admission",
    "AdmissionReport": "ragit.security.admission",
    "AdmissionSummary": "ragit.security.admission",
    "Handling": "ragit.security.admission",
    "evaluate": "ragit.security.admission",
    "required_handling": "ragit.security.admission",
    "MaskResult": "ragit.security.masking",
    "RedactionSummary": "ragit.security.masking",
    "mask_json": "ragit.security.masking",
    "mask_text": "ragit.security.masking",
}

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


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
