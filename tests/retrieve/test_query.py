"""Retrieval: exact snapshots, hybrid scoring, citations, views, context pack budgets."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.cli._many import run_lines

from fixtures.build import build_fixture, load_fixture
from ragit.retrieve.citations import citation_id
from ragit.retrieve.hit import Hit
from ragit.retrieve.query import (
    NO_FIT_WARNING,
    Engine,
    PackRequest,
    QueryRequest,
    candidate_pool,
    retrieval_depth,
    retrieve_hits,
    run_context_pack,
    run_query,
    select_for_budget,
)
from ragit.security.masking import mask_text
from ragit.text.question import analyze
from ragit.text.scripts import script_weights
from ragit.text.tokens import token_estimate
from ragit.workspace import Workspace


def ragit(repo: Path, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ragit", *args],
        cwd=repo,
        capture_output=True,
        text=True,
        input=stdin,
        check=False,
    )


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)


def _indexed(tmp: Path, fixture: str) -> Path:
    repo = tmp / fixture
    build_fixture(fixture, repo)
    assert ragit(repo, "init", "--yes").returncode == 0
    _git(repo, "add", ".ragit/config.toml", ".gitignore")
    _git(repo, "commit", "-q", "-m", "init ragit")
    proc = ragit(repo, "ingest", "--all", "--format", "json")
    assert proc.returncode == 0, proc.stderr
    return repo


@pytest.fixture(scope="module")
def basic(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _indexed(tmp_path_factory.mktemp("basic"), "docs-basic")


@pytest.fixture(scope="module")
def korean(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _indexed(tmp_path_factory.mktemp("korean"), "korean-mixed")


def _query(repo: Path, question: str, **kw: Any) -> dict[str, Any]:
    return run_query(
        Workspace(repo), QueryRequest(question=question, top_k=kw.pop("top_k", 5), **kw)
    )


def test_citation_id_matches_the_bit_exact_definition() -> None:
    """Contract-mandated (§7, docs/reference/retrieval.md): cite- + 24 hex of sha256(type NUL id
    NUL version)."""
    assert (
        citation_id("document", "abc", "v1")
        == "cite-" + __import__("hashlib").sha256(b"document\x00abc\x00v1").hexdigest()[:24]
    )
    assert citation_id("document", "d4ef377eac9bfe6e", "733e5f49e0b51306").startswith("cite-")


def test_query_finds_the_document_that_answers_the_question(basic: Path) -> None:
    """Implementation choice: a plain English question ranks its ADR first (sanity of hybrid)."""
    data = _query(basic, "why do writes require idempotency keys?")
    assert data["hits"][0]["path"] == "docs/adr/0002-idempotency-keys.md"
    assert data["snapshotSha"] == data["snapshot"]["resolvedSha"]
    assert data["snapshot"]["selection"] == "head-exact"


def test_same_query_gives_byte_identical_data(basic: Path) -> None:
    """Contract-mandated (§2): same input, same commit → identical JSON."""
    first = json.dumps(_query(basic, "ledger balance snapshots", top_k=10), sort_keys=True)
    second = json.dumps(_query(basic, "ledger balance snapshots", top_k=10), sort_keys=True)
    assert first == second


def test_hits_are_ordered_by_score_then_path_section_citation(basic: Path) -> None:
    """Contract-mandated (§7): deterministic tie order."""
    hits = _query(basic, "ledger", top_k=30, view="full")["hits"]
    keys = [(-h["scoreFinal"], h["path"], h["sectionTitle"], h["citation"]["id"]) for h in hits]
    assert keys == sorted(keys)


def test_scores_follow_the_contract_formula(basic: Path) -> None:
    """Contract-mandated (§7): final = 0.80·retrieval + 0.15·authority + 0.05·recency."""
    hits = _query(basic, "payouts reconciliation", top_k=5, explain=True)["hits"]
    for hit in hits:
        b = hit["scoreBreakdown"]
        inputs = b["retrieval"]["inputs"]
        retrieval = inputs["vector"]["contribution"] + inputs["keyword"]["contribution"]
        assert b["retrieval"]["score"] == pytest.approx(retrieval, abs=2e-6)
        final = 0.8 * retrieval + 0.15 * b["authority"]["score"] + 0.05 * b["recency"]["score"]
        assert hit["scoreFinal"] == pytest.approx(final, abs=4e-6)
        assert 0.0 <= hit["scoreVector"] <= 1.0
        assert 0.0 <= hit["scoreKeyword"] <= 1.0


def test_explain_never_changes_ranking(basic: Path) -> None:
    """Contract-mandated (§7): --explain adds a breakdown only."""
    plain = _query(basic, "month-end close trial balance", top_k=8)["hits"]
    explained = _query(basic, "month-end close trial balance", top_k=8, explain=True)["hits"]
    assert [h["citation"]["id"] for h in plain] == [h["citation"]["id"] for h in explained]
    assert all("scoreBreakdown" not in h for h in plain)


def test_views_project_exactly_the_contract_fields(basic: Path) -> None:
    """Contract-mandated (§7): minimal, default and full field sets and excerpt limits."""
    base = {
        "path",
        "sectionTitle",
        "scoreFinal",
        "scope",
        "originType",
        "artifactId",
        "artifactKind",
        "authority",
        "confidence",
        "citation",
    }
    minimal = _query(basic, "ledger", top_k=10, view="minimal")["hits"]
    default = _query(basic, "ledger", top_k=10, view="default")["hits"]
    full = _query(basic, "ledger", top_k=10, view="full")["hits"]
    assert all(set(h) == base | {"excerpt"} and len(h["excerpt"]) <= 120 for h in minimal)
    assert all(
        set(h) == base | {"excerpt", "scoreVector", "scoreKeyword"} and len(h["excerpt"]) <= 200
        for h in default
    )
    assert all(set(h) == base | {"text", "scoreVector", "scoreKeyword"} for h in full)
    assert any(len(h["text"]) > 200 for h in full)


def test_query_at_an_older_commit_never_sees_later_documents(tmp_path: Path) -> None:
    """Contract-mandated (§5): the store holds both snapshots; the old one answers alone."""
    repo = _indexed(tmp_path, "docs-basic")
    old = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True, text=True, check=True
    ).stdout.strip()
    (repo / "docs" / "adr" / "0099-zebra-crossing.md").write_text(
        "# ADR 0099: Zebra crossings\n\nThe quokka protocol governs zebra crossings.\n",
        encoding="utf-8",
    )
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "add zebra adr")
    assert ragit(repo, "ingest").returncode == 0
    new_hits = _query(repo, "quokka zebra crossings")["hits"]
    assert new_hits[0]["path"] == "docs/adr/0099-zebra-crossing.md"
    old_hits = _query(repo, "quokka zebra crossings", at=old)["hits"]
    assert all(h["path"] != "docs/adr/0099-zebra-crossing.md" for h in old_hits)
    assert all(h["citation"]["sourceSha"] == old for h in old_hits)


def test_korean_question_with_particles_finds_its_document(korean: Path) -> None:
    """Implementation choice: the bigram index matches Korean words despite particles."""
    hits = _query(korean, "용어집에서 스냅샷을 설명해 주세요")["hits"]
    assert hits and hits[0]["path"] == "docs/glossary/용어집.md"


def test_korean_question_is_scored_by_morphemes_beside_bigrams(korean: Path) -> None:
    """Implementation choice (docs/contract.md, Retrieval): a Korean question's words, with
    whatever endings, are matched to the morphemes the snapshot holds; the explanation names
    the ``ko`` field's BM25 and the weights of both Korean fields."""
    hits = _query(korean, "회의에서 참석자들이 논의했던 할 일은?", explain=True)["hits"]
    assert hits[0]["path"] == "docs/notes/weekly-sync.md"
    raw = hits[0]["scoreBreakdown"]["raw"]["keyword"]
    assert raw["bm25"]["ko"] > 0 and raw["bm25"]["cjk"] > 0
    assert raw["fieldWeights"] == {"en": 0.0, "cjk": 0.5, "ko": 0.5}


