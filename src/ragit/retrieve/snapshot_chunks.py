"""The chunks of one snapshot as the retrieval engine needs them: the ids its documents cite,
which documents cite a chunk, and a bounded check that the reader's store generation holds
them (:func:`ragit.retrieve.engine.retrieve_durable`'s first steps)."""

from __future__ import annotations

from itertools import chain
from typing import Any

from ragit.snapshot.manifest import Manifest

# Per snapshot (commit sha): the parsed manifest the entry was built from, held so that it
# is the one compared, and the set built from it.
_DOC_CHUNKS: dict[str, tuple[Manifest, frozenset[str]]] = {}


def document_chunk_ids(manifest: Manifest) -> frozenset[str]:
    """The chunk ids the documents of ``manifest`` cite (memoized per snapshot for as long
    as the same parsed manifest is asked, so the MCP server builds the set once; a re-read
    manifest replaces its snapshot's entry)."""
    cached = _DOC_CHUNKS.get(manifest.commit_sha)
    if cached is not None and cached[0] is manifest:
        return cached[1]
    frozen = frozenset(chain.from_iterable(doc.chunk_ids for doc in manifest.docs))
    _DOC_CHUNKS.pop(manifest.commit_sha, None)
    if len(_DOC_CHUNKS) >= 8:
        _DOC_CHUNKS.pop(next(iter(_DOC_CHUNKS)))
    _DOC_CHUNKS[manifest.commit_sha] = (manifest, frozen)
    return frozen


def chunk_owners(manifest: Manifest, chunk_ids: set[str]) -> dict[str, list[Any]]:
    """Chunk id → the documents citing it, in manifest order, for ``chunk_ids`` only (a
    document citing a chunk twice is listed twice). Only documents that cite one of
    ``chunk_ids`` are walked, so the cost is one C-level set test per document."""
    owners: dict[str, list[Any]] = {}
    for doc in manifest.docs:
        if chunk_ids.isdisjoint(doc.chunk_ids):
            continue
        for cid in doc.chunk_ids:
            if cid in chunk_ids:
                owners.setdefault(cid, []).append(doc)
    return owners


# How many chunk ids of a snapshot a reader fetches to prove its generation holds the
# snapshot (two per sampled document: its first and last chunk).
SAMPLE_DOCS = 32
# (snapshot sha, store id, generation) → the parsed manifest whose sample was found there.
_PRESENT: dict[tuple[str, str, int], Manifest] = {}


def _sample_ids(manifest: Manifest) -> list[str]:
    """Chunk ids spread over the whole manifest: the first and last chunk of up to
    :data:`SAMPLE_DOCS` documents taken at even steps."""
    docs = [d for d in manifest.docs if d.chunk_ids]
    step = max(1, len(docs) // SAMPLE_DOCS)
    out: list[str] = []
    for doc in docs[::step][:SAMPLE_DOCS]:
        out.append(doc.chunk_ids[0])
        out.append(doc.chunk_ids[-1])
    return list(dict.fromkeys(out))


def check_snapshot_in_store(manifest: Manifest, snapshot_sha: str, reader: Any) -> None:
    """Fail when the reader's generation visibly lacks the snapshot's chunks.

    Every publish verifies that the generation holds every chunk a retained manifest names,
    so this is the reader's cheap second look (a bounded fetch, once per manifest and
    generation): a snapshot whose chunks are all gone would otherwise answer with nothing
    and ``ok``.

    Raises:
        SnapshotStoreUnavailable: a sampled chunk is missing.
    """
    key = (snapshot_sha, str(getattr(reader, "store_id", "")), getattr(reader, "generation", 0))
    known = _PRESENT.get(key)
    if known is manifest:
        return
    sample = _sample_ids(manifest)
    if sample:
        found = reader.fetch(sample)
        missing = [cid for cid in sample if cid not in found]
        if missing:
            raise missing_chunks(snapshot_sha, reader, len(missing), len(sample))
    _PRESENT.pop(key, None)
    if len(_PRESENT) >= 8:
        _PRESENT.pop(next(iter(_PRESENT)))
    _PRESENT[key] = manifest


def missing_chunks(snapshot_sha: str, reader: Any, missing: int, asked: int) -> Exception:
    """The error of a reader whose generation lacks ``missing`` of ``asked`` chunks."""
    from ragit.contract.errors import SnapshotStoreUnavailable

    generation = getattr(reader, "generation", "?")
    return SnapshotStoreUnavailable(
        snapshot_sha,
        f"{missing} of {asked} chunk(s) of this snapshot that were looked up are missing "
        f"from store generation {generation}; rebuild the store from git "
        "(ragit repair --apply --action store-rebuild)",
    )
