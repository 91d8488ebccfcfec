"""SIGINT at seeded injection points of every write operation.

The writer is paused at a phase (``RAGIT_FAULT_PAUSE_AT``), then interrupted with SIGINT.
Contract §2: exit 130, and nothing half-written is left visible — unlike a kill, an
interrupted writer releases its lock and undoes an unpublished store swap, so readers
answer exactly as before, right away.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from tests.faults._faultkit import (
    INGEST_PHASES,
    PURGE_PHASES,
    REBUILD_PHASES,
    assert_safe_and_recovered,
    run_scenario,
)

SEED = 20260101
_PHASES = {
    "ingest": INGEST_PHASES,
    "rebuild": REBUILD_PHASES,
    "migrate": REBUILD_PHASES,
    "purge": PURGE_PHASES,
}
# Two phases per operation, drawn once from a fixed seed (the same points on every run).
_rng = random.Random(SEED)
POINTS = [(op, phase) for op, phases in _PHASES.items() for phase in _rng.sample(phases, 2)]


@pytest.mark.parametrize(("operation", "phase"), POINTS)
def test_an_interrupted_writer_exits_130_and_leaves_nothing_half_written(
    tmp_path: Path, operation: str, phase: str
) -> None:
    """Contract §2: SIGINT exits 130; readers see the previous state at once; no lock stays."""
    obs = run_scenario(tmp_path, operation, "sigint", phase)

    assert obs.exit_code == 130
    assert obs.stderr[-1:] == ["[ragit] interrupted"], obs
    assert set(obs.readers.values()) == {"same"}, obs
    assert obs.lock == "missing"
    assert_safe_and_recovered(obs)
