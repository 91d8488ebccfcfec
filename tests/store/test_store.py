"""Writer, publication and reader copies against a real zvec store."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import pytest
from _store_helpers import DIMS, PROFILE, row, rows, tree_state, vector_for, write_and_publish

from ragit import _lock
from ragit.contract.errors import (
    EmbeddingMigrationRequired,
    SnapshotManifestInvalid,
    SnapshotSchemaUnsupported,
    SnapshotStoreUnavailable,
    StoreReadBusy,
    StoreWriteBusy,
)
from ragit.store.copies import copies_root, copy_path, make_copy
from ragit.store.lock import WriterLock, inspect_lock
from ragit.store.meta import read_meta
from ragit.store.publishing import publish
from ragit.store.reader import StoreReader
from ragit.store.writer import StoreWriter
from ragit.workspace import Workspace


def test_read_meta_is_none_before_any_store(ws: Workspace) -> None:
    """Contract §12 (status): no store is a state, not an error."""
    assert read_meta(ws) is None


def test_corrupt_meta_is_a_typed_corrupt_error(ws: Workspace) -> None:
    """Contract §2: a corrupt store is exit 4 (SNAPSHOT_MANIFEST_INVALID names meta.json)."""
    ws.store_dir.mkdir(parents=True)
    (ws.store_dir / "meta.json").write_text("{broken", encoding="utf-8")
    with pytest.raises(SnapshotManifestInvalid) as info:
        read_meta(ws)
    assert info.value.details["path"] == ".ragit/store/meta.json"
    assert info.value.exit_code == 4


def test_future_meta_schema_is_unsupported(ws: Workspace) -> None:
    """Contract §2: a store of a newer schema is exit 4 SNAPSHOT_SCHEMA_UNSUPPORTED."""
    write_and_publish(ws, rows("a", 3))
    meta = json.loads((ws.store_dir / "meta.json").read_text(encoding="utf-8"))
    meta["schemaVersion"] = 2
    (ws.store_dir / "meta.json").write_text(json.dumps(meta), encoding="utf-8")
    with pytest.raises(SnapshotSchemaUnsupported) as info:
        read_meta(ws)
    assert info.value.details["supported"] == 1
    with pytest.raises(SnapshotSchemaUnsupported):
        StoreReader.open_latest(ws)


def test_first_write_creates_store_and_publish_makes_generation_one(ws: Workspace) -> None:
    """Contract §12: the first ingest creates the store with a schemaVersion."""
    meta = write_and_publish(ws, rows("a", 5))
    assert meta.schema_version == 1
    assert meta.generation == 1
    assert meta.chunk_count == 5
    assert len(meta.store_id) == 32
    assert meta.embedding == PROFILE
    assert meta.published_at is not None
    assert read_meta(ws) == meta
    assert (ws.store_dir / "chunks").is_dir()
    assert copy_path(ws, meta.store_id, 1).is_dir()


def test_insert_of_more_than_1024_rows_is_batched_and_verified(ws: Workspace) -> None:
    """Implementation choice: zvec caps a batch at 1,024 docs; insert batches transparently
    (8,300 rows = 9 batches, so the background flush after the 8th runs too)."""
    many = rows("big", 8300)
    with WriterLock.acquire(ws, command="test", head_sha=None) as lock:
        with StoreWriter.open(ws, lock, embedding=PROFILE, dimensions=DIMS) as writer:
            writer.insert(many)
            ids = [r.chunk_id for r in many]
            assert writer.verify(ids) == []
            assert writer.verify([*ids[:3], "nope"]) == ["nope"]
            assert writer.existing([*ids[:10], "nope"]) == set(ids[:10])
            assert writer.existing(ids) == set(ids)  # the full-scan path
            assert writer.all_ids() == set(ids)
            writer.insert(many[:1500])  # content-addressed: re-inserting is a no-op
            assert writer.count() == 8300
        meta = publish(ws, lock)
    assert meta.chunk_count == 8300
    with StoreReader.open_latest(ws) as reader:
        got = reader.fetch([r.chunk_id for r in many[-50:]])
        assert len(got) == 50


def test_the_native_insert_stores_what_the_public_insert_stores(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Implementation choice: rows go to zvec as its native documents, built without zvec's
    Python conversion; every field, the vector and an already-stored id come out as through
    the public ``Collection.insert``."""
    from array import array

    from ragit.store import _zvec

    batch = [
        row(f"n-{i:03d}", f"body {i} of a chunk", cjk="커밋 저장소" if i % 2 else "")
        for i in range(40)
    ]
    batch[3] = replace(batch[3], vector=array("f", batch[3].vector))
    ids = [r.chunk_id for r in batch]
    seen = {}
    for name in ("native", "public"):
        if name == "public":
            monkeypatch.setattr(_zvec.Collection, "_fast_insert", lambda self, rows: None)
        collection = _zvec.Collection.create(tmp_path / name, DIMS)
        try:
            collection.insert(batch)
            collection.insert(batch[:5])  # already stored: left as it is, no error
            collection.flush()
            seen[name] = (
                collection.count(),
                sorted(collection.fetch_rows(ids), key=lambda r: r.chunk_id),
                collection.fetch_vectors(ids),
            )
        finally:
            collection.close()
    assert seen["native"][0] == 40
    assert seen["native"] == seen["public"]


