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
    """Contract-mandated (§6): the publish is refused and readers stay on the previous
    generation."""
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
    """Contract-mandated (§6): after a write whose publish was refused, every ingest refuses too
    (the canonical store lacks chunks); doctor must name the command that fixes it, not an ingest
    that fails and points back to doctor, and `repair --apply` must run it."""
    from ragit.ops.maintenance.doctor import run_doctor
    from ragit.ops.maintenance.repair import plan_repair

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
    """Contract-mandated (§6): a killed ingest leaves a journal whose recovery republishes, and a
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


def test_an_insert_only_publish_checks_the_new_ids_not_every_id(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Implementation choice: a write that only inserted is verified by its own ids and the row
    counts; the scan of every id of the copy (and of its keyword index) is not run."""
    from tests.store._store_helpers import row

    from ragit.store._zvec import Collection
    from ragit.store.publishing import Written
    from ragit.store.terms import TermReader

    repo = indexed_repo(tmp_path, "docs-basic")
    meta_file = repo.ws.store_dir / "meta.json"
    before = json.loads(meta_file.read_text(encoding="utf-8"))
    profile = before["embedding"]
    new = row("00000000000000aa", dims=profile["dimensions"])
    with WriterLock.acquire(repo.ws, command="test", head_sha=None) as lock:
        with StoreWriter.open(
            repo.ws, lock, embedding=profile, dimensions=profile["dimensions"]
        ) as writer:
            rows = writer.count()
            writer.insert([new])

        def no_scan(*_args: object) -> object:
            raise AssertionError("every id was scanned")

        monkeypatch.setattr(Collection, "all_ids", no_scan)
        monkeypatch.setattr(TermReader, "chunks", no_scan)
        written = Written(frozenset({new.chunk_id}), rows + 1)
        published = publish(repo.ws, lock, referenced=[new.chunk_id], written=written)
    assert published.generation == before["generation"] + 1
    assert published.chunk_count == rows + 1


def test_an_insert_only_publish_whose_counts_differ_scans_and_refuses(tmp_path: Path) -> None:
    """Implementation choice: a write said to have only inserted, that in fact lost a referenced
    chunk, leaves a row count other than the one announced: the publish falls back to the full
    scan and refuses, as before."""
    from tests.store._store_helpers import row

    from ragit.store.publishing import Written

    repo = indexed_repo(tmp_path, "docs-basic")
    meta_file = repo.ws.store_dir / "meta.json"
    before = json.loads(meta_file.read_text(encoding="utf-8"))
    profile = before["embedding"]
    victim = repo.manifest(repo.head())["docs"][0]["chunkIds"][0]
    new = row("00000000000000ab", dims=profile["dimensions"])
    with WriterLock.acquire(repo.ws, command="test", head_sha=None) as lock:
        with StoreWriter.open(
            repo.ws, lock, embedding=profile, dimensions=profile["dimensions"]
        ) as writer:
            rows = writer.count()
            writer.insert([new])
            writer.delete([victim])
        with pytest.raises(SnapshotStoreUnavailable) as caught:
            publish(repo.ws, lock, written=Written(frozenset({new.chunk_id}), rows + 1))
    assert "lacks 1 chunk(s)" in caught.value.message
    after = json.loads(meta_file.read_text(encoding="utf-8"))
    assert after["generation"] == before["generation"]


def test_an_insert_only_publish_refuses_an_inserted_id_the_copy_lacks(tmp_path: Path) -> None:
    """Implementation choice: the counts agree but an id the write announced is not in the copy (in
    the rows or in the keyword index): nothing is published."""
    from tests.store._store_helpers import row

    from ragit.store.publishing import Written

    repo = indexed_repo(tmp_path, "docs-basic")
    meta_file = repo.ws.store_dir / "meta.json"
    before = json.loads(meta_file.read_text(encoding="utf-8"))
    profile = before["embedding"]
    new = row("00000000000000ac", dims=profile["dimensions"])
    with WriterLock.acquire(repo.ws, command="test", head_sha=None) as lock:
        with StoreWriter.open(
            repo.ws, lock, embedding=profile, dimensions=profile["dimensions"]
        ) as writer:
            rows = writer.count()
            writer.insert([new])
        claimed = Written(frozenset({"00000000000000ad"}), rows + 1)
        with pytest.raises(SnapshotStoreUnavailable) as caught:
            publish(repo.ws, lock, referenced=["00000000000000ad"], written=claimed)
    assert "lacks 1 chunk(s)" in caught.value.message
    after = json.loads(meta_file.read_text(encoding="utf-8"))
    assert after["generation"] == before["generation"]
