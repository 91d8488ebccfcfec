"""`query` and `context pack` core functions, shared by the CLI and the MCP server.

Both select the exact snapshot first (no embedding call and no store access
before the selection is valid), then retrieve through the reader copy of the
published store generation, then project and re-mask.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from ragit.contract.errors import RagitError
from ragit.contract.inputs import positive_int, required_text
from ragit.retrieve.engine import retrieve_durable
from ragit.retrieve.hit import Hit
from ragit.retrieve.views import Redactor, project_hit, project_passage
from ragit.text.question import Question, analyze
from ragit.text.tokens import token_estimate
from ragit.workspace import Workspace

if TYPE_CHECKING:
    from ragit.store.backend import SnapshotSource, SnapshotStore, StoreBackend

CLI_MAX_TOP_K = 200
CLI_MAX_BUDGET = 200_000
# The candidate pool of a context pack (docs/contract.md, "Context pack"): the ranked
# candidates up to the one at which their token estimates reach the budget, never fewer than
# CONTEXT_PACK_TOP_K nor more than CONTEXT_PACK_MAX_POOL. Retrieval first ranks budget / 100 of
# them (within the same bounds) — passages hold about 240 tokens on English design documents
# and 600-900 on Korean ones, so that depth usually holds the budget — and ranks more only when
# the passages it found are too short to hold it.
CONTEXT_PACK_TOP_K = 30
CONTEXT_PACK_MAX_POOL = 200
DEPTH_TOKENS_PER_CANDIDATE = 100
DEFAULT_BUDGET = 1200
NO_FIT_WARNING = "context pack budget admitted no complete hit"


@dataclass(frozen=True)
class QueryRequest:
    question: str
    top_k: int
    at: str | None = None
    scope: str = "durable"
    explain: bool = False
    view: str = "default"
    # Seconds to wait for a running ingest of the asked commit (None: retrieval.wait_for_ingest).
    wait_s: float | None = None


@dataclass(frozen=True)
class PackRequest:
    goal: str
    budget: int = DEFAULT_BUDGET
    at: str | None = None
    scope: str = "durable"
    view: str = "default"
    wait_s: float | None = None


def check_query(req: QueryRequest, *, max_top_k: int = CLI_MAX_TOP_K) -> None:
    """Validate a query request (contract §4).

    Raises:
        InputInvalid: blank question, bad topK.
    """
    required_text(req.question, "question")
    positive_int(req.top_k, "topK", max_top_k)


def check_pack(req: PackRequest, *, max_budget: int = CLI_MAX_BUDGET) -> None:
    """Validate a context pack request (contract §4).

    Raises:
        InputInvalid: blank goal, bad budget.
    """
    required_text(req.goal, "goal")
    positive_int(req.budget, "budget", max_budget)


class Engine:
    """What a read needs beyond the request: the embedder and the store's snapshot source
    (:mod:`ragit.store.backend`: the embedded zvec store or the shared PostgreSQL store, as
    ``store.backend`` says).

    The CLI builds a fresh one per process; the MCP server keeps one open across
    calls (zvec: the reader is reopened only when the store generation changes).
    """

    def __init__(self, ws: Workspace, *, mode: Literal["cli", "mcp"] = "cli") -> None:
        self.ws = ws
        self.mode = mode
        self._source: SnapshotSource | None = None
        self._source_key: tuple[str, str] | None = None
        self._embedder: Any = None
        self._embedder_key: str | None = None
        self._rerank: Any = None
        # What the last durable retrieval used: the store's embedding profile and the
        # re-ranking model (the answer's ``retrieval`` block).
        self.retrieval: dict[str, Any] = {"embedding": None, "rerank": None}

    def rerank(self, name: str) -> Any:
        """The second ranking stage ``retrieval.rerank`` names (None for ``off``), kept across
        calls (its model and vector cache stay open)."""
        if name == "off":
            return None
        if self._rerank is None or self._rerank.name != name:
            from ragit.retrieve.rerank import SemanticRerank

            if self._rerank is not None:
                self._rerank.vectors.close()
            self._rerank = SemanticRerank(name)
        return self._rerank

    def source(self, backend: StoreBackend | None = None, repository: str = "") -> SnapshotSource:
        """The open snapshot source of ``backend`` (None: the embedded store), reopened when
        the configuration names another backend or, for a shared one, another repository."""
        from ragit.store.backend import store_backend

        chosen = backend if backend is not None else store_backend()
        key = (chosen.name, repository if chosen.shared else "")
        source = self._source
        if source is None or self._source_key != key:
            self.close()
            source = self._source = chosen.source(self.ws, repository)
            self._source_key = key
        return source

    def reader(self, resolved_sha: str) -> SnapshotStore:
        """The snapshot of ``resolved_sha`` as the retrieval engine reads it (zvec: the open
        reader copy of the latest published generation).

        Raises:
            SnapshotStoreUnavailable: no store, or no usable copy, or no server.
            StoreReadBusy: a writer is active and no copy exists yet; a lost connection.
        """
        source = self._source if self._source is not None else self.source()
        return source.snapshot(resolved_sha)

    def embed_question(
        self, text: str, store_profile: Mapping[str, Any] | None
    ) -> list[float] | None:
        """Embed the question with the store's profile (read-only cache)."""
        from ragit.config import load_config
        from ragit.embed import build_embedder, profile_from_store

        cfg = load_config(self.ws)
        embedding_cfg: Any = cfg.embedding
        if store_profile:
            embedding_cfg = profile_from_store(store_profile, cfg.embedding)
        key = repr(store_profile)
        if self._embedder is None or self._embedder_key != key:
            from ragit.embed import resolve_profile

            # A question embedded on this machine is computed again more cheaply than a
            # cache file is written and read: only remote vectors are cached by the CLI
            # (so that the read-only MCP server can reuse them).
            local = resolve_profile(embedding_cfg).egress == "local"
            mode: Literal["cli", "dry-run", "mcp"] = (
                "mcp" if self.mode == "mcp" else ("dry-run" if local else "cli")
            )
            self._embedder = build_embedder(self.ws.root, embedding_cfg, cfg.security, mode=mode)
            self._embedder_key = key
        vectors: list[list[float]] = self._embedder.embed([text])
        return vectors[0]

    def close(self) -> None:
        if self._rerank is not None:
            self._rerank.vectors.close()
            self._rerank = None
        if self._source is not None:
            self._source.close()
            self._source = None
            self._source_key = None


