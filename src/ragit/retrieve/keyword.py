"""BM25 of one snapshot, from the store's keyword index (docs/store.md, "The keyword index").

Every statistic comes from the snapshot's own chunks: ``N`` (its distinct chunks),
``avgdl`` (their mean length in the field), and each term's document frequency (how many
of them hold the term). Other snapshots, other branches and the layout of the store's
segments never enter, so a question asked at a commit scores the same way after any
number of later ingests, merges or a rebuild, and on any clone that indexed that commit.

Scoring is Okapi BM25 with Lucene's non-negative idf::

    idf(t)      = ln(1 + (N − df + 0.5) / (df + 0.5))
    score(c)    = Σ_t qtf(t) · idf(t) · tf·(k1 + 1) / (tf + k1·(1 − b + b·len(c)/avgdl))

summed over the question's distinct terms in the question's order (the same additions in
the same order: the same bits), ``qtf`` being how often the question says the term.
k1 = 1.2, b = 0.75. On one snapshot in one merged segment this is the score zvec's own
full-text index gave (equal to four significant digits on the Kubernetes KEPs); what
changed is only where the statistics come from. Ties at the cut are broken by chunk id.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ragit.contract.errors import SnapshotStoreUnavailable
from ragit.store.terms import TermReader, keys_of

K1 = 1.2
B = 0.75
# Share of a field's keyword score that comes from the chunk's whole document (its BM25 over
# the document's chunks together) rather than from the chunk alone. Chosen on half A of each
# real development set (odd case numbers; 0.3-0.85 tried), confirmed on half B (nDCG@10 with
# the default embedding): kep-dev-v1 A 0.7563 -> 0.8033, B 0.7804 -> 0.8024; ko-react-dev-v1
# A 0.6788 -> 0.7189, B 0.6486 -> 0.7063 (docs/benchmarks.md).
DOC_WEIGHT = 0.5
# How the two Korean fields make a question's Hangul keyword score: the BM25 of its bigrams
# (``cjk``) and of its morphemes (``ko``), each weighed by half, so that together they weigh
# as much as one field beside the Latin-script words. Chosen on half A of ko-react-dev-v1 and
# ko-rustbook-dev-v1 (bigrams : morphemes 1:0, 0:1, 1:1, 0.5:1, 1:0.5, 0.3:1, 0.4:0.4,
# 0.6:0.6, 0.4:0.6, 0.6:0.4, 0.3:0.5 and 0.5:0.5 tried), confirmed on half B
# (docs/benchmarks.md).
BIGRAM_WEIGHT = 0.5
MORPHEME_WEIGHT = 0.5


@dataclass(frozen=True)
class SnapshotTerms:
    """A snapshot's chunks as the keyword index sees them."""

    ids: Any  # chunk ids (numpy str array), sorted
    slot: Any  # int64 by index ordinal: the chunk's position in ``ids``, or -1 (not in it)
    lengths: dict[str, Any]  # field -> float64 lengths aligned with ``ids``
    avgdl: dict[str, float]
    # Documents: (document, chunk) pairs as two aligned arrays (document index, chunk
    # position), and each document's length per field (the sum of its chunks').
    pair_doc: Any = None
    pair_slot: Any = None
    doc_lengths: dict[str, Any] | None = None

    @property
    def n(self) -> int:
        return len(self.ids)


# (snapshot sha, index file) → the owner and reader the statistics were computed for, held
# so that they are the ones compared, and the statistics.
_CACHE: dict[tuple[str, str], tuple[Any, Any, SnapshotTerms]] = {}


