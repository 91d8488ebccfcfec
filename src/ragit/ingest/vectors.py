"""Vectors of a large ingest computed beside its keyword index, on the second core.

:func:`embed_beside_terms` starts the embedding helper process (:mod:`ragit.embed.parallel`)
on the new chunks, opens the store writer and indexes the chunks' terms
(:meth:`ragit.store.writer.StoreWriter.index_terms`: journal first, then postings) while the
helper computes vectors, then embeds the remaining batches from the back until the two meet.
The rows, their vectors and every store write are the same as the single-process path's
(:func:`ragit.ingest.assemble.embed_rows`, then ``insert``); only the order of the work
changes.
"""

from __future__ import annotations

import time
from dataclasses import replace
from typing import Any

from ragit.ingest.plan import Progress
from ragit.store.lock import WriterLock
from ragit.store.writer import StoreWriter
from ragit.workspace import Workspace

BATCH = 256


def embed_beside_terms(
    ws: Workspace,
    lock: WriterLock,
    profile: dict[str, Any],
    rows: list[Any],
    embedder: Any,
    progress: Progress,
) -> tuple[list[Any], StoreWriter]:
    """``rows`` with their vectors, and the open store writer that indexed their terms
    (the caller inserts the rows and closes it).

    Raises:
        what :meth:`StoreWriter.open`, :meth:`StoreWriter.index_terms` and the embedder raise
        (the writer is closed then).
    """
    from ragit.embed.parallel import Helper

    texts = [r.search_en for r in rows]
    started = time.monotonic()
    helper = Helper(ws.root, profile, texts, BATCH)
    writer: StoreWriter | None = None
    try:
        writer = StoreWriter.open(
            ws, lock, embedding=profile, dimensions=profile["dimensions"], rows=len(rows)
        )
        progress(f"store: indexing the terms of {len(rows)} chunks while they are embedded")
        writer.index_terms(rows)

        def report(done: int) -> None:
            rate = done / max(time.monotonic() - started, 1e-6)
            eta = (len(rows) - done) / max(rate, 1e-6)
            progress(f"embed: {done}/{len(rows)} chunks ({rate:.0f}/s, ETA {eta:.0f}s)")

        vectors = helper.collect(embedder.embed, report)
    except BaseException:
        if writer is not None:
            writer.close()
        raise
    finally:
        helper.close()
    return [replace(r, vector=v) for r, v in zip(rows, vectors, strict=True)], writer
