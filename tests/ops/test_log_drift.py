"""`ragit log` and `ragit drift` over real repositories, artifacts and ingests."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from tests.snapshot._kit import from_template

from fixtures.build import build_fixture

RAGIT = [sys.executable, "-m", "ragit"]
SECRET = "ghp_RagitFixtureFAKEclassic0000000000003"


def ragit(repo: Path, *args: str, expect: int = 0) -> dict[str, Any]:
    proc = subprocess.run(
        [*RAGIT, *args, "--format", "json"], cwd=repo, capture_output=True, text=True, check=False
    )
    assert proc.returncode == expect, proc.stdout + proc.stderr
    assert SECRET not in proc.stdout
    result: dict[str, Any] = json.loads(proc.stdout)
    return result


def git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=repo, capture_output=True, text=True, check=True
    ).stdout.strip()


def _indexed(root: Path) -> None:
    build_fixture("docs-basic", root)
    ragit(root, "init", "--yes")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "Track the RAGit config")
    ragit(root, "ingest")


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """docs-basic, initialized, committed and ingested by real processes once per worker."""
    return from_template(tmp_path / "repo", "ops-log-drift", _indexed)


def plant_artifact(
    repo: Path,
    *,
    kind: str = "insight",
    scope: str = "session",
    status: str = "reviewed",
    binding: str = "pending",
    bound_head: str | None = None,
    source_head: str | None = None,
    related: list[str] | None = None,
    title: str = "Postings are immutable",
    goal: str | None = "goal_0123456789ab",
    input_refs: list[str] | None = None,
    suffix: str = "0",
) -> str:
    """An artifact record written as raw JSON (as an older or foreign writer could leave it)."""
    artifact_id = f"art_{scope}_{kind}_{suffix * 16}"
    if scope == "session":
        path = repo / ".ragit/artifacts/session" / f"{artifact_id}.json"
    else:
        path = repo / ".ragit/artifacts/harness" / kind / f"{artifact_id}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    record = {
        "version": 1,
        "artifactId": artifact_id,
        "artifactScope": scope,
        "kind": kind,
        "status": status,
        "title": title,
        "summary": f"token {SECRET} in the summary",
        "text": "body",
        "goalId": goal,
        "sourceHeadSha": source_head,
        "boundHeadSha": bound_head,
        "bindingStatus": binding,
        "searchPolicy": "session" if scope == "session" else "harness",
        "relatedPaths": related or [],
        "evidenceRefs": [{"evidenceId": "evid_000000000000", "excerpt": f"saw {SECRET}"}],
        "provenance": {"inputRefs": input_refs or []},
        "createdAt": "2026-01-01T00:00:00Z",
        "updatedAt": "2026-01-01T00:00:00Z",
    }
    path.write_text(json.dumps(record), encoding="utf-8")
    return artifact_id


def item(data: dict[str, Any], item_id: str) -> dict[str, Any]:
    found = [i for i in data["items"] if i["id"] == item_id]
    assert len(found) == 1, data["items"]
    return found[0]


def test_pending_artifact_is_suspect_until_the_recommended_ingest_binds_it(repo: Path) -> None:
    head = git(repo, "rev-parse", "HEAD")
    aid = plant_artifact(repo, source_head=head, related=["docs/prd/ledger-mvp.md"])
    drift = ragit(repo, "drift")["data"]
    entry = item(drift, aid)
    assert (entry["scope"], entry["itemType"], entry["status"]) == (
        "memory",
        "memoryArtifact",
        "suspect",
    )
    assert entry["reasonCodes"] == ["missing_binding"]
    assert entry["recommendedActions"] == ["ragit ingest --scope all"]
    # the recommended command, run as printed, makes the item fresh
    (repo / "notes.txt").write_text("x\n", encoding="utf-8")
    git(repo, "add", "notes.txt")
    git(repo, "commit", "-qm", "A code change")
    ragit(repo, *entry["recommendedActions"][0].split()[1:])
    assert item(ragit(repo, "drift")["data"], aid)["status"] == "fresh"


def test_related_path_changed_then_missing(repo: Path) -> None:
    head = git(repo, "rev-parse", "HEAD")
    aid = plant_artifact(
        repo, binding="bound", bound_head=head, source_head=head, related=["src/app.py"]
    )
    assert item(ragit(repo, "drift")["data"], aid)["status"] == "fresh"
    (repo / "src/app.py").write_text("print('changed')\n", encoding="utf-8")
    git(repo, "commit", "-qam", "Change the app")
    entry = item(ragit(repo, "drift")["data"], aid)
    assert entry["status"] == "suspect"
    assert entry["reasonCodes"] == ["related_path_changed", "bound_head_behind"]
    assert entry["recommendedActions"] == ["ragit artifact review --input <review.json>"]
    git(repo, "rm", "-q", "src/app.py")
    git(repo, "commit", "-qm", "Remove the app")
    entry = item(ragit(repo, "drift")["data"], aid)
    assert entry["status"] == "stale"
    assert "related_path_missing" in entry["reasonCodes"]


def test_artifact_on_a_stale_document_is_dependency_stale(repo: Path) -> None:
    head = git(repo, "rev-parse", "HEAD")
    aid = plant_artifact(repo, binding="bound", bound_head=head, related=["docs/prd/ledger-mvp.md"])
    with (repo / "docs/prd/ledger-mvp.md").open("a", encoding="utf-8") as fh:
        fh.write("\nMore.\n")
    git(repo, "commit", "-qam", "Extend the PRD")
    entry = item(ragit(repo, "drift")["data"], aid)
    assert entry["status"] == "stale"
    assert "dependency_stale" in entry["reasonCodes"]


def test_suite_with_a_live_failure_is_stale_and_filters_apply(repo: Path) -> None:
    head = git(repo, "rev-parse", "HEAD")
    suite = plant_artifact(
        repo, scope="harness", kind="suite", binding="bound", bound_head=head, title="Ledger suite"
    )
    plant_artifact(
        repo,
        scope="harness",
        kind="failure",
        status="captured",
        binding="bound",
        bound_head=head,
        input_refs=[suite],
        suffix="1",
    )
    data = ragit(repo, "drift", "--scope", "harness")["data"]
    assert [i["id"] for i in data["items"]] == [suite]
    entry = data["items"][0]
    assert (entry["itemType"], entry["status"]) == ("harnessSuite", "stale")
    assert entry["reasonCodes"] == ["failure_evidence_present"]
    assert data["overallStatus"] == "stale"
    assert ragit(repo, "drift", "--goal", "goal_ffffffffffff")["data"]["items"] == []
    assert ragit(repo, "drift", "--scope", "memory")["data"]["items"] == []


def test_log_semantic_overlay_lists_artifacts_bound_to_the_snapshot(repo: Path) -> None:
    head = git(repo, "rev-parse", "HEAD")
    belief = plant_artifact(repo, binding="bound", bound_head=head)
    loop = plant_artifact(
        repo, kind="openLoop", status="captured", binding="bound", bound_head=head, suffix="2"
    )
    entry = ragit(repo, "log", "-n", "1")["data"]["entries"][0]
    semantic = entry["semantic"]
    assert semantic["available"] is True
    assert semantic["counts"] == {"beliefs": 1, "openLoops": 1, "evidence": 2, "artifacts": 2}
    assert [b["artifactId"] for b in semantic["beliefs"]] == [belief]
    assert [o["artifactId"] for o in semantic["openLoops"]] == [loop]
    assert {a["path"] for a in semantic["artifacts"]} == {
        f".ragit/artifacts/session/{belief}.json",
        f".ragit/artifacts/session/{loop}.json",
    }
    minimal = ragit(repo, "log", "-n", "1", "--view", "minimal")["data"]["entries"][0]
    assert "beliefs" not in minimal["semantic"] and "changed" not in minimal["snapshot"]


def test_log_and_drift_mask_secrets_in_subjects_and_artifacts(repo: Path) -> None:
    (repo / "docs/adr/0003-new.md").write_text("# ADR 3\n\nText.\n", encoding="utf-8")
    git(repo, "add", "docs")
    git(repo, "commit", "-qm", f"Rotate {SECRET}")
    ragit(repo, "ingest")
    head = git(repo, "rev-parse", "HEAD")
    plant_artifact(repo, binding="bound", bound_head=head, title=f"key {SECRET}")
    data = ragit(repo, "log", "-n", "1", "--view", "full")["data"]
    assert data["redactionSummary"]["maskedCount"] >= 3
    assert data["entries"][0]["snapshot"]["changed"] == [
        {
            "path": "docs/adr/0003-new.md",
            "status": "A",
            "docType": "adr",
            "chunks": 1,
            "chunkDelta": 1,
            "memoryPath": False,
        }
    ]
    ragit(repo, "drift", "--view", "full")  # ragit() asserts the secret never appears


def test_log_without_commits_is_empty(tmp_path: Path) -> None:
    root = tmp_path / "empty"
    build_fixture("empty", root)
    data = ragit(root, "log")
    assert data["data"]["entries"] == [] and data["warnings"]
    drift = ragit(root, "drift")["data"]
    assert drift["baseline"]["reasonCodes"] == ["no_baseline"]