def snapshot_terms(
    terms: TermReader,
    chunk_ids: frozenset[str],
    owner: Any,
    snapshot_sha: str,
    documents: Sequence[Sequence[str]] = (),
) -> SnapshotTerms:
    """The keyword statistics of a snapshot whose chunks are ``chunk_ids`` (memoized per
    snapshot and index file for as long as the same ``owner`` — the parsed manifest — and
    the same reader ask; another owner of the snapshot replaces the entry).

    Raises:
        SnapshotStoreUnavailable: the index lacks chunks of the snapshot.
    """
    cache_key = (snapshot_sha, str(terms.path))
    cached = _CACHE.get(cache_key)
    if cached is not None and cached[0] is owner and cached[1] is terms:
        return cached[2]
    ordered = sorted(chunk_ids)
    # Naming the width numpy would infer spares it a pass over the strings (2.5x faster).
    ids = np.array(ordered, dtype=f"<U{max(map(len, ordered))}") if ordered else np.array([])
    keys = keys_of(ids.tolist())
    index = terms.chunks()
    pos = np.searchsorted(index.keys, keys)
    pos_ok = np.minimum(pos, max(len(index.keys) - 1, 0))
    found = (
        (pos < len(index.keys)) & (index.keys[pos_ok] == keys)
        if len(index.keys)
        else np.zeros(len(keys), dtype=bool)
    )
    if not bool(np.all(found)):
        missing = int(len(keys) - np.count_nonzero(found))
        raise SnapshotStoreUnavailable(
            snapshot_sha,
            f"{missing} of {len(keys)} chunk(s) of this snapshot are missing from the store's "
            "keyword index; rebuild the store from git "
            "(ragit repair --apply --action store-rebuild)",
        )
    slot = np.full(index.size, -1, dtype=np.int64)
    slot[index.ords[pos]] = np.arange(len(ids))
    lengths = {
        "en": index.len_en[pos].astype(np.float64),
        "cjk": index.len_cjk[pos].astype(np.float64),
        "ko": index.len_ko[pos].astype(np.float64),
    }
    avgdl = {f: (float(v.sum()) / len(v) if len(v) else 0.0) for f, v in lengths.items()}
    pair_doc = pair_slot = doc_lengths = None
    if documents:
        # (document, slot) for each distinct chunk of each document, in document order.
        position = dict(zip(ids.tolist(), range(len(ids)), strict=True))
        slots: list[int] = []
        sizes: list[int] = []
        for doc in documents:
            distinct = dict.fromkeys(doc)
            slots.extend(map(position.__getitem__, distinct))
            sizes.append(len(distinct))
        pair_doc = np.repeat(np.arange(len(documents), dtype=np.int64), sizes)
        pair_slot = np.array(slots, dtype=np.int64)
        doc_lengths = {
            f: np.bincount(pair_doc, weights=v[pair_slot], minlength=len(documents))
            for f, v in lengths.items()
        }
    st = SnapshotTerms(
        ids=ids,
        slot=slot,
        lengths=lengths,
        avgdl=avgdl,
        pair_doc=pair_doc,
        pair_slot=pair_slot,
        doc_lengths=doc_lengths,
    )
    _CACHE.pop(cache_key, None)
    if len(_CACHE) >= 8:
        _CACHE.pop(next(iter(_CACHE)))
    _CACHE[cache_key] = (owner, terms, st)
    return st


@dataclass(frozen=True)
class KeywordScores:
    """One field's keyword evidence for every chunk of a snapshot (arrays aligned with ids)."""

    chunk: Any  # BM25 of the chunk
    coverage: Any  # share of the question's idf the chunk holds
    document: Any  # BM25 of the chunk's document (the best of its documents); zeros without


def _okapi(tf: Any, length: Any, avgdl: float, idf: float) -> Any:
    return idf * tf * (K1 + 1.0) / (tf + K1 * (1.0 - B + B * length / (avgdl or 1.0)))


def bm25(
    terms: TermReader, st: SnapshotTerms, field: str, query: Sequence[tuple[str, int]]
) -> KeywordScores:
    """BM25 of every chunk of the snapshot for ``query`` (distinct terms with their count in
    the question, in order) in ``field``; each chunk's *coverage*: the share of the question's
    idf (its information, asked terms weighed by how often they are asked) that the chunk
    holds; and, when the snapshot's documents are known, the BM25 of each chunk's document —
    term counts and lengths summed over its chunks, frequencies counted in documents."""
    n = st.n
    scores = np.zeros(n, dtype=np.float64)
    covered = np.zeros(n, dtype=np.float64)
    doc_of_chunk = np.zeros(n, dtype=np.float64)
    if not query or n == 0:
        return KeywordScores(scores, covered, doc_of_chunk)
    documents = st.doc_lengths[field] if st.doc_lengths is not None else None
    doc_scores = np.zeros(len(documents), dtype=np.float64) if documents is not None else None
    avg_doc = float(documents.mean()) if documents is not None and len(documents) else 0.0
    total = 0.0
    for term, asked in query:
        post = terms.postings(field, term)
        where = st.slot[post["ord"]] if len(post) else np.empty(0, dtype=np.int64)
        inside = where >= 0
        where = where[inside]
        df = len(where)
        idf = asked * float(np.log1p((n - df + 0.5) / (df + 0.5)))
        total += idf
        if df == 0:
            continue
        tf = post["tf"][inside].astype(np.float64)
        scores[where] += _okapi(tf, st.lengths[field][where], st.avgdl[field], idf)
        covered[where] += idf
        if doc_scores is not None and documents is not None:
            chunk_tf = np.zeros(n, dtype=np.float64)
            chunk_tf[where] = tf
            doc_tf = np.bincount(
                st.pair_doc, weights=chunk_tf[st.pair_slot], minlength=len(doc_scores)
            )
            held = np.flatnonzero(doc_tf)
            d_idf = asked * float(np.log1p((len(doc_scores) - len(held) + 0.5) / (len(held) + 0.5)))
            doc_scores[held] += _okapi(doc_tf[held], documents[held], avg_doc, d_idf)
    if doc_scores is not None:
        np.maximum.at(doc_of_chunk, st.pair_slot, doc_scores[st.pair_doc])
    return KeywordScores(scores, covered / total if total > 0 else covered, doc_of_chunk)


