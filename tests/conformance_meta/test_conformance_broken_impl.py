"""The suite against a deliberately broken implementation (tests/conformance_meta/broken_ragit.py).

The broken CLI breaks FMT-004, EXIT-003 and CMD-009 on purpose; the suite must find
exactly those failures, each under the requirement that was broken, and its console
report is a golden.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest
from syrupy.assertion import SnapshotAssertion

from conformance.runner import main

BROKEN = Path(__file__).with_name("broken_ragit.py")
BROKEN_CASES = {
    "describe-format-both": "FMT-004",
    "init-format-both": "FMT-004",
    "status-format-both": "FMT-004",
    "unknown-command-is-usage-error": "EXIT-003",
    "unknown-option-is-usage-error": "EXIT-003",
    "status-after-init-writes-nothing": "CMD-009",
}
CONTROL_CASES = ("describe-leaf-command", "status-format-json", "version-flag")


def test_broken_implementation_fails_exactly_the_rules_it_breaks(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], snapshot: SnapshotAssertion
) -> None:
    """Each broken rule fails its cases under its own requirement; nothing else fails."""
    report = tmp_path / "report.json"
    runs = [arg for case_id in (*BROKEN_CASES, *CONTROL_CASES) for arg in ("--run", case_id)]
    impl = f"{sys.executable} {BROKEN}"
    status = main(
        ["--impl", impl, *runs, "--no-expected-failures", "-j", "1", "--json", str(report)]
    )
    out = capsys.readouterr().out
    assert status == 1
    cases = json.loads(report.read_text(encoding="utf-8"))["cases"]
    failing = {c["id"]: c["requirements"][0] for c in cases if c["outcome"] != "PASS"}
    assert failing == BROKEN_CASES
    console = re.sub(r"(?ms)^  cli: .*?(?=^  mcp: )", "  cli: <broken_ragit.py>\n", out)
    console = re.sub(r" in \d+(\.\d+ s| min \d\d s):", " in <time>:", console)
    assert console == snapshot