def retrieve_hits(
    ws: Workspace,
    engine: Engine,
    question: Question,
    at: str | None,
    scope: str,
    top_k: int,
    *,
    per_document: int | None = 0,
    wait_s: float | None = None,
) -> tuple[Any, list[Hit], list[str]]:
    """The selected snapshot, its hits for ``question`` and the selection's warnings.

    ``question`` is analysed once by the caller (:func:`ragit.text.question.analyze`); the
    engine and the artifact overlay read it, and only the embedder is given its text.

    ``per_document``: hits one document may contribute (0: no limit; None: the configured
    ``retrieval.hits_per_document``, what ``query`` answers with). ``context pack`` and
    ``memory recall`` take every passage and decide themselves what to keep.

    ``wait_s``: how long selection waits for a running ingest of the asked commit (None:
    ``retrieval.wait_for_ingest``; 0: not at all).
    """
    from ragit.config import load_config
    from ragit.snapshot._git import GitRepo
    from ragit.snapshot.selection import dirty_warning, select_snapshot
    from ragit.store.backend import store_backend

    git = GitRepo(ws.root)
    try:
        configured = load_config(ws)
    except RagitError:
        configured = None  # reported below, after selection, as without a backend choice
    if wait_s is None:
        wait_s = configured.retrieval.wait_for_ingest if configured is not None else 0.0
    backend = store_backend() if configured is None else store_backend(configured.store.backend)
    if configured is not None and backend.shared:
        from ragit.snapshot.repository import store_repository

        source = engine.source(backend, store_repository(ws, configured, git))
        selection = select_snapshot(ws, git, at, source, wait_s=wait_s)
    else:
        # The embedded store's manifests are the files selection reads (and caches) itself.
        engine.source()
        selection = select_snapshot(ws, git, at, wait_s=wait_s)
    warnings: list[str] = []
    if selection.worktree_dirty:
        warnings.append(dirty_warning(ws, git))
    partial = _coverage_warning(git, selection)
    if partial is not None:
        warnings.append(partial)
    cfg = configured if configured is not None else load_config(ws)
    hits: list[Hit] = []
    # Per answer: an engine kept across calls (ragit-mcp) must not carry the last one's.
    engine.retrieval = {"embedding": None, "rerank": None}
    if scope in ("durable", "all"):
        from ragit.embed import provider_spec

        reader = engine.reader(selection.resolved_sha)
        profile = reader.embedding
        if "version" not in profile:  # the shared store's snapshots carry the manifest's block
            from ragit.embed import complete_profile

            profile = complete_profile(profile, cfg.embedding)
        spec = provider_spec(str(profile.get("provider", "local-placeholder")))
        alpha = cfg.retrieval.alpha if cfg.retrieval.alpha is not None else spec.default_alpha
        vector = engine.embed_question(question.text, profile) if alpha > 0 else None
        rerank = engine.rerank(cfg.retrieval.rerank)
        engine.retrieval = {
            "embedding": {
                k: profile.get(k) for k in ("namespaceId", "provider", "model", "dimensions")
            },
            "rerank": rerank.describe() if rerank is not None else None,
        }
        hits = retrieve_durable(
            selection.manifest,
            selection.resolved_sha,
            reader,
            question,
            vector,
            top_k=top_k,
            alpha=alpha,
            multilingual=spec.multilingual,
            document_vector_weight=spec.document_vector_weight,
            per_document=(
                cfg.retrieval.hits_per_document if per_document is None else per_document
            ),
            rerank=rerank,
        )
    if scope != "durable":
        from ragit.retrieve.artifacts import KEYWORD_ONLY_WARNING, artifact_hits, merge_hits

        commit_time = git.commit_time(selection.resolved_sha)
        overlay = artifact_hits(
            ws, question, scope, selection.resolved_sha, commit_time, top_k=top_k
        )
        hits = merge_hits(hits, overlay, top_k)
        if any(h.origin_type == "artifact" and h.mode == "keyword" for h in hits):
            warnings.append(KEYWORD_ONLY_WARNING)
    return selection, hits, warnings


