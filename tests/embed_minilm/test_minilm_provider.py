"""The local-minilm provider end to end: config, migration, query, doctor, MCP read-only."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from tests.embed_minilm.conftest import MODEL_SKIP_REASON, model_package_installed

from fixtures.build import build_fixture

pytestmark = pytest.mark.skipif(not model_package_installed(), reason=MODEL_SKIP_REASON)


def ragit(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "RAGIT_PROGRESS": "1"}
    return subprocess.run(
        [sys.executable, "-m", "ragit", *args],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )


def data(proc: subprocess.CompletedProcess[str]) -> Any:
    assert proc.returncode == 0, proc.stderr + proc.stdout
    return json.loads(proc.stdout.splitlines()[-1])["data"]


def _tree(root: Path) -> dict[str, tuple[str, int]]:
    out = {}
    for path in sorted(root.rglob("*")):
        if path.is_file() and ".git" not in path.relative_to(root).parts[:1]:
            out[str(path.relative_to(root))] = (
                hashlib.sha256(path.read_bytes()).hexdigest(),
                path.stat().st_mtime_ns,
            )
    return out


@pytest.fixture(scope="module")
def minilm_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    repo = tmp_path_factory.mktemp("minilm") / "repo"
    build_fixture("docs-basic", repo)
    assert ragit(repo, "init", "--yes").returncode == 0
    subprocess.run(["git", "add", "-A"], cwd=repo, check=True)
    subprocess.run(["git", "commit", "-qm", "init"], cwd=repo, check=True)
    assert data(ragit(repo, "ingest", "--all", "--format", "json"))["embedded"] > 0
    return repo


def _manifest_files(repo: Path) -> dict[str, bytes]:
    """Every file of the manifest directory (manifests and their chunk-id packs), by path."""
    base = repo / ".ragit" / "manifest"
    return {str(p.relative_to(base)): p.read_bytes() for p in base.rglob("*") if p.is_file()}


def test_switching_to_minilm_needs_a_migration_that_keeps_manifests(minilm_repo: Path) -> None:
    """Contract-mandated (§10): a new profile is migrated; manifests are untouched."""
    manifests = _manifest_files(minilm_repo)
    assert ragit(minilm_repo, "config", "set", "embedding.provider", "local-minilm").returncode == 0
    status = data(ragit(minilm_repo, "status", "--format", "json"))
    assert status["embedding"]["store"]["provider"] == "local-placeholder"
    blocked = ragit(minilm_repo, "ingest", "--all", "--format", "json")
    assert blocked.returncode == 3
    plan = data(ragit(minilm_repo, "migrate", "embeddings", "--dry-run", "--format", "json"))
    assert plan["migrationNeeded"] is True and plan["targetContract"]["dimensions"] == 384
    migrate = ragit(minilm_repo, "migrate", "embeddings", "-v", "--format", "json")
    result = data(migrate)
    assert result["migrated"] is True
    assert "embed: 70/70 chunks" in migrate.stderr and "[ragit]" not in migrate.stdout
    after = _manifest_files(minilm_repo)
    assert after == manifests
    hits = data(
        ragit(minilm_repo, "query", "how do we make retried payments safe?", "--format", "json")
    )["hits"]
    assert "docs/adr/0002-idempotency-keys.md" in [h["path"] for h in hits[:3]]
    doctor = ragit(minilm_repo, "doctor", "--format", "json")
    assert doctor.returncode == 0, doctor.stdout


@pytest.fixture(scope="module")
def minilm_native_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A repository configured for local-minilm before its first ingest (no migration)."""
    repo = tmp_path_factory.mktemp("minilm-native") / "repo"
    build_fixture("docs-basic", repo)
    assert ragit(repo, "init", "--yes").returncode == 0
    assert ragit(repo, "config", "set", "embedding.provider", "local-minilm").returncode == 0
    subprocess.run(["git", "add", "-A"], cwd=repo, check=True)
    subprocess.run(["git", "commit", "-qm", "init"], cwd=repo, check=True)
    assert data(ragit(repo, "ingest", "--all", "--format", "json"))["embedded"] > 0
    return repo


def test_minilm_query_writes_nothing_in_the_repository(minilm_native_repo: Path) -> None:
    """Implementation choice: local question vectors are computed, never cached."""
    status = data(ragit(minilm_native_repo, "status", "--format", "json"))
    assert status["embedding"]["store"]["provider"] == "local-minilm"
    before = _tree(minilm_native_repo)
    data(ragit(minilm_native_repo, "query", "ledger balance snapshots", "--format", "json"))
    assert _tree(minilm_native_repo) == before


def test_vector_score_is_half_the_chunks_and_half_its_documents(
    minilm_native_repo: Path, tmp_path: Path
) -> None:
    """local-minilm's document_vector_weight (0.5): a chunk's vector evidence is the mean of its
    own cosine and its document's two best candidate cosines (a missing one counting 0)."""
    import shutil

    repo = tmp_path / "repo"
    shutil.copytree(minilm_native_repo, repo, symlinks=True)
    # Every candidate is shown (no per-document limit, a top-k above the chunk count), so the
    # document evidence can be recomputed from the hits' own raw cosines.
    assert ragit(repo, "config", "set", "retrieval.hits_per_document", "0").returncode == 0
    out = data(
        ragit(
            repo,
            "query",
            "how are balances kept",
            "--explain",
            "--top-k",
            "100",
            "--view",
            "full",
            "--format",
            "json",
        )
    )
    hits = out["hits"]
    assert len({h["path"] for h in hits}) >= 2
    assert len(hits) < 100  # not cut: every candidate is in the list
    per_doc: dict[str, list[float]] = {}
    for hit in hits:
        per_doc.setdefault(hit["path"], []).append(hit["scoreBreakdown"]["raw"]["vector"]["cosine"])
    for hit in hits:
        vec = hit["scoreBreakdown"]["raw"]["vector"]
        top2 = sorted(per_doc[hit["path"]], reverse=True)[:2]
        expected = 0.5 * vec["cosine"] + 0.5 * sum(top2) / 2
        assert vec["documentWeight"] == 0.5
        # Explain's numbers are rounded to 6 decimals.
        assert vec["withDocument"] == pytest.approx(expected, abs=2e-6)
        assert vec["max"] == pytest.approx(
            max(h["scoreBreakdown"]["raw"]["vector"]["withDocument"] for h in hits), abs=1e-6
        )
        score = hit["scoreBreakdown"]["retrieval"]["inputs"]["vector"]["score"]
        assert score == pytest.approx(vec["withDocument"] / vec["max"], abs=1e-5)
