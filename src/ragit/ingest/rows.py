"""Store rows from text: document chunks and artifact units (contract §6).

Ingest planning (:mod:`ragit.ingest.plan`) and the store rebuild
(:mod:`ragit.ops.maintenance.rebuild`) build rows the same way, so a rebuild regenerates
exactly the chunk ids an ingest wrote. Rows carry no vector yet; embedding
happens when they are applied.
"""

from __future__ import annotations

from typing import Any

from ragit.config import RagitConfig
from ragit.ingest import ids
from ragit.snapshot._git import GitRepo
from ragit.text.scripts import cjk_runs
from ragit.text.tokens import word_count


def decode_text(raw: bytes) -> tuple[str | None, str | None]:
    """The UTF-8 text of a blob, or None and why it is not a text document."""
    if b"\x00" in raw[:8192]:
        return None, "binary content"
    try:
        return raw.decode("utf-8"), None
    except UnicodeDecodeError:
        return None, "not valid UTF-8"


def chunk_rows(masked_text: str) -> list[Any]:
    """Store rows (without vectors) for the chunks of one masked document text."""
    from ragit.ingest.chunking import chunk_markdown, normalize_for_id
    from ragit.store.rows import ChunkRow

    rows: list[Any] = []
    for chunk in chunk_markdown(masked_text):
        cid = ids.chunk_id(tuple(chunk.heading_path), normalize_for_id(chunk.text))
        search_text = chunk.indexed_text
        rows.append(
            ChunkRow(
                chunk_id=cid,
                text=chunk.text,
                search_en=search_text,
                search_cjk=cjk_runs(search_text),
                section_title=chunk.section_title,
                heading_path=" > ".join(chunk.heading_path),
                token_count=chunk.token_count,
                vector=(),
            )
        )
    return rows


def process_blob(git: GitRepo, path: str, blob_sha: str, cfg: RagitConfig) -> list[Any] | None:
    """Rows of a document version already in a manifest, regenerated from git (rebuild).

    Masking is applied exactly as ingest did; admission is not re-decided (the manifest
    records that the document was admitted). None when the blob is not a text document.
    """
    from ragit.security.masking import mask_text

    text, _problem = decode_text(git.read_blob(blob_sha))
    if text is None:
        return None
    return chunk_rows(mask_text(text).text)


def unit_rows(units: list[dict[str, Any]]) -> list[tuple[dict[str, Any], Any]]:
    """One store row per searchable artifact unit (texts are masked by the memory writers)."""
    from ragit.ingest.chunking import normalize_for_id
    from ragit.store.rows import ChunkRow

    out: list[tuple[dict[str, Any], Any]] = []
    for unit in units:
        text = normalize_for_id(str(unit["text"]))
        if not text.strip():
            continue
        title = str(unit.get("sectionTitle") or unit.get("sourceId"))
        cid = ids.chunk_id(("artifact", str(unit["sourceType"]), str(unit["sourceId"])), text)
        search = f"{title}\n\n{text}"
        row = ChunkRow(
            chunk_id=cid,
            text=text,
            search_en=search,
            search_cjk=cjk_runs(search),
            section_title=title,
            heading_path=title,
            token_count=word_count(text),
            vector=(),
        )
        out.append((unit, row))
    return out
