"""A store failure names the snapshot the failed read or ingest was for."""

from __future__ import annotations

from ragit.contract.errors import SnapshotStoreUnavailable, StoreClientMissing

A = "a" * 40
B = "b" * 40


def test_a_failure_naming_no_snapshot_is_named_after_the_one_being_read() -> None:
    """Implementation choice: the server knows no commit; the caller adds the one it selected."""
    named = SnapshotStoreUnavailable(None, "connection refused").naming(A)
    assert named.details == {"resolvedSha": A, "reason": "connection refused"}
    assert A in str(named)


def test_a_failure_that_names_a_snapshot_keeps_it() -> None:
    """Implementation choice: the snapshot the failure was raised for is the more precise one."""
    first = SnapshotStoreUnavailable(A, "gone")
    assert first.naming(B) is first


def test_without_a_snapshot_to_name_the_failure_is_unchanged() -> None:
    """Implementation choice: a listing of every snapshot has none to name."""
    missing = StoreClientMissing("postgres", "postgres")
    assert missing.naming(None) is missing