def test_insert_rejects_vectors_of_the_wrong_length(ws: Workspace) -> None:
    """Implementation choice: a wrong-sized vector is a programming error, caught early."""
    with (
        WriterLock.acquire(ws, command="test", head_sha=None) as lock,
        StoreWriter.open(ws, lock, embedding=PROFILE, dimensions=DIMS) as writer,
    ):
        with pytest.raises(ValueError, match="dimensions"):
            writer.insert([row("x", dims=DIMS + 1)])
        assert writer.count() == 0


def test_writer_refuses_to_work_without_the_lock(ws: Workspace) -> None:
    """Contract §6: writes happen only under the writer lock."""
    lock = WriterLock.acquire(ws, command="test", head_sha=None)
    writer = StoreWriter.open(ws, lock, embedding=PROFILE, dimensions=DIMS)
    lock.release()
    with pytest.raises(StoreWriteBusy):
        writer.insert([row("x")])
    writer.close()
    with pytest.raises(StoreWriteBusy):
        StoreWriter.open(ws, lock, embedding=PROFILE, dimensions=DIMS)


def test_publish_refuses_while_the_writer_is_open(ws: Workspace) -> None:
    """Implementation choice: only closed (flushed) canonical files are copied."""
    with WriterLock.acquire(ws, command="test", head_sha=None) as lock:
        writer = StoreWriter.open(ws, lock, embedding=PROFILE, dimensions=DIMS)
        with pytest.raises(RuntimeError):
            publish(ws, lock)
        writer.close()
        assert publish(ws, lock).generation == 1


def test_each_writer_open_bumps_the_revision(ws: Workspace) -> None:
    """Implementation choice: readers detect canonical changes through meta.json's revision."""
    write_and_publish(ws, rows("a", 2))
    before = read_meta(ws)
    assert before is not None
    with WriterLock.acquire(ws, command="test", head_sha=None) as lock:
        StoreWriter.open(ws, lock, embedding=PROFILE, dimensions=DIMS).close()
    after = read_meta(ws)
    assert after is not None
    assert after.revision == before.revision + 1
    assert after.generation == before.generation


def test_other_embedding_profile_needs_migration_once_rows_exist(ws: Workspace) -> None:
    """docs/reference/documents.md: a store whose embedding contract differs from the configured
    one is not reused."""
    write_and_publish(ws, rows("a", 2))
    other = {**PROFILE, "namespaceId": "other", "dimensions": 4}
    with (
        WriterLock.acquire(ws, command="test", head_sha=None) as lock,
        pytest.raises(EmbeddingMigrationRequired),
    ):
        StoreWriter.open(ws, lock, embedding=other, dimensions=4)