def test_korean_nouns_ending_in_particle_syllables_keep_their_bigrams() -> None:
    """Implementation choice: the bigram query keeps 결과, 경로, 회의 whole (a one-syllable
    stem has no bigram and would drop the noun from the CJK search)."""
    assert analyze("회의 결과를 어디에서 보나요").korean_words == ("회의", "결과", "보나요")
    assert analyze("설정 경로와 효과는").korean_words == ("설정", "경로", "효과")
    assert analyze("정의와 차이").korean_words == ("정의", "차이")


def test_script_weights_follow_the_question_composition() -> None:
    """Implementation choice: English words and Korean characters weigh their own index."""
    assert script_weights("how do retries work") == (1.0, 0.0)
    assert script_weights("재시도는 어떻게 동작하나요") == (0.0, 1.0)
    en, ko = script_weights("payment retry 방지")
    assert en > ko > 0


def test_non_durable_scopes_hold_no_document_hits(basic: Path) -> None:
    """Contract-mandated (§7): durable documents belong to durable and all only."""
    assert _query(basic, "ledger", scope="session")["hits"] == []
    assert _query(basic, "ledger", scope="all")["hits"]


def test_context_pack_respects_budget_and_counts(basic: Path) -> None:
    """Contract-mandated (§8): usedTokens ≤ budget and the selection invariants."""
    for budget in (1, 20, 120, 600, 5000):
        data = run_context_pack(
            Workspace(basic), PackRequest(goal="plan the ledger rollout", budget=budget)
        )
        sel = data["selection"]
        assert data["usedTokens"] <= budget
        assert sel["uniqueCitations"] == data["selectedHits"] + sel["budgetRejectedHits"]
        assert sel["candidateHits"] == sel["uniqueCitations"] + sel["duplicateCitationsSkipped"]
        if data["selectedHits"] == 0:
            assert NO_FIT_WARNING in data["warnings"]


