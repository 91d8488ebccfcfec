"""The suite against a deliberately minimal implementation (minimal_ragit.py beside this file).

It knows `init` and `status` and nothing else, and breaks FMT-004 on purpose. Every failure
the suite reports must be a rule it really breaks (a command it lacks is the step under
test, or FMT-004), and a case whose setup needs a command it lacks must be an ERROR naming
that step, its exit status and the implementation's words, never a FAIL of the case's rule.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from conformance.runner import main
from conformance.suite import Suite

MINIMAL = Path(__file__).with_name("minimal_ragit.py")
sys.path.insert(0, str(MINIMAL.parent))
from minimal_ragit import BROKEN, COMMANDS  # noqa: E402

EXPECTED = {
    "version-flag": "PASS",
    "init-format-json": "PASS",
    "init-in-unborn-repository": "PASS",
    "init-keeps-existing-gitignore": "PASS",  # no --format in a pipe: the envelope (FMT-007)
    "status-format-json": "PASS",
    "unknown-command-is-usage-error": "PASS",
    "status-format-both": "FAIL",  # FMT-004, broken on purpose
    "describe-leaf-command": "FAIL",  # no describe
    "config-set-writes-value": "FAIL",  # no config set
    "ingest-never-indexes-ragit-dir": "FAIL",  # a plain setup reaches ingest, which it lacks
    "query-head-not-indexed-names-nearest-ancestor": "ERROR",  # setup: ingest
    "query-question-empty": "ERROR",  # setup: ingest, so either validation order reaches it
    "doctor-store-deleted-recovery-fixes-it": "ERROR",  # setup: ingest
    "memory-wrap-merges-second-wrap": "ERROR",  # setup: memory wrap
}


def _first_unknown_setup_step(case: dict[str, Any]) -> tuple[int, list[str]] | None:
    for index, step in enumerate(case.get("setup", [])):
        argv = step.get("run")
        if argv is not None and argv[0] not in COMMANDS:
            return index, argv
    return None


def test_every_failure_of_a_minimal_implementation_is_a_rule_it_breaks(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """FAIL only for rules it breaks; a setup it cannot run is ERROR with its words (suite rule)."""
    report = tmp_path / "report.json"
    runs = [arg for case_id in EXPECTED for arg in ("--run", case_id)]
    impl = f"{sys.executable} {MINIMAL}"
    args = ["--impl", impl, *runs, "--no-expected-failures", "-j", "2", "--json", str(report)]
    assert main(args) == 1
    out = capsys.readouterr().out
    cases = {c["id"]: c for c in json.loads(report.read_text(encoding="utf-8"))["cases"]}
    assert {case_id: case["outcome"] for case_id, case in cases.items()} == EXPECTED
    suite = {case.id: case.data for case in Suite().load_cases()}
    for case_id, case in cases.items():
        data = suite[case_id]
        unknown = _first_unknown_setup_step(data)
        step_command = data["step"]["argv"][0]
        if case["outcome"] == "FAIL":
            assert unknown is None
            assert step_command not in COMMANDS or case["requirements"][0] in BROKEN, case_id
        if case["outcome"] == "ERROR":
            assert unknown is not None, case_id
            index, argv = unknown
            assert case["reasons"] == [
                f"setup failed: setup[{index}] `{' '.join(argv)}` exited 2, expected 0"
            ]
            assert case["detail"]["words"] == f"error: unknown command '{argv[0]}'"
            line = f"{case['target']}/{case_id} [{case['requirements'][0]}, contract §"
            assert line in out.replace("\n      ", " ")
    assert out.startswith("RAGit conformance: FAIL in ")
    assert out.splitlines()[0].endswith(": 6 pass, 4 fail, 4 error of 14 cases")


SPARSE = Path(__file__).with_name("sparse_ragit.py")
SPARSE_EXPECTED = {
    # plain setups reach the rule without the options an older implementation lacks
    "query-head-not-indexed-names-nearest-ancestor": ("PASS", None),
    "ingest-since-other-branch-not-ancestor": ("PASS", None),
    "ingest-ollama-unreachable-provider-failed": ("PASS", None),
    "init-does-not-set-output-format": ("PASS", None),
    # the recovery its doctor prints needs `ingest --at`: a broken promise, judged
    "doctor-truncated-manifest-recovery-fixes-it": ("FAIL", "error: unknown option '--at'"),
    # the rule needs a reviewed artifact, which needs `session materialize`
    "query-scope-durable-excludes-artifacts": ("ERROR", "error: unknown command 'session'"),
}


def test_an_implementation_without_optional_options_reaches_every_plain_setup(
    tmp_path: Path,
) -> None:
    """Setups use only what their rule needs: lacking `ingest --at` or `config set` keys the
    contract leaves open costs no case; lacking a needed command is an ERROR (suite rule)."""
    report = tmp_path / "report.json"
    runs = [arg for case_id in SPARSE_EXPECTED for arg in ("--run", case_id)]
    impl = f"{sys.executable} {SPARSE}"
    args = ["--impl", impl, *runs, "--no-expected-failures", "-j", "2", "--json", str(report)]
    assert main(args) == 1
    cases = json.loads(report.read_text(encoding="utf-8"))["cases"]
    found = {case["id"]: (case["outcome"], case["detail"].get("words")) for case in cases}
    assert found == SPARSE_EXPECTED