def test_empty_store_is_recreated_for_a_new_embedding_profile(ws: Workspace) -> None:
    """Implementation choice: a store without published rows simply follows the config."""
    write_and_publish(ws, [])
    other = {**PROFILE, "namespaceId": "other", "dimensions": 4}
    with WriterLock.acquire(ws, command="test", head_sha=None) as lock:
        with StoreWriter.open(ws, lock, embedding=other, dimensions=4) as writer:
            writer.insert([row("x", dims=4)])
        meta = publish(ws, lock)
    assert meta.dimensions == 4
    assert meta.embedding["namespaceId"] == "other"
    assert meta.chunk_count == 1


def test_vector_search_returns_clamped_similarity_best_first(ws: Workspace) -> None:
    """Contract §7: scoreVector lies in [0,1]; similarity = 1 − cosine distance, clamped."""
    data = rows("v", 20)
    write_and_publish(ws, data)
    with StoreReader.open_latest(ws) as reader:
        query = vector_for("v-00007")
        hits = reader.vector_search(query, 20)
        assert hits[0][0] == "v-00007"
        assert hits[0][1] == pytest.approx(1.0, abs=1e-5)
        assert all(0.0 <= score <= 1.0 for _, score in hits)
        assert [s for _, s in hits] == sorted((s for _, s in hits), reverse=True)
        opposite = dict(reader.vector_search([-x for x in query], 20))
        assert opposite["v-00007"] == 0.0  # cosine distance 2, clamped
        with pytest.raises(ValueError):
            reader.vector_search([1.0] * (DIMS - 1), 3)
        with pytest.raises(ValueError):
            reader.vector_search(query, 0)
        vectors = reader.fetch_vectors(["v-00001", "missing"])
        assert list(vectors) == ["v-00001"]
        assert vectors["v-00001"] == pytest.approx(vector_for("v-00001"), abs=1e-5)


def test_fetch_returns_stored_chunks_without_vectors(ws: Workspace) -> None:
    """Contract §7: hits carry text and section metadata from the store."""
    write_and_publish(ws, [row("c1", "Alpha beta gamma"), row("c2")])
    with StoreReader.open_latest(ws) as reader:
        got = reader.fetch(["c1", "c2", "c3", ""])
    assert sorted(got) == ["c1", "c2"]
    assert got["c1"].text == "Alpha beta gamma"
    assert got["c1"].section_title == "Section c1"
    assert got["c1"].heading_path == "Doc > Section c1"
    assert got["c1"].token_count == 3


def keyword_search(
    reader: StoreReader, field: str, text: str, k: int, ids: list[str]
) -> list[tuple[str, float]]:
    """BM25 of ``text`` over the chunks ``ids`` (a snapshot) through the keyword index."""
    from ragit.retrieve.keyword import best, bm25, snapshot_terms
    from ragit.text.terms import cjk_terms, en_terms, query_terms

    terms = reader.terms()
    st = snapshot_terms(terms, frozenset(ids), object(), "sha")
    split = en_terms if field == "en" else cjk_terms
    scores = bm25(terms, st, field, query_terms(split(text))).chunk
    position = {str(cid): i for i, cid in enumerate(st.ids)}
    return [(cid, float(scores[position[cid]])) for cid in best(st, scores, k)]


def test_english_keyword_search_stems_and_ignores_case(ws: Workspace) -> None:
    """Implementation choice: English words are lower-cased and stemmed (measured helpful)."""
    write_and_publish(
        ws,
        [
            row("lock", "The writer lock is exclusive and commits are journaled"),
            row("other", "Completely unrelated prose about gardens"),
        ],
    )
    with StoreReader.open_latest(ws) as reader:
        for query in ("LOCKS", "commit", "journaling writers"):
            hits = keyword_search(reader, "en", query, 5, ["lock", "other"])
            assert [h[0] for h in hits] == ["lock"], query
            assert hits[0][1] > 0