def _hit(path: str, words: int, n: int) -> Hit:
    return Hit(
        chunk_id=f"c{n}",
        document_id=path,
        version_id="v",
        path=path,
        doc_type="spec",
        section_title=f"s{n}",
        heading_path="",
        text=" ".join(["w"] * words),
        token_count=words,
        score_vector=0.5,
        score_keyword=0.5,
        retrieval=0.5,
        authority_weight=1.0,
        recency_weight=1.0,
        score_final=1.0 - n / 100,
        mode="hybrid",
        alpha=0.3,
        citation={"id": f"cite-{n % 7}"},
    )


@settings(max_examples=200, deadline=None)
@given(
    sizes=st.lists(st.tuples(st.integers(0, 5), st.integers(1, 60)), min_size=0, max_size=30),
    budget=st.integers(1, 400),
)
def test_citation_diverse_selection_invariants(sizes: list[tuple[int, int]], budget: int) -> None:
    """Contract-mandated (§8): whole hits, no duplicate citation, diverse sources first."""
    hits = [_hit(f"doc{d}.md", w, i) for i, (d, w) in enumerate(sizes)]
    costs = [w for _, w in sizes]
    chosen, stats, used = select_for_budget(hits, budget, costs)
    selected = [hits[i] for i in chosen]
    assert used == sum(costs[i] for i in chosen) <= budget
    assert len({h.citation["id"] for h in selected}) == len(selected)
    assert stats["uniqueCitations"] == len(selected) + stats["budgetRejectedHits"]
    assert stats["candidateHits"] == stats["uniqueCitations"] + stats["duplicateCitationsSkipped"]
    # Every source family the first pass could still afford is represented.
    families = {h.path for h in selected}
    left = budget - used
    for i, hit in enumerate(hits):
        first = hits.index(next(h for h in hits if h.citation["id"] == hit.citation["id"]))
        if i == first and hit.path not in families:
            assert costs[i] > left


@settings(max_examples=200, deadline=None)
@given(
    sizes=st.lists(st.tuples(st.integers(0, 5), st.integers(1, 60)), min_size=0, max_size=30),
    budget=st.integers(1, 400),
)
def test_selected_hits_keep_their_rank_order(sizes: list[tuple[int, int]], budget: int) -> None:
    """Contract-mandated (§8): the diversity pass decides what is selected, not the order."""
    hits = [_hit(f"doc{d}.md", w, i) for i, (d, w) in enumerate(sizes)]
    chosen, _, _ = select_for_budget(hits, budget, [w for _, w in sizes])
    assert chosen == sorted(chosen)


def test_context_pack_lists_a_strong_second_passage_before_a_weak_new_source() -> None:
    """Contract-mandated (§8): a weak hit of a new source never precedes a stronger one."""
    hits = [_hit("a.md", 10, 0), _hit("a.md", 10, 1), _hit("b.md", 10, 2)]
    chosen, _, _ = select_for_budget(hits, 30, [10, 10, 10])
    assert [hits[i].section_title for i in chosen] == ["s0", "s1", "s2"]


@pytest.mark.parametrize("view", ["minimal", "default", "full"])
def test_context_pack_returns_whole_passages_and_counts_what_it_returns(
    basic: Path, view: str
) -> None:
    """Contract-mandated (§8): every view carries each hit's whole text; usedTokens is the
    estimate summed over exactly those texts; views change only metadata."""
    ws = Workspace(basic)
    data = run_context_pack(ws, PackRequest(goal="ledger idempotency", budget=3000, view=view))
    _, ranked, _ = retrieve_hits(
        ws, Engine(ws), analyze("ledger idempotency"), None, "durable", 200
    )
    texts = {h.citation["id"]: str(mask_text(h.text).text) for h in ranked}
    assert data["hits"]
    for hit in data["hits"]:
        assert hit["text"] == texts[hit["citation"]["id"]]
        assert hit["tokens"] == token_estimate(hit["text"])
    assert data["usedTokens"] == sum(h["tokens"] for h in data["hits"]) <= 3000
    expected = {"path", "sectionTitle", "citation", "text", "tokens"}
    if view in ("default", "full"):
        expected |= {"scoreFinal", "scoreVector", "scoreKeyword", "scope", "originType"}
        expected |= {"authority"}
    if view == "full":
        expected |= {"artifactId", "artifactKind", "confidence"}
    assert all(set(hit) == expected for hit in data["hits"])


