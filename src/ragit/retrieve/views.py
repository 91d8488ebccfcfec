"""Hit projections (``--view minimal|default|full``) with re-masking (contract §7).

Every projected text — path, excerpt, full text, section title — is masked again
before it leaves the process, and the masked field paths are collected for
``redactionSummary``.
"""

from __future__ import annotations

import re
from typing import Any

from ragit.retrieve.hit import Hit, breakdown

EXCERPT_LIMITS = {"minimal": 120, "default": 200}
_WS = re.compile(r"\s+")


def excerpt(text: str, limit: int) -> str:
    """Whitespace-collapsed text of at most ``limit`` characters (``...`` marks a cut)."""
    flat = _WS.sub(" ", text).strip()
    if len(flat) <= limit:
        return flat
    cut = flat[: limit - 3].rstrip()
    space = cut.rfind(" ")
    if space > limit // 2:
        cut = cut[:space]
    return cut + "..."


def _round(value: Any) -> Any:
    if isinstance(value, float):
        return round(value, 6)
    if isinstance(value, dict):
        return {k: _round(v) for k, v in value.items()}
    return value


class Redactor:
    """Masks projected strings and remembers which fields it changed."""

    def __init__(self) -> None:
        from ragit.security.masking import mask_text

        self._mask = mask_text
        self.count = 0
        self.sources: list[str] = []

    def __call__(self, value: str, source: str) -> str:
        result = self._mask(value)
        if result.masked_count:
            self.count += result.masked_count
            self.sources.append(source)
        return str(result.text)

    def summary(self) -> dict[str, Any]:
        return {"applied": self.count > 0, "maskedCount": self.count, "sources": list(self.sources)}


def project_hit(
    hit: Hit, view: str, *, explain: bool, redact: Redactor, index: int
) -> dict[str, Any]:
    """One hit in the requested view."""
    base = f"hits[{index}]"
    out: dict[str, Any] = {
        "path": redact(hit.path, f"{base}.path"),
        "sectionTitle": redact(hit.section_title, f"{base}.sectionTitle"),
        "scoreFinal": round(hit.score_final, 6),
        "scope": hit.scope,
        "originType": hit.origin_type,
        "artifactId": hit.artifact_id,
        "artifactKind": hit.artifact_kind,
        "authority": hit.authority,
        "confidence": hit.confidence,
        "citation": hit.citation,
    }
    if view in ("default", "full"):
        out["scoreVector"] = round(hit.score_vector, 6)
        out["scoreKeyword"] = round(hit.score_keyword, 6)
    if view == "full":
        out["text"] = redact(hit.text, f"{base}.text")
    else:
        masked = redact(hit.text, f"{base}.excerpt")
        out["excerpt"] = excerpt(masked, EXCERPT_LIMITS[view])
    if explain:
        out["scoreBreakdown"] = _round(breakdown(hit))
    return out


# The metadata of a context-pack passage per view (contract §8): ``minimal`` names it,
# ``default`` adds how it ranked, ``full`` adds every other field of query's full view.
_PASSAGE_DEFAULT = ("scoreFinal", "scoreVector", "scoreKeyword", "scope", "originType", "authority")
_PASSAGE_FULL = ("artifactId", "artifactKind", "confidence")


def project_passage(
    hit: Hit, view: str, *, redact: Redactor, index: int, tokens: int
) -> dict[str, Any]:
    """One context-pack hit: the view's metadata, the whole masked ``text`` and its ``tokens``.

    No view cuts the text to an excerpt: the pack's budget counted exactly this text.
    """
    every = project_hit(hit, "full", explain=False, redact=redact, index=index)
    keep = ["path", "sectionTitle"]
    if view in ("default", "full"):
        keep += _PASSAGE_DEFAULT
    if view == "full":
        keep += _PASSAGE_FULL
    out = {key: every[key] for key in every if key in keep}
    out["citation"] = every["citation"]
    out["text"] = every["text"]
    out["tokens"] = tokens
    return out
