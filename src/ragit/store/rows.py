"""The rows the store holds: one per unique chunk id, shared by every snapshot that cites it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class ChunkRow:
    """A chunk as written (content-addressed: the same id always carries the same content).

    ``search_en`` is the text the English full-text index sees (the caller decides what goes
    in: usually the masked, normalized chunk text); ``search_cjk`` holds the Korean/CJK runs the
    caller extracted (indexed as character bigrams, so "커밋을" matches "커밋"); either may be
    empty. ``vector`` must have exactly the store's dimensions.
    """

    chunk_id: str
    text: str
    search_en: str
    search_cjk: str
    section_title: str
    heading_path: str
    token_count: int
    vector: Sequence[float]


@dataclass(frozen=True)
class StoredChunk:
    """A chunk as read back (no vector, no search fields)."""

    chunk_id: str
    text: str
    section_title: str
    heading_path: str
    token_count: int
