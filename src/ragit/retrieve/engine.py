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
from operator import mul
from typing import TYPE_CHECKING, Any

from ragit.retrieve.candidates import Rescorer
from ragit.retrieve.candidates import Scored as _Scored
from ragit.retrieve.citations import document_citation
from ragit.retrieve.hit import AUTHORITY_WEIGHTS, W_AUTHORITY, W_RECENCY, W_RETRIEVAL, Hit
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
from ragit.retrieve.snapshot_chunks import (
    check_snapshot_in_store,
    chunk_owners,
    document_chunk_ids,
    missing_chunks,
)
from ragit.snapshot.manifest import Manifest
from ragit.text.morphemes import held_prefixes
from ragit.text.question import Question
from ragit.text.terms import query_terms

if TYPE_CHECKING:
    from ragit.store.backend import SnapshotStore

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


def retrieve_durable(
    manifest: Manifest,
    snapshot_sha: str,
    reader: SnapshotStore,
    question: Question,
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

    The steps, in order: the snapshot's chunks (:func:`document_chunk_ids`, checked present
    in the reader's generation); the candidates each index nominates
    (:func:`_keyword_nominees`, :func:`_vector_nominees`); every candidate's exact evidence
    (:func:`_keyword_evidence`, :func:`_vector_evidence`, :func:`_ngram_evidence`); the scores
    (:func:`_score_candidates`), re-scored by ``rerank`` if any; the stored text of the hits
    the answer can hold (:func:`_fetch_needed`); the hits (:func:`_hit`), one document's best
    ``per_document`` each.

    A chunk shared by several documents yields one hit per document (identity
    is ``(documentId, chunkId)``). ``question`` is the question as :func:`ragit.text.question.
    analyze` made it: nothing here splits its text again. ``document_vector_weight``: the share
    of a chunk's vector score that is its document's (the embedding provider's measured
    default). ``rerank``: a second stage that scores the best candidates again
    (``retrieval.rerank``, :mod:`ragit.retrieve.rerank`).

    Raises:
        SnapshotStoreUnavailable: a chunk the manifest names is missing from the store
            (never a silently shorter answer).
    """
    allowed = document_chunk_ids(manifest)
    if not allowed:
        return []
    check_snapshot_in_store(manifest, snapshot_sha, reader)
    want = pool or max(top_k * 4, 40)
    # Each signal nominates its best chunks of the snapshot; every candidate then gets its
    # exact score from both (BM25 of the whole snapshot is at hand, cosines are fetched).
    nominate = max(want * 4, 64)
    keyword = _keyword_nominees(manifest, snapshot_sha, reader, question, allowed, nominate)
    use_vector = question_vector is not None and alpha > 0
    vec_hits: dict[str, float] = {}
    if question_vector is not None and use_vector:
        size = max(getattr(reader, "chunk_count", 0), len(allowed))
        vec_hits = _vector_nominees(reader, question_vector, allowed, nominate, size)
    candidates: set[str] = set()
    candidates.update(keyword.nominated)
    candidates.update(vec_hits)
    if not candidates:
        return []
    evidence = _keyword_evidence(keyword, question, candidates)
    owners = chunk_owners(manifest, candidates)
    vector = _VectorEvidence(vec_hits, {}, document_vector_weight)
    if question_vector is not None and use_vector:
        vector = _vector_evidence(
            reader, question_vector, vec_hits, candidates, owners, document_vector_weight
        )
    # An English-only embedding model says nothing about the Korean part of a question:
    # for that share the vector signal comes from the offline character n-gram embedding.
    ngram_share = 0.0 if multilingual else question.cjk_share
    stored, ngram = _ngram_evidence(reader, question, candidates, ngram_share)
    mode, a = ("hybrid", alpha) if use_vector else ("keyword", 0.0)
    scored = _score_candidates(candidates, owners, evidence, vector, ngram, mode, a, ngram_share)
    if rerank is not None:
        scored = rerank.rescore(scored, question, reader, top_k)
    needed = scored[: _needed_prefix(scored, per_document, top_k)]
    _fetch_needed(reader, snapshot_sha, needed, stored)
    hits = [
        _hit(
            s,
            stored[s.chunk_id],
            snapshot_sha,
            _explained(s.chunk_id, question, evidence, vector, rerank),
        )
        for s in needed
    ]
    hits.sort(key=Hit.sort_key)
    return _per_document(hits, per_document)[:top_k]


@dataclass(slots=True)
class _KeywordNominees:
    """The keyword side of one retrieval: the snapshot's term statistics, each field's BM25
    (``en``, ``cjk``, ``ko``; none without keyword terms) and the chunks they nominate."""

    st: Any = None
    scores: list[KeywordScores] = field(default_factory=list)
    ko_query: list[tuple[str, int]] = field(default_factory=list)
    nominated: list[str] = field(default_factory=list)


# What each field's BM25 counts for in the keyword score: the Latin-script words 1, the
# Hangul part once in all, half by its bigrams and half by its morphemes.
FIELD_WEIGHTS = (1.0, BIGRAM_WEIGHT, MORPHEME_WEIGHT)
FIELDS = ("en", "cjk", "ko")


def _keyword_nominees(
    manifest: Manifest,
    snapshot_sha: str,
    reader: SnapshotStore,
    question: Question,
    allowed: frozenset[str],
    nominate: int,
) -> _KeywordNominees:
    """Decides which chunks the keyword index nominates: the ``nominate`` best of the snapshot
    by the fields' weighed BM25, with statistics of the snapshot's own chunks. The question's
    ``ko`` terms are decided here: the longest prefix of each Hangul content word that is a
    morpheme the snapshot holds."""
    out = _KeywordNominees()
    if not question.has_keyword_terms:
        return out
    terms = reader.terms()
    prefetch = getattr(terms, "prefetch", None)
    if prefetch is not None:
        # A server-side index (the shared store) reads every term's postings in one
        # round trip; the local index reads them from its file as asked.
        prefetch(
            {
                "en": [t for t, _ in question.en_terms],
                "cjk": [t for t, _ in question.cjk_terms],
                "ko": question.morpheme_candidates() if question.cjk_terms else [],
            }
        )
    documents = [doc.chunk_ids for doc in manifest.docs] if DOC_WEIGHT > 0 else ()
    out.st = st = snapshot_terms(terms, allowed, manifest, snapshot_sha, documents)
    if question.cjk_terms:
        held = held_by(terms, st, "ko")
        out.ko_query = query_terms(held_prefixes(question.morpheme_prefixes, held))
    for field_name, query in zip(
        FIELDS, (question.en_terms, question.cjk_terms, out.ko_query), strict=True
    ):
        out.scores.append(bm25(terms, st, field_name, query))
    out.nominated = best(st, mixed(summed(out.scores, FIELD_WEIGHTS)), nominate)
    return out


def _vector_nominees(
    reader: SnapshotStore,
    question_vector: list[float],
    allowed: frozenset[str],
    nominate: int,
    size: int,
) -> dict[str, float]:
    """Decides which chunks the vector index nominates: the ``nominate`` nearest of the
    snapshot (the exact index is searched store-wide with a growing ``k``), with their
    cosines."""
    return _restricted(lambda k: reader.vector_search(question_vector, k), allowed, nominate, size)


@dataclass(slots=True)
class _KeywordEvidence:
    """Every candidate's keyword evidence: raw BM25 per field of the chunk and of its document,
    their weighed sums and maxima, and the coverage of the question's ``en`` and ``cjk`` idf."""

    raw_bm25: dict[str, dict[str, float]]
    raw_doc: dict[str, dict[str, float]]
    cov_en: dict[str, float]
    cov_cjk: dict[str, float]
    sum_chunk: dict[str, float]
    sum_doc: dict[str, float]
    max_chunk: float
    max_doc: float
    maxima: dict[str, float]
    field_weights: dict[str, float]


def _keyword_evidence(
    keyword: _KeywordNominees, question: Question, candidates: set[str]
) -> _KeywordEvidence:
    """Decides each candidate's keyword evidence (the nominees of either index alike): its
    fields' BM25, the chunk's and its document's weighed sums, and the maxima over the
    candidates they are divided by."""
    raw_bm25: dict[str, dict[str, float]] = {f: {} for f in FIELDS}
    raw_doc: dict[str, dict[str, float]] = {f: {} for f in FIELDS}
    cov_en: dict[str, float] = {}
    cov_cjk: dict[str, float] = {}
    st = keyword.st
    if keyword.scores:
        for name, ks in zip(FIELDS, keyword.scores, strict=True):
            raw_bm25[name] = score_of(st, ks.chunk, candidates)
            raw_doc[name] = score_of(st, ks.document, candidates)
        cov_en = score_of(st, keyword.scores[0].coverage, candidates)
        cov_cjk = score_of(st, keyword.scores[1].coverage, candidates)
    sum_chunk = {cid: weighed_sum(raw_bm25, cid, FIELD_WEIGHTS) for cid in candidates}
    sum_doc = {cid: weighed_sum(raw_doc, cid, FIELD_WEIGHTS) for cid in candidates}
    return _KeywordEvidence(
        raw_bm25=raw_bm25,
        raw_doc=raw_doc,
        cov_en=cov_en,
        cov_cjk=cov_cjk,
        sum_chunk=sum_chunk,
        sum_doc=sum_doc,
        max_chunk=max(sum_chunk.values(), default=0.0),
        max_doc=max(sum_doc.values(), default=0.0),
        maxima={f: max(raw_bm25[f].values(), default=0.0) for f in FIELDS},
        # The fields are added with their weights where the question has terms for them.
        field_weights={
            "en": float(bool(question.en_terms)),
            "cjk": FIELD_WEIGHTS[1] if question.cjk_terms else 0.0,
            "ko": FIELD_WEIGHTS[2] if keyword.ko_query else 0.0,
        },
    )


@dataclass(slots=True)
class _VectorEvidence:
    """Every candidate's vector score (with its document's share), the raw cosines (none
    without a question vector), and the share of a chunk's score that is its document's."""

    scores: dict[str, float]
    raw_cosine: dict[str, float]
    document_weight: float

    @property
    def maximum(self) -> float:
        """The best vector score among the candidates (what each is divided by)."""
        return max(self.scores.values(), default=0.0)


def _vector_evidence(
    reader: SnapshotStore,
    question_vector: list[float],
    vec_hits: dict[str, float],
    candidates: set[str],
    owners: dict[str, list[Any]],
    document_vector_weight: float,
) -> _VectorEvidence:
    """Decides each candidate's vector score: its cosine (fetched for the keyword nominees),
    and with ``document_vector_weight`` that share of it its document's
    (:func:`_document_cosines`). ``vec_hits`` (the vector nominees) is updated in place."""
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
    return _VectorEvidence(vec_hits, raw_cosine, document_vector_weight)


def _ngram_evidence(
    reader: SnapshotStore, question: Question, candidates: set[str], ngram_share: float
) -> tuple[dict[str, Any], dict[str, float]]:
    """Decides each candidate's n-gram similarity where the n-gram signal has a share (the CJK
    part of a question an English-only model cannot read): it reads every candidate's stored
    text, which is returned too; otherwise nothing is fetched yet (only the hits that can
    make the answer are, once every candidate is scored)."""
    if ngram_share <= 0:
        return {}, {}
    stored = reader.fetch(sorted(candidates))
    return stored, _ngram_similarities(question, stored)


def _score_candidates(
    candidates: set[str],
    owners: dict[str, list[Any]],
    evidence: _KeywordEvidence,
    vectors: _VectorEvidence,
    ngram: dict[str, float],
    mode: str,
    alpha: float,
    ngram_share: float,
) -> list[_Scored]:
    """Decides every (candidate, document)'s scores: keyword (chunk and document blended),
    vector (divided by the maximum), ``retrieval = α·vector + (1−α)·keyword`` and the final
    score; sorted by :meth:`_Scored.provisional_key`."""
    vec_hits = vectors.scores
    max_vec = vectors.maximum
    max_ngram = max(ngram.values(), default=0.0)
    authority_w = AUTHORITY_WEIGHTS["promoted_durable"]
    recency_w = 1.0
    scored: list[_Scored] = []
    for cid in candidates:
        keyword = blend(
            evidence.sum_chunk[cid], evidence.max_chunk, evidence.sum_doc[cid], evidence.max_doc
        )
        vector = vec_hits.get(cid, 0.0) / max_vec if max_vec > 0 else 0.0
        a = alpha
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
    return scored


def _fetch_needed(
    reader: SnapshotStore, snapshot_sha: str, needed: list[_Scored], stored: dict[str, Any]
) -> None:
    """Decides nothing about rank: adds to ``stored`` the text of the ``needed`` chunks not
    yet fetched.

    Raises:
        SnapshotStoreUnavailable: one of them is missing from the store.
    """
    needed_ids = {s.chunk_id for s in needed}
    wanted = sorted(needed_ids - stored.keys())
    if wanted:
        stored.update(reader.fetch(wanted))
    absent = needed_ids - stored.keys()
    if absent:
        raise missing_chunks(snapshot_sha, reader, len(absent), len(needed_ids))


def _explained(
    cid: str,
    question: Question,
    evidence: _KeywordEvidence,
    vectors: _VectorEvidence,
    rerank: Rescorer | None,
) -> dict[str, Any]:
    """Decides what ``--explain`` shows of a hit (``raw``): its BM25 per field and what it was
    divided by, its ``coverage`` of the question (each script's share weighing its field's
    coverage), its cosine, and what a re-ranking stage adds."""
    w_en, w_cjk = question.latin_share, question.cjk_share
    w_total = w_en + w_cjk
    coverage = (
        (w_en * evidence.cov_en.get(cid, 0.0) + w_cjk * evidence.cov_cjk.get(cid, 0.0)) / w_total
        if w_total
        else 0.0
    )
    raw: dict[str, Any] = {
        "keyword": {
            "bm25": {f: evidence.raw_bm25[f].get(cid, 0.0) for f in FIELDS},
            "max": evidence.maxima,
            "fieldWeights": evidence.field_weights,
            "sumMax": {"chunk": evidence.max_chunk, "document": evidence.max_doc},
        },
        "coverage": coverage,
    }
    if vectors.raw_cosine:
        raw["vector"] = {"cosine": vectors.raw_cosine.get(cid, 0.0), "max": vectors.maximum}
        if vectors.document_weight > 0:
            raw["vector"]["withDocument"] = vectors.scores.get(cid, 0.0)
            raw["vector"]["documentWeight"] = vectors.document_weight
    semantic = rerank.explain(cid) if rerank is not None else None
    if semantic is not None:
        raw["semantic"] = semantic
    return raw


def _hit(s: _Scored, chunk: Any, snapshot_sha: str, raw: dict[str, Any]) -> Hit:
    """The hit of a scored (chunk, document) with the chunk's stored text."""
    doc = s.doc
    return Hit(
        chunk_id=s.chunk_id,
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
        authority_weight=AUTHORITY_WEIGHTS["promoted_durable"],
        recency_weight=1.0,
        score_final=s.final,
        mode=s.mode,
        alpha=s.alpha,
        citation=document_citation(s.chunk_id, doc.version_id, snapshot_sha),
        raw=raw,
    )


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


def _ngram_similarities(question: Question, stored: dict[str, Any]) -> dict[str, float]:
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
    query = embedder.vector_of_words(question.ngram_counts())
    q_norm = _norm(query)
    out: dict[str, float] = {}
    for cid, chunk in stored.items():
        text = f"{chunk.heading_path}\n{chunk.text}" if chunk.heading_path else chunk.text
        out[cid] = _cosine(query, embedder.vector(text), q_norm)
    return out
