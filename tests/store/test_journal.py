"""Transaction journals: classification of every phase, and recovery under the lock."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest
from _store_helpers import DIMS, PROFILE, row, rows, write_and_publish

from ragit._fs import atomic_write_text
from ragit.contract.errors import IngestRecoveryRequired
from ragit.store.journal import Journal, Transaction, recover
from ragit.store.journal_scan import PHASES, JournalState, scan_journals
from ragit.store.lock import WriterLock
from ragit.store.meta import read_meta
from ragit.store.reader import StoreReader
from ragit.store.writer import StoreWriter
from ragit.workspace import Workspace

SHA = "b" * 40


def _manifest(ws: Workspace, sha: str = SHA, body: str = "{}") -> Path:
    path = ws.manifest_path(sha)
    atomic_write_text(path, body)
    return path


def _exists(ws: Workspace) -> Callable[[str], bool]:
    return lambda sha: ws.manifest_path(sha).is_file()


def _abandoned(
    ws: Workspace, phase: str, *, manifest: bool = False, new_ids: tuple[str, ...] = ("n-1", "n-2")
) -> Transaction:
    """Run a real transaction up to ``phase`` and abandon it the way a crash does (the lock is
    released here so the test can take it again; recovery reads only the journal)."""
    lock = WriterLock.acquire(ws, command="ingest", head_sha=SHA)
    tx = Journal.begin(
        ws,
        lock,
        kind="ingest",
        target_sha=SHA,
        base_sha=None,
        manifest_path=f".ragit/manifest/{SHA}.json",
        chunk_ids=["a-00000", *new_ids],
        document_version_ids=["dv1"],
    )
    writer = StoreWriter.open(ws, lock, embedding=PROFILE, dimensions=DIMS)
    writer.insert([row(i) for i in ("a-00000", *new_ids)])
    for step in PHASES[1 : PHASES.index(phase) + 1]:
        if step == "manifest-committed":
            writer.close()
            _manifest(ws)
        tx.advance(step)
    writer.close()
    if manifest:
        _manifest(ws)
    lock.transaction = None
    lock.release()
    return tx


def _only(ws: Workspace) -> JournalState:
    states = scan_journals(ws)
    assert len(states) == 1
    return states[0]


@pytest.fixture
def published(ws: Workspace) -> Workspace:
    write_and_publish(ws, rows("a", 3))
    return ws


def test_begin_writes_a_prepared_journal_with_caller_fields(published: Workspace) -> None:
    """docs/store.md: the journal records kind, phase, target, manifest path and chunk ids."""
    ws = published
    with WriterLock.acquire(ws, command="ingest", head_sha=SHA) as lock:
        tx = Journal.begin(
            ws,
            lock,
            kind="ingest",
            target_sha=SHA,
            base_sha="c" * 40,
            manifest_path=f".ragit/manifest/{SHA}.json",
            chunk_ids=["z", "y"],
            document_version_ids=["dv"],
        )
        data = json.loads(tx.path.read_text(encoding="utf-8"))
        assert data["phase"] == "prepared"
        assert data["status"] == "in-progress"
        assert data["kind"] == "ingest"
        assert data["targetSha"] == SHA
        assert data["baseSha"] == "c" * 40
        assert data["chunkIds"] == ["y", "z"]
        assert data["documentVersionIds"] == ["dv"]
        assert data["lockToken"] == lock.token
        assert tx.path.parent == ws.transactions_dir
        tx.advance("store-written", processed=3)
        assert json.loads(tx.path.read_text(encoding="utf-8"))["processed"] == 3
        with pytest.raises(ValueError):
            tx.advance("prepared")
        with pytest.raises(ValueError):
            tx.advance("completed")
        tx.complete()
    state = _only(ws)
    assert state.classification == "completed"
    assert state.data["chunkCount"] == 2  # the id lists shrink to counts once completed
    assert "chunkIds" not in state.data and "insertedChunkIds" not in state.data


@pytest.mark.parametrize("phase", ["prepared", "store-written", "store-verified"])
def test_precommit_phases_without_manifest_are_precommit_incomplete(
    published: Workspace, phase: str
) -> None:
    """docs/store.md: manifest absent and phase before manifest-committed → precommit-incomplete."""
    _abandoned(published, phase)
    state = _only(published)
    assert state.classification == "precommit-incomplete"
    assert state.phase == phase


def test_verified_phase_with_a_new_manifest_is_finalization_pending(published: Workspace) -> None:
    """Implementation choice: a manifest renamed in just before the crash is rolled forward."""
    _abandoned(published, "store-verified", manifest=True)
    assert _only(published).classification == "finalization-pending"


def test_new_manifest_before_verification_is_inconsistent(published: Workspace) -> None:
    """docs/store.md: a manifest that does not match the journal's progress is inconsistent."""
    _abandoned(published, "store-written", manifest=True)
    state = _only(published)
    assert state.classification == "inconsistent"
    assert state.reason is not None


