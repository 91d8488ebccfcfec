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


def test_a_refused_publish_leads_doctor_and_repair_to_the_rebuild(tmp_path: Path) -> None:
    """Issue 13 §1: after a write whose publish was refused, every ingest refuses too (the
    canonical store lacks chunks); doctor must name the command that fixes it, not an ingest
    that fails and points back to doctor, and `repair --apply` must run it."""
    from ragit.ops.doctor import run_doctor
    from ragit.ops.repair import plan_repair

    repo = indexed_repo(tmp_path, "docs-basic")
    victim = repo.manifest(repo.head())["docs"][0]["chunkIds"][0]
    profile = json.loads((repo.ws.store_dir / "meta.json").read_text(encoding="utf-8"))["embedding"]
    with WriterLock.acquire(repo.ws, command="test", head_sha=None) as lock:
        with StoreWriter.open(
            repo.ws, lock, embedding=profile, dimensions=profile["dimensions"]
        ) as writer:
            writer.delete([victim])
        with pytest.raises(SnapshotStoreUnavailable):
            publish(repo.ws, lock)
    assert repo.ws.store_unverified_path.is_file()
    data, error = run_doctor(repo.ws)
    failed = {c["name"]: c for c in data["checks"] if not c["ok"]}
    assert "store.verified" in failed and "1 chunk(s)" in failed["store.verified"]["detail"]
    assert error is not None
    assert error.recovery == "ragit repair --apply --action store-rebuild"
    assert next(a["action"] for a in plan_repair(repo.ws, [])[0]) == "store-rebuild"
    proc = repo.ragit("repair", "--apply", "--action", "store-rebuild", "--format", "json")
    assert proc.code == 0, proc.stdout + proc.stderr
    assert not repo.ws.store_unverified_path.exists()
    data, error = run_doctor(repo.ws)
    assert error is None, [c for c in data["checks"] if not c["ok"]]
    assert repo.query("idempotency keys", top_k=3)["hits"]


def test_repair_recovers_an_interrupted_ingest_on_a_store_that_lost_chunks(tmp_path: Path) -> None:
    """Issue 13 §1 (soak): a killed ingest leaves a journal whose recovery republishes, and a
    store that lost chunks refuses every publish. `repair --apply` must not stop at the
    journal: the store rebuild after it regenerates the store and closes the journal."""
    repo = indexed_repo(tmp_path, "docs-basic")
    first = repo.head()
    repo.commit({"docs/notes/new.md": "# New\n\nA note about ledgers.\n"}, "add a note")
    killed = repo.ragit("ingest", env={"RAGIT_FAULT_AT": "store-verified"})
    assert killed.code == 137
    victim = repo.manifest(first)["docs"][0]["chunkIds"][0]
    profile = json.loads((repo.ws.store_dir / "meta.json").read_text(encoding="utf-8"))["embedding"]
    with WriterLock.acquire(repo.ws, command="test", head_sha=None) as lock:
        with StoreWriter.open(
            repo.ws, lock, embedding=profile, dimensions=profile["dimensions"]
        ) as writer:
            writer.delete([victim])
        with pytest.raises(SnapshotStoreUnavailable):
            publish(repo.ws, lock)
    repaired = repo.ragit("repair", "--apply", "--format", "json")
    assert repaired.code == 0, repaired.stdout + repaired.stderr
    doctor = repo.ragit("doctor", "--format", "json")
    assert doctor.code == 0, doctor.stdout
    assert repo.query("ledgers", top_k=3)["hits"]
