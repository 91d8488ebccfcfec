"""Measure `ragit memory recall` on a repository with many wraps (not a test; run by hand).

    .venv/bin/python tests/memory/measure_recall.py [--wraps 200] [--runs 7]

Builds the docs-basic fixture in a temp dir, `ragit init`, `ingest --all`, records
``--wraps`` wraps (each with two decisions, an open loop and a constraint) through
the core function, then times fresh `ragit memory recall ... --format json`
processes: indexed HEAD, and degraded (a new unindexed commit). Prints medians.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "src"))

from fixtures.build import build_fixture  # noqa: E402

RAGIT = [sys.executable, "-m", "ragit"]


def _run(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*RAGIT, *args], cwd=repo, capture_output=True, text=True, encoding="utf-8", check=False
    )


def _time_recall(repo: Path, runs: int) -> tuple[float, dict[str, object]]:
    samples = []
    data: dict[str, object] = {}
    for _ in range(runs):
        start = time.perf_counter()
        proc = _run(repo, "memory", "recall", "refund postings double entry", "--format", "json")
        samples.append(time.perf_counter() - start)
        assert proc.returncode == 0, proc.stderr
        data = json.loads(proc.stdout)["data"]
    return statistics.median(samples), data


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--wraps", type=int, default=200)
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["XDG_CACHE_HOME"] = str(Path(tmp) / "cache")
        os.environ["RAGIT_PROGRESS"] = "0"
        repo = Path(tmp) / "repo"
        build_fixture("docs-basic", repo)
        assert _run(repo, "init", "--yes").returncode == 0
        assert _run(repo, "ingest", "--all").returncode == 0
        from ragit.config import load_config
        from ragit.memory.models import WrapInput
        from ragit.memory.wrap import wrap
        from ragit.workspace import Workspace

        ws = Workspace(repo.resolve())
        cfg = load_config(ws)
        start = time.perf_counter()
        for n in range(args.wraps):
            payload = WrapInput.model_validate(
                {
                    "goal": f"posting validation part {n % 10}",
                    "summary": f"Session {n}: worked on postings and refunds.",
                    "constraints": [f"constraint {n % 25}"],
                    "decisions": [
                        f"Decision {n}: reject amount class {n}",
                        {"title": f"Refund rule {n}", "summary": f"Refunds reference posting {n}."},
                    ],
                    "openLoops": [{"title": f"loop {n}", "nextAction": f"follow up {n}"}],
                    "nextActions": [f"next {n}"],
                    "createdAt": f"2026-04-{1 + n % 28:02d}T{n % 24:02d}:{n % 60:02d}:00Z",
                }
            )
            wrap(ws, cfg, payload, dry_run=False)
        wrap_s = time.perf_counter() - start
        sessions = len(list((repo / ".ragit/memory/sessions").iterdir()))
        current = repo / ".ragit/memory/working/current.json"
        indexed, data = _time_recall(repo, args.runs)
        assert data["snapshotSha"] is not None
        (repo / "docs/new.md").write_text("# New\n\nunindexed\n", encoding="utf-8")
        subprocess.run(["git", "add", "-A"], cwd=repo, check=True)
        subprocess.run(["git", "commit", "-q", "-m", "new"], cwd=repo, check=True)
        degraded, data = _time_recall(repo, args.runs)
        assert data["snapshotSha"] is None
        print(
            json.dumps(
                {
                    "wraps": args.wraps,
                    "sessions": sessions,
                    "wrapTotalS": round(wrap_s, 3),
                    "workingStateBytes": current.stat().st_size,
                    "recallIndexedMedianS": round(indexed, 3),
                    "recallDegradedMedianS": round(degraded, 3),
                    "runs": args.runs,
                },
                indent=2,
            )
        )


if __name__ == "__main__":
    main()