def test_korean_search_matches_across_particles(ws: Workspace) -> None:
    """Design §2.4: Korean text with particles is searchable ("커밋을" matches "커밋")."""
    write_and_publish(
        ws,
        [
            row("ko", "commit policy", cjk="정확한 커밋을 선택하며 저장소를 바꾸는 프로세스"),
            row("ko2", "cache", cjk="임베딩 캐시 키에는 입력 내용이 포함됩니다"),
            row("en", "english only"),
        ],
    )
    ids = ["ko", "ko2", "en"]
    with StoreReader.open_latest(ws) as reader:
        assert [h[0] for h in keyword_search(reader, "cjk", "커밋", 5, ids)] == ["ko"]
        assert [h[0] for h in keyword_search(reader, "cjk", "저장소가", 5, ids)] == ["ko"]
        assert keyword_search(reader, "cjk", "캐시를", 5, ids)[0][0] == "ko2"
        assert keyword_search(reader, "en", "커밋", 5, ids) == []


SYNTAX_QUERIES = [
    '"unbalanced',
    "+writer -lock",
    "writ*",
    "*",
    "-",
    "+",
    "C++",
    "(lock",
    "lock)",
    "field:lock",
    "AND",
    "OR NOT",
    "lock^2",
    "lock~",
    "\\",
    "[a TO b]",
    "{x}",
    "/re/",
    "?",
    "'",
    "&&",
    "||",
    "\x00lock",
    "lock\ud800",
    "   ",
    "",
    "\t\n",
]


def test_keyword_query_syntax_characters_never_raise(ws: Workspace) -> None:
    """Implementation choice: any query text is safe; nothing parses query syntax."""
    write_and_publish(ws, [row("lock", "the writer lock (C++ edition) AND more")])
    with StoreReader.open_latest(ws) as reader:
        for query in SYNTAX_QUERIES:
            for field in ("en", "cjk"):
                hits = keyword_search(reader, field, query, 5, ["lock"])
                assert all(cid == "lock" for cid, _ in hits), (query, field)
        assert [h[0] for h in keyword_search(reader, "en", "\x00lock", 5, ["lock"])] == ["lock"]
        assert [h[0] for h in keyword_search(reader, "en", "lock\ud800", 5, ["lock"])] == ["lock"]
        assert keyword_search(reader, "en", "\t\n", 5, ["lock"]) == []


def test_reads_leave_every_ragit_file_untouched_even_when_recreating_the_copy(
    ws: Workspace,
) -> None:
    """Contract §11: reads leave .ragit byte- and mtime-identical (copy made outside)."""
    meta = write_and_publish(ws, rows("a", 30))
    before = tree_state(ws.ragit_dir)
    with StoreReader.open_latest(ws) as reader:
        assert keyword_search(reader, "en", "body", 3, [f"a-{i:05d}" for i in range(30)])
    shutil.rmtree(copies_root(ws))
    with StoreReader.open_latest(ws) as reader:  # re-creates the copy from .ragit/store
        assert reader.generation == meta.generation
        assert len(reader.fetch(["a-00000", "a-00029"])) == 2
        assert reader.vector_search(vector_for("a-00003"), 1)[0][0] == "a-00003"
    with StoreReader.open_latest(ws) as reader:
        assert reader.chunk_count == 30
    assert tree_state(ws.ragit_dir) == before
    assert copy_path(ws, meta.store_id, meta.generation).is_dir()
    assert [p.name for p in copies_root(ws).iterdir()] == [f"{meta.store_id}-1"]


def test_damaged_copy_is_replaced_from_the_canonical_files(ws: Workspace) -> None:
    """Implementation choice: an unreadable reader copy is rebuilt, not reported."""
    meta = write_and_publish(ws, rows("a", 4))
    damaged = copy_path(ws, meta.store_id, meta.generation)
    shutil.rmtree(damaged)
    damaged.mkdir()  # exists, but is no collection
    with StoreReader.open_latest(ws) as reader:
        assert len(reader.fetch(["a-00001"])) == 1


def test_store_deleted_by_hand_is_a_typed_error(ws: Workspace) -> None:
    """Contract §3: a missing store is SNAPSHOT_STORE_UNAVAILABLE, never a crash."""
    write_and_publish(ws, rows("a", 2))
    shutil.rmtree(ws.store_dir)
    with pytest.raises(SnapshotStoreUnavailable) as info:
        StoreReader.open_latest(ws)
    assert "no store" in info.value.details["reason"]


