"""End to end: wrap, promote, commit, ingest, then query and recall find the promoted knowledge."""

from __future__ import annotations

from pathlib import Path

from _memkit import Repo, make_repo, wrap_payload


def _resume_scenario(repo: Repo) -> None:
    """`ragit init --yes` and a commit are done; the rest of the agent workflow follows."""
    first = repo.ragit("ingest", "--all", "--format", "json")
    assert first.code == 0, first.output

    wrap = repo.input("memory", "wrap", payload=wrap_payload(goal="stabilize upstream calls"))
    assert wrap.code == 0, wrap.output
    candidate = {
        "kind": "decision",
        "title": "Retry budget for upstream calls",
        "summary": "Retries use exponential backoff with jitter, capped at thirty seconds.",
        "context": "The payments upstream is flaky at peak hours.",
        "consequences": ["bounded tail latency"],
    }
    promote = repo.input("memory", "promote", payload={"promotionCandidates": [candidate]})
    assert promote.code == 0, promote.output
    assert promote.data["ingested"] is False
    (path,) = promote.data["createdFiles"]
    assert path == "docs/memory/decisions/retry-budget-for-upstream-calls.md"

    # Not searchable before commit + ingest: HEAD's snapshot does not have it.
    before = repo.ragit("query", "exponential backoff jitter", "--format", "json")
    assert before.code == 0
    assert path not in [h["path"] for h in before.data["hits"]]

    repo.git("add", "--", path)
    repo.git("commit", "-q", "--no-verify", "-m", "promote retry budget")
    ingest = repo.ragit("ingest", "--format", "json")
    assert ingest.code == 0, ingest.output
    assert ingest.data["commitSha"] == repo.head()

    query = repo.ragit(
        "query", "exponential backoff jitter", "--view", "minimal", "--format", "json"
    )
    assert query.code == 0, query.output
    assert query.data["hits"][0]["path"] == path
    assert query.data["snapshotSha"] == repo.head()

    recall = repo.ragit(
        "memory",
        "recall",
        "retry backoff for upstream calls",
        "--view",
        "minimal",
        "--format",
        "json",
    )
    assert recall.code == 0, recall.output
    data = recall.data
    assert data["snapshotSha"] == repo.head()
    assert data["snapshot"]["status"] == "indexed"
    assert path in [h["path"] for h in data["retrievedHits"]]
    assert {"title": "ADR: Retry budget for upstream calls", "source": "snapshot"}.items() <= next(
        d for d in data["relatedDecisions"] if d["source"] == "snapshot"
    ).items()
    assert data["latestSessionId"] == wrap.data["sessionId"]
    assert [loop["title"] for loop in data["openLoops"]] == ["refresh token rotation"]

    # The control plane never reaches the snapshot; the corpus does.
    manifest = repo.read_json(f".ragit/manifest/{repo.head()}.json")
    paths = [doc["path"] for doc in manifest["docs"]]
    assert path in paths
    assert not any(p.startswith(".ragit/") for p in paths)


def _fresh(tmp_path: Path, *, history: bool) -> Repo:
    repo = make_repo(tmp_path, init=False, commit=False)
    if history:
        repo.commit({"CHANGELOG.md": "# Changelog\n"}, "earlier history")
    assert repo.ragit("init", "--yes").code == 0
    repo.git("add", "-A")
    repo.git("commit", "-q", "--no-verify", "-m", "initial knowledge")
    return repo


def test_promoted_memory_becomes_searchable_after_commit_and_ingest(tmp_path: Path) -> None:
    """Contract-mandated: promote → review, commit, ingest → query and recall find it (seeds)."""
    _resume_scenario(_fresh(tmp_path, history=False))


def test_resume_workflow_in_a_repository_with_history(tmp_path: Path) -> None:
    """Contract-mandated: the same workflow where the first snapshot's commit has a parent."""
    _resume_scenario(_fresh(tmp_path, history=True))