def test_preexisting_manifest_does_not_count_as_committed(published: Workspace) -> None:
    """Implementation choice: the manifest bytes seen at begin are not this tx's commit."""
    _manifest(published, body='{"old": true}')
    _abandoned(published, "store-verified")
    assert _only(published).classification == "precommit-incomplete"


@pytest.mark.parametrize("phase", ["manifest-committed", "published"])
def test_committed_phases_with_manifest_are_finalization_pending(
    published: Workspace, phase: str
) -> None:
    """docs/store.md: manifest committed, finalization not done → finalization-pending."""
    _abandoned(published, phase)
    assert _only(published).classification == "finalization-pending"


def test_committed_phase_whose_manifest_vanished_is_inconsistent(published: Workspace) -> None:
    """docs/store.md: a committed transaction whose manifest is missing is inconsistent."""
    _abandoned(published, "manifest-committed")
    published.manifest_path(SHA).unlink()
    assert _only(published).classification == "inconsistent"


def test_failed_transaction_records_the_error_and_status(published: Workspace) -> None:
    """docs/store.md: failure before manifest-committed → failed-precommit (and vice versa)."""
    with WriterLock.acquire(published, command="ingest", head_sha=SHA) as lock:
        tx = Journal.begin(
            published,
            lock,
            kind="ingest",
            target_sha=SHA,
            base_sha=None,
            manifest_path=f".ragit/manifest/{SHA}.json",
        )
        tx.fail(RuntimeError("embedding exploded"))
    state = _only(published)
    assert state.status == "failed-precommit"
    assert state.classification == "precommit-incomplete"
    assert state.data["lastError"]["name"] == "RuntimeError"


@pytest.mark.parametrize(
    ("name", "content", "reason"),
    [
        ("garbage.json", "{nope", "not valid JSON"),
        ("bad name!.json", "{}", "unsafe journal file name"),
        ("list.json", "[]", "not a JSON object"),
    ],
)
def test_malformed_journals_are_invalid(
    ws: Workspace, name: str, content: str, reason: str
) -> None:
    """docs/store.md: unreadable, malformed or unsafely named journals are classified invalid."""
    ws.transactions_dir.mkdir(parents=True)
    (ws.transactions_dir / name).write_text(content, encoding="utf-8")
    state = _only(ws)
    assert state.classification == "invalid"
    assert state.reason == reason


def test_unsafe_manifest_path_and_symlinks_are_invalid(published: Workspace) -> None:
    """docs/store.md: an unsafe target never drives recovery; journals are regular files only."""
    tx = _abandoned(published, "prepared")
    data = json.loads(tx.path.read_text(encoding="utf-8"))
    data["manifestPath"] = "../../etc/passwd"
    tx.path.write_text(json.dumps(data), encoding="utf-8")
    os.symlink(tx.path, published.transactions_dir / "link-1.json")
    states = {s.transaction_id: s for s in scan_journals(published)}
    assert states[tx.transaction_id].classification == "invalid"
    assert states[tx.transaction_id].reason == "unsafe manifestPath"
    assert states["link-1"].reason == "not a regular file"


def test_recover_rolls_back_only_rows_the_transaction_inserted(published: Workspace) -> None:
    """Contract §6: unpublished residue is discarded; shared, published chunks are kept."""
    ws = published
    _abandoned(ws, "store-verified", new_ids=("n-1", "n-2"))
    before = read_meta(ws)
    assert before is not None
    with WriterLock.acquire(ws, command="ingest", head_sha=SHA) as lock:
        report = recover(ws, lock, _exists(ws))
        with StoreWriter.open(ws, lock, embedding=PROFILE, dimensions=DIMS) as writer:
            assert writer.all_ids() == {"a-00000", "a-00001", "a-00002"}
    assert len(report.rolled_back) == 1
    assert report.finalized == []
    assert any("rolled back" in w for w in report.warnings)
    assert scan_journals(ws) == []
    after = read_meta(ws)
    assert after is not None and after.generation == before.generation + 1
    assert report.published_generation == after.generation


