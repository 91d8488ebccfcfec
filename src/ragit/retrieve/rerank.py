"""Semantic re-ranking of the lexical candidates (``retrieval.rerank``, docs/embeddings.md).

A store built with the offline default profile ranks by BM25 and the character n-gram
embedding. With ``retrieval.rerank = "local-minilm"`` (or ``"local-minilm-int8"``) the two
best chunks of each of that ranking's first :data:`DEPTH` documents (at least the answer's
``top_k``) are scored again with all-MiniLM-L6-v2, as a ``local-minilm`` store would score
them: the model's cosine, half of it the document's (the mean of its two best candidate
cosines), divided by its maximum over the re-ranked candidates, weighed by the model's α
(0.7) against the same keyword score. The model is English-only: its say is the square of
the question's Latin share, and the rest of the vector score stays the first stage's (the
n-gram embedding's) with its own α, so a Korean question is ranked as the first stage ranked
it. The first
stage's retrieval score keeps :data:`FIRST_STAGE_SHARE` of the result (its vector and α
are folded in, so ``retrieval = α·vector + (1−α)·keyword`` still holds for every hit). The
other candidates leave the answer. Chunk vectors come from
:class:`ragit.embed.semantic.SemanticVectors`: computed on first use, then read back by
content hash, so a (commit, profile, rerank) always gives the same answer. The answer names
the re-ranking model (``retrieval.rerank`` in the data).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from operator import mul
from typing import Any

from ragit.embed.semantic import SemanticVectors, rerank_profile
from ragit.retrieve.candidates import Scored
from ragit.retrieve.engine import VECTOR_DOC_TOP
from ragit.retrieve.hit import W_RETRIEVAL
from ragit.text.question import Question

# How many of the first stage's best documents the model looks at (at least the answer's top_k),
# each through its best VECTOR_DOC_TOP (2) candidate chunks. Chosen on half A of the development
# sets (docs/benchmarks.md).
DEPTH = 15
# The model's share of the retrieval score (local-minilm's measured default).
ALPHA = 0.7
# The share of a chunk's model score that is its document's (local-minilm's measured value).
DOCUMENT_WEIGHT = 0.5
# The first stage's share of a re-ranked candidate's retrieval score. With it, and the model's
# say the square of the question's Latin share, chosen on half A of the development sets and
# confirmed on half B (docs/benchmarks.md, "Semantic re-ranking").
FIRST_STAGE_SHARE = 0.2


def _dot(a: list[float], b: list[float]) -> float:
    value: float = sum(map(mul, a, b))
    return value


@dataclass
class SemanticRerank:
    """The re-ranking step :func:`ragit.retrieve.engine.retrieve_durable` calls (its
    ``rerank`` hook): re-scores the best first-stage candidates with a local model."""

    name: str
    depth: int = DEPTH
    alpha: float = ALPHA
    document_weight: float = DOCUMENT_WEIGHT
    first_stage: float = FIRST_STAGE_SHARE
    vectors: SemanticVectors = field(init=False)
    _explain: dict[str, dict[str, float]] = field(default_factory=dict, init=False)

    def __post_init__(self) -> None:
        self.vectors = SemanticVectors(rerank_profile(self.name))

    def describe(self) -> dict[str, Any]:
        """The re-ranking as an answer names it (``retrieval.rerank`` in the data)."""
        profile = self.vectors.profile
        return {
            "name": self.name,
            "namespaceId": profile.namespace_id,
            "provider": profile.provider,
            "model": profile.model,
            "depth": self.depth,
        }

    def rescore(
        self, scored: list[Scored], question: Question, reader: Any, top_k: int
    ) -> list[Scored]:
        """The best candidates of ``scored`` (best first) re-scored by the model: the two best
        chunks of each of the first ``max(depth, top_k)`` documents (more documents while
        fewer than ``top_k`` chunks are chosen). The others leave the candidate set (the model
        did not look at them, so their scores are of another scale).

        Raises:
            EmbeddingModelInvalid, EmbeddingBackendUnavailable: the model cannot run here.
        """
        self._explain = {}
        if not scored:
            return scored
        chosen: list[str] = []
        taken: dict[str, int] = {}
        documents = max(self.depth, top_k)
        for s in scored:
            doc = s.doc.document_id
            if doc not in taken and len(taken) >= documents and len(chosen) >= top_k:
                break
            if taken.get(doc, 0) >= VECTOR_DOC_TOP:
                continue
            taken[doc] = taken.get(doc, 0) + 1
            if s.chunk_id not in chosen:
                chosen.append(s.chunk_id)
        texts = reader.embedded_texts(chosen)
        ids = [cid for cid in chosen if cid in texts]
        if not ids:
            return scored
        q = self.vectors.question(question.text)
        q_norm = math.sqrt(_dot(q, q))
        cosine: dict[str, float] = {}
        for cid, vec in zip(ids, self.vectors.texts([texts[cid] for cid in ids]), strict=True):
            norm = math.sqrt(_dot(vec, vec))
            value = _dot(q, vec) / (q_norm * norm) if q_norm > 0 and norm > 0 else 0.0
            cosine[cid] = max(0.0, min(1.0, value))
        inside = [s for s in scored if s.chunk_id in cosine]
        per_doc: dict[str, list[float]] = {}
        for s in inside:
            per_doc.setdefault(s.doc.document_id, []).append(cosine[s.chunk_id])
        doc_cos = {
            doc: sum(sorted(values, reverse=True)[:VECTOR_DOC_TOP]) / VECTOR_DOC_TOP
            for doc, values in per_doc.items()
        }
        w = self.document_weight
        semantic = [(1.0 - w) * cosine[s.chunk_id] + w * doc_cos[s.doc.document_id] for s in inside]
        top = max(semantic, default=0.0)
        say = (1.0 - question.cjk_share) ** 2
        a_model = say * self.alpha
        keep = self.first_stage
        out: list[Scored] = []
        for s, value in zip(inside, semantic, strict=True):
            model = value / top if top > 0 else 0.0
            # The model takes its say of the first stage's vector weight; the rest stays the
            # first stage's own score with its own α.
            a_first = (1.0 - say) * s.alpha
            a = a_model + a_first
            vector = (a_model * model + a_first * s.vector) / a if a > 0 else 0.0
            # retrieval = keep·first stage + (1 − keep)·(a·vector + (1 − a)·keyword), written
            # as one α and one vector score.
            alpha = keep * s.alpha + (1.0 - keep) * a
            if alpha > 0:
                vector = (keep * s.alpha * s.vector + (1.0 - keep) * a * vector) / alpha
            retrieval = alpha * vector + (1.0 - alpha) * s.keyword
            final = s.final + W_RETRIEVAL * (retrieval - s.retrieval)
            out.append(
                replace(
                    s, vector=vector, retrieval=retrieval, final=final, mode="hybrid", alpha=alpha
                )
            )
            self._explain[s.chunk_id] = {
                "cosine": cosine[s.chunk_id],
                "withDocument": value,
                "max": top,
            }
        out.sort(key=Scored.provisional_key)
        return out

    def explain(self, chunk_id: str) -> dict[str, float] | None:
        """The model's raw cosine of a re-ranked chunk, with its document's share, and the
        maximum that was divided by."""
        return self._explain.get(chunk_id)
