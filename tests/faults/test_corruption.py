"""Damaged store files: bytes flipped in the canonical zvec collection (.ragit/store/chunks).

Readers never open the canonical files (docs/store.md): they keep answering from the
published reader copy. ``doctor`` names the damage by the published fingerprint, and the
next writer refuses to open (and so to publish) the changed files. A store rebuild
regenerates every chunk from git, so it repairs any damage; afterwards
reader copies made afresh from the canonical files answer as before.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.faults._faultkit import CORRUPTIBLE, REBUILD, flip_bytes, prepare, run_corruption


@pytest.mark.parametrize("target", list(CORRUPTIBLE))
def test_a_damaged_store_file_keeps_published_answers_and_a_store_rebuild_repairs_it(
    tmp_path: Path, target: str
) -> None:
    """Design §2.5: the published copy shields readers; `repair --action store-rebuild` heals."""
    obs = run_corruption(tmp_path, target)

    assert set(obs.readers.values()) == {"same"}, obs
    assert "store.canonical-files" in obs.doctor, obs
    # The next writer refuses instead of publishing the damage to readers.
    assert obs.finish[0] == "next writer `ragit ingest` → exit 3 (SNAPSHOT_STORE_UNAVAILABLE)", obs
    assert "readers after that writer: same" in obs.notes, obs
    assert obs.recoveries == [f"`{REBUILD}` → exit 0"], obs
    assert set(obs.after.values()) == {"same", "indexed"}, obs
    assert obs.doctor_after == [], obs


def test_doctor_names_a_damaged_canonical_store_file(tmp_path: Path) -> None:
    """Contract §12 (doctor names every problem with a recovery that fixes it)."""
    case = prepare("ingest", tmp_path)
    flip_bytes(case.repo.ws, CORRUPTIBLE["collection manifest"])

    report, _error = case.repo.doctor()

    failed = {c["name"]: c.get("recovery") for c in report["checks"] if not c["ok"]}
    assert REBUILD in failed.values(), failed
