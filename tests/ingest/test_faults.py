"""Crash safety of ingest: killed or paused writers, concurrent writers and readers, hand damage.

Writers run as real subprocesses with the test-only fault variables of
:mod:`ragit._faults`: ``RAGIT_FAULT_AT=<phase>`` ends the process as if killed with
SIGKILL at that phase; ``RAGIT_FAULT_PAUSE_AT`` holds it there until a release file exists.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from tests.snapshot._kit import (
    RagitRepo,
    hits_key,
    indexed_repo,
    make_repo,
    private_cache,  # noqa: F401 - autouse fixture
    ragit_state,
    tree_state,
    wait_for_line,
)

from ragit.workspace import user_cache_dir


@pytest.fixture(autouse=True)
def inline_merges(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every ingest here merges inline (the path of an overdue merge), so kills reach
    ``store-compacted`` and no background compactor runs beside the checks."""
    monkeypatch.setenv("RAGIT_COMPACT_INLINE_ROWS", "1000000")


QUESTION = "zanzibar sweeper"
ADR = "docs/adr/0002-idempotency-keys.md"
EXPIRY = "\n## Expiry\n\nThe zanzibar sweeper purges idempotency keys after thirty days.\n"

# Every phase an ingest reaches, in order (`faults.reach` / `tx.advance` in ingest's apply, the
# store writer and the journal); test_every_ingest_phase_is_covered keeps this list complete.
# Reached before the writer lock is taken (nothing written yet): killed in tests/faults.
BEFORE_LOCK = ["ingest-planned"]
BEFORE_MANIFEST = [
    "prepared",
    "store-insert-batch",
    "store-written",
    "store-compacted",
    "store-verified",
    "publish-copied",
    "publish-meta-written",
    "store-published",
]
AFTER_MANIFEST = ["manifest-committed", "published", "completed"]
# Phases of the shared-store ingest (store.backend = "postgres"), killed in
# tests/store_postgres/test_team_workflow.py and test_server_faults.py.
SHARED_STORE_PHASES = {"shared-chunks-written"}
PHASE_SOURCES = ["ingest/apply.py", "store/writer.py", "store/publishing.py", "store/journal.py"]


def _indexed_then_changed(tmp_path: Path) -> tuple[RagitRepo, str, dict]:
    """docs-basic indexed at its HEAD, then a commit that adds a section to one ADR."""
    repo = indexed_repo(tmp_path, "docs-basic")
    base = repo.head()
    before = repo.query(QUESTION, at=base)
    text = (repo.root / ADR).read_text(encoding="utf-8") + EXPIRY
    repo.commit({ADR: text}, "document key expiry")
    return repo, base, before


def _sections(data: dict) -> set[str]:
    return {h["sectionTitle"] for h in data["hits"]}


def test_every_ingest_phase_is_covered_by_the_kill_test() -> None:
    """Test-suite guard: a phase added to the write path must get a kill test too."""
    import ragit

    src = Path(ragit.__file__).parent
    pattern = re.compile(r"(?:faults\.reach|\.advance)\(\s*\"([a-z-]+)\"")
    reached = {
        name
        for rel in PHASE_SOURCES
        for name in pattern.findall((src / rel).read_text(encoding="utf-8"))
    }
    reached |= {"prepared", "completed"}  # reached inside Journal.begin / Transaction.complete
    # The shared store's ingest phases are killed against a real PostgreSQL instead.
    shared = Path(__file__).parents[1] / "store_postgres" / "test_team_workflow.py"
    for phase in SHARED_STORE_PHASES:
        assert f'"{phase}"' in shared.read_text(encoding="utf-8"), phase
    assert reached - SHARED_STORE_PHASES == set(BEFORE_LOCK + BEFORE_MANIFEST + AFTER_MANIFEST)