def test_context_pack_hits_are_the_same_passages_in_every_view(basic: Path) -> None:
    """Contract-mandated (§8): a view never changes what is selected or counted."""
    ws = Workspace(basic)
    packs = [
        run_context_pack(ws, PackRequest(goal="ledger rollout plan", budget=900, view=view))
        for view in ("minimal", "default", "full")
    ]
    assert (
        len({json.dumps([(h["citation"]["id"], h["text"]) for h in p["hits"]]) for p in packs}) == 1
    )
    assert len({p["usedTokens"] for p in packs}) == 1


def test_context_pack_hits_are_in_rank_order(basic: Path) -> None:
    """Contract-mandated (§8): selected hits are output in rank order."""
    data = run_context_pack(
        Workspace(basic), PackRequest(goal="ledger balance snapshots", budget=5000)
    )
    keys = [(-h["scoreFinal"], h["path"], h["sectionTitle"]) for h in data["hits"]]
    assert len(keys) > 2 and keys == sorted(keys)


def test_the_candidate_pool_holds_the_budget_and_at_least_thirty() -> None:
    """Implementation choice (docs/contract.md): the pool grows until its passages hold the
    budget, from 30 up to 200 candidates; retrieval ranks budget / 100 of them."""
    assert candidate_pool([50] * 200, 1200) == 30
    assert candidate_pool([50] * 200, 5000) == 100
    assert candidate_pool([50] * 200, 5001) == 101
    assert candidate_pool([50] * 12, 5000) == 12
    assert candidate_pool([400] * 200, 32000) == 80
    assert [retrieval_depth(b) for b in (1, 1200, 3000, 3001, 16000, 32000, 200_000)] == [
        30,
        30,
        30,
        31,
        160,
        200,
        200,
    ]


def test_a_large_budget_is_filled_from_more_than_thirty_candidates(tmp_path: Path) -> None:
    """Contract-mandated (§8): the pool grows with the budget, so a large budget is filled."""
    repo = tmp_path / "many"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    for n in range(90):
        body = " ".join(
            f"Retries of payout {n} back off exponentially after attempt {k}, and the ledger "
            f"records every retry of batch {n} with its idempotency key."
            for k in range(6)
        )
        (repo / "docs").mkdir(exist_ok=True)
        (repo / "docs" / f"retry-{n:03}.md").write_text(
            f"# Retry policy {n}\n\n{body}\n", encoding="utf-8"
        )
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "docs")
    assert ragit(repo, "init", "--yes").returncode == 0
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "init ragit")
    assert ragit(repo, "ingest", "--all").returncode == 0
    data = run_context_pack(Workspace(repo), PackRequest(goal="payout retry backoff", budget=16000))
    assert data["selection"]["candidateHits"] > 30
    assert data["usedTokens"] >= 0.9 * 16000
    assert data["selectedHits"] > 30


def test_secrets_never_appear_in_any_view_or_format(tmp_path: Path) -> None:
    """Contract-mandated (§7): output is re-masked; no planted secret ever leaks."""
    repo = _indexed(tmp_path, "secrets")
    secrets = [s["value"] for s in load_fixture("secrets")["plantedSecrets"]]
    questions = ["api key token password", "deploy credentials rotation", "incident auth outage"]
    commands: list[list[str]] = []
    for question in questions:
        for view in ("minimal", "default", "full"):
            for fmt in ("text", "json", "both"):
                commands.append(
                    ["query", question, "--top-k", "20", "--view", view, "--format", fmt]
                )
            commands.append(["context", "pack", question, "--budget", "5000", "--view", view])
    outputs: list[str] = []
    for args, ran in zip(commands, run_lines(repo, commands), strict=True):
        if args[0] == "query":
            assert ran.code == 0, (args, ran.stderr)
        outputs.append(ran.stdout + ran.stderr)
    blob = "\n".join(outputs)
    leaked = [s for s in secrets if s in blob]
    assert leaked == []
    assert "***" in blob  # the stored, masked forms are what the hits show


def test_cli_text_output_lists_numbered_hits_with_citations(basic: Path) -> None:
    """Implementation choice: a readable text face, hits first, then one line of snapshot facts."""
    proc = ragit(basic, "query", "idempotency", "--format", "text", "--top-k", "2")
    assert proc.returncode == 0
    assert proc.stdout.startswith("1. ") and "\n2. " in proc.stdout
    assert proc.stdout.count("   cite: cite-") == 2
    assert "2 hits for “idempotency” · snapshot " in proc.stdout
