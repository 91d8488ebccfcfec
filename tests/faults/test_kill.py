"""kill -9 at every phase that ingest, store rebuild, migrate embeddings and purge reach.

``RAGIT_FAULT_AT=<phase>`` ends the real ``ragit`` process with ``os._exit(137)`` there (no
cleanup runs, as with SIGKILL). The protocol and the promise are in ``_faultkit``: readers
keep their answers or get a typed not-ready error, doctor names every problem readers see,
the recoveries it names repair it, and every published snapshot then answers as before.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.faults._faultkit import (
    INGEST_PHASES,
    PURGE_PHASES,
    REBUILD_PHASES,
    assert_safe_and_recovered,
    compare_answers,
    prepare,
    run_fault,
    run_scenario,
)

KILLS = [
    *(("ingest", phase) for phase in INGEST_PHASES),
    *(("rebuild", phase) for phase in REBUILD_PHASES),
    *(("migrate", phase) for phase in REBUILD_PHASES),
    *(("purge", phase) for phase in PURGE_PHASES),
]


@pytest.mark.parametrize(("operation", "phase"), KILLS)
def test_a_writer_killed_at_any_phase_leaves_readers_safe_and_doctor_recovers_it(
    tmp_path: Path, operation: str, phase: str
) -> None:
    """Contract-mandated (§2, §6; docs/faults.md): a kill -9 anywhere never shows other hits;
    doctor's recoveries restore every published snapshot's answers."""
    obs = run_scenario(tmp_path, operation, "kill", phase)

    assert obs.exit_code == 137
    assert_safe_and_recovered(obs)


def test_an_ingest_after_a_crash_mid_swap_finishes_the_swap_first(tmp_path: Path) -> None:
    """ragit.store.replace: every writer finishes an interrupted store swap before writing."""
    case = prepare("ingest", tmp_path)
    code, _stderr, _stdout = run_fault(case, "rebuild", "kill", "rebuild-swapped-out")
    assert code == 137

    run = case.repo.ragit("ingest")

    assert run.code == 0, run.output
    assert not (case.repo.ws.ragit_dir / "store.next").exists()
    assert compare_answers(case, [case.expected_after], allow=set()) == {"S1": "same", "S2": "same"}