@pytest.mark.parametrize("phase", BEFORE_MANIFEST + AFTER_MANIFEST)
def test_ingest_killed_at_any_phase_keeps_the_previous_snapshot_and_a_rerun_completes(
    tmp_path: Path, phase: str
) -> None:
    """Contract-mandated (§6; docs/faults.md): kill -9 at any phase → old snapshot answers; rerun
    recovers."""
    repo, base, before = _indexed_then_changed(tmp_path)
    head = repo.head()

    killed = repo.ragit("ingest", env={"RAGIT_FAULT_AT": phase})

    assert killed.code == 137, killed.output
    assert hits_key(repo.query(QUESTION, at=base)) == hits_key(before)
    status = repo.status()
    assert status["writerLock"]["state"] == "stale"
    pending = [t["classification"] for t in status["transactions"]["pending"]]
    report, error = repo.doctor()
    failed = {c["name"]: c["recovery"] for c in report["checks"] if not c["ok"]}
    if phase in BEFORE_MANIFEST:
        assert status["snapshot"]["status"] == "missing"
        assert status["snapshot"]["nearestIndexedAncestor"] == base
        assert pending == ["precommit-incomplete"]
        assert failed == {"snapshot.head": f"ragit ingest --since {base}"}
        assert error is not None and error.code == "DOCTOR_CHECKS_FAILED"
    else:
        # The generation is published before the manifest: a visible manifest is complete.
        assert status["snapshot"]["status"] == "indexed"
        assert "Expiry" in _sections(repo.query(QUESTION))
        assert pending == ([] if phase == "completed" else ["finalization-pending"])
        assert failed == {} and error is None

    rerun = repo.ingest()

    assert rerun["commitSha"] == head
    assert rerun["noop"] is (phase in AFTER_MANIFEST)
    assert any("reclaimed" in w for w in rerun["warnings"])
    assert "Expiry" in _sections(repo.query(QUESTION))
    assert hits_key(repo.query(QUESTION, at=base)) == hits_key(before)
    report, error = repo.doctor()
    assert error is None, [c for c in report["checks"] if not c["ok"]]
    status = repo.status()
    assert status["writerLock"]["state"] == "missing"
    assert status["transactions"]["pending"] == []
    settled = ragit_state(repo)
    again = repo.ingest()
    assert again["noop"] is True and ragit_state(repo) == settled


def test_first_ingest_killed_mid_insert_leaves_no_snapshot_and_a_rerun_builds_it(
    tmp_path: Path,
) -> None:
    """Contract §6: a crash of the very first ingest leaves nothing half-visible; rerun recovers."""
    repo = make_repo(tmp_path, "docs-basic")

    killed = repo.ragit("ingest", "--all", env={"RAGIT_FAULT_AT": "store-insert-batch"})
    query = repo.ragit("query", "idempotency", "--format", "json")

    assert killed.code == 137
    assert query.code == 3 and query.error["code"] == "SNAPSHOT_NOT_INDEXED"
    assert repo.status()["snapshot"]["status"] == "missing"
    rerun = repo.ingest(all=True)
    assert rerun["processed"] == 13
    assert repo.query("idempotency")["hits"]
    assert repo.doctor()[1] is None


def test_a_second_concurrent_ingest_gets_store_write_busy_and_the_store_survives(
    tmp_path: Path,
) -> None:
    """Contract §3/§6: one writer at a time; the loser gets STORE_WRITE_BUSY (exit 3, retryable)."""
    repo, base, before = _indexed_then_changed(tmp_path)
    release = tmp_path / "release"
    first = repo.popen(
        "ingest", env={"RAGIT_FAULT_PAUSE_AT": "store-written", "RAGIT_FAULT_RELEASE": str(release)}
    )
    try:
        wait_for_line(first.stderr, "ragit-fault: paused at store-written")

        second = repo.ragit("ingest", "--all")
        dry = repo.ragit("ingest", "--dry-run")

        assert second.code == 3
        assert second.error["code"] == "STORE_WRITE_BUSY"
        assert second.error["retryable"] is True
        assert second.error["details"]["lockState"] == "active"
        assert dry.code == 0 and dry.data["wouldFail"] is True
        assert [b["code"] for b in dry.data["blockers"]] == ["STORE_WRITE_BUSY"]
        assert repo.status()["writerLock"]["state"] == "active"
    finally:
        release.touch()
        _out, err = first.communicate(timeout=120)
    assert first.returncode == 0, err
    assert "Expiry" in _sections(repo.query(QUESTION))
    assert hits_key(repo.query(QUESTION, at=base)) == hits_key(before)
    assert repo.doctor()[1] is None


