"""A full disk during every write operation (``RAGIT_FAULT_ENOSPC=<phase>``, test-only).

From the named phase on, every atomic file write and every zvec insert batch of the
process fails with ``OSError(ENOSPC)`` (``ragit._faults``); no filesystem is mounted (the
real full disks, on a small tmpfs, are in test_enospc_tmpfs.py). A full disk is the typed
``FILESYSTEM_UNUSABLE`` (reason ``no-space``, exit 3, docs/contract.md) with no traceback;
the failed writer releases its lock and readers keep the previous state.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.faults._faultkit import assert_safe_and_recovered, run_scenario

POINTS = [
    ("ingest", "prepared"),  # the journal cannot record the rows it is about to insert
    ("ingest", "store-verified"),  # publish copies the store, then cannot write meta.json
    ("ingest", "manifest-committed"),  # the manifest is in place, the journal cannot finish
    ("rebuild", "rebuild-swapped-in"),  # the swapped-in store cannot be published
    ("migrate", "rebuild-built"),  # same, one step earlier
    ("purge", "purge-control-plane-rewritten"),  # the second control-plane rewrite fails
    ("purge", "purge-manifests-deleted"),  # the purged store cannot be published
]


@pytest.mark.parametrize(("operation", "phase"), POINTS)
def test_a_full_disk_fails_the_writer_cleanly_and_keeps_the_previous_state(
    tmp_path: Path, operation: str, phase: str
) -> None:
    """Contract §2/§6 and docs/contract.md (FILESYSTEM_UNUSABLE): a full disk is a typed
    envelope, never a bare exit 1; nothing half-written shows."""
    obs = run_scenario(tmp_path, operation, "enospc", phase)

    assert obs.exit_code == 3, obs
    assert obs.error == "FILESYSTEM_UNUSABLE", obs
    assert not any(line.startswith("[ragit] error:") for line in obs.stderr), obs
    assert obs.lock == "missing"
    assert set(obs.readers.values()) == {"same"}, obs
    assert_safe_and_recovered(obs)
