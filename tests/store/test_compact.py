"""Segment merging: inline for small stores, a background compactor for large ones."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from fixtures.build import build_fixture

ADR = "docs/adr/0002-idempotency-keys.md"
EXPIRY = "\n## Expiry\n\nThe zanzibar sweeper purges idempotency keys after thirty days.\n"


def ragit(repo: Path, *args: str, env: dict[str, str] | None = None) -> dict:
    proc = subprocess.run(
        [sys.executable, "-m", "ragit", *args, "--format", "json"],
        cwd=repo,
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr + proc.stdout
    return json.loads(proc.stdout)["data"]


def _segments(repo: Path) -> int:
    chunks = repo / ".ragit" / "store" / "chunks"
    return sum(
        1
        for p in chunks.iterdir()
        if p.is_dir() and p.name.isdigit() and any(p.glob("scalar.*.ipc"))
    )


def _indexed(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    build_fixture("docs-basic", repo)
    subprocess.run(
        [sys.executable, "-m", "ragit", "init", "--yes"], cwd=repo, check=True, capture_output=True
    )
    subprocess.run(["git", "add", "-A"], cwd=repo, check=True)
    subprocess.run(["git", "commit", "-qm", "init"], cwd=repo, check=True)
    ragit(repo, "ingest", "--all")
    (repo / ADR).write_text((repo / ADR).read_text(encoding="utf-8") + EXPIRY, encoding="utf-8")
    subprocess.run(["git", "commit", "-qam", "document key expiry"], cwd=repo, check=True)
    return repo


def test_small_store_is_merged_inline_so_new_chunks_rank_by_their_words(tmp_path: Path) -> None:
    """Implementation choice: one segment keeps zvec's per-segment BM25 comparable."""
    repo = _indexed(tmp_path)
    ragit(repo, "ingest")
    assert _segments(repo) == 1
    hits = ragit(repo, "query", "zanzibar sweeper purges idempotency keys")["hits"]
    assert hits[0]["sectionTitle"] == "Expiry"


def test_large_store_is_merged_by_the_background_compactor(tmp_path: Path) -> None:
    """Implementation choice: a large store is merged off the lock, after the ingest returns."""
    repo = _indexed(tmp_path)
    before = ragit(repo, "status")["store"]["generation"]
    ragit(repo, "ingest", env={"RAGIT_COMPACT_INLINE_ROWS": "0"})
    log = repo / ".ragit" / "runtime" / "compact.log"
    deadline = time.monotonic() + 120  # a background job: a bounded wait is the point
    while time.monotonic() < deadline:
        if log.exists() and '"outcome": "merged"' in log.read_text(encoding="utf-8"):
            break
        time.sleep(0.1)
    assert '"outcome": "merged"' in log.read_text(encoding="utf-8")
    assert _segments(repo) == 1
    assert ragit(repo, "status")["store"]["generation"] >= before + 2
    hits = ragit(repo, "query", "zanzibar sweeper purges idempotency keys")["hits"]
    assert hits[0]["sectionTitle"] == "Expiry"
    doctor = subprocess.run(
        [sys.executable, "-m", "ragit", "doctor"],
        cwd=repo,
        capture_output=True,
        text=True,
        check=False,
    )
    assert doctor.returncode == 0, doctor.stdout