def test_store_files_deleted_and_cache_cleared_is_a_typed_error(ws: Workspace) -> None:
    """Contract §3: store files gone with no reader copy → SNAPSHOT_STORE_UNAVAILABLE."""
    write_and_publish(ws, rows("a", 2))
    shutil.rmtree(ws.store_dir / "chunks")
    shutil.rmtree(copies_root(ws))
    with pytest.raises(SnapshotStoreUnavailable) as info:
        StoreReader.open_latest(ws)
    assert info.value.recovery == "ragit doctor --format json"


def test_missing_copy_with_an_active_writer_is_read_busy(ws: Workspace) -> None:
    """Contract §6: no usable copy while a writer is active → brief retry, STORE_READ_BUSY."""
    write_and_publish(ws, rows("a", 2))
    shutil.rmtree(copies_root(ws))
    with (
        WriterLock.acquire(ws, command="test", head_sha=None),
        pytest.raises(StoreReadBusy) as info,
    ):
        StoreReader.open_latest(ws, wait_ms=60)
    assert info.value.details["waitedMs"] >= 60
    assert info.value.retryable is True
    assert not copies_root(ws).exists() or not any(copies_root(ws).iterdir())


def test_missing_copy_with_a_dead_writer_fails_at_once(ws: Workspace) -> None:
    """Contract §6: readers retry only while a writer is active; an owner that is provably
    gone will not publish, so STORE_READ_BUSY comes at once instead of after ``wait_ms``."""
    write_and_publish(ws, rows("a", 2))
    shutil.rmtree(copies_root(ws))
    gone = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    owner = _lock.owner_record(token="f" * 32, command="ingest", started_at="2026-01-01T00:00:00Z")
    owner.update(pid=int(gone.stdout), processStartTime="1")
    ws.lock_path.write_text(json.dumps(owner), encoding="utf-8")
    assert inspect_lock(ws).state == "stale"
    started = time.monotonic()
    with pytest.raises(StoreReadBusy) as info:
        StoreReader.open_latest(ws, wait_ms=5000)
    assert time.monotonic() - started < 2.0
    assert info.value.details["waitedMs"] < 2000
    assert "gone" in info.value.message


def test_existing_copy_is_read_while_a_writer_holds_the_lock(ws: Workspace) -> None:
    """Contract §6: ingest never blocks queries."""
    write_and_publish(ws, rows("a", 2))
    with (
        WriterLock.acquire(ws, command="test", head_sha=None) as lock,
        StoreWriter.open(ws, lock, embedding=PROFILE, dimensions=DIMS) as writer,
    ):
        writer.insert(rows("b", 2))
        with StoreReader.open_latest(ws, wait_ms=0) as reader:
            assert reader.generation == 1
            assert sorted(reader.fetch(["a-00000", "b-00000"])) == ["a-00000"]


def test_unpublished_store_is_unavailable(ws: Workspace) -> None:
    """Implementation choice: generation 0 (created, never published) has nothing to read."""
    with WriterLock.acquire(ws, command="test", head_sha=None) as lock:
        StoreWriter.open(ws, lock, embedding=PROFILE, dimensions=DIMS).close()
    with pytest.raises(SnapshotStoreUnavailable):
        StoreReader.open_latest(ws, wait_ms=0)


def test_publish_keeps_the_current_copy_and_the_ones_readers_hold(ws: Workspace) -> None:
    """Design §2.5: old reader copies are pruned. Implementation choice: a publish removes
    every older copy no reader holds, and leaves a held one for a later publish."""

    def names() -> list[str]:
        return sorted(p.name for p in copies_root(ws).iterdir())

    for i in range(4):
        meta = write_and_publish(ws, rows(f"g{i}", 2))
    assert names() == [f"{meta.store_id}-4"]
    with StoreReader.open_latest(ws) as held:
        meta = write_and_publish(ws, rows("g4", 2))
        assert names() == sorted([f"{meta.store_id}-4", f"{meta.store_id}-5"])
        assert held.fetch(["g0-00000"])  # the held copy keeps answering
        with StoreReader.open_latest(ws) as new:
            assert new.generation == 5
    meta = write_and_publish(ws, rows("g5", 2))
    assert names() == [f"{meta.store_id}-6"]


