"""The soak (``scripts/soak``): hooks, a killer, MCP and CLI readers, under a commit stream.

The fixed-seed CI profile; the longer profiles and their results are in docs/faults.md.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "soak"


@pytest.mark.slow
def test_the_soak_holds_its_invariants_for_sixty_seconds(tmp_path: Path) -> None:
    """Implementation choice: no empty answer, no untyped failure, no changed answer (the same
    question at the same commit answers the same hits in the same order), doctor after at
    most one repair, every committed token found at its commit, and the store still takes
    writes at the end (the ingest of the final HEAD succeeds)."""
    bindir = str(Path(sys.executable).parent)
    proc = subprocess.run(
        [
            sys.executable,
            str(SCRIPT),
            "--seconds",
            "60",
            "--seed",
            "1",
            "--strict",
            "--workdir",
            str(tmp_path),
        ],
        env={**os.environ, "PATH": bindir + os.pathsep + os.environ.get("PATH", "")},
        capture_output=True,
        text=True,
        timeout=1200,
        check=False,
    )
    summary = json.loads(proc.stdout)
    assert proc.returncode == 0, json.dumps(summary, indent=2) + proc.stderr[-3000:]
    assert summary["failures"] == []
    assert summary["commits"] > 20 and summary["answers"] > 50
    assert summary["kills"] > 0
    assert summary["empty"] == 0 and summary["untyped"] == 0 and summary["changed"] == 0
    assert summary["doctorOk"] and summary["tokensMissing"] == 0
    assert summary["headIngestOk"] and summary["indexedCommits"] >= 2
