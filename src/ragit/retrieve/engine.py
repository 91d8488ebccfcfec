"""Hybrid retrieval restricted to one snapshot (contract §7, docs/reference/retrieval.md).

Candidates come from two indexes, each giving the ``want`` best chunks *of the
selected snapshot* (ties by chunk id), so the candidate set is a function of the
snapshot alone:

* BM25 over three fields of the store's keyword index (:mod:`ragit.retrieve.keyword`;
  ``en``: stemmed words; ``cjk``: character bigrams of Hangul/CJK runs, so Korean
  particles do not hide a match; ``ko``: Korean morphemes, matched to the question's
  words by prefix), with statistics computed over the snapshot's own chunks — never
  over the whole store, whose other commits would move the scores;
* the exact (FLAT) vector index, searched store-wide with a growing ``k`` until
  ``want`` results fall inside the snapshot.

Scores (all in [0, 1]):

* ``scoreKeyword``: the fields' BM25 added (all are in idf units, so a rare Latin API
  name and a rare Hangul word of one mixed question count alike; the two Korean fields
  weigh half each) and divided by the sum's maximum over the candidate set; half of it
  is the chunk's own, half its document's (:data:`DOC_WEIGHT`);
* ``scoreVector``: cosine similarity to the question, divided by its maximum over
  the candidate set (raw cosines of different embedders live in different
  ranges; dividing by the maximum keeps their ratios and puts them on the same
  footing as BM25);
  with a model's embedding (not the n-gram one: measured, it lost), half of a chunk's vector
  score is its document's: the mean of the document's :data:`VECTOR_DOC_TOP` best cosines
  among the candidates (a missing one counts 0), so a chunk that holds the question's words
  gains from the section of its document that holds its meaning;
* ``retrieval = α·vector + (1−α)·keyword``, α = ``retrieval.alpha``;
* ``scoreFinal = 0.80·retrieval + 0.15·authority + 0.05·recency``.

A document contributes at most ``retrieval.hits_per_document`` hits (default 1; 0 = no
limit): its best chunks by ``scoreFinal``; its other chunks leave the candidate set, so
the top ``k`` names ``k`` documents where one long document would otherwise fill it.

Recency is measured from the commit time of the selected snapshot, never from
the wall clock; durable documents are as recent as the snapshot (weight 1.0).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from itertools import chain
from operator import mul
from typing import Any

from ragit.retrieve.candidates import Rescorer
from ragit.retrieve.candidates import Scored as _Scored
from ragit.retrieve.citations import document_citation
from ragit.retrieve.keyword import (
    BIGRAM_WEIGHT,
    DOC_WEIGHT,
    MORPHEME_WEIGHT,
    KeywordScores,
    best,
    blend,
    bm25,
    held_by,
    mixed,
    score_of,
    snapshot_terms,
    summed,
    weighed_sum,
)
from ragit.snapshot.manifest import Manifest
from ragit.text.korean import korean_content_words
from ragit.text.morphemes import candidate_terms, question_morphemes
from ragit.text.scripts import cjk_runs, script_weights
from ragit.text.terms import cjk_terms, en_terms, query_terms

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
# retrieval.alpha measured for the offline n-gram embedding (local-placeholder).
NGRAM_ALPHA = 0.3
# Hits a document contributes by default (retrieval.hits_per_document). Chosen on half A of each
# real development set (1, 2, 3 and no limit tried), confirmed on half B (docs/benchmarks.md).
HITS_PER_DOCUMENT = 1
# How many of a document's best candidate cosines make its document-level vector evidence
# (the provider's ``document_vector_weight`` says how much of a chunk's vector score it is).
# Chosen on half A of kep-dev-v1 with local-minilm (top 2 / top 3 / best only / all chunks'
# centroid), confirmed on half B (docs/benchmarks.md).
VECTOR_DOC_TOP = 2


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


def cjk_query_text(question: str) -> str:
    """The CJK part of a question for the bigram index, without Korean function words.

    Question endings ("어떻게 하나요"), interrogatives and particles would otherwise
    contribute bigrams that match half the corpus; content words keep their stem.
    """
    return " ".join(korean_content_words(cjk_runs(question)))


def _restricted(
    search: Any, allowed: frozenset[str] | set[str] | dict[str, Any], want: int, store_size: int
) -> dict[str, float]:
    """Call ``search(k)`` with growing ``k`` until ``want`` results fall inside ``allowed``."""
    k = max(want * 4, 64)
    while True:
        results = search(min(k, max(store_size, 1)))
        inside = [(cid, score) for cid, score in results if cid in allowed]
        if len(inside) >= want or len(results) < min(k, store_size) or k >= store_size:
            # The ``want`` best, ties by id: how many other chunks the store holds between
            # them (and so how far the search had to reach) never changes the set.
            return dict(sorted(inside, key=lambda h: (-h[1], h[0]))[:want])
        k *= 4


def _norm(a: list[float]) -> float:
    return math.sqrt(sum(map(mul, a, a)))


def _cosine(a: list[float], b: list[float], na: float | None = None) -> float:
    # sum(map(mul, ...)) adds the same products in the same order as a generator would
    # (same bits), at C speed; ``na`` lets a caller compute the query's norm once.
    dot: float = sum(map(mul, a, b))
    na = _norm(a) if na is None else na
    nb = _norm(b)
    if na == 0.0 or nb == 0.0:
        return 0.0
    return max(0.0, min(1.0, dot / (na * nb)))


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
            raise _missing_chunks(snapshot_sha, reader, len(missing), len(sample))
    _PRESENT.pop(key, None)
    if len(_PRESENT) >= 8:
        _PRESENT.pop(next(iter(_PRESENT)))
    _PRESENT[key] = manifest


def _missing_chunks(snapshot_sha: str, reader: Any, missing: int, asked: int) -> Exception:
    from ragit.contract.errors import SnapshotStoreUnavailable

    generation = getattr(reader, "generation", "?")
    return SnapshotStoreUnavailable(
        snapshot_sha,
        f"{missing} of {asked} chunk(s) of this snapshot that were looked up are missing "
        f"from store generation {generation}; rebuild the store from git "
        "(ragit repair --apply --action store-rebuild)",
    )


def retrieve_durable(
    manifest: Manifest,
    snapshot_sha: str,
    reader: Any,
    question: str,
    question_vector: list[float] | None,
    *,
    top_k: int,
    alpha: float,
    pool: int | None = None,
    multilingual: bool = True,
    per_document: int = HITS_PER_DOCUMENT,
    document_vector_weight: float = 0.0,
    rerank: Rescorer | None = None,
) -> list[Hit]:
    """Rank the durable chunks of ``manifest`` for ``question``; return the top ``top_k`` hits.

    A chunk shared by several documents yields one hit per document (identity
    is ``(documentId, chunkId)``). ``document_vector_weight``: the share of a chunk's vector
    score that is its document's (the embedding provider's measured default). ``rerank``: a
    second stage that scores the best candidates again (``retrieval.rerank``,
    :mod:`ragit.retrieve.rerank`).

    Raises:
        SnapshotStoreUnavailable: a chunk the manifest names is missing from the store
            (never a silently shorter answer).
    """
    allowed = document_chunk_ids(manifest)
    if not allowed:
        return []
    check_snapshot_in_store(manifest, snapshot_sha, reader)
    want = pool or max(top_k * 4, 40)
    size = max(getattr(reader, "chunk_count", 0), len(allowed))
    w_en, w_cjk = script_weights(question)
    # An English-only embedding model says nothing about the Korean part of a question:
    # for that share the vector signal comes from the offline character n-gram embedding.
    ngram_share = 0.0 if multilingual else w_cjk
    en_query = query_terms(en_terms(question)) if w_en > 0 else []
    cjk_query = query_terms(cjk_terms(cjk_query_text(question))) if w_cjk > 0 else []
    # Each signal nominates its best chunks of the snapshot; every candidate then gets its
    # exact score from both (BM25 of the whole snapshot is at hand, cosines are fetched).
    nominate = max(want * 4, 64)
    keyword_scores: list[KeywordScores] = []
    ko_query: list[tuple[str, int]] = []
    # What each field's BM25 counts for in the keyword score: the Latin-script words 1, the
    # Hangul part once in all, half by its bigrams and half by its morphemes.
    weights = (1.0, BIGRAM_WEIGHT, MORPHEME_WEIGHT)
    candidates: set[str] = set()
    if en_query or cjk_query:
        terms = reader.terms()
        prefetch = getattr(terms, "prefetch", None)
        if prefetch is not None:
            # A server-side index (the shared store) reads every term's postings in one
            # round trip; the local index reads them from its file as asked.
            prefetch(
                {
                    "en": [t for t, _ in en_query],
                    "cjk": [t for t, _ in cjk_query],
                    "ko": list(candidate_terms(question)) if cjk_query else [],
                }
            )
        documents = [doc.chunk_ids for doc in manifest.docs] if DOC_WEIGHT > 0 else ()
        st = snapshot_terms(terms, allowed, manifest, snapshot_sha, documents)
        if cjk_query:
            ko_query = query_terms(question_morphemes(question, held_by(terms, st, "ko")))
        for field_name, query in (("en", en_query), ("cjk", cjk_query), ("ko", ko_query)):
            keyword_scores.append(bm25(terms, st, field_name, query))
        candidates.update(best(st, mixed(summed(keyword_scores, weights)), nominate))
    vec_hits: dict[str, float] = {}
    if question_vector is not None and alpha > 0:
        vec_hits = _restricted(
            lambda k: reader.vector_search(question_vector, k), allowed, nominate, size
        )
    candidates.update(vec_hits)
    if not candidates:
        return []
    fields = ("en", "cjk", "ko")
    raw_bm25: dict[str, dict[str, float]] = {f: {} for f in fields}
    raw_doc: dict[str, dict[str, float]] = {f: {} for f in fields}
    cov_en: dict[str, float] = {}
    cov_cjk: dict[str, float] = {}
    if keyword_scores:
        for name, ks in zip(fields, keyword_scores, strict=True):
            raw_bm25[name] = score_of(st, ks.chunk, candidates)
            raw_doc[name] = score_of(st, ks.document, candidates)
        cov_en = score_of(st, keyword_scores[0].coverage, candidates)
        cov_cjk = score_of(st, keyword_scores[1].coverage, candidates)
    raw_cosine: dict[str, float] = {}
    owners = chunk_owners(manifest, candidates)
    if question_vector is not None and alpha > 0:
        missing = [cid for cid in candidates if cid not in vec_hits]
        if missing:
            vectors = reader.fetch_vectors(missing)
            q_norm = _norm(question_vector)
            for cid, vec in vectors.items():
                vec_hits[cid] = _cosine(question_vector, vec, q_norm)
        raw_cosine = dict(vec_hits)
        if document_vector_weight > 0:
            doc_cosine = _document_cosines(vec_hits, owners)
            w = document_vector_weight
            for cid in candidates:
                whole = max(doc_cosine[doc.document_id] for doc in owners[cid])
                vec_hits[cid] = (1.0 - w) * vec_hits.get(cid, 0.0) + w * whole
    maxima = {f: max(raw_bm25[f].values(), default=0.0) for f in fields}
    sum_chunk = {cid: weighed_sum(raw_bm25, cid, weights) for cid in candidates}
    sum_doc = {cid: weighed_sum(raw_doc, cid, weights) for cid in candidates}
    max_chunk = max(sum_chunk.values(), default=0.0)
    max_doc = max(sum_doc.values(), default=0.0)
    max_vec = max(vec_hits.values(), default=0.0)
    # The n-gram signal reads every candidate's text; otherwise only the hits that can make
    # the answer are fetched (below), once every candidate is scored.
    stored = reader.fetch(sorted(candidates)) if ngram_share > 0 else {}
    ngram = _ngram_similarities(question, stored) if ngram_share > 0 else {}
    max_ngram = max(ngram.values(), default=0.0)
    w_total = w_en + w_cjk
    # The fields are added with their weights where the question has terms for them.
    field_weights = {
        "en": float(bool(en_query)),
        "cjk": weights[1] if cjk_query else 0.0,
        "ko": weights[2] if ko_query else 0.0,
    }
    authority_w = AUTHORITY_WEIGHTS["promoted_durable"]
    recency_w = 1.0
    scored: list[_Scored] = []
    for cid in candidates:
        keyword = blend(sum_chunk[cid], max_chunk, sum_doc[cid], max_doc)
        vector = vec_hits.get(cid, 0.0) / max_vec if max_vec > 0 else 0.0
        if question_vector is None or alpha <= 0:
            mode, a = "keyword", 0.0
        else:
            mode, a = "hybrid", alpha
        if ngram_share > 0 and mode == "hybrid":
            # Each part of the question is weighed with its own signal's measured alpha:
            # the model's for the English part, the n-gram embedding's for the CJK part.
            n_gram = ngram.get(cid, 0.0) / max_ngram if max_ngram > 0 else 0.0
            a_model = (1.0 - ngram_share) * alpha
            a_ngram = ngram_share * NGRAM_ALPHA
            a = a_model + a_ngram
            vector = (a_model * vector + a_ngram * n_gram) / a if a > 0 else 0.0
        retrieval = a * vector + (1.0 - a) * keyword
        final = W_RETRIEVAL * retrieval + W_AUTHORITY * authority_w + W_RECENCY * recency_w
        for doc in owners[cid]:
            scored.append(_Scored(cid, doc, keyword, vector, retrieval, final, mode, a))
    scored.sort(key=_Scored.provisional_key)
    if rerank is not None:
        scored = rerank.rescore(scored, question, reader, w_cjk, top_k)
    needed = scored[: _needed_prefix(scored, per_document, top_k)]
    needed_ids = {s.chunk_id for s in needed}
    wanted = sorted(needed_ids - stored.keys())
    if wanted:
        stored.update(reader.fetch(wanted))
    absent = needed_ids - stored.keys()
    if absent:
        raise _missing_chunks(snapshot_sha, reader, len(absent), len(needed_ids))
    hits: list[Hit] = []
    for s in needed:
        cid = s.chunk_id
        chunk = stored[cid]
        coverage = (
            (w_en * cov_en.get(cid, 0.0) + w_cjk * cov_cjk.get(cid, 0.0)) / w_total
            if w_total
            else 0.0
        )
        raw: dict[str, Any] = {
            "keyword": {
                "bm25": {f: raw_bm25[f].get(cid, 0.0) for f in fields},
                "max": maxima,
                "fieldWeights": field_weights,
                "sumMax": {"chunk": max_chunk, "document": max_doc},
            },
            "coverage": coverage,
        }
        if raw_cosine:
            raw["vector"] = {"cosine": raw_cosine.get(cid, 0.0), "max": max_vec}
            if document_vector_weight > 0:
                raw["vector"]["withDocument"] = vec_hits.get(cid, 0.0)
                raw["vector"]["documentWeight"] = document_vector_weight
        semantic = rerank.explain(cid) if rerank is not None else None
        if semantic is not None:
            raw["semantic"] = semantic
        doc = s.doc
        hits.append(
            Hit(
                chunk_id=cid,
                document_id=doc.document_id,
                version_id=doc.version_id,
                path=doc.path,
                doc_type=doc.doc_type,
                section_title=chunk.section_title,
                heading_path=chunk.heading_path,
                text=chunk.text,
                token_count=chunk.token_count,
                score_vector=s.vector if s.mode == "hybrid" else 0.0,
                score_keyword=s.keyword,
                retrieval=s.retrieval,
                authority_weight=authority_w,
                recency_weight=recency_w,
                score_final=s.final,
                mode=s.mode,
                alpha=s.alpha,
                citation=document_citation(cid, doc.version_id, snapshot_sha),
                raw=raw,
            )
        )
    hits.sort(key=Hit.sort_key)
    return _per_document(hits, per_document)[:top_k]


def _needed_prefix(scored: list[_Scored], per_document: int, top_k: int) -> int:
    """How many of ``scored`` (sorted by :meth:`_Scored.provisional_key`) the answer's
    ``top_k`` hits can come from: every candidate up to the end of the group of equal rank
    and path where the ``top_k``-th kept hit falls (inside such a group the stored section
    title decides the order, so the whole group is fetched). The per-document limit keeps
    the same number from each group whatever its inner order, so the prefix is exact."""
    seen: dict[str, int] = {}
    kept = 0
    i = 0
    while i < len(scored):
        group = scored[i].group()
        j = i
        while j < len(scored) and scored[j].group() == group:
            doc_id = scored[j].doc.document_id
            count = seen.get(doc_id, 0)
            if per_document <= 0 or count < per_document:
                kept += 1
            seen[doc_id] = count + 1
            j += 1
        i = j
        if kept >= top_k:
            break
    return i


def _document_cosines(cosines: dict[str, float], owners: dict[str, list[Any]]) -> dict[str, float]:
    """Document id → the mean of its :data:`VECTOR_DOC_TOP` best candidate cosines (a document
    with fewer candidates counts the missing ones as 0, so one lucky chunk is not a document)."""
    per: dict[str, list[float]] = {}
    for cid, cosine in cosines.items():
        for doc in owners.get(cid, ()):
            per.setdefault(doc.document_id, []).append(cosine)
    return {
        doc_id: sum(sorted(values, reverse=True)[:VECTOR_DOC_TOP]) / VECTOR_DOC_TOP
        for doc_id, values in per.items()
    }


def _per_document(hits: list[Hit], limit: int) -> list[Hit]:
    """``hits`` (in rank order) keeping each document's first ``limit`` (0: all)."""
    if limit <= 0:
        return hits
    seen: dict[str, int] = {}
    kept: list[Hit] = []
    for hit in hits:
        count = seen.get(hit.document_id, 0)
        if count < limit:
            kept.append(hit)
        seen[hit.document_id] = count + 1
    return kept


def _ngram_similarities(question: str, stored: dict[str, Any]) -> dict[str, float]:
    """Cosine of the offline character n-gram embedding (local-placeholder) per candidate."""
    from ragit.embed.profile import (
        PLACEHOLDER,
        PLACEHOLDER_DEFAULT_DIMENSIONS,
        PLACEHOLDER_MODEL,
        PLACEHOLDER_VERSION,
        EmbeddingProfile,
    )
    from ragit.embed.providers.placeholder import PlaceholderEmbedder

    embedder = PlaceholderEmbedder(
        EmbeddingProfile(
            PLACEHOLDER, PLACEHOLDER_MODEL, PLACEHOLDER_DEFAULT_DIMENSIONS, PLACEHOLDER_VERSION
        )
    )
    query = embedder.vector(question)
    q_norm = _norm(query)
    out: dict[str, float] = {}
    for cid, chunk in stored.items():
        text = f"{chunk.heading_path}\n{chunk.text}" if chunk.heading_path else chunk.text
        out[cid] = _cosine(query, embedder.vector(text), q_norm)
    return out


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
