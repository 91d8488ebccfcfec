"""Regenerate the fault matrix of docs/faults.md from a run of the fault suite.

    .venv/bin/python tests/faults/matrix.py [-n 2]

Runs ``pytest tests/faults`` with ``FAULT_MATRIX_DIR`` set: every scenario writes what it
observed there (``_faultkit.record``), and those rows become the table between the
``matrix:begin``/``matrix:end`` markers of docs/faults.md. The suite's own assertions
decide pass or fail; this script refuses to write a table from a failing run. Not a test
module (pytest collects ``test_*.py`` only).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "faults.md"
BEGIN, END = "<!-- matrix:begin -->", "<!-- matrix:end -->"
sys.path.insert(0, str(ROOT))

from tests.faults._faultkit import (  # noqa: E402
    CORRUPTIBLE,
    INGEST_PHASES,
    PURGE_PHASES,
    REBUILD_PHASES,
)

OPERATIONS = {
    "ingest": ("`ragit ingest`", INGEST_PHASES),
    "rebuild": ("`ragit repair --apply --action store-rebuild`", REBUILD_PHASES),
    "migrate": ("`ragit migrate embeddings`", REBUILD_PHASES),
    "purge": ("`ragit security purge`", PURGE_PHASES),
    "store files": ("(bytes flipped in `.ragit/store/chunks/`)", tuple(CORRUPTIBLE)),
}
FAULTS = {"kill": "kill -9", "sigint": "SIGINT", "enospc": "disk full", "corrupt": "damage"}


def _readers(row: dict[str, Any]) -> str:
    values = set(row["readers"].values())
    if values == {"same"}:
        return "same answers"
    return ", ".join(sorted(values - {"same"}))


def _doctor(row: dict[str, Any]) -> str:
    names = row["doctor"]
    return "passes" if not names else "fails: " + ", ".join(f"`{n}`" for n in names)


def _after(row: dict[str, Any]) -> str:
    good = {"same", "indexed", "yes", "clean", "deleted"}
    bad = {k: v for k, v in row["after"].items() if v not in good}
    if bad or row["doctor_after"]:
        return "PROBLEM: " + json.dumps({**bad, "doctor": row["doctor_after"]})
    return "same answers, doctor passes"


def _cell(items: list[str]) -> str:
    return "<br>".join(items) if items else "—"


def render(rows: list[dict[str, Any]]) -> str:
    """The markdown table, rows in operation, fault and phase order."""
    operations, faults = list(OPERATIONS), list(FAULTS)
    rows = sorted(
        rows,
        key=lambda r: (
            operations.index(r["operation"]),
            faults.index(r["fault"]),
            list(OPERATIONS[r["operation"]][1]).index(r["phase"]),
        ),
    )
    out = [
        "| Operation | Fault | Phase | Exit | Lock after | Readers right after | Doctor "
        "| Recovery run (as doctor names it) | Completed by | End state |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for row in rows:
        label = OPERATIONS[row["operation"]][0]
        exit_code = str(row["exit_code"]) if row["fault"] != "corrupt" else "—"
        if row.get("error"):
            exit_code += f" ({row['error']})"
        finish = row["finish"] + [n for n in row["notes"] if not n.startswith("flipped")]
        phase = f"`{row['phase']}`" if row["fault"] != "corrupt" else row["phase"]
        out.append(
            f"| {label} | {FAULTS[row['fault']]} | {phase} | {exit_code} "
            f"| {row['lock'] or '—'} | {_readers(row)} | {_doctor(row)} "
            f"| {_cell(row['recoveries'])} | {_cell(finish)} | {_after(row)} |"
        )
    return "\n".join(out)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-n", default="2", help="pytest-xdist workers (default 2)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="fault-matrix-") as rows_dir:
        env = {**os.environ, "FAULT_MATRIX_DIR": rows_dir}
        argv = [sys.executable, "-m", "pytest", "tests/faults", "-q", "-p", "no:cacheprovider"]
        run = subprocess.run([*argv, "-n", args.n], cwd=ROOT, env=env, check=False)
        if run.returncode != 0:
            print("the fault suite failed; docs/faults.md was not changed", file=sys.stderr)
            return 1
        rows = [
            json.loads(path.read_text(encoding="utf-8"))
            for path in sorted(Path(rows_dir).glob("*.json"))
        ]
    text = DOC.read_text(encoding="utf-8")
    head, _, rest = text.partition(BEGIN)
    _, _, tail = rest.partition(END)
    DOC.write_text(f"{head}{BEGIN}\n{render(rows)}\n{END}{tail}", encoding="utf-8")
    print(f"wrote {len(rows)} rows to {DOC.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