def test_recover_finishes_a_committed_transaction(published: Workspace) -> None:
    """Contract §6: the next writer finishes work whose manifest was committed."""
    ws = published
    _abandoned(ws, "manifest-committed", new_ids=("n-1",))
    seen: list[str] = []
    with WriterLock.acquire(ws, command="ingest", head_sha=SHA) as lock:
        report = recover(ws, lock, _exists(ws), finalize=lambda s: seen.append(s.transaction_id))
    assert report.finalized == seen
    assert len(seen) == 1
    assert _only(ws).classification == "completed"
    with StoreReader.open_latest(ws) as reader:
        assert sorted(reader.fetch(["n-1", "a-00000"])) == ["a-00000", "n-1"]


def test_recover_raises_only_for_inconsistent_journals(published: Workspace) -> None:
    """Contract §3: only an inconsistent journal stops the writer (INGEST_RECOVERY_REQUIRED)."""
    ws = published
    tx = _abandoned(ws, "manifest-committed")
    ws.manifest_path(SHA).unlink()
    with WriterLock.acquire(ws, command="ingest", head_sha=SHA) as lock:
        with pytest.raises(IngestRecoveryRequired) as info:
            recover(ws, lock, _exists(ws))
        assert info.value.details["transactions"] == [tx.transaction_id]
        with pytest.raises(IngestRecoveryRequired):
            Journal.begin(
                ws,
                lock,
                kind="ingest",
                target_sha=SHA,
                base_sha=None,
                manifest_path=f".ragit/manifest/{SHA}.json",
            )


def test_recover_flags_a_committed_transaction_whose_chunks_are_gone(published: Workspace) -> None:
    """docs/store.md: a manifest citing chunks missing from the store is inconsistent."""
    ws = published
    _abandoned(ws, "manifest-committed", new_ids=("n-1",))
    with WriterLock.acquire(ws, command="test", head_sha=None) as lock:
        with StoreWriter.open(ws, lock, embedding=PROFILE, dimensions=DIMS) as writer:
            writer.delete(["n-1"])
        with pytest.raises(IngestRecoveryRequired):
            recover(ws, lock, _exists(ws))


def test_recover_ignores_invalid_journals_with_a_warning(ws: Workspace) -> None:
    """Implementation choice: an unreadable journal is reported, never acted upon."""
    ws.transactions_dir.mkdir(parents=True)
    (ws.transactions_dir / "junk.json").write_text("{", encoding="utf-8")
    with WriterLock.acquire(ws, command="ingest", head_sha=None) as lock:
        report = recover(ws, lock, _exists(ws))
    assert report.invalid == ["junk"]
    assert report.warnings
    assert (ws.transactions_dir / "junk.json").exists()


def test_begin_refuses_while_a_previous_transaction_awaits_recovery(published: Workspace) -> None:
    """Implementation choice: recovery must run before a new transaction (residue safety)."""
    tx = _abandoned(published, "store-written")
    with WriterLock.acquire(published, command="ingest", head_sha=SHA) as lock:
        with pytest.raises(IngestRecoveryRequired) as info:
            Journal.begin(
                published,
                lock,
                kind="ingest",
                target_sha=SHA,
                base_sha=None,
                manifest_path=f".ragit/manifest/{SHA}.json",
            )
        assert info.value.details["transactions"] == [tx.transaction_id]
        recover(published, lock, _exists(published))
        Journal.begin(
            published,
            lock,
            kind="ingest",
            target_sha=SHA,
            base_sha=None,
            manifest_path=f".ragit/manifest/{SHA}.json",
        ).complete()


def test_begin_rejects_a_manifest_path_for_another_commit(published: Workspace) -> None:
    """Implementation choice: the journal's manifest path must be the target's manifest."""
    with (
        WriterLock.acquire(published, command="ingest", head_sha=SHA) as lock,
        pytest.raises(ValueError),
    ):
        Journal.begin(
            published,
            lock,
            kind="ingest",
            target_sha=SHA,
            base_sha=None,
            manifest_path=".ragit/manifest/" + "c" * 40 + ".json",
        )


def test_only_the_latest_completed_journals_are_kept(published: Workspace) -> None:
    """Implementation choice: completed journals are pruned to the newest 20."""
    with WriterLock.acquire(published, command="ingest", head_sha=SHA) as lock:
        for _ in range(23):
            Journal.begin(
                published,
                lock,
                kind="ingest",
                target_sha=SHA,
                base_sha=None,
                manifest_path=f".ragit/manifest/{SHA}.json",
            ).complete()
    states = scan_journals(published)
    assert 20 <= len(states) <= 21
    assert {s.classification for s in states} == {"completed"}