def test_a_query_during_a_paused_insert_answers_from_the_previous_generation(
    tmp_path: Path,
) -> None:
    """Contract-mandated (§6; docs/store.md, "Reading"): readers use the published copy; a writer
    never blocks them."""
    repo, base, before = _indexed_then_changed(tmp_path)
    release = tmp_path / "release"
    writer = repo.popen(
        "ingest",
        env={"RAGIT_FAULT_PAUSE_AT": "store-insert-batch", "RAGIT_FAULT_RELEASE": str(release)},
    )
    try:
        wait_for_line(writer.stderr, "ragit-fault: paused at store-insert-batch")

        old = repo.ragit("query", QUESTION, "--at", base, "--format", "json")
        new = repo.ragit("query", QUESTION, "--no-wait", "--format", "json")

        assert old.code == 0, old.output
        assert hits_key(old.data) == hits_key(before)
        assert old.data["snapshotSha"] == base
        # HEAD's ingest is the paused writer: the read says so, and that a retry will succeed.
        assert new.code == 3 and new.error["code"] == "SNAPSHOT_INGEST_RUNNING"
        assert new.error["retryable"] is True
        assert new.error["details"]["owner"]["pid"] == writer.pid
    finally:
        release.touch()
        writer.communicate(timeout=120)
    assert writer.returncode == 0
    assert "Expiry" in _sections(repo.query(QUESTION))


def test_a_truncated_manifest_is_reported_as_invalid_and_rebuilt_by_ingest_at_its_sha(
    tmp_path: Path,
) -> None:
    """Contract §3/§5/§12: SNAPSHOT_MANIFEST_INVALID (exit 4), status invalid; --at rebuilds it."""
    repo = indexed_repo(tmp_path, "docs-basic")
    head = repo.head()
    before = repo.query("idempotency")
    path = repo.ws.manifest_path(head)
    path.write_bytes(path.read_bytes()[:100])

    query = repo.ragit("query", "idempotency", "--format", "json")
    status = repo.ragit("status")
    doctor = repo.ragit("doctor", "--format", "json")

    assert query.code == 4 and query.error["code"] == "SNAPSHOT_MANIFEST_INVALID"
    assert query.error["details"]["path"] == f".ragit/manifest/{head}.json"
    assert status.code == 0 and status.data["snapshot"]["status"] == "invalid"
    assert status.data["searchReady"] is False
    assert doctor.code == 1 and doctor.envelope["error"]["code"] == "DOCTOR_CHECKS_FAILED"
    recoveries = {c["recovery"] for c in doctor.envelope["data"]["checks"] if not c["ok"]}
    assert recoveries == {f"ragit ingest --all --at {head}"}

    fix = repo.ragit(*recoveries.pop().split()[1:])

    assert fix.code == 0, fix.output
    assert fix.data["embedded"] == 0  # the chunks were still in the store
    assert hits_key(repo.query("idempotency")) == hits_key(before)
    assert repo.doctor()[1] is None


def test_a_deleted_store_directory_is_reported_unavailable_without_crashing(tmp_path: Path) -> None:
    """Contract §3/§12: status store-unavailable, query SNAPSHOT_STORE_UNAVAILABLE, doctor fails."""
    repo = indexed_repo(tmp_path, "docs-basic")
    shutil.rmtree(repo.ws.store_dir)

    status = repo.ragit("status")
    query = repo.ragit("query", "idempotency", "--format", "json")
    doctor = repo.ragit("doctor", "--format", "json")

    assert status.code == 0 and status.data["snapshot"]["status"] == "store-unavailable"
    assert status.data["store"] == {"present": False}
    assert query.code == 3 and query.error["code"] == "SNAPSHOT_STORE_UNAVAILABLE"
    assert query.error["recovery"]["command"] == "ragit doctor --format json"
    assert doctor.code == 1 and doctor.envelope["error"]["code"] == "DOCTOR_CHECKS_FAILED"
    failed = {c["name"] for c in doctor.envelope["data"]["checks"] if not c["ok"]}
    assert {"snapshot.head", "store.meta"} <= failed
    assert "Traceback" not in repo.all_output()


def test_a_deleted_reader_copy_is_recreated_outside_the_repository(tmp_path: Path) -> None:
    """Design §2.5: a cleared user cache is rebuilt from the canonical files; .ragit untouched."""
    repo = indexed_repo(tmp_path, "docs-basic")
    before = repo.query("idempotency")
    copies = user_cache_dir() / "stores"
    shutil.rmtree(copies)
    ragit_before = tree_state(repo.ws.ragit_dir)

    query = repo.ragit("query", "idempotency", "--format", "json")

    assert query.code == 0, query.output
    assert hits_key(query.data) == hits_key(before)
    assert [p for p in copies.rglob("*") if p.is_file()]
    assert tree_state(repo.ws.ragit_dir) == ragit_before
