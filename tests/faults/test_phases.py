"""Suite guard: every phase a write operation reaches has a kill test."""

from __future__ import annotations

import re
from pathlib import Path

from tests.faults._faultkit import INGEST_PHASES, PURGE_PHASES, REBUILD_PHASES
from tests.ingest.test_faults import SHARED_STORE_PHASES

import ragit

_PATTERN = re.compile(r"(?:faults\.reach|\.advance)\(\s*\"([a-z-]+)\"")
_PUBLISH = {"publish-copied", "publish-meta-written"}


def _reached(*relative: str) -> set[str]:
    src = Path(ragit.__file__).parent
    return {name for rel in relative for name in _PATTERN.findall((src / rel).read_text("utf-8"))}


def test_every_phase_of_every_write_operation_has_a_kill_test() -> None:
    """Implementation choice: a phase added to a write path must get a fault test too."""
    journal = {"prepared", "completed"}  # reached inside Journal.begin / Transaction.complete
    writes = ("store/writer.py", "store/publishing.py", "store/journal.py", "store/compact.py")
    # The writer's inline merge swaps its merged copy in as a rebuild does (no publish).
    swap = {"rebuild-swapped-out", "rebuild-swapped-in"}
    # The shared store's phase is killed in tests/store_postgres/test_team_workflow.py (it
    # needs a PostgreSQL server; tests/ingest/test_faults.py lists it as SHARED_STORE_PHASES).
    ingest = _reached("ingest/apply.py", *writes) | journal | swap
    ingest -= SHARED_STORE_PHASES
    rebuild = _reached("store/replace.py") | _PUBLISH
    purge = _reached("ops/security/purge.py") | rebuild

    assert _reached("store/publishing.py") >= _PUBLISH
    assert ingest == set(INGEST_PHASES)
    assert rebuild == set(REBUILD_PHASES)
    assert purge == set(PURGE_PHASES)
