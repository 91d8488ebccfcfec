"""``redactionSummary {applied, maskedCount, sources}`` as a contract model
(docs/reference/security.md).

Also importable from :mod:`ragit.security.masking`, which loads it (and pydantic) only when
a command asks for it.
"""

from __future__ import annotations

from collections.abc import Iterable

from pydantic import Field

from ragit.contract.models import WireModel


class RedactionSummary(WireModel):
    """``redactionSummary {applied, maskedCount, sources}`` (docs/reference/security.md).

    Immutable by convention: :meth:`add` and :meth:`merge` return new summaries.
    ``sources`` keeps first-seen order without duplicates.
    """

    applied: bool = False
    masked_count: int = 0
    sources: list[str] = Field(default_factory=list)

    def add(self, source: str, masked_count: int) -> RedactionSummary:
        """This summary plus ``masked_count`` replacements in field ``source``."""
        if masked_count <= 0:
            return self
        return self.merge_sources([source], masked_count)

    def merge_sources(self, sources: Iterable[str], masked_count: int) -> RedactionSummary:
        """This summary plus the result of a :func:`mask_json` call."""
        if masked_count <= 0:
            return self
        merged = list(self.sources)
        for source in sources:
            if source not in merged:
                merged.append(source)
        return RedactionSummary(
            applied=True, masked_count=self.masked_count + masked_count, sources=merged
        )

    def merge(self, other: RedactionSummary) -> RedactionSummary:
        """The union of two summaries (counts add, sources de-duplicated)."""
        return self.merge_sources(other.sources, other.masked_count)