def _coverage_warning(git: Any, selection: Any) -> str | None:
    """The warning of an empty or partial snapshot (contract §6), else None."""
    from ragit.snapshot.coverage import snapshot_coverage

    try:
        return snapshot_coverage(git, selection.resolved_sha, selection.manifest)[1]
    except RagitError:
        return None  # a committed config that is not valid: ingest reports it


# Weak evidence (docs/contract.md §7): the best hit neither holds much of the question's words
# nor sits close to it in the embedding. Measured with the default embedding on the development sets
# (top 10): best coverage / best raw cosine of their 180 questions are >= 0.17 / >= 0.24 at the
# 5th percentile, while off-topic questions ("xyzzy plugh", "오늘 날씨 어때", "who painted the mona
# lisa") fall under both or hold none of the words at all.
WEAK_COVERAGE = 0.3
WEAK_COSINE = 0.25
WEAK_WARNING = (
    "weak evidence: no hit holds much of the question's words or is close to it in meaning; "
    "the snapshot may not cover this question"
)


def assess_evidence(hits: list[Hit]) -> dict[str, Any]:
    """``evidence`` of a query: the best keyword coverage and raw cosine among the durable hits,
    and whether both are weak (so an agent can tell "nothing relevant" from an answer)."""
    raws = [h.raw for h in hits if h.raw]
    coverage = max((float(r.get("coverage", 0.0)) for r in raws), default=0.0)
    cosines = [float(r["vector"]["cosine"]) for r in raws if "vector" in r]
    cosine = max(cosines) if cosines else None
    if not hits:
        weak = True
    elif not raws:  # artifact hits only: their own keyword score
        weak = False
    else:
        weak = coverage == 0.0 or (
            coverage < WEAK_COVERAGE and (cosine is None or cosine < WEAK_COSINE)
        )
    return {"weak": weak, "coverage": round(coverage, 6), "cosine": _rounded(cosine)}


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 6)


def run_query(ws: Workspace, req: QueryRequest, engine: Engine | None = None) -> dict[str, Any]:
    """The data of `ragit query` (contract §7).

    Raises:
        typed snapshot and store errors (contract §3); never degrades to another snapshot.
    """
    own = engine is None
    engine = engine or Engine(ws)
    try:
        selection, hits, warnings = retrieve_hits(
            ws,
            engine,
            analyze(req.question),
            req.at,
            req.scope,
            req.top_k,
            per_document=None,
            wait_s=req.wait_s,
        )
    finally:
        if own:
            engine.close()
    evidence = assess_evidence(hits)
    if evidence["weak"] and hits:
        warnings.append(WEAK_WARNING)
    redact = Redactor()
    question = redact(req.question, "query")
    projected = [
        project_hit(h, req.view, explain=req.explain, redact=redact, index=i)
        for i, h in enumerate(hits)
    ]
    return {
        "query": question,
        "snapshotSha": selection.resolved_sha,
        "snapshot": selection.block(),
        "scope": req.scope,
        "explain": req.explain,
        "hits": projected,
        "retrieval": engine.retrieval,
        "evidence": evidence,
        "warnings": warnings,
        "redactionSummary": redact.summary(),
    }


