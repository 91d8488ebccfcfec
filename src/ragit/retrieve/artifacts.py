"""Artifact and evidence overlay hits for the non-durable scopes (docs/reference/retrieval.md).

``session``, ``harness`` and ``evidence`` (and ``all``) add reviewable knowledge
that is not (yet) part of a snapshot: the bodies of reviewed or promoted session
and harness artifacts, and the evidence excerpts of captured, reviewed or
promoted ones. Superseded, retracted and archived artifacts are excluded, as
are artifacts captured at a commit that is not an ancestor of the selected
snapshot (knowledge from another line of history, or from its future).

Scoring follows contract §7 with the inputs available for an overlay:

* ``scoreKeyword`` — the share of the question's terms found in the title and
  text (lower-cased words; a CJK term also matches inside a longer run, so
  Korean particles do not hide it; English stop words are ignored unless the
  question has nothing else);
* ``scoreVector`` 0: artifact texts are never embedded, so ``mode`` is ``keyword``
  (vector weight 0) and the caller warns with :data:`KEYWORD_ONLY_WARNING`;
* authority (:data:`ragit.retrieve.engine.AUTHORITY_WEIGHTS`): durable tier or
  promoted status 1.0, evidence 0.4, reviewed harness or harness scope 0.9,
  session 0.8, otherwise 0.6;
* recency ``max(0.2, 1 − min(ageDays/30, 0.8))`` with the age measured from the
  artifact's ``updatedAt`` to ``commit_time`` (the selected snapshot's commit
  time — never the wall clock); 1.0 when either is unknown.

Citations: ``artifact`` (sourceId = artifact id) for bodies and ``evidence``
(sourceId = ``<artifactId>:<evidenceId>``) for excerpts; sourceVersion is the
artifact's provenance content hash; sourceSha its bound, source or capture commit.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from ragit.retrieve.citations import citation_id
from ragit.retrieve.hit import AUTHORITY_WEIGHTS, W_AUTHORITY, W_RECENCY, W_RETRIEVAL, Hit
from ragit.text.english import strip_plural
from ragit.text.question import Question, overlay_terms
from ragit.text.scripts import CJK_CHAR, WORD
from ragit.text.tokens import word_count
from ragit.workspace import Workspace

OVERLAY_SCOPES: dict[str, frozenset[str]] = {
    "durable": frozenset(),
    "session": frozenset({"session"}),
    "harness": frozenset({"harness"}),
    "evidence": frozenset({"evidence"}),
    "all": frozenset({"session", "harness", "evidence"}),
}
KEYWORD_ONLY_WARNING = "artifact hits are ranked by keyword only (no artifact embeddings)"


def query_terms(text: str) -> list[str]:
    """The distinct normalized terms of a text that is not the asked question (a recalled
    goal's decisions are scored with them); a question's are its ``overlay_terms``."""
    return list(overlay_terms(text))


def keyword_score(terms: Sequence[str], text: str) -> float:
    """Share of ``terms`` present in ``text`` (the keyword score of docs/reference/retrieval.md)."""
    if not terms:
        return 0.0
    lowered = text.lower()
    words = {strip_plural(w) for w in WORD.findall(lowered)}
    found = 0
    for term in terms:
        if term in words or (CJK_CHAR.search(term) and term in lowered):
            found += 1
    return found / len(terms)


def authority_weight(tier: str, status: str, authority: str, scope: str) -> float:
    """Authority weight of an artifact hit (the first rule of ``AUTHORITY_WEIGHTS`` to apply)."""
    if tier == "durable" or status == "promoted":
        return AUTHORITY_WEIGHTS["promoted_durable"]
    if scope == "evidence":
        return AUTHORITY_WEIGHTS["evidence"]
    if authority == "reviewed_harness" or scope == "harness":
        return AUTHORITY_WEIGHTS["reviewed_harness"]
    if scope == "session":
        return AUTHORITY_WEIGHTS["session"]
    return AUTHORITY_WEIGHTS["other"]


def recency_weight(updated_at: str | None, commit_time: float | None) -> float:
    """``max(0.2, 1 − min(ageDays/30, 0.8))``; 1.0 without both timestamps."""
    from ragit.artifacts.ids import instant_seconds

    moment = instant_seconds(updated_at)
    if moment is None or commit_time is None:
        return 1.0
    age_days = max(0.0, commit_time - moment) / 86_400.0
    return max(0.2, 1.0 - min(age_days / 30.0, 0.8))


def _visible_at(ws: Workspace, snapshot_sha: str | None) -> Any:
    """A predicate: was an artifact captured at a commit the snapshot descends from?"""
    if snapshot_sha is None:
        return lambda sha: True
    from ragit.snapshot._git import GitRepo

    git = GitRepo(ws.root)
    cache: dict[str, bool] = {}

    def visible(sha: str | None) -> bool:
        if not sha:
            return True
        if sha not in cache:
            cache[sha] = git.has_commit(sha) and git.is_ancestor(sha, snapshot_sha)
        return cache[sha]

    return visible


def artifact_hits(
    ws: Workspace,
    question: Question,
    scope: str,
    snapshot_sha: str | None,
    commit_time: float | None,
    *,
    top_k: int,
) -> list[Hit]:
    """Overlay hits of ``scope`` for ``question``, best first, at most ``top_k``.

    ``question`` is analysed already (:func:`ragit.text.question.analyze`): its
    ``overlay_terms`` are what each artifact is scored with.

    ``snapshot_sha`` (None in a degraded recall) hides artifacts captured outside
    its history; ``commit_time`` (epoch seconds of that commit) anchors recency.
    Keyword scoring only: no embedding call is made.
    """
    from ragit.artifacts.catalog import iter_artifacts, relative_path, searchable_units

    wanted = OVERLAY_SCOPES.get(scope, frozenset())
    if not wanted or top_k <= 0:
        return []
    visible = _visible_at(ws, snapshot_sha)
    terms = question.overlay_terms
    units: list[tuple[Any, dict[str, Any], float]] = []
    for record in iter_artifacts(ws):
        if not visible(record.capture_head_sha or record.source_head_sha):
            continue
        for unit in searchable_units(record):
            if unit["scope"] not in wanted:
                continue
            score = keyword_score(terms, f"{unit['sectionTitle']}\n{unit['text']}")
            units.append((record, unit, score))
    if not units:
        return []
    hits: list[Hit] = []
    for record, unit, keyword in units:
        if keyword <= 0:
            continue
        retrieval = keyword
        auth = authority_weight(record.tier, record.status, record.authority, unit["scope"])
        recency = recency_weight(record.updated_at or record.created_at, commit_time)
        version = record.provenance.content_hash or record.artifact_id
        hits.append(
            Hit(
                chunk_id=unit["sourceId"],
                document_id=record.artifact_id,
                version_id=version,
                path=relative_path(ws, record.artifact_id),
                doc_type=record.kind,
                section_title=unit["sectionTitle"],
                heading_path=unit["sectionTitle"],
                text=unit["text"],
                token_count=word_count(unit["text"]),
                score_vector=0.0,
                score_keyword=keyword,
                retrieval=retrieval,
                authority_weight=auth,
                recency_weight=recency,
                score_final=W_RETRIEVAL * retrieval + W_AUTHORITY * auth + W_RECENCY * recency,
                mode="keyword",
                alpha=0.0,
                scope=unit["scope"],
                origin_type="artifact",
                artifact_id=record.artifact_id,
                artifact_kind=record.kind,
                authority=record.authority,
                confidence=record.confidence,
                citation={
                    "id": citation_id(unit["sourceType"], unit["sourceId"], version),
                    "sourceType": unit["sourceType"],
                    "sourceId": unit["sourceId"],
                    "sourceVersion": version,
                    "sourceSha": record.bound_head_sha
                    or record.source_head_sha
                    or record.capture_head_sha,
                },
            )
        )
    hits.sort(key=Hit.sort_key)
    return hits[:top_k]


def hit_identity(hit: Hit) -> tuple[str, str]:
    """Retrieval identity (docs/reference/retrieval.md): cited source for artifacts, (document,
    chunk) otherwise."""
    if hit.origin_type == "artifact":
        return (str(hit.citation.get("sourceType")), str(hit.citation.get("sourceId")))
    return (hit.document_id, hit.chunk_id)


def merge_hits(primary: Iterable[Hit], overlay: Iterable[Hit], top_k: int) -> list[Hit]:
    """Snapshot hits and overlay hits as one ranking: one hit per identity, best score wins."""
    best: dict[tuple[str, str], Hit] = {}
    for hit in [*primary, *overlay]:
        key = hit_identity(hit)
        kept = best.get(key)
        if kept is None or hit.sort_key() < kept.sort_key():
            best[key] = hit
    merged = sorted(best.values(), key=Hit.sort_key)
    return merged[:top_k]
