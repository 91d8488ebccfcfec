"""Scored candidates between the ranking stages of :mod:`ragit.retrieve.engine`.

The engine scores every candidate (chunk, document) pair, then — when a second stage is
configured (``retrieval.rerank``, :mod:`ragit.retrieve.rerank`) — hands the list, best first,
to a :class:`Rescorer`, then fetches the stored text of the hits the answer needs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from ragit.text.question import Question


@dataclass(slots=True)
class Scored:
    """A (chunk, document) candidate's scores, before its stored text is fetched."""

    chunk_id: str
    doc: Any
    keyword: float
    vector: float
    retrieval: float
    final: float
    mode: str
    alpha: float

    def group(self) -> tuple[float, str]:
        """The part of the hit's sort key known before the fetch (the section title that
        follows it is stored with the chunk)."""
        return (-round(self.final, 6), self.doc.path)

    def provisional_key(self) -> tuple[float, str, str]:
        return (-round(self.final, 6), self.doc.path, self.chunk_id)


class Rescorer(Protocol):
    """A second ranking stage: re-scores the best of ``scored`` (sorted best first by
    :meth:`Scored.provisional_key`) and returns the candidates that stay, sorted the same way.
    ``question`` is the analysed question (its text and its Hangul/CJK share); ``reader`` the
    snapshot's store."""

    def rescore(
        self, scored: list[Scored], question: Question, reader: Any, top_k: int
    ) -> list[Scored]: ...

    def explain(self, chunk_id: str) -> dict[str, float] | None:
        """What the stage adds to a hit's ``--explain`` ``raw`` (None: nothing)."""
