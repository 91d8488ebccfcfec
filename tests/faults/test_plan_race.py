"""A store replaced between an ingest's plan and its writer lock.

An ingest plans unlocked (reading manifests and git), then takes the writer lock. A
``security purge --target store`` that runs in between replaces the store and deletes the
manifests whose chunks it cannot regenerate clean: the chunks the plan meant to reuse from
them are gone. The ingest must notice under the lock and plan again — never publish a
manifest whose chunks the store lacks.
"""

from __future__ import annotations

from pathlib import Path

from tests.faults._faultkit import QUESTION, template_repo
from tests.snapshot._kit import wait_for_line

from ragit.contract.errors import RagitError

NEW_DOC = "docs/adr/0004-ledger-export.md"


def test_a_purge_between_plan_and_lock_makes_the_ingest_plan_again(tmp_path: Path) -> None:
    """Implementation choice: the plan is re-validated under the writer lock; every chunk the new
    manifest names is in the published store, so doctor passes and queries answer."""
    repo, labels = template_repo(tmp_path, "legacy")
    stale = labels["stale"]  # S3: a snapshot whose store chunk holds a raw secret
    repo.git("checkout", "-q", "legacy")
    head = repo.commit({NEW_DOC: "# Ledger export\n\nExports run nightly at two.\n"}, "export")
    release = tmp_path / "release"
    child = repo.popen(
        "ingest",
        env={"RAGIT_FAULT_PAUSE_AT": "ingest-planned", "RAGIT_FAULT_RELEASE": str(release)},
    )
    try:
        # The plan reuses S3's documents, including its leaky chunk.
        wait_for_line(child.stderr, "ragit-fault: paused at ingest-planned")
        purge = repo.ragit("security", "purge", "--target", "store")
        assert purge.code == 0, purge.output
        stale_shas = [s["commitSha"] for s in purge.data["staleSnapshots"]]
        assert stale_shas == [stale], purge.output
    finally:
        release.touch()
    _out, err = child.communicate(timeout=120)
    assert child.returncode == 0, err

    report, error = repo.doctor()
    failed = {c["name"]: c["detail"] for c in report["checks"] if not c["ok"]}
    assert error is None and not failed, failed
    manifest = repo.manifest(head)
    assert manifest["commitSha"] == head
    try:
        data = repo.query(QUESTION, top_k=10)
    except RagitError as exc:  # pragma: no cover - the failure this test guards against
        raise AssertionError(f"query at the new snapshot failed: {exc.code}") from exc
    assert data["snapshotSha"] == head