def held_by(terms: TermReader, st: SnapshotTerms, field: str) -> Callable[[str], bool]:
    """Whether a term of ``field`` occurs in a chunk of the snapshot (not only elsewhere in
    the store: the answer must not depend on what else it holds)."""

    def held(term: str) -> bool:
        post = terms.postings(field, term)
        return bool(len(post)) and bool(np.any(st.slot[post["ord"]] >= 0))

    return held


def best(st: SnapshotTerms, scores: Any, want: int) -> list[str]:
    """The ids of the ``want`` highest positive ``scores``, best first, ties by chunk id."""
    hit = np.flatnonzero(scores > 0.0)
    if len(hit) == 0:
        return []
    if len(hit) > want:
        cut = np.partition(scores[hit], len(hit) - want)[len(hit) - want]
        hit = hit[scores[hit] >= cut]
    ranked = sorted((-float(scores[i]), str(st.ids[i])) for i in hit)
    return [cid for _neg, cid in ranked[:want]]


def score_of(st: SnapshotTerms, scores: Any, chunk_ids: set[str]) -> dict[str, float]:
    """``scores`` of ``chunk_ids`` (ids of the snapshot) by id, zeros left out."""
    wanted = sorted(chunk_ids)
    pos = np.searchsorted(st.ids, np.array(wanted)) if wanted else np.empty(0, dtype=np.int64)
    out: dict[str, float] = {}
    for cid, p in zip(wanted, pos.tolist(), strict=True):
        if p < st.n and st.ids[p] == cid and scores[p] > 0.0:
            out[cid] = float(scores[p])
    return out


def blend(chunk: float, chunk_max: float, document: float, document_max: float) -> float:
    """A field's keyword score in [0, 1]: the chunk's BM25 and its document's, each divided by
    its maximum over the candidates, weighed by :data:`DOC_WEIGHT`."""
    own = chunk / chunk_max if chunk_max > 0 else 0.0
    if DOC_WEIGHT <= 0:
        return own
    whole = document / document_max if document_max > 0 else 0.0
    return (1.0 - DOC_WEIGHT) * own + DOC_WEIGHT * whole


def summed(fields: list[KeywordScores], weights: tuple[float, ...]) -> KeywordScores:
    """The fields' BM25 added with their weights, chunk by chunk and document by document."""
    chunk = sum((w * ks.chunk for ks, w in zip(fields, weights, strict=True)))
    document = sum((w * ks.document for ks, w in zip(fields, weights, strict=True)))
    return KeywordScores(chunk, fields[0].coverage, document)


def weighed_sum(scores: dict[str, dict[str, float]], cid: str, weights: tuple[float, ...]) -> float:
    """A candidate's BM25 over the fields (``en``, ``cjk``, ``ko``), weighed."""
    total = 0.0
    for values, w in zip(scores.values(), weights, strict=True):
        total += w * values.get(cid, 0.0)
    return total


def mixed(ks: KeywordScores) -> Any:
    """The nominating keyword score of every chunk (:func:`_blend` over the whole snapshot)."""
    top = float(ks.chunk.max()) if len(ks.chunk) else 0.0
    own = ks.chunk / top if top > 0 else ks.chunk
    if DOC_WEIGHT <= 0:
        return own
    top_doc = float(ks.document.max()) if len(ks.document) else 0.0
    whole = ks.document / top_doc if top_doc > 0 else ks.document
    return (1.0 - DOC_WEIGHT) * own + DOC_WEIGHT * whole
