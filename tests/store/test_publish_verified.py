"""Nothing is published unless the generation holds every chunk that manifests name."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.snapshot._kit import indexed_repo

from ragit.contract.errors import SnapshotStoreUnavailable
from ragit.store.lock import WriterLock
from ragit.store.publishing import REFERENCED_NAME, publish
from ragit.store.writer import StoreWriter


def test_a_generation_that_lost_a_referenced_chunk_is_not_published(tmp_path: Path) -> None:
    """Issue 13 §1: the publish is refused and readers stay on the previous generation."""
    repo = indexed_repo(tmp_path, "docs-basic")
    assert (repo.ws.store_dir / REFERENCED_NAME).is_file()
    meta_file = repo.ws.store_dir / "meta.json"
    before = json.loads(meta_file.read_text(encoding="utf-8"))
    victim = repo.manifest(repo.head())["docs"][0]["chunkIds"][0]
    profile = before["embedding"]
    with WriterLock.acquire(repo.ws, command="test", head_sha=None) as lock:
        with StoreWriter.open(
            repo.ws, lock, embedding=profile, dimensions=profile["dimensions"]
        ) as writer:
            writer.delete([victim])
        with pytest.raises(SnapshotStoreUnavailable) as caught:
            publish(repo.ws, lock)
    assert "lacks 1 chunk(s)" in caught.value.message
    after = json.loads(meta_file.read_text(encoding="utf-8"))
    assert after["generation"] == before["generation"]
    assert repo.query("idempotency keys", top_k=3)["hits"]
