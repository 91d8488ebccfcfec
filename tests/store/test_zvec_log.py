"""zvec's own log: captured into a per-process file and summarised, never streamed.

zvec's console logger writes to stdout (the envelope's and JSON-RPC's stream); a broken
store once printed hundreds of thousands of its lines. (docs/store.md)
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

SCRIPT = """
import sys
from pathlib import Path
from ragit.store._zvec import Collection
path = Path(sys.argv[1])
Collection.create(path, 8).close()
for _ in range(20):
    Collection.open(path, read_only=True).close()
"""


def test_zvec_lines_reach_neither_stdout_nor_stderr_only_a_summary(tmp_path: Path) -> None:
    env = {**os.environ, "RAGIT_ZVEC_LOG": "info", "XDG_CACHE_HOME": str(tmp_path / "cache")}
    run = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(tmp_path / "c")],
        capture_output=True,
        text=True,
        env=env,
        check=False,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout == ""
    lines = run.stderr.splitlines()
    assert len(lines) == 1, run.stderr[:2000]
    assert lines[0].startswith("[ragit] zvec logged "), lines
    count = int(lines[0].split()[3])
    assert count > 20  # every open logged; only the summary was printed
    assert list((tmp_path / "cache" / "ragit" / "zvec-logs").iterdir()) == []