def test_a_copy_held_by_its_directory_lock_survives_publishes_until_let_go(
    ws: Workspace,
) -> None:
    """Implementation choice: the hold is a shared flock on the copy's directory, so it
    lasts exactly as long as the descriptor (a process that dies lets go); a pruned copy
    cannot be held, which sends a reader back to meta.json."""
    import os

    from ragit.store.copies import hold_copy

    first = write_and_publish(ws, rows("a", 1))
    path = copy_path(ws, first.store_id, first.generation)
    hold = hold_copy(path)
    assert hold is not None
    try:
        write_and_publish(ws, rows("b", 1))
        write_and_publish(ws, rows("c", 1))
        assert path.is_dir()
    finally:
        os.close(hold)
    write_and_publish(ws, rows("d", 1))
    assert not path.exists()
    assert hold_copy(path) is None


def test_reader_sees_a_new_generation_after_publish(ws: Workspace) -> None:
    """Design §2.5: a reader tells whether a newer generation was published."""
    write_and_publish(ws, rows("a", 1))
    with StoreReader.open_latest(ws) as old:
        assert old.is_latest(ws)
        write_and_publish(ws, rows("b", 1))
        assert not old.is_latest(ws)
        assert old.fetch(["a-00000"])  # the open old copy keeps answering
    with StoreReader.open_latest(ws) as new:
        assert new.generation == 2
        assert sorted(new.fetch(["a-00000", "b-00000"])) == ["a-00000", "b-00000"]


def test_copy_abandoned_when_the_source_changed_leaves_nothing(ws: Workspace) -> None:
    """Implementation choice: a copy whose source changed meanwhile is dropped unopened."""
    meta = write_and_publish(ws, rows("a", 1))
    assert make_copy(ws, meta.store_id, 99, replace=False, still_valid=lambda: False) is None
    assert not copy_path(ws, meta.store_id, 99).exists()
    assert [p.name for p in copies_root(ws).iterdir() if p.name.startswith(".")] == []


def test_importing_the_store_package_does_not_import_zvec() -> None:
    """Design §2.7: heavy imports are lazy (ragit --help must not load zvec)."""
    import subprocess
    import sys

    code = "import sys, ragit.store; print('zvec' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_cache_dir_follows_xdg_cache_home(ws: Workspace, tmp_path: Path) -> None:
    """Design §2.5: reader copies live in the user cache dir (XDG_CACHE_HOME honoured)."""
    meta = write_and_publish(ws, rows("a", 1))
    assert copy_path(ws, meta.store_id, 1).is_relative_to(tmp_path / "xdg-cache" / "ragit")


def test_a_writer_refuses_canonical_files_changed_outside_a_write(ws: Workspace) -> None:
    """Contract §6 (a writer never publishes a broken store): files that differ from the
    fingerprint of the last publish, with no unfinished journal, are refused before any
    recovery or write; the error's recovery (doctor) names the store rebuild."""
    from ragit.store.publishing import check_canonical_intact

    write_and_publish(ws, rows("a", 40))
    with WriterLock.acquire(ws, command="test", head_sha=None) as lock:
        check_canonical_intact(ws, lock)  # as published
    target = sorted((ws.store_dir / "chunks").rglob("*.sst"))[0]
    data = bytearray(target.read_bytes())
    data[len(data) // 2] ^= 0xFF
    target.write_bytes(bytes(data))
    before = tree_state(ws.store_dir)
    with (
        WriterLock.acquire(ws, command="test", head_sha=None) as lock,
        pytest.raises(SnapshotStoreUnavailable) as info,
    ):
        check_canonical_intact(ws, lock)
    assert "changed outside a RAGit write" in info.value.details["reason"]
    assert info.value.recovery == "ragit doctor --format json"
    assert tree_state(ws.store_dir) == before  # nothing written
