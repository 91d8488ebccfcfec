"""A retrieval hit and its score breakdown (contract §7, docs/reference/retrieval.md).

``scoreFinal = 0.80·retrieval + 0.15·authority + 0.05·recency`` for every hit: the snapshot's
(:mod:`ragit.retrieve.engine`) and the artifact overlay's (:mod:`ragit.retrieve.artifacts`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

W_RETRIEVAL = 0.80
W_AUTHORITY = 0.15
W_RECENCY = 0.05
# The authority weight of a hit, by the first rule that applies (docs/reference/retrieval.md):
# durable documents and durable or promoted artifacts, evidence excerpts, the harness scope or a
# reviewed harness artifact, the session scope, anything else.
AUTHORITY_WEIGHTS = {
    "promoted_durable": 1.0,
    "evidence": 0.4,
    "reviewed_harness": 0.9,
    "session": 0.8,
    "other": 0.6,
}


@dataclass
class Hit:
    """One scored retrieval hit (internal record; projected by views)."""

    chunk_id: str
    document_id: str
    version_id: str
    path: str
    doc_type: str
    section_title: str
    heading_path: str
    text: str
    token_count: int
    score_vector: float
    score_keyword: float
    retrieval: float
    authority_weight: float
    recency_weight: float
    score_final: float
    mode: str
    alpha: float
    scope: str = "durable"
    origin_type: str = "document"
    artifact_id: str | None = None
    artifact_kind: str | None = None
    authority: str = "promoted_durable"
    confidence: float | None = 1.0
    citation: dict[str, Any] = field(default_factory=dict)
    # What the [0, 1] scores were made from (``--explain``'s ``raw``): the raw cosine and BM25
    # per field, the maxima they were divided by, the field weights, and ``coverage`` — the
    # share of the question's idf the chunk holds (its keyword evidence, not relative to others).
    raw: dict[str, Any] = field(default_factory=dict)

    def sort_key(self) -> tuple[float, str, str, str, str]:
        return (
            -round(self.score_final, 6),
            self.path,
            self.section_title,
            self.citation.get("id", ""),
            self.chunk_id,
        )


def breakdown(hit: Hit) -> dict[str, Any]:
    """``scoreBreakdown`` of contract §7 / docs/reference/retrieval.md (rounded on output by the
    view), plus
    ``raw`` (an addition the contract's open object allows): what the [0, 1] scores were made
    of — raw cosine and BM25 per field, the maxima they were divided by, the field weights,
    and the chunk's keyword ``coverage`` of the question."""
    a = hit.alpha if hit.mode == "hybrid" else 0.0
    kw_weight = 1.0 - a
    return {
        "mode": hit.mode,
        "retrieval": {
            "score": hit.retrieval,
            "weight": W_RETRIEVAL,
            "contribution": W_RETRIEVAL * hit.retrieval,
            "inputs": {
                "vector": {
                    "score": hit.score_vector,
                    "weight": a,
                    "contribution": a * hit.score_vector,
                },
                "keyword": {
                    "score": hit.score_keyword,
                    "weight": kw_weight,
                    "contribution": kw_weight * hit.score_keyword,
                },
            },
        },
        "authority": {
            "score": hit.authority_weight,
            "weight": W_AUTHORITY,
            "contribution": W_AUTHORITY * hit.authority_weight,
        },
        "recency": {
            "score": hit.recency_weight,
            "weight": W_RECENCY,
            "contribution": W_RECENCY * hit.recency_weight,
        },
        "final": hit.score_final,
        **({"raw": hit.raw} if hit.raw else {}),
    }