def _family(hit: Hit) -> str:
    if hit.origin_type == "artifact" and hit.artifact_id:
        prefix = "evidence" if hit.scope == "evidence" else "artifact"
        return f"{prefix}:{hit.artifact_id}"
    return f"document:{hit.path}"


def retrieval_depth(budget: int) -> int:
    """How many ranked candidates a context pack of ``budget`` tokens retrieves."""
    wanted = -(-budget // DEPTH_TOKENS_PER_CANDIDATE)
    return max(CONTEXT_PACK_TOP_K, min(CONTEXT_PACK_MAX_POOL, wanted))


def candidate_pool(costs: list[int], budget: int) -> int:
    """How many of the ranked candidates (their token counts ``costs``) the selection sees:
    up to the first at which the counts reach ``budget``, and at least CONTEXT_PACK_TOP_K."""
    total = 0
    for n, cost in enumerate(costs, 1):
        total += cost
        if n >= CONTEXT_PACK_TOP_K and total >= budget:
            return n
    return len(costs)


def select_for_budget(
    hits: list[Hit], budget: int, costs: list[int]
) -> tuple[list[int], dict[str, Any], int]:
    """Citation-diverse-v2 selection (contract §8): whole hits only, diverse sources first.

    ``costs[i]`` is the token estimate of the text returned for ``hits[i]``. Returns the
    indexes of the selected hits in rank order (the diversity pass decides what is selected,
    not the order), the ``selection`` block and the tokens used.
    """
    seen: set[str] = set()
    unique: list[int] = []
    duplicates = 0
    for i, hit in enumerate(hits):
        cid = hit.citation["id"]
        if cid in seen:
            duplicates += 1
            continue
        seen.add(cid)
        unique.append(i)
    used = 0
    chosen: set[int] = set()
    families: set[str] = set()
    for i in unique:
        family = _family(hits[i])
        if family not in families and used + costs[i] <= budget:
            families.add(family)
            chosen.add(i)
            used += costs[i]
    for i in unique:
        if i not in chosen and used + costs[i] <= budget:
            chosen.add(i)
            used += costs[i]
    selected = sorted(chosen)
    stats = {
        "strategy": "citation-diverse-v2",
        "candidateHits": len(hits),
        "uniqueCitations": len(unique),
        "selectedSources": len({_family(hits[i]) for i in selected}),
        "duplicateCitationsSkipped": duplicates,
        "budgetRejectedHits": len(unique) - len(selected),
    }
    return selected, stats, used


def run_context_pack(
    ws: Workspace, req: PackRequest, engine: Engine | None = None
) -> dict[str, Any]:
    """The data of `ragit context pack` (contract §8).

    A pack is its passages: every view returns each selected hit's whole masked ``text`` and
    its ``tokens`` (:func:`~ragit.text.tokens.token_estimate` of that text), and ``usedTokens``
    is their sum.

    Raises:
        typed snapshot and store errors (contract §3).
    """
    from ragit.security.masking import mask_text

    own = engine is None
    engine = engine or Engine(ws)
    depth = retrieval_depth(req.budget)
    goal_question = analyze(req.goal)
    try:
        while True:
            selection, ranked, warnings = retrieve_hits(
                ws, engine, goal_question, req.at, req.scope, depth, wait_s=req.wait_s
            )
            costs = [token_estimate(str(mask_text(h.text).text)) for h in ranked]
            held = sum(costs)
            if held >= req.budget or len(ranked) < depth or depth >= CONTEXT_PACK_MAX_POOL:
                break
            # Short passages: rank as many more as the budget needs at their mean size.
            wanted = -(-depth * req.budget // max(held, 1))
            depth = min(CONTEXT_PACK_MAX_POOL, max(2 * depth, wanted))
    finally:
        if own:
            engine.close()
    pool = candidate_pool(costs, req.budget)
    hits, costs = ranked[:pool], costs[:pool]
    chosen, stats, used = select_for_budget(hits, req.budget, costs)
    if hits and not chosen:
        warnings.append(NO_FIT_WARNING)
    redact = Redactor()
    goal = redact(req.goal, "goal")
    projected = [
        project_passage(hits[i], req.view, redact=redact, index=n, tokens=costs[i])
        for n, i in enumerate(chosen)
    ]
    return {
        "goal": goal,
        "snapshotSha": selection.resolved_sha,
        "snapshot": selection.block(),
        "budget": req.budget,
        "usedTokens": used,
        "selectedHits": len(chosen),
        "selection": stats,
        "hits": projected,
        "warnings": warnings,
        "redactionSummary": redact.summary(),
    }
